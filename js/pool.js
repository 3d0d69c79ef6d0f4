// meetcite VerifierPool: the NLI model on several Web Workers, one answer verified in parallel.
//
//   import { VerifierPool } from 'meetcite/pool';
//   const pool = await VerifierPool.create({ model, tokenizer, config }, { size: 2 });
//   const report = await pool.verify(answer, sources, opts); // same report as Verifier#verify
//   pool.terminate();
//
// Each worker (pool-worker.js) instantiates the wasm module (compiled once here and shared) and
// loads its own Verifier from a copy of the model bytes. verify: worker 0 lists the NLI pairs
// (Verifier#plan), the pairs are split across the workers balanced by text length, every worker
// scores its share (Verifier#score) at the same time, and worker 0
// verifies with those scores.
// Browsers only (Web Workers with `type: 'module'`). Errors reject with an Error whose `code` is
// the wasm error's code (`invalid_json`, `model`, ...) or `worker` / `terminated` / `wasm`.

import { wasmUrl as bestWasm } from './wasm-url.js'; // the build this engine runs best

// Bundlers: the workers start with `new Worker(new URL('./pool-worker.js', import.meta.url), {type:
// 'module'})`, the literal form Vite and webpack recognise and bundle as a worker (with its import of
// meetcite.js). A URL kept in a variable is treated as a plain asset instead: Vite inlined it as a
// data: URL whose `import './meetcite.js'` cannot resolve. `workerUrl` overrides it.
function spawn(workerUrl) {
  if (workerUrl == null) return new Worker(new URL('./pool-worker.js', import.meta.url), { type: 'module' });
  return new Worker(workerUrl, { type: 'module' });
}

// a URL given as a string, a `URL` or anything with an `href`
const urlOf = (v) => (v != null && typeof v === 'object' && typeof v.href === 'string' ? v.href : v);

function coded(code, message, name) {
  const e = new Error(message);
  e.code = code;
  if (name && name !== 'Error') e.name = name;
  return e;
}

// One worker and its pending calls.
class Channel {
  constructor(worker) {
    this.worker = worker;
    this.next = 1;
    this.pending = new Map();
    worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.value);
      else p.reject(coded(data.error.code || 'error', data.error.message, data.error.name));
    };
    const fail = (what) => (ev) => {
      ev.preventDefault?.();
      this.failAll(coded('worker', `meetcite pool worker ${what}: ${ev.message || 'failed to start or crashed'}`));
    };
    worker.onerror = fail('error');
    worker.onmessageerror = fail('message error');
  }

  call(type, args, transfer = []) {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, type, ...args }, transfer);
    });
  }

  failAll(err) {
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

// A fresh copy of one model file for one worker: strings as they are, bytes in a new buffer to transfer.
function copyFile(v, name) {
  if (typeof v === 'string') return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v).slice();
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  throw coded('invalid_input', v == null ? `load(): \`${name}\` is missing` : `load(): \`${name}\` must be a Uint8Array, ArrayBuffer or string`);
}

async function compileWasm(url) {
  const res = () => fetch(url, { credentials: 'same-origin' }).then((r) => {
    if (!r.ok) throw coded('wasm', `could not fetch ${url}: HTTP ${r.status}`);
    return r;
  });
  try {
    return await WebAssembly.compileStreaming(res());
  } catch (e) {
    if (e.code) throw e;
    // a server that does not send application/wasm
    return WebAssembly.compile(await (await res()).arrayBuffer());
  }
}

/**
 * Split items with these `costs` into `n` groups of about equal total cost: costliest first, each to
 * the least loaded group. Returns arrays of indices into `items`.
 */
export function balance(costs, n) {
  const groups = Array.from({ length: n }, () => ({ load: 0, idx: [] }));
  const order = costs.map((c, i) => i).sort((a, b) => costs[b] - costs[a] || a - b);
  for (const i of order) {
    let g = groups[0];
    for (const h of groups) if (h.load < g.load) g = h;
    g.load += costs[i];
    g.idx.push(i);
  }
  return groups.map((g) => g.idx.sort((a, b) => a - b));
}

