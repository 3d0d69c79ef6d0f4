// One worker of meetcite's VerifierPool (pool.js): a wasm instance and its own Verifier.
// Protocol: {id, type: 'init'|'plan'|'score'|'verify', ...args} -> {id, ok, value} | {id, ok: false, error: {code, message, name}}.
import init, { Verifier } from './meetcite.js';

let verifier = null;

function loaded() {
  if (!verifier) {
    const e = new Error('the pool worker has no model loaded');
    e.code = 'not_loaded';
    throw e;
  }
  return verifier;
}

// Score pairs in batches of similar length (sorted by characters; at most 8, longest at most 1.25x the
// shortest + 16 characters): a batch is padded to its longest pair, and a share of one answer's pairs
// mixes 20-token quotes with 256-token contexts. Results in the order of `pairs`.
function scoreBucketed(v, pairs) {
  const len = (p) => String(p?.[0] ?? '').length + String(p?.[1] ?? '').length;
  const order = pairs.map((_, i) => i).sort((a, b) => len(pairs[a]) - len(pairs[b]) || a - b);
  const out = new Array(pairs.length);
  for (let s = 0; s < order.length;) {
    let e = s + 1;
    while (e < order.length && e - s < 8 && len(pairs[order[e]]) <= 1.25 * len(pairs[order[s]]) + 16) e++;
    const batch = order.slice(s, e);
    const probs = v.score(batch.map((i) => pairs[i]));
    batch.forEach((i, k) => (out[i] = probs[k]));
    s = e;
  }
  return out;
}

const handlers = {
  async init({ wasm, files }) {
    await init(wasm ? { module_or_path: wasm } : undefined);
    verifier?.free();
    verifier = new Verifier(files);
    return { config: verifier.config };
  },
  plan: ({ answer, sources, opts }) => loaded().plan(answer, sources, opts),
  score: ({ pairs }) => (Array.isArray(pairs) ? scoreBucketed(loaded(), pairs) : loaded().score(pairs)),
  verify: ({ answer, sources, opts }) => loaded().verify(answer, sources, opts),
};

self.onmessage = async ({ data }) => {
  const { id, type, ...args } = data || {};
  try {
    const h = handlers[type];
    if (!h) throw Object.assign(new Error(`unknown message ${type}`), { code: 'unknown_message' });
    self.postMessage({ id, ok: true, value: await h(args) });
  } catch (e) {
    const error = e && typeof e === 'object'
      ? { code: e.code || 'error', message: String(e.message ?? e), name: e.name || 'Error' }
      : { code: 'error', message: String(e), name: 'Error' };
    self.postMessage({ id, ok: false, error });
  }
};
