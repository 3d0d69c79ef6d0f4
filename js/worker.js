// meetcite/worker: meetcite in a Web Worker, with the promise API of the main module and Verifier,
// so neither loading the model (about half a second after the download) nor verifying (a few
// hundred milliseconds per answer) blocks the page.
//
//   import { VerifierWorker } from 'meetcite/worker';
//   const v = await VerifierWorker.load(
//     { model: '/models/nli-minilm-l6-int8.onnx', tokenizer: '/models/tokenizer.json', config: '/models/config.json' },
//     { onProgress: (p) => bar.value = p.overall.total ? p.overall.loaded / p.overall.total : 0 });
//   const ctx = await v.buildContext(chunks, { order: 'date' });
//   const report = await v.verify(answer, ctx.sources, { policy: 'warn' });
//
// The model files are fetched inside the worker (progress events, Cache API) or given as bytes
// (copied, never detached). `workers: n` (or 'auto') runs the NLI model on a VerifierPool of n
// nested workers. Without a model (`VerifierWorker.create()`), verify runs the quote, number,
// speaker and history checks. Errors reject with an `Error` whose `code` is meetcite's.
//
// Bundlers: the worker is started with `new Worker(new URL('./worker-thread.js', import.meta.url),
// {type: 'module'})`, the form Vite, webpack 5, Parcel and esbuild's plugins recognise and bundle
// (with meetcite.js, pool.js and the .wasm file). `workerUrl` / `wasmUrl` override both URLs.

function coded(code, message, name) {
  const e = new Error(message);
  e.code = code;
  if (name && name !== 'Error') e.name = name;
  return e;
}

function spawn(workerUrl) {
  if (typeof Worker === 'undefined') throw coded('unsupported', 'meetcite/worker needs Web Workers (a browser); in Node, use Verifier from "meetcite"');
  // keep this expression literal: it is what bundlers look for
  if (workerUrl == null) return new Worker(new URL('./worker-thread.js', import.meta.url), { type: 'module' });
  return new Worker(workerUrl, { type: 'module' });
}

const urlOf = (v) => (v != null && typeof v === 'object' && typeof v.href === 'string' ? v.href : v);

export class VerifierWorker {
  /**
   * Start the worker and its wasm instance, without a model. Options: `workerUrl`, `wasmUrl`
   * (where worker-thread.js and the wasm build to run are, when a bundler or a CDN moved them;
   * default: the build wasm-url.js picks), or `module`, an already compiled `WebAssembly.Module`
   * of meetcite's wasm.
   */
  static async create(options = {}) {
    const w = VerifierWorker.#spawn(options);
    try {
      await w.#init(options);
    } catch (e) {
      w.terminate();
      throw e;
    }
    return w;
  }

  /**
   * `create(options)` and `load(model, options)` at once: the counterpart of `Verifier.load`. The
   * worker downloads the model files while it compiles the wasm module (the two used to run one
   * after the other; a cold start paid for both).
   */
  static async load(model, options = {}) {
    const w = VerifierWorker.#spawn(options);
    const init = w.#init(options);
    // the load message goes right behind init's; the worker fetches the files at once and waits
    // for its wasm instance only to build the Verifier. Both are awaited, so neither can reject
    // unobserved; init's error is the one to report when both fail (load's is then only "not
    // started").
    const [i, l] = await Promise.allSettled([init, w.load(model, options)]);
    if (i.status === 'rejected' || l.status === 'rejected') {
      w.terminate();
      throw i.status === 'rejected' ? i.reason : l.reason;
    }
    return w;
  }

