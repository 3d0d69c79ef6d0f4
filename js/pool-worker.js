// One worker of meetcite's VerifierPool (pool.js): a wasm instance and its own Verifier.
// Protocol: {id, type: 'init'|'plan'|'score'|'verify'|'streamOpen'|'streamPush'|'streamFinish', ...args} -> {id, ok, value} | {id, ok: false, error: {code, message, name}}.
import init, { Verifier } from './meetcite.js';

let verifier = null;
const streams = new Map(); // sid -> AnswerStream
let nextStream = 1;

function loaded() {
  if (!verifier) {
    const e = new Error('the pool worker has no model loaded');
    e.code = 'not_loaded';
    throw e;
  }
  return verifier;
}

const handlers = {
  async init({ wasm, files }) {
    await init(wasm ? { module_or_path: wasm } : undefined);
    verifier?.free();
    verifier = new Verifier(files);
    return { config: verifier.config };
  },
  plan: ({ answer, sources, opts }) => loaded().plan(answer, sources, opts),
  // Verifier#score scores as verify does (the one rule, in nli.rs)
  score: ({ pairs }) => loaded().score(pairs),
  verify: ({ answer, sources, opts }) => loaded().verify(answer, sources, opts),
  streamOpen({ sources, opts }) {
    const sid = nextStream++;
    streams.set(sid, loaded().stream(sources, opts));
    return sid;
  },
  streamPush: ({ sid, piece }) => openStream(sid).push(piece),
  streamFinish: ({ sid }) => finishStream(sid),
};

function openStream(sid) {
  const s = streams.get(sid);
  if (!s) throw Object.assign(new Error('the stream is finished: open a new one for the next answer'), { code: 'finished' });
  return s;
}

// finished or failed, the stream's wasm memory is freed
function finishStream(sid) {
  const s = openStream(sid);
  streams.delete(sid);
  try {
    return s.finish();
  } finally {
    s.free();
  }
}

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