export class VerifierPool {
  /**
   * @param files `{model, tokenizer, config}` as for `Verifier.load`; each worker gets a copy.
   * @param options `{size = navigator.hardwareConcurrency || 2, wasmUrl, workerUrl, module}`:
   *   `module`, a compiled `WebAssembly.Module` of meetcite's wasm, saves fetching and compiling it
   *   again; `wasmUrl` / `workerUrl` say where the wasm build to run (default: the one wasm-url.js
   *   picks) / pool-worker.js are when a bundler or a CDN moved them.
   */
  static async create(files, { size, wasmUrl, workerUrl, module } = {}) {
    if (typeof Worker === 'undefined') throw coded('unsupported', 'VerifierPool needs Web Workers');
    if (!files || typeof files !== 'object') throw coded('invalid_input', 'load() takes {model, tokenizer, config}');
    const n = Math.max(1, Math.floor(Number(size ?? (globalThis.navigator?.hardwareConcurrency || 2)) || 1));
    const perWorker = () => {
      const f = {};
      for (const k of ['model', 'tokenizer', 'config']) f[k] = copyFile(files[k], k);
      return f;
    };
    perWorker(); // validate before starting anything
    let wasm = module;
    if (!wasm) {
      const base = globalThis.location?.href;
      try {
        wasm = await compileWasm(wasmUrl == null ? bestWasm() : new URL(urlOf(wasmUrl), base));
      } catch (e) {
        throw e.code ? e : coded('wasm', `could not compile meetcite's wasm: ${e.message}`);
      }
    }
    const pool = new VerifierPool(Array.from({ length: n }, () => new Channel(spawn(workerUrl == null ? undefined : new URL(urlOf(workerUrl), globalThis.location?.href)))));
    try {
      const infos = await Promise.all(pool.channels.map((c) => {
        const f = perWorker();
        const transfer = Object.values(f).filter((v) => typeof v !== 'string').map((v) => v.buffer);
        return c.call('init', { wasm, files: f }, transfer);
      }));
      pool.config = infos[0].config;
    } catch (e) {
      pool.terminate();
      throw e;
    }
    return pool;
  }

  constructor(channels) {
    this.channels = channels;
    this.config = null;
  }

  /** Number of workers. */
  get size() {
    return this.channels.length;
  }

  /** The `[premise, hypothesis]` pairs `verify` scores for this answer (worker 0's `Verifier#plan`). */
  plan(answer, sources, opts) {
    return this.channels[0].call('plan', { answer, sources, opts });
  }

  /** Score pairs in parallel: `Probs[]` in the order of `pairs`. */
  async score(pairs) {
    if (!Array.isArray(pairs)) throw coded('invalid_input', 'pairs: expected an array of [premise, hypothesis]');
    const groups = balance(pairs.map((p) => (Array.isArray(p) ? String(p[0]).length + String(p[1]).length : 0)), this.channels.length);
    const parts = await Promise.all(groups.map((g, w) => (g.length ? this.channels[w].call('score', { pairs: g.map((i) => pairs[i]) }) : [])));
    const out = new Array(pairs.length);
    groups.forEach((g, w) => g.forEach((i, k) => (out[i] = parts[w][k])));
    return out;
  }

  /** Verify an answer with quote matching and NLI: the report `Verifier#verify` gives. */
  async verify(answer, sources, opts) {
    const w0 = this.channels[0];
    if (this.channels.length === 1) return w0.call('verify', { answer, sources, opts });
    // With the model's quote-first cascade the first plan lists the quote pairs and the second
    // the context pairs those left open; a plan with nothing left ends it (two rounds at most).
    const scores = [...(opts?.scores || [])];
    for (let round = 0; round < 3; round++) {
      const pairs = await this.plan(answer, sources, { ...(opts || {}), scores });
      if (!pairs.length) break;
      const probs = await this.score(pairs);
      pairs.forEach(([premise, hypothesis], i) => scores.push({ premise, hypothesis, probs: probs[i] }));
    }
    return w0.call('verify', { answer, sources, opts: { ...(opts || {}), scores } });
  }

  /**
   * Verify an answer while it arrives: `{push(piece) -> Promise<StreamEvent[]>, finish() ->
   * Promise<Finished>}` (see `Verifier#stream`). A stream runs on one worker (claims come one at a
   * time; each has two NLI pairs); concurrent streams go to the workers in turn.
   */
  async stream(sources, opts) {
    const ch = this.channels[(this.#nextStream++) % this.channels.length];
    const sid = await ch.call('streamOpen', { sources, opts });
    return { push: (piece) => ch.call('streamPush', { sid, piece }), finish: () => ch.call('streamFinish', { sid }) };
  }

  #nextStream = 0;

  /** Stop every worker; pending and later calls reject with code `terminated`. */
  terminate() {
    for (const c of this.channels) {
      c.worker.terminate();
      c.failAll(coded('terminated', 'the VerifierPool was terminated'));
    }
  }
}

export default VerifierPool;
