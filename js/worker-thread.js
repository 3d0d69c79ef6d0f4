// The Web Worker behind meetcite/worker (worker.js): owns a wasm instance and, once loaded, the NLI
// model (a Verifier here, or a VerifierPool of nested workers), so the page never blocks.
// Protocol: {id, type, ...args} -> {id, type: 'progress', ...} | {id, type: 'result', value} |
// {id, type: 'error', error: {code, message, name}}.
import init, * as meetcite from './meetcite.js';
import { VerifierPool } from './pool.js';
import { loadModel } from './model.js';
import { relaxedSimd, wasmUrl as bestWasm } from './wasm-url.js'; // the build this engine runs best

let ready = null; // Promise for the wasm instance
let wasmModule = null; // the compiled module, shared with the pool's workers
let wasmBuild = null; // 'relaxed-simd' | 'simd128' when this worker picked the file itself
let verifier = null; // a Verifier once loaded with workers: 1
let pool = null; // a VerifierPool once loaded with workers > 1
let loading = null;
const streams = new Map(); // sid -> AnswerStream here, or a pool stream
let nextStream = 1;

function coded(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

async function compile(wasmUrl) {
  const url = new URL(wasmUrl, self.location.href);
  try {
    return await WebAssembly.compileStreaming(fetch(url, { credentials: 'same-origin' }));
  } catch {
    // a server that does not send application/wasm, or an HTML page: fetch the bytes and say what they are
    const res = await fetch(url, { credentials: 'same-origin' });
    if (!res.ok) throw coded('wasm', `could not fetch ${url}: HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
      throw coded('wasm', `${url} is not a WebAssembly file${bytes[0] === 0x3c ? ' (got HTML): check wasmUrl' : ''}`);
    }
    return WebAssembly.compile(bytes);
  }
}

function start({ wasmUrl, module }) {
  ready ??= (async () => {
    if (!module && wasmUrl == null) wasmBuild = relaxedSimd() ? 'relaxed-simd' : 'simd128';
    wasmModule = module || (await compile(wasmUrl ?? bestWasm()));
    await init({ module_or_path: wasmModule });
  })().catch((e) => {
    ready = null;
    throw e.code ? e : coded('wasm', `could not start meetcite: ${e.message}`);
  });
  return ready;
}

// The wasm instance `init` started, or a rejection when no init came first.
const started = () => ready ?? Promise.reject(coded('not_started', 'the worker was not initialised'));

function poolSize(workers) {
  if (workers === 'auto') return Math.min(self.navigator?.hardwareConcurrency || 1, 4);
  const n = Math.floor(Number(workers ?? 1));
  if (!(n >= 1)) throw coded('invalid_input', `workers must be a positive number or "auto", got ${workers}`);
  return n;
}

async function load(id, { source, options = {} }) {
  const size = typeof Worker === 'undefined' ? 1 : poolSize(options.workers);
  const t0 = performance.now();
  // the files download while the wasm module compiles (VerifierWorker.load sends init and load
  // back to back); only the Verifier needs the instance. Both are awaited together, so a failed
  // start is reported even while a download is still running.
  const [files] = await Promise.all([
    loadModel(source, { ...options, onProgress: (p) => self.postMessage({ id, type: 'progress', ...p }) }),
    started(),
  ]);
  const t1 = performance.now();
  // the new model is built before the old one goes: a model that fails to load (a config that does
  // not fit, a broken file) leaves the one in use loaded
  let nextPool = null;
  let poolError = null;
  if (size > 1) {
    try {
      nextPool = await VerifierPool.create(files, { size, module: wasmModule, workerUrl: options.poolWorkerUrl });
    } catch (e) {
      // one model in this worker still verifies everything, only slower
      poolError = { code: e.code || 'error', message: String(e.message || e) };
    }
  }
  const nextVerifier = nextPool ? null : new meetcite.Verifier(files);
  pool?.terminate();
  verifier?.free();
  pool = nextPool;
  verifier = nextVerifier;
  return {
    config: pool ? pool.config : verifier.config,
    workers: pool ? pool.size : 1,
    poolError,
    cached: files.cached,
    modelBytes: files.model.byteLength,
    build: wasmBuild,
    fetchMs: Math.round(t1 - t0),
    initMs: Math.round(performance.now() - t1),
  };
}

function openStream(sid) {
  const s = streams.get(sid);
  if (!s) throw coded('finished', 'the stream is finished: open a new one for the next answer');
  return s;
}

const handlers = {
  init: async (a) => {
    await start(a);
    return { version: meetcite.version() };
  },
  load: (a, id) => (loading = load(id, a).finally(() => (loading = null))),
  parseChunks: ({ chunks }) => meetcite.parseChunks(chunks),
  chunkTranscript: ({ text, opts, format }) => meetcite.chunkTranscript(text, opts, format),
  buildContext: ({ chunks, opts }) => meetcite.buildContext(chunks, opts),
  parseAnswer: ({ answer }) => meetcite.parseAnswer(answer),
  matchQuote: ({ text, quote, opts }) => meetcite.matchQuote(text, quote, opts),
  async verify({ answer, sources, opts }) {
    if (loading) await loading.catch(() => {});
    if (pool) return pool.verify(answer, sources, opts);
    if (verifier) return verifier.verify(answer, sources, opts);
    return meetcite.verify(answer, sources, opts);
  },
  async plan({ answer, sources, opts }) {
    if (pool) return pool.plan(answer, sources, opts);
    if (verifier) return verifier.plan(answer, sources, opts);
    throw coded('not_loaded', 'plan() needs a model: call load() first');
  },
  async score({ pairs }) {
    if (pool) return pool.score(pairs);
    if (verifier) return verifier.score(pairs);
    throw coded('not_loaded', 'score() needs a model: call load() first');
  },
  async streamOpen({ sources, opts }) {
    if (loading) await loading.catch(() => {});
    const s = pool ? await pool.stream(sources, opts) : verifier ? verifier.stream(sources, opts) : meetcite.stream(sources, opts);
    const sid = nextStream++;
    streams.set(sid, s);
    return sid;
  },
  streamPush: ({ sid, piece }) => openStream(sid).push(piece),
  async streamFinish({ sid }) {
    const s = openStream(sid);
    streams.delete(sid);
    try {
      return await s.finish();
    } finally {
      s.free?.(); // a wasm AnswerStream; a pool stream lives in its worker
    }
  },
  renderHtml: ({ report, opts }) => meetcite.renderHtml(report, opts),
  renderMarkdown: ({ report, opts }) => meetcite.renderMarkdown(report, opts),
  metrics: ({ report, gold }) => meetcite.metrics(report, gold),
};

self.onmessage = async ({ data }) => {
  const { id, type, ...args } = data || {};
  try {
    const h = handlers[type];
    if (!h) throw coded('unknown_message', `unknown message ${type}`);
    // load waits for the instance itself, after starting its downloads
    if (type !== 'init' && type !== 'load') await started();
    self.postMessage({ id, type: 'result', value: await h(args, id) });
  } catch (e) {
    const error = e && typeof e === 'object' ? { code: e.code || 'error', message: String(e.message ?? e), name: e.name || 'Error' } : { code: 'error', message: String(e), name: 'Error' };
    self.postMessage({ id, type: 'error', error });
  }
};
