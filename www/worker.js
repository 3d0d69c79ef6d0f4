// meetcite demo worker: owns the wasm module and the NLI model so the UI thread never blocks.
// Protocol (main -> worker): {id, type, ...args}; (worker -> main): {id, type:'progress'|'result'|'error', ...}.
// With more than one core the NLI model runs on a VerifierPool (pkg/pool.js: nested workers, one
// model each, the pairs of one answer scored in parallel); otherwise, or when the pool cannot
// start, on a Verifier in this worker.
import init, * as meetcite from './pkg/meetcite.js';
import { VerifierPool } from './pkg/pool.js';

const CACHE_NAME = 'meetcite-model-v1';
let ready = null; // Promise<void> for the wasm module
let verifier = null; // meetcite.Verifier once the model is loaded (single-worker path)
let pool = null; // VerifierPool once the model is loaded (hardwareConcurrency > 1)
let wasmModule = null; // the compiled meetcite_bg.wasm, shared with the pool's workers
let loading = null; // Promise<object> while the model is loading

function post(msg, transfer) {
  self.postMessage(msg, transfer || []);
}

function errorToPlain(e) {
  if (e && typeof e === 'object') {
    return { code: e.code || 'error', message: String(e.message || e), name: e.name || 'Error' };
  }
  return { code: 'error', message: String(e), name: 'Error' };
}

const WASM_URL = new URL('./pkg/meetcite_bg.wasm', import.meta.url);

// Compile the module here (so the pool's workers reuse it), then instantiate it.
async function compileAndInit() {
  try {
    wasmModule = await WebAssembly.compileStreaming(fetch(WASM_URL));
  } catch {
    wasmModule = null; // e.g. a server without application/wasm: let the glue fetch it
  }
  return init({ module_or_path: wasmModule || WASM_URL });
}

function ensureWasm() {
  if (!ready) ready = compileAndInit();
  return ready;
}

// Workers for the pool: `requested` (from the page, ?workers=N) or the number of cores, at most 4
// (each holds a model); 1 = the single-worker path.
function poolSize(requested) {
  const cores = self.navigator?.hardwareConcurrency || 1;
  const n = Number.isFinite(requested) && requested > 0 ? Math.floor(requested) : Math.min(cores, 4);
  return typeof Worker === 'undefined' ? 1 : n;
}

async function openCache() {
  try {
    if (self.caches) return await self.caches.open(CACHE_NAME);
  } catch {
    // Cache API unavailable (opaque origin, private mode): just fetch.
  }
  return null;
}

// Fetch one file as bytes, reporting progress; served from the Cache API after the first load.
async function fetchBytes(url, file, id, cache) {
  const abs = new URL(url, self.location.href).href;
  if (cache) {
    const hit = await cache.match(abs);
    if (hit) {
      const buf = new Uint8Array(await hit.arrayBuffer());
      post({ id, type: 'progress', file, loaded: buf.length, total: buf.length, cached: true });
      return { bytes: buf, cached: true };
    }
  }
  const res = await fetch(abs, { credentials: 'same-origin' });
  if (!res.ok) {
    const err = new Error(`could not fetch ${file}: HTTP ${res.status}`);
    err.code = 'fetch_failed';
    throw err;
  }
  const total = Number(res.headers.get('content-length')) || 0;
  let bytes;
  if (res.body && res.body.getReader) {
    const reader = res.body.getReader();
    const parts = [];
    let loaded = 0;
    let lastPost = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      loaded += value.length;
      const now = performance.now();
      if (now - lastPost > 50) {
        lastPost = now;
        post({ id, type: 'progress', file, loaded, total });
      }
    }
    bytes = new Uint8Array(loaded);
    let o = 0;
    for (const p of parts) {
      bytes.set(p, o);
      o += p.length;
    }
  } else {
    bytes = new Uint8Array(await res.arrayBuffer());
  }
  post({ id, type: 'progress', file, loaded: bytes.length, total: total || bytes.length });
  if (cache) {
    try {
      await cache.put(abs, new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } }));
    } catch {
      // quota exceeded: keep going uncached
    }
  }
  return { bytes, cached: false };
}

async function loadModel(id, urls, requestedWorkers) {
  await ensureWasm();
  if (verifier || pool) return { alreadyLoaded: true };
  const t0 = performance.now();
  const cache = await openCache();
  const [model, tokenizer, config] = await Promise.all([
    fetchBytes(urls.model, 'model', id, cache),
    fetchBytes(urls.tokenizer, 'tokenizer', id, cache),
    fetchBytes(urls.config, 'config', id, cache),
  ]);
  const t1 = performance.now();
  const files = { model: model.bytes, tokenizer: tokenizer.bytes, config: config.bytes };
  const size = poolSize(requestedWorkers);
  let poolError = null;
  if (size > 1) {
    try {
      pool = await VerifierPool.create(files, { size, module: wasmModule || undefined, wasmUrl: WASM_URL });
    } catch (e) {
      poolError = errorToPlain(e);
      console.warn('meetcite: worker pool unavailable, verifying in one worker', e);
    }
  }
  if (!pool) verifier = await meetcite.Verifier.load(files);
  const t2 = performance.now();
  return {
    workers: pool ? pool.size : 1,
    poolError,
    fetchMs: Math.round(t1 - t0),
    initMs: Math.round(t2 - t1),
    totalMs: Math.round(t2 - t0),
    cached: model.cached && tokenizer.cached && config.cached,
    modelBytes: model.bytes.length,
  };
}

const handlers = {
  async init() {
    await ensureWasm();
    return { version: meetcite.version ? meetcite.version() : null };
  },
  async load(msg) {
    if (!loading) loading = loadModel(msg.id, msg.urls, msg.workers).catch((e) => { loading = null; throw e; });
    return loading;
  },
  async buildContext(msg) {
    await ensureWasm();
    return meetcite.buildContext(msg.chunks, msg.opts || {});
  },
  async parseAnswer(msg) {
    await ensureWasm();
    return meetcite.parseAnswer(msg.text);
  },
  async verify(msg) {
    await ensureWasm();
    const t0 = performance.now();
    let report;
    if (pool) report = await pool.verify(msg.answer, msg.sources, msg.opts || {});
    else if (verifier) report = verifier.verify(msg.answer, msg.sources, msg.opts || {});
    else report = meetcite.verify(msg.answer, msg.sources, msg.opts || {});
    return { report, ms: Math.round(performance.now() - t0), nli: !!(pool || verifier), workers: pool ? pool.size : 1 };
  },
  async renderHtml(msg) {
    await ensureWasm();
    return meetcite.renderHtml(msg.report, msg.opts || {});
  },
  async renderMarkdown(msg) {
    await ensureWasm();
    return meetcite.renderMarkdown(msg.report, msg.opts || {});
  },
};

self.onmessage = async (ev) => {
  const msg = ev.data || {};
  const h = handlers[msg.type];
  if (!h) {
    post({ id: msg.id, type: 'error', error: { code: 'unknown_message', message: `unknown message ${msg.type}` } });
    return;
  }
  try {
    const value = await h(msg);
    post({ id: msg.id, type: 'result', value });
  } catch (e) {
    post({ id: msg.id, type: 'error', error: errorToPlain(e) });
  }
};
