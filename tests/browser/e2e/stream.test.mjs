// Streaming verification in headless Chromium through meetcite/worker with a pool of two NLI
// workers: the example answer is pushed at an LLM's pace (about 50 tokens a second), each claim's
// verdict arrives while the answer is still streaming, and finish() gives the report verify() gives
// on the whole text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SLOW, serveAndLaunch } from './lib.mjs';

const env = serveAndLaunch();

test('VerifierWorker#stream (pool x2): verdicts before the answer ends, final report equals verify', { timeout: SLOW + 120_000 }, async () => {
  const page = await env.browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
  await page.goto(`${env.server.url}data/examples.json`); // same origin as /pkg/ and /models/
  const chunks = readFileSync(path.join(ROOT, 'tests/fixtures/pricing_chunks.json'), 'utf8');
  const answer = readFileSync(path.join(ROOT, 'tests/fixtures/pricing_answer.json'), 'utf8');
  const r = await page.evaluate(async ({ chunks, answer }) => {
    const { VerifierWorker } = await import('/pkg/worker.js');
    const w = await VerifierWorker.load({ model: '/models/nli-minilm-l6-int8.onnx', tokenizer: '/models/tokenizer.json', config: '/models/config.json' }, { workers: 2 });
    const ctx = await w.buildContext(chunks, { order: 'date' });
    const s = await w.stream(ctx.sources, {});
    const t0 = performance.now();
    const events = [];
    const pushes = [];
    // 4 characters every 20 ms, without waiting for the verdicts: a token stream
    for (let i = 0; i < answer.length; i += 4) {
      pushes.push(s.push(answer.slice(i, i + 4)).then((evs) => evs.forEach((e) => events.push({ ...e, at: performance.now() - t0 }))));
      await new Promise((res) => setTimeout(res, 20));
    }
    const lastPushAt = performance.now() - t0;
    await Promise.all(pushes);
    const end = await s.finish();
    const whole = await w.verify(answer, ctx.sources, {});
    let finished = null;
    try {
      await s.push('more');
    } catch (e) {
      finished = e.code;
    }
    const workers = w.loadInfo.workers;
    w.terminate();
    return { events, lastPushAt, end, whole, finished, workers };
  }, { chunks, answer });
  const claims = r.events.filter((e) => e.type === 'claim');
  console.log(`# chromium: stream of ${answer.length} chars over ${Math.round(r.lastPushAt)} ms; verdicts at ${claims.map((e) => Math.round(e.at)).join(', ')} ms`);
  assert.equal(r.workers, 2);
  assert.equal(claims.length, 6);
  assert.deepEqual(claims.map((e) => e.claim.index), [0, 1, 2, 3, 4, 5]);
  assert.ok(claims[0].at < r.lastPushAt, 'the first verdict arrives before the answer ends');
  assert.ok(claims.some((e) => e.claim.support), 'NLI-scored while streaming');
  assert.ok(r.end.events.some((e) => e.type === 'update'), 'the superseded decision is an update at the end');
  assert.deepEqual(r.end.report, r.whole, 'finish() is verify() on the whole text');
  assert.equal(r.finished, 'finished');
  assert.deepEqual(errors, []);
  await page.close();
});
