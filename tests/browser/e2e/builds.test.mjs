// The package's two wasm builds in Chromium (wasm-url.js): init() with no argument fetches the
// relaxed-SIMD build in a browser that has relaxed SIMD, and not the simd128 one; each build scores
// the pinned pairs as onnxruntime does, and both give the pricing example the same report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SLOW, serveAndLaunch, recordRequests } from './lib.mjs';

const env = serveAndLaunch();
const pinned = readFileSync(path.join(ROOT, 'models/eval/parity_pairs.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

const maxDiff = (a, b) => Math.max(...a.flatMap((p, i) => p.map((x, k) => Math.abs(x - b[i][k]))));

test('wasm builds: init() picks relaxed-simd in Chromium; both builds score as onnxruntime and verify alike', { timeout: SLOW + 120_000 }, async () => {
  const context = env.browser.context;
  const requests = recordRequests(context);
  const page = await context.newPage();
  await page.goto(`${env.server.url}data/examples.json`); // same origin, no demo scripts running
  const got = await page.evaluate(async (pairs) => {
    const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
    const files = { model: await bytes('/models/nli-minilm-l6-int8.onnx'), tokenizer: await bytes('/models/tokenizer.json'), config: await bytes('/models/config.json') };
    const chunks = await (await fetch('/data/pricing_chunks.json')).text();
    const answer = await (await fetch('/data/pricing_answer.json')).text();
    const { relaxedSimd } = await import('/pkg/wasm-url.js');
    const run = async (mod) => {
      const v = await mod.Verifier.load(files);
      const probs = pairs.map(([p, h]) => {
        const [r] = v.score([[p, h]]);
        return [r.entailment, r.neutral, r.contradiction];
      });
      const ctx = mod.buildContext(chunks, { order: 'date' });
      const report = v.verify(answer, ctx.sources, {});
      v.free();
      return { probs, report };
    };
    // the default (no argument), then the simd128 file named explicitly in a second instance of
    // the glue (a module URL with a query is a module of its own, with its own wasm instance)
    const auto = await import('/pkg/meetcite.js');
    await auto.default();
    const simd = await import('/pkg/meetcite.js?build=simd128');
    await simd.default({ module_or_path: '/pkg/meetcite_bg.wasm' });
    return { relaxed: relaxedSimd(), ua: navigator.userAgent, auto: await run(auto), simd128: await run(simd) };
  }, pinned.map((p) => [p.premise, p.hypothesis]));
  await page.close();

  assert.ok(got.relaxed, `this Chromium validates relaxed SIMD (Chrome >= 114): ${got.ua}`);
  const wasm = requests.map((r) => new URL(r.url).pathname).filter((p) => p.endsWith('.wasm'));
  assert.deepEqual(wasm, ['/pkg/meetcite_relaxed_bg.wasm', '/pkg/meetcite_bg.wasm'], 'init() fetched the relaxed build, the explicit call the simd128 one');
  const ort = pinned.map((p) => p.probs);
  const dRelaxed = maxDiff(got.auto.probs, ort);
  const dSimd = maxDiff(got.simd128.probs, ort);
  const dBuilds = maxDiff(got.auto.probs, got.simd128.probs);
  console.log(`# chromium: ${pinned.length} pinned pairs, max |dp| vs onnxruntime: relaxed-simd ${dRelaxed.toExponential(1)}, simd128 ${dSimd.toExponential(1)}; between the builds ${dBuilds.toExponential(1)}`);
  assert.ok(dRelaxed < 1e-4 && dSimd < 1e-4, `relaxed ${dRelaxed}, simd128 ${dSimd}`);
  assert.ok(dBuilds < 1e-5, `the builds differ by ${dBuilds}`);
  const verdicts = (r) => r.claims.map((c) => [c.status, c.reasons.map((x) => x.code).join(',')]);
  assert.equal(got.auto.report.nli_used, true);
  assert.deepEqual(verdicts(got.auto.report), verdicts(got.simd128.report));
  assert.equal(got.auto.report.claims.length, 6);
});
