// meetcite/model: fetch the NLI model files ({model, tokenizer, config}) with progress events and
// Cache-API caching, or take their bytes as they are. Browsers and workers; the model package
// (meetcite-model-minilm) ships a copy of this file as load.js.
//
//   import { loadModel } from 'meetcite/model';
//   const files = await loadModel({ model: '/m/nli.onnx', tokenizer: '/m/tokenizer.json', config: '/m/config.json' },
//     { onProgress: (p) => console.log(p.overall.loaded, p.overall.total) });
//   const verifier = await Verifier.load(files);
//   await loadModel('/models/my-checker/');          // a folder: config.json names the other two files
//   await modelFromFiles(input.files);               // a folder picked from disk (<input webkitdirectory>)
//
// Errors are `Error`s with a `code`: `model_fetch` (HTTP error, network error, an HTML page or an
// empty file where a model file should be, bytes that do not match the expected digest) or
// `invalid_input`.

export const FILES = ['model', 'tokenizer', 'config'];
export const DEFAULT_CACHE = 'meetcite-model-v1';

function coded(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isUrl = (v) => typeof v === 'string' || (v != null && typeof v === 'object' && typeof v.href === 'string');

function toBytes(v) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

const KIND = { model: 'an ONNX file', tokenizer: 'tokenizer.json', config: 'config.json' };

/**
 * Why `bytes` cannot be the model file `file`, or null. A wrong URL behind a web server or a dev
 * server's fallback page (Vite answers every unknown path with index.html) arrives as HTML; a failed
 * upload or a truncated response as nothing.
 */
export function badModelFile(bytes, file, contentType = '') {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  if (i >= bytes.length) return `the file is empty, not ${KIND[file] || file}`;
  const head = String.fromCharCode(...bytes.subarray(i, i + 16)).toLowerCase();
  const html = /^<(!doctype|html|head|body|!--)/.test(head) || (/text\/html/i.test(contentType) && head.startsWith('<'));
  if (html) return `got HTML, not ${KIND[file] || file}: check the URL`;
  return null;
}

async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle; // only in secure contexts (https, localhost)
  if (!subtle) return null;
  const d = new Uint8Array(await subtle.digest('SHA-256', bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function openCache(cache) {
  if (cache === false || !globalThis.caches) return null;
  try {
    return await globalThis.caches.open(typeof cache === 'string' ? cache : DEFAULT_CACHE);
  } catch {
    return null; // opaque origins, some private modes: just fetch
  }
}

// The cache key of a file: its URL, plus the expected digest when there is one, so a new model
// published under the same file name is fetched again instead of served stale from the cache.
function cacheKey(url, sha256) {
  if (!sha256) return url;
  const k = new URL(url);
  k.searchParams.set('meetcite-sha256', sha256);
  return k.href;
}

async function dropStale(cache, url, key) {
  try {
    const base = new URL(url);
    for (const req of await cache.keys()) {
      const u = new URL(req.url);
      if (req.url !== key && u.origin === base.origin && u.pathname === base.pathname && u.searchParams.has('meetcite-sha256')) await cache.delete(req);
    }
  } catch {
    // best effort
  }
}

// Bytes of a Response, reporting progress. `expected` (the file's known size) wins over
// Content-Length, which is absent behind a compressing server (chunked) and, when the response is
// encoded, counts compressed bytes while the stream yields decompressed ones.
async function readBody(res, report, expected) {
  const encoded = (res.headers.get('content-encoding') || 'identity').toLowerCase() !== 'identity';
  const header = encoded ? null : Number(res.headers.get('content-length')) || null;
  let total = expected || header;
  if (!res.body || !res.body.getReader) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    report(bytes.length, bytes.length);
    return bytes;
  }
  const reader = res.body.getReader();
  const parts = [];
  let loaded = 0;
  report(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    if (total != null && loaded > total) total = null; // the size we were told is wrong: unknown
    report(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let o = 0;
  for (const p of parts) {
    bytes.set(p, o);
    o += p.length;
  }
  return bytes;
}

/**
 * Get the model files. `source`: `{model, tokenizer, config}`, each a URL (string or `URL`,
 * resolved against `options.baseUrl` or the page) or bytes (`Uint8Array`, `ArrayBuffer`; the
 * JSON files may also be strings); or a model folder, as a URL (`'/models/my-checker/'`) or
 * `{dir}`, or `{config}` alone as a URL: config.json is fetched first and its `model_file` and
 * `tokenizer_file` (default `model.onnx`, `tokenizer.json`) are fetched beside it. Options:
 * - `onProgress({file, loaded, total, cached, overall: {loaded, total}})`: `total` is `null` when
 *   the size is unknown (no Content-Length and no `sizes`); `overall.total` is `null` until every
 *   file's size is known. Events are throttled to about one per 50 ms per file, plus the last one.
 * - `cache`: `true` (default: Cache API, cache `meetcite-model-v1`), `false`, or a cache name.
 * - `sizes`, `sha256`: `{model, tokenizer, config}` of the expected files (the model package
 *   passes them): exact progress totals behind compressing servers; the digest keys the cache
 *   and, where `crypto.subtle` exists, is checked.
 * - `fetch`: a `fetch` to use; `signal`: an AbortSignal; `credentials` (default `same-origin`).
 * Returns `{model, tokenizer, config}` as `Uint8Array`s, and `cached` (all from the cache).
 */
export async function loadModel(source, options = {}) {
  const { onProgress, cache = true, sizes = {}, sha256 = {}, signal, credentials = 'same-origin', baseUrl } = options || {};
  const base = baseUrl ?? globalThis.location?.href;
  // a folder (a URL, or {dir}) holding config.json: the config is fetched first and names the
  // model and tokenizer files, as models/export_hf.py writes them
  const dir = isUrl(source) ? source : source?.dir;
  if (dir != null) {
    if (!isUrl(dir)) throw coded('invalid_input', 'loadModel(): the model folder must be a URL');
    let folder;
    try {
      folder = new URL(String(dir.href ?? dir), base);
    } catch {
      throw coded('invalid_input', `loadModel(): the model folder is not a URL: ${dir}`);
    }
    if (!folder.pathname.endsWith('/')) folder.pathname += '/';
    source = { config: new URL('config.json', folder).href };
  }
  if (!source || typeof source !== 'object') throw coded('invalid_input', 'loadModel() takes a model folder URL or {model, tokenizer, config} (URLs or bytes)');
  if (onProgress != null && typeof onProgress !== 'function') throw coded('invalid_input', 'onProgress must be a function');
  const doFetch = options.fetch || globalThis.fetch;
  // model and tokenizer may be left out when config is a URL: config.json names them
  const named = isUrl(source.config) && !/^\s*[{[]/.test(String(source.config.href ?? source.config));
  for (const f of FILES) {
    const v = source[f];
    if (v == null && f !== 'config' && named) continue;
    if (v == null) throw coded('invalid_input', `loadModel(): \`${f}\` is missing`);
    if (!isBytes(v) && !isUrl(v) && !(typeof v === 'string')) throw coded('invalid_input', `loadModel(): \`${f}\` must be a URL or bytes`);
  }
  const state = Object.fromEntries(FILES.map((f) => [f, { loaded: 0, total: sizes[f] ?? null, cached: false }]));
  const last = {};
  const emit = (file, force) => {
    if (!onProgress) return;
    const now = Date.now();
    if (!force && now - (last[file] || 0) < 50) return;
    last[file] = now;
    const s = state[file];
    const totals = FILES.map((f) => state[f].total);
    const overall = { loaded: FILES.reduce((a, f) => a + state[f].loaded, 0), total: totals.every((t) => t != null) ? totals.reduce((a, t) => a + t, 0) : null };
    try {
      onProgress({ file, loaded: s.loaded, total: s.total, cached: s.cached, overall });
    } catch {
      // a failing progress callback must not fail the load
    }
  };
  const store = await openCache(cache);
  const one = async (file) => {
    const v = source[file];
    const s = state[file];
    if (isBytes(v) || (typeof v === 'string' && file !== 'model' && /^\s*[{[]/.test(v))) {
      const bytes = typeof v === 'string' ? new TextEncoder().encode(v) : toBytes(v);
      s.loaded = s.total = bytes.length;
      emit(file, true);
      return { bytes, cached: false };
    }
    let url;
    try {
      url = new URL(String(v.href ?? v), base).href;
    } catch {
      throw coded('invalid_input', `loadModel(): \`${file}\` is not a URL: ${v}`);
    }
    const fail = (why) => coded('model_fetch', `could not load the ${file} file from ${url}: ${why}`);
    const key = cacheKey(url, sha256[file]);
    let res = store ? await store.match(key).catch(() => undefined) : undefined;
    s.cached = !!res;
    if (!res) {
      try {
        res = await doFetch(url, { credentials, signal });
      } catch (e) {
        if (e?.name === 'AbortError') throw e;
        throw fail(e?.message || String(e));
      }
      if (!res.ok) throw fail(`HTTP ${res.status}${res.status === 404 ? ' (not found)' : ''}`);
    }
    const contentType = res.headers.get('content-type') || '';
    const bytes = await readBody(res, (loaded, total) => {
      s.loaded = loaded;
      if (sizes[file] == null) s.total = total;
      emit(file, false);
    }, sizes[file]);
    s.loaded = bytes.length;
    s.total = bytes.length;
    emit(file, true);
    const bad = badModelFile(bytes, file, contentType);
    if (bad) {
      if (s.cached) await store.delete(key).catch(() => {});
      throw fail(bad);
    }
    if (sha256[file]) {
      const got = await sha256Hex(bytes);
      if (got && got !== sha256[file]) {
        if (s.cached) await store.delete(key).catch(() => {});
        throw fail(`its SHA-256 is ${got}, expected ${sha256[file]} (a different model version?)`);
      }
    }
    if (store && !s.cached) {
      try {
        await store.put(key, new Response(bytes, { headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) } }));
        if (sha256[file]) await dropStale(store, url, key);
      } catch {
        // quota exceeded: keep going uncached
      }
    }
    return { bytes, cached: s.cached };
  };
  let got;
  if (source.model == null || source.tokenizer == null) {
    const config = await one('config');
    const at = new URL(String(source.config.href ?? source.config), base);
    let cfg;
    try {
      cfg = JSON.parse(new TextDecoder().decode(config.bytes));
    } catch (e) {
      throw coded('model_fetch', `could not load the config file from ${at.href}: not JSON (${e.message})`);
    }
    const named = namedFiles(cfg);
    source = { model: source.model ?? new URL(named.model, at).href, tokenizer: source.tokenizer ?? new URL(named.tokenizer, at).href, config: source.config };
    got = [...(await Promise.all(['model', 'tokenizer'].map(one))), config];
  } else {
    got = await Promise.all(FILES.map(one));
  }
  const out = Object.fromEntries(FILES.map((f, i) => [f, got[i].bytes]));
  out.cached = got.every((g) => g.cached);
  return out;
}

// The model and tokenizer file names a folder's config.json gives (`model_file`, `tokenizer_file`),
// with the names models/export_hf.py writes when it gives none.
function namedFiles(cfg) {
  const name = (k, dflt) => (typeof cfg?.[k] === 'string' && cfg[k] ? cfg[k] : dflt);
  return { model: name('model_file', 'model.onnx'), tokenizer: name('tokenizer_file', 'tokenizer.json') };
}

/**
 * The model files from a folder the user picked (`<input type="file" webkitdirectory>`'s `files`,
 * or dropped `File`s): `config.json` (the shallowest one) names the model and tokenizer files, which
 * must sit beside it. Nothing leaves the page. Returns `{model, tokenizer, config}` bytes for
 * `Verifier.load` / `VerifierWorker#load`, plus `name` (config's, else the folder's) and `bytes`
 * (the three files' size).
 */
export async function modelFromFiles(files) {
  const list = Array.from(files ?? []);
  if (!list.length || !list.every((f) => f && typeof f.name === 'string' && typeof f.arrayBuffer === 'function')) {
    throw coded('invalid_input', 'modelFromFiles() takes the File objects of a model folder');
  }
  const path = (f) => f.webkitRelativePath || f.name;
  const dirOf = (f) => path(f).slice(0, path(f).length - f.name.length);
  const configs = list.filter((f) => f.name === 'config.json').sort((a, b) => path(a).split('/').length - path(b).split('/').length);
  if (!configs.length) throw coded('invalid_input', 'the folder has no config.json (export a checkpoint with models/export_hf.py)');
  const cfgFile = configs[0];
  const config = new Uint8Array(await cfgFile.arrayBuffer());
  let cfg;
  try {
    cfg = JSON.parse(new TextDecoder().decode(config));
  } catch (e) {
    throw coded('invalid_input', `${path(cfgFile)} is not JSON: ${e.message}`);
  }
  const beside = (name) => list.find((f) => dirOf(f) === dirOf(cfgFile) && f.name === name) ?? (list.length <= 3 ? list.find((f) => f.name === name) : undefined);
  const named = namedFiles(cfg);
  const pick = (file, key) => {
    const f = beside(named[file]);
    if (!f) throw coded('invalid_input', `config.json names ${key} ${JSON.stringify(named[file])}, which is not in the folder`);
    return f;
  };
  const [m, t] = [pick('model', 'model_file'), pick('tokenizer', 'tokenizer_file')];
  const [model, tokenizer] = await Promise.all([m, t].map(async (f) => new Uint8Array(await f.arrayBuffer())));
  for (const [bytes, file] of [[model, 'model'], [tokenizer, 'tokenizer'], [config, 'config']]) {
    const bad = badModelFile(bytes, file);
    if (bad) throw coded('invalid_input', bad);
  }
  const folder = dirOf(cfgFile).replace(/\/$/, '').split('/').pop();
  return { model, tokenizer, config, name: cfg?.name || folder || 'model', bytes: model.length + tokenizer.length + config.length };
}

export default loadModel;
