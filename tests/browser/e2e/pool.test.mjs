// VerifierPool (pkg/pool.js) in headless Chromium: two module workers, each with its own wasm
// instance and model, give the report a single Verifier gives on the 10-claim / 20-chunk bench
// fixture; score keeps the order; errors keep their codes; the demo verifies through the pool and
// through its single-worker fallback (?workers=1) with the same verdicts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SLOW, serveAndLaunch } from './lib.mjs';

const env = serveAndLaunch();

// Deep equality, NLI probabilities included: the model scores each pair alone (`batch_size` 1), so
// which worker scored a pair, and beside which others, changes no bit.
function sameReport(a, b, where = 'report') {
  assert.deepEqual(a, b, where);
}

test('VerifierPool x2 gives the single Verifier report (10 claims / 20 chunks)', { timeout: SLOW + 120_000 }, async () => {
  const page = await env.browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
  page.on('response', (res) => res.status() >= 400 && !res.url().endsWith('/favicon.ico') && errors.push(`${res.status()} ${res.url()}`));
  await page.goto(`${env.server.url}data/examples.json`); // same origin as /pkg/ and /models/
  const chunks = readFileSync(path.join(ROOT, 'bench/fixtures/e2e_chunks.json'), 'utf8');
  const answer = readFileSync(path.join(ROOT, 'bench/fixtures/e2e_answer.json'), 'utf8');
  const r = await page.evaluate(async ({ chunks, answer }) => {
    const mod = await import('/pkg/meetcite.js');
    await mod.default();
    const { VerifierPool } = await import('/pkg/pool.js');
    const get = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
    const files = { model: await get('/models/nli-minilm-l6-int8.onnx'), tokenizer: await get('/models/tokenizer.json'), config: await get('/models/config.json') };
    const ctx = mod.buildContext(chunks, { order: 'date' });
    const verifier = await mod.Verifier.load(files);
    let t = performance.now();
    const single = verifier.verify(answer, ctx.sources, { policy: 'warn' });
    const singleMs = performance.now() - t;
    const pool = await VerifierPool.create(files, { size: 2 });
    // the caller's buffers are copied, not transferred
    const kept = files.model.byteLength > 0;
    t = performance.now();
    const pooled = await pool.verify(answer, ctx.sources, { policy: 'warn' });
    const poolMs = performance.now() - t;
    const pairs = await pool.plan(answer, ctx.sources, { policy: 'warn', both_pairs: true });
    const pooledProbs = await pool.score(pairs.slice(0, 5));
    const singleProbs = pairs.slice(0, 5).map((p) => verifier.score([p])[0]);
    let code = null;
    try {
      await pool.verify('I cannot answer that.', ctx.sources);
    } catch (e) {
      code = e instanceof Error ? e.code : `not an Error: ${e}`;
    }
    let singleCode = null;
    try {
      verifier.verify('I cannot answer that.', ctx.sources);
    } catch (e) {
      singleCode = e.code;
    }
    const size = pool.size;
    const config = pool.config;
    pool.terminate();
    let after = null;
    try {
      await pool.score(pairs.slice(0, 1));
    } catch (e) {
      after = e.code;
    }
    verifier.free();
    return { single, pooled, singleMs, poolMs, pairs: pairs.length, pooledProbs, singleProbs, code, singleCode, size, config, kept, after };
  }, { chunks, answer });
  console.log(`# chromium: ${r.pairs} NLI pairs; verify single ${Math.round(r.singleMs)} ms, pool x2 ${Math.round(r.poolMs)} ms (first calls)`);
  assert.equal(r.size, 2);
  assert.equal(r.config.max_length, 256);
  assert.equal(r.kept, true, 'the model bytes are still usable by the caller');
  assert.equal(r.single.nli_used, true);
  assert.ok(r.pairs >= 10, `pairs ${r.pairs}`);
  sameReport(r.pooled, r.single);
  assert.ok(r.single.claims.some((c) => c.nli), 'claims reached NLI');
  r.pooledProbs.forEach((p, i) => sameReport({ nli: { p } }, { nli: { p: r.singleProbs[i] } }, `score[${i}]`));
  assert.equal(r.singleCode, 'no_json');
  assert.equal(r.code, 'no_json', 'pool errors carry the wasm error code');
  assert.equal(r.after, 'terminated');
  assert.deepEqual(errors, []);
  await page.close();
});

test('demo: pool (default) and single-worker fallback (?workers=1) give the same verdicts', { timeout: SLOW + 120_000 }, async () => {
  const run = async (query) => {
    const page = await env.browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${env.server.url}${query}`);
    await page.waitForFunction(() => document.body.dataset.model === 'ready' || document.body.dataset.model === 'failed', null, { timeout: SLOW });
    assert.equal(await page.evaluate(() => document.body.dataset.model), 'ready', await page.textContent('#model-text'));
    await page.waitForFunction(() => document.querySelector('#answer').value.includes('claims'));
    await page.click('#verify');
    await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
    const out = await page.evaluate(() => ({
      workers: window.meetciteDemo.lastVerifyWorkers,
      loadWorkers: window.meetciteDemo.timings.load.workers,
      ms: window.meetciteDemo.timings.verify,
      report: window.meetciteDemo.report,
    }));
    assert.deepEqual(errors, [], `${query}: console errors`);
    await page.close();
    return out;
  };
  const cores = await (async () => {
    const p = await env.browser.context.newPage();
    const n = await p.evaluate(() => navigator.hardwareConcurrency);
    await p.close();
    return n;
  })();
  const pooled = await run('');
  const single = await run('?workers=1');
  console.log(`# chromium: demo verify ${pooled.ms} ms with ${pooled.workers} worker(s), ${single.ms} ms with 1 (hardwareConcurrency ${cores})`);
  assert.equal(single.workers, 1);
  assert.equal(single.loadWorkers, 1);
  assert.equal(pooled.workers, cores > 1 ? Math.min(cores, 4) : 1);
  assert.equal(pooled.report.nli_used, true);
  sameReport(pooled.report, single.report);
});
