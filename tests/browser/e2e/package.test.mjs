// The npm packages as an app uses them, in headless Chromium:
// * a plain <script type="module"> page importing meetcite/worker and meetcite-model-minilm from
//   node_modules: model loaded in the worker with progress events, served with Content-Length and
//   compressed without it (progress never shows a made-up total), a second visit from the Cache API
//   (no model request), a wrong URL answered by an HTML page, and bad arguments, all as coded errors;
// * a Vite app (vite build, and the dev server) using meetcite/worker with a nested pool,
//   meetcite/pool on the main thread and the model package: same verdicts as the Node package.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { cpSync, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, SLOW, launch } from './lib.mjs';

const PKG = path.join(ROOT, 'pkg');
const MODEL_PKG = path.join(ROOT, 'pkg-model');
const CHUNKS = readFileSync(path.join(ROOT, 'tests/fixtures/pricing_chunks.json'), 'utf8');
const ANSWER = readFileSync(path.join(ROOT, 'tests/fixtures/pricing_answer.json'), 'utf8');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm', '.onnx': 'application/octet-stream', '.css': 'text/css' };

/** An app folder: index.html (+ main.js) and node_modules/{meetcite, meetcite-model-minilm} copied from pkg/ and pkg-model/. */
function appDir(files) {
  const dir = mkdtempSync(path.join(tmpdir(), 'meetcite-app-'));
  mkdirSync(path.join(dir, 'node_modules'));
  cpSync(PKG, path.join(dir, 'node_modules/meetcite'), { recursive: true });
  cpSync(MODEL_PKG, path.join(dir, 'node_modules/meetcite-model-minilm'), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/**
 * A static server over `root`. `state.mode` (set by the test): 'plain' sends Content-Length,
 * 'gzip' compresses and streams without it (as nginx or a CDN does). Unknown paths get index.html
 * with 200 (an SPA fallback, as Vite's dev server answers). Every request path is logged.
 */
function staticServer(root) {
  const state = { mode: 'plain', log: [] };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    state.log.push(url.pathname);
    let file = path.join(root, decodeURIComponent(url.pathname));
    let st;
    try {
      st = statSync(file);
      if (st.isDirectory()) st = statSync((file = path.join(file, 'index.html')));
    } catch {
      file = path.join(root, 'index.html'); // SPA fallback
      st = statSync(file);
    }
    const headers = { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-cache' };
    if (state.mode === 'gzip' && /gzip/.test(req.headers['accept-encoding'] || '')) {
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' }); // no Content-Length: chunked
      const gz = zlib.createGzip({ level: 1 });
      gz.pipe(res);
      // in pieces, so the page sees several progress events
      const data = readFileSync(file);
      for (let o = 0; o < data.length; o += 1 << 20) gz.write(data.subarray(o, o + (1 << 20)));
      gz.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': st.size });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ state, url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() })));
}

const PLAIN_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>plain</title></head><body>
<script type="module">
  import { VerifierWorker } from './node_modules/meetcite/worker.js';
  import { modelFiles, sizes, sha256 } from './node_modules/meetcite-model-minilm/index.js';
  window.meetcite = { VerifierWorker, modelFiles, sizes, sha256 };
  document.body.dataset.ready = 'true';
</script></body></html>`;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

// Load the model in a VerifierWorker from the page, recording progress; verify the pricing answer.
async function loadAndVerify(page, { withSizes, cache, urls }) {
  return page.evaluate(async ({ withSizes, cache, urls, chunks, answer }) => {
    const { VerifierWorker, modelFiles, sizes, sha256 } = window.meetcite;
    const events = [];
    const t0 = performance.now();
    const w = await VerifierWorker.load(urls || modelFiles, { cache, ...(withSizes ? { sizes, sha256 } : {}), onProgress: (p) => events.push(p) });
    const loadMs = performance.now() - t0;
    const ctx = await w.buildContext(chunks, { order: 'date' });
    const report = await w.verify(answer, ctx.sources, { policy: 'warn' });
    const info = w.loadInfo;
    w.terminate();
    return { events, info, report, loadMs, sizes };
  }, { withSizes, cache, urls, chunks: CHUNKS, answer: ANSWER });
}

test('plain module page: meetcite/worker + model package; progress with and without Content-Length; second visit from cache', { timeout: SLOW + 120_000 }, async () => {
  const dir = appDir({ 'index.html': PLAIN_PAGE });
  const server = await staticServer(dir);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await page.goto(server.url);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    const onnx = JSON.parse(readFileSync(path.join(MODEL_PKG, 'package.json'), 'utf8')).files.find((f) => f.endsWith('.onnx'));
    const size = statSync(path.join(MODEL_PKG, onnx)).size;
    const urls = { model: `node_modules/meetcite-model-minilm/${onnx}`, tokenizer: 'node_modules/meetcite-model-minilm/tokenizer.json', config: 'node_modules/meetcite-model-minilm/config.json' };

    // 1. Content-Length, plain URLs (no known sizes): totals come from the header
    server.state.mode = 'plain';
    const a = await loadAndVerify(page, { urls, cache: 'test-plain' });
    const am = a.events.filter((e) => e.file === 'model');
    assert.ok(am.length >= 2, `progress events: ${am.length}`);
    assert.ok(am.every((e) => e.total === size), `model total = Content-Length ${size}: ${[...new Set(am.map((e) => e.total))]}`);
    assert.equal(am.at(-1).loaded, size);
    assert.equal(a.events.at(-1).overall.loaded, a.events.at(-1).overall.total);
    assert.equal(a.info.cached, false);
    assert.equal(a.info.build, 'relaxed-simd', 'the worker picked the relaxed-SIMD build (Chromium has it)');
    assert.equal(a.report.nli_used, true);

    // 2. gzip, no Content-Length, plain URLs: the size is unknown (null), never 0, until the end
    server.state.mode = 'gzip';
    const b = await loadAndVerify(page, { urls, cache: 'test-gzip' });
    const bm = b.events.filter((e) => e.file === 'model');
    assert.ok(bm.length >= 2, `progress events: ${bm.length}`);
    assert.ok(bm.slice(0, -1).every((e) => e.total === null && e.overall.total === null), 'unknown total while streaming');
    assert.ok(bm.every((e) => e.loaded <= size));
    assert.equal(bm.at(-1).loaded, size);
    assert.equal(bm.at(-1).total, size, 'known once complete');
    assert.ok(!b.events.some((e) => e.total === 0 || e.overall.total === 0), 'no "x / 0 MB"');
    assert.deepEqual(b.report.claims.map((c) => c.status), a.report.claims.map((c) => c.status));

    // 3. gzip with the model package's sizes: exact totals from the first event
    const c = await loadAndVerify(page, { withSizes: true, cache: 'test-sizes' });
    const cm = c.events.filter((e) => e.file === 'model');
    assert.ok(cm.every((e) => e.total === size && e.overall.total === c.sizes.model + c.sizes.tokenizer + c.sizes.config), 'exact totals');
    console.log(`# chromium: worker load ${Math.round(a.loadMs)} ms (Content-Length), ${Math.round(b.loadMs)} ms (gzip), ${bm.length} model progress events without a total`);

    // 4. second visit: a new page, the same cache: nothing fetched, cached: true
    server.state.log.length = 0;
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    const d = await loadAndVerify(page, { withSizes: true, cache: 'test-sizes' });
    assert.equal(d.info.cached, true);
    assert.ok(d.events.filter((e) => e.file === 'model').every((e) => e.cached));
    assert.deepEqual(server.state.log.filter((p) => p.endsWith('.onnx')), [], 'the model was not fetched again');
    console.log(`# chromium: second visit, model from cache in ${Math.round(d.loadMs)} ms`);

    // 5. errors: a wrong URL answered with HTML, bad arguments, a bad worker URL
    server.state.mode = 'plain';
    const e = await page.evaluate(async ({ chunks }) => {
      const { VerifierWorker, modelFiles } = window.meetcite;
      const codeOf = async (f) => {
        try {
          await f();
          return 'no error';
        } catch (e) {
          return e instanceof Error ? `${e.code}: ${e.message}` : `not an Error: ${e}`;
        }
      };
      const w = await VerifierWorker.create();
      const ctx = await w.buildContext(chunks, {});
      const out = {
        html: await codeOf(() => w.load({ model: 'models/missing.onnx', tokenizer: 'node_modules/meetcite-model-minilm/tokenizer.json', config: 'node_modules/meetcite-model-minilm/config.json' }, { cache: false })),
        answerObject: await codeOf(() => w.verify({ claims: [] }, ctx.sources)),
        answerNumber: await codeOf(() => w.verify(42, ctx.sources)),
        answerNull: await codeOf(() => w.verify(null, ctx.sources)),
        sourcesNull: await codeOf(() => w.verify('{"claims":[]}', null)),
        chunksNumber: await codeOf(() => w.buildContext(7)),
        noModel: await codeOf(() => w.score([['a', 'b']])),
        badWorker: await codeOf(() => VerifierWorker.create({ workerUrl: '/nope/worker-thread.js' })),
        // VerifierWorker.load sends init and load at once (the download overlaps the compile): a
        // wasm that cannot start is reported as such, not as the load's "not started", and a
        // missing model file while the wasm starts fine as the model's error
        badWasmLoad: await codeOf(() => VerifierWorker.load(modelFiles, { wasmUrl: '/nope/meetcite_bg.wasm', cache: false })),
        badModelLoad: await codeOf(() => VerifierWorker.load({ model: 'models/missing.onnx', tokenizer: 'node_modules/meetcite-model-minilm/tokenizer.json', config: 'node_modules/meetcite-model-minilm/config.json' }, { cache: false })),
      };
      // still usable after all of that
      out.after = (await w.verify('{"claims":[]}', ctx.sources)).abstain;
      w.terminate();
      out.terminated = await codeOf(() => w.verify('{"claims":[]}', ctx.sources));
      return out;
    }, { chunks: CHUNKS });
    assert.match(e.html, /^model_fetch: .*got HTML, not an ONNX file: check the URL/);
    for (const k of ['answerObject', 'answerNumber', 'answerNull']) assert.match(e[k], /^invalid_input: the answer must be a string/, k);
    assert.match(e.sourcesNull, /^invalid_input: /);
    assert.match(e.chunksNumber, /^invalid_input: /);
    assert.match(e.noModel, /^not_loaded: /);
    assert.match(e.badWorker, /^worker: /);
    assert.match(e.badWasmLoad, /^wasm: /);
    assert.match(e.badModelLoad, /^model_fetch: .*got HTML, not an ONNX file: check the URL/);
    assert.equal(e.after, true);
    assert.match(e.terminated, /^terminated: /);
    assert.deepEqual(errors.filter((x) => !/Failed to load resource|worker-thread/.test(x)), []);
  } finally {
    await page.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const VITE_MAIN = `
import { VerifierWorker } from 'meetcite/worker';
import { VerifierPool } from 'meetcite/pool';
import init, { buildContext } from 'meetcite';
import { loadModel, modelFiles, sizes, sha256 } from 'meetcite-model-minilm';
window.run = async (chunks, answer) => {
  // everything in a worker, the NLI model on a nested pool of 2
  const w = await VerifierWorker.load(modelFiles, { sizes, sha256, workers: 2, cache: false });
  const ctx = await w.buildContext(chunks, { order: 'date' });
  const viaWorker = await w.verify(answer, ctx.sources, { policy: 'warn' });
  const info = w.loadInfo;
  w.terminate();
  // the pool from the main thread
  await init();
  const files = await loadModel({ cache: false });
  const pool = await VerifierPool.create(files, { size: 2 });
  const viaPool = await pool.verify(answer, buildContext(chunks, { order: 'date' }).sources, { policy: 'warn' });
  pool.terminate();
  return { viaWorker, viaPool, workers: info.workers, poolError: info.poolError, build: info.build };
};
document.body.dataset.ready = 'true';
`;

async function runApp(url) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
  // failed requests by URL (the page has no favicon: the browser's own request for one is not the app's)
  page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && errors.push(`${r.status()} ${r.url()}`));
  const wasm = []; // the .wasm files fetched (the page's and its workers')
  page.on('request', (r) => /\.wasm(\?|$)/.test(r.url()) && wasm.push(new URL(r.url()).pathname.split('/').pop()));
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60_000 });
    const r = await page.evaluate(({ chunks, answer }) => window.run(chunks, answer), { chunks: CHUNKS, answer: ANSWER });
    return { ...r, errors, wasm };
  } finally {
    await page.close();
  }
}