  static #spawn(options) {
    return new VerifierWorker(spawn((options || {}).workerUrl));
  }

  async #init(options) {
    const { wasmUrl, module } = options || {};
    const base = globalThis.location?.href;
    const info = await this.#call('init', { wasmUrl: wasmUrl == null ? undefined : new URL(urlOf(wasmUrl), base).href, module });
    this.version = info.version;
  }

  #worker;
  #next = 1;
  #pending = new Map();
  #dead = null;

  constructor(worker) {
    this.#worker = worker;
    /** The model's config.json once a model is loaded, else null. */
    this.config = null;
    /** What the last load did: `{workers, cached, modelBytes, fetchMs, initMs, poolError}`. */
    this.loadInfo = null;
    this.version = null;
    worker.onmessage = ({ data }) => {
      const p = this.#pending.get(data?.id);
      if (!p) return;
      if (data.type === 'progress') {
        const { id, type, ...event } = data;
        try {
          p.onProgress?.(event);
        } catch {
          // the page's callback failing is not the worker's failure
        }
        return;
      }
      this.#pending.delete(data.id);
      if (data.type === 'result') p.resolve(data.value);
      else p.reject(coded(data.error?.code || 'error', data.error?.message, data.error?.name));
    };
    const fail = (what) => (ev) => {
      ev.preventDefault?.();
      this.#failAll(coded('worker', `meetcite worker ${what}: ${ev.message || 'failed to start or crashed (is workerUrl right?)'}`));
    };
    worker.onerror = fail('error');
    worker.onmessageerror = fail('message error');
  }

  #call(type, args = {}, onProgress) {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress });
      try {
        this.#worker.postMessage({ id, type, ...args });
      } catch (e) {
        this.#pending.delete(id);
        reject(coded('invalid_input', `${type}: the arguments cannot be sent to a worker (${e.message})`));
      }
    });
  }

  #failAll(err) {
    this.#dead = err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  /**
   * Load (or replace) the NLI model. `model`: `{model, tokenizer, config}`, each a URL (fetched in
   * the worker, with progress and the Cache API) or bytes; the model package's `modelFiles` fits.
   * Options: `onProgress`, `cache`, `sizes`, `sha256` (see meetcite/model's loadModel) and
   * `workers` (1 by default; n or 'auto' = min(cores, 4) for a VerifierPool, one model each).
   */
  async load(model, options = {}) {
    const { onProgress, cache, sizes, sha256, workers, baseUrl, poolWorkerUrl } = options || {};
    if (onProgress != null && typeof onProgress !== 'function') throw coded('invalid_input', 'onProgress must be a function');
    const base = baseUrl ?? globalThis.location?.href;
    // a model folder (URL or {dir}): resolved here, against the page; the worker's loadModel
    // fetches its config.json first
    const dir = typeof model === 'string' || typeof model?.href === 'string' ? model : model?.dir;
    const source = {};
    if (dir != null) {
      try {
        source.dir = new URL(urlOf(dir), base).href;
      } catch {
        throw coded('invalid_input', `load(): the model folder is not a URL: ${dir}`);
      }
    } else {
      if (!model || typeof model !== 'object') throw coded('invalid_input', 'load() takes a model folder URL or {model, tokenizer, config} (URLs or bytes)');
      for (const k of ['model', 'tokenizer', 'config']) {
        const v = model[k];
        if (v == null) throw coded('invalid_input', `load(): \`${k}\` is missing`);
        // URLs are resolved here, against the page, not against the worker's own URL; bytes are
        // copied by postMessage (the caller's buffers stay usable)
        source[k] = typeof v === 'string' && !/^\s*[{[]/.test(v) ? new URL(v, base).href : urlOf(v);
      }
    }
    const info = await this.#call('load', { source, options: { cache, sizes, sha256, workers, poolWorkerUrl: poolWorkerUrl == null ? undefined : new URL(urlOf(poolWorkerUrl), base).href } }, onProgress);
    this.config = info.config;
    this.loadInfo = info;
    return info;
  }

  /** Whether a model is loaded (verify then includes the NLI check). */
  get loaded() {
    return this.config != null;
  }

  parseChunks(chunks) {
    return this.#call('parseChunks', { chunks });
  }

  chunkTranscript(text, opts, format) {
    return this.#call('chunkTranscript', { text, opts, format });
  }

  buildContext(chunks, opts) {
    return this.#call('buildContext', { chunks, opts });
  }

  parseAnswer(answer) {
    return this.#call('parseAnswer', { answer });
  }

  matchQuote(text, quote, opts) {
    return this.#call('matchQuote', { text, quote, opts });
  }

  /** Verify an answer: with NLI once a model is loaded (and after a load in progress), else without. */
  verify(answer, sources, opts) {
    return this.#call('verify', { answer, sources, opts });
  }

  /**
   * Verify an answer while it arrives (`Verifier#stream` in the worker, on the pool when there is
   * one): resolves to `{push(piece), finish()}`; `push` resolves to the verdicts of the claims the
   * piece completed, `finish` to `{events, report}` (the report `verify` gives on the whole text).
   * Pushes need not wait for each other: the worker takes them in order.
   */
  async stream(sources, opts) {
    const sid = await this.#call('streamOpen', { sources, opts });
    return { push: (piece) => this.#call('streamPush', { sid, piece }), finish: () => this.#call('streamFinish', { sid }) };
  }

  plan(answer, sources, opts) {
    return this.#call('plan', { answer, sources, opts });
  }

  score(pairs) {
    return this.#call('score', { pairs });
  }

  renderHtml(report, opts) {
    return this.#call('renderHtml', { report, opts });
  }

  renderMarkdown(report, opts) {
    return this.#call('renderMarkdown', { report, opts });
  }

  metrics(report, gold) {
    return this.#call('metrics', { report, gold });
  }

  /** Stop the worker (and its pool); pending and later calls reject with code `terminated`. */
  terminate() {
    this.#worker.terminate();
    this.#failAll(coded('terminated', 'the VerifierWorker was terminated'));
  }
}

export default VerifierWorker;