test('Vite app: production build and dev server, meetcite/worker with a nested pool, meetcite/pool, the model package', { timeout: SLOW + 240_000 }, async () => {
  const vite = await import('vite');
  const dir = appDir({
    'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>vite app</title></head><body><script type="module" src="/main.js"></script></body></html>',
    'main.js': VITE_MAIN,
    // no configuration: what a new Vite app has (Vite 8 handles the packages' new URL(..., import.meta.url)
    // workers and assets in the build and in the dev server's dependency optimizer)
    'vite.config.mjs': "export default { logLevel: 'warn' };\n",
  });
  const m = await import(path.join(PKG, 'node.js'));
  const want = m.verify(ANSWER, m.buildContext(CHUNKS, { order: 'date' }).sources).claims.map((c) => c.status);
  try {
    const t0 = Date.now();
    await vite.build({ root: dir, configFile: path.join(dir, 'vite.config.mjs') });
    const built = Date.now() - t0;
    const server = await staticServer(path.join(dir, 'dist'));
    let prod;
    try {
      prod = await runApp(server.url);
    } finally {
      server.close();
    }
    const dev = await vite.createServer({ root: dir, configFile: path.join(dir, 'vite.config.mjs'), server: { port: 0, host: '127.0.0.1' } });
    await dev.listen();
    let devRun;
    try {
      devRun = await runApp(dev.resolvedUrls.local[0]);
    } finally {
      await dev.close();
    }
    for (const [name, r] of [['build', prod], ['dev', devRun]]) {
      assert.deepEqual(r.errors, [], `${name}: console errors`);
      assert.equal(r.poolError, null, `${name}: the nested pool started`);
      assert.equal(r.workers, 2, name);
      // the bundler emitted both builds and the package fetched the relaxed-SIMD one (Chromium has it)
      assert.equal(r.build, 'relaxed-simd', `${name}: loadInfo.build`);
      assert.ok(r.wasm.length > 0 && r.wasm.every((f) => /^meetcite_relaxed_bg\b/.test(f)), `${name}: wasm fetched: ${r.wasm}`);
      assert.equal(r.viaWorker.nli_used, true, name);
      assert.equal(r.viaPool.nli_used, true, name);
      assert.deepEqual(r.viaPool.claims.map((c) => c.status), r.viaWorker.claims.map((c) => c.status), `${name}: pool vs worker`);
      // the deterministic verdicts of the Node package hold (NLI only adds flags)
      r.viaWorker.claims.forEach((c, i) => want[i] !== 'supported' && assert.equal(c.status, want[i], `${name}: claim ${i}`));
    }
    console.log(`# chromium: vite build ${built} ms; worker+pool and pool verdicts agree in build and dev; wasm fetched: build ${[...new Set(prod.wasm)]}, dev ${[...new Set(devRun.wasm)]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
