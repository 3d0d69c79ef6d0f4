// Section "e2e": 10 claims against 20 chunks (bench/fixtures/e2e_*.json, from
// bench/tools/e2e_fixture.mjs) in headless Chromium. cold_ms: fresh browser profile (empty caches,
// the server sends no-store), fetch wasm + model + tokenizer, init, Verifier.load, buildContext,
// verify; median over BENCH_E2E_COLD fresh browsers. Two ways: the page's steps one after the
// other (so the parts add up), and meetcite/worker's VerifierWorker.load (download overlapped with
// the wasm compile: what an app using the package gets). warm_ms: verify again, median of 5.
// Then, on the last page: premiseTokens 128 on the single Verifier, and a VerifierPool of 2 workers
// (pkg/pool.js; full premises and premiseTokens 128), warm_ms median of 5 after one untimed run;
// plus an "nli" row: pool.score of the 8 int8 t128 pairs of bench/fixtures/nli_pairs.json.
// "both pairs" rows run the same verify with `both_pairs: true`, i.e. without the shipped model's
// quote-first cascade (issue 16's "one NLI pair per claim" lever, measured beside it in one run).
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { ROOT, row, median, startServer, launch, openPage } from './lib.mjs';

const CASE = '10 claims / 20 chunks';
const IMPL = 'meetcite (chromium)';
const COLD = Number(process.env.BENCH_E2E_COLD || 3);
const arg = {
  pkg: '/pkg/', model: '/models/nli-minilm-l6-int8.onnx', tokenizer: '/models/tokenizer.json', config: '/models/config.json',
  chunks: '/bench/fixtures/e2e_chunks.json', answer: '/bench/fixtures/e2e_answer.json', options: { order: 'date' },
};

const server = await startServer();
const colds = [];
const workerColds = [];
let warmMs = { ms: [], pairs: 0 };
let warm128 = { ms: [], pairs: 0 };
let warmBoth = { ms: [], pairs: 0 };
let pooled = null;
const POOL = 2;
const PT = 128;
const nliPairs = JSON.parse(readFileSync(path.join(ROOT, 'bench/fixtures/nli_pairs.json'), 'utf8')).sets[128].map((p) => [p.premise, p.hypothesis]);
try {
  // the package's own cold path first (VerifierWorker.load), each in a fresh profile
  for (let i = 0; i < COLD; i++) {
    console.log(`e2e: cold run through meetcite/worker ${i + 1}/${COLD}`);
    const browser = await launch();
    try {
      const page = await openPage(browser.context, server.url);
      workerColds.push(await page.evaluate(async (a) => (await import('/bench/browser/pages/e2e.mjs')).coldWorker(a), arg));
    } finally {
      await browser.close();
    }
  }
  for (let i = 0; i < COLD; i++) {
    console.log(`e2e: cold run ${i + 1}/${COLD}`);
    const browser = await launch();
    try {
      const page = await openPage(browser.context, server.url);
      colds.push(await page.evaluate(async (a) => (await import('/bench/browser/pages/e2e.mjs')).cold(a), arg));
      if (i === COLD - 1) {
        warmMs = await page.evaluate(async () => (await import('/bench/browser/pages/e2e.mjs')).warm(5));
        console.log(`e2e: premiseTokens ${PT}, then pool x${POOL}`);
        warm128 = await page.evaluate(async (pt) => (await import('/bench/browser/pages/e2e.mjs')).warm(5, { policy: 'warn', premise_tokens: pt }, 1), PT);
        warmBoth = await page.evaluate(async () => (await import('/bench/browser/pages/e2e.mjs')).warm(5, { policy: 'warn', both_pairs: true }, 1));
        pooled = await page.evaluate(async (a) => (await import('/bench/browser/pages/e2e.mjs')).pool(a), {
          size: POOL, runs: 5, nliRuns: Number(process.env.BENCH_NLI_RUNS || 10), pairs: nliPairs,
          variants: [{ name: 'full', opts: { policy: 'warn' } }, { name: 'pt', opts: { policy: 'warn', premise_tokens: PT } },
            { name: 'both', opts: { policy: 'warn', both_pairs: true } }],
        });
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
const med = (k) => median(colds.map((c) => c[k]));
const c = colds[colds.length - 1];
const n = `median of ${COLD} fresh browser profiles`;
row('e2e', CASE, IMPL, 'cold_ms', med('coldMs'), 'ms', `${n}; int8 model, sequential: init + fetch + load + verify`);
{
  const wm = (k) => median(workerColds.map((c) => c[k]));
  const W = 'meetcite/worker (chromium)';
  const wn = `median of ${COLD} fresh browser profiles; VerifierWorker.load (one worker, no pool)`;
  row('e2e', CASE, W, 'cold_ms', wm('coldMs'), 'ms', `${wn}: import worker.js, wasm compile overlapped with the model download, load, buildContext + verify in the worker`);
  row('e2e', CASE, W, 'fetch_ms', wm('fetchMs'), 'ms', `${wn}: model files in the worker, overlapped with the wasm compile + instantiate (until both are done)`);
  row('e2e', CASE, W, 'load_ms', wm('buildMs'), 'ms', `${wn}: the Verifier built from the bytes in the worker`);
  row('e2e', CASE, W, 'first_verify_ms', wm('verifyMs'), 'ms', `${wn}: buildContext + verify, messages included`);
  const same = workerColds.every((c) => c.statuses.join(',') === colds[colds.length - 1].statuses.join(','));
  console.log(`  worker verdicts ${same ? 'same as' : 'DIFFER from'} the page's`);
}
row('e2e', CASE, IMPL, 'warm_ms', median(warmMs.ms), 'ms', `Verifier.verify again on the loaded verifier, median of 5; ${warmMs.pairs} NLI pairs`);
row('e2e', CASE, `${IMPL}, both pairs`, 'warm_ms', median(warmBoth.ms), 'ms',
  `Verifier.verify with both_pairs (no quote-first cascade), median of 5 after one untimed run; ${warmBoth.pairs} NLI pairs`);
row('e2e', CASE, IMPL, 'wasm_init_ms', med('initMs'), 'ms', `${n}; import meetcite.js + fetch/compile/instantiate ${c.wasm} (the package's pick)`);
row('e2e', CASE, IMPL, 'fetch_ms', med('fetchMs'), 'ms', `${n}; model + tokenizer + config + data from localhost`);
row('e2e', CASE, IMPL, 'load_ms', med('loadMs'), 'ms', `${n}; Verifier.load from bytes`);
row('e2e', CASE, IMPL, 'first_verify_ms', med('verifyMs'), 'ms', `${n}; buildContext + first verify`);
row('e2e', CASE, IMPL, 'nli_pairs', c.nliPairs, 'pairs',
  `pairs scored for the ${c.nliClaims} of ${c.claims} claims that reached NLI (quote pair, context pair only near the threshold); supersession checks (${c.conflicts} conflicts reported) not counted`);
console.log(`  sources ${c.sources}, counts ${JSON.stringify(c.counts)}, nliUsed ${c.nliUsed}`);
console.log(`  verdicts: ${c.statuses.join(', ')}`);
row('e2e', CASE, `${IMPL}, premiseTokens ${PT}`, 'warm_ms', median(warm128.ms), 'ms',
  `Verifier.verify with premiseTokens ${PT} (context premise capped at ${PT} tokens), median of 5 after one untimed run`);
if (pooled) {
  const full = pooled.variants.full, pt = pooled.variants.pt, both = pooled.variants.both;
  const same = (v) => `verdicts ${v.sameVerdicts ? 'same as' : 'DIFFER from'} the single Verifier, max |dp| ${v.dp.toExponential(1)}`;
  row('e2e', CASE, `meetcite pool x${POOL} (chromium)`, 'load_ms', pooled.createMs, 'ms',
    `VerifierPool.create from bytes: ${POOL} module workers in parallel (wasm compile + instantiate + Verifier), on the warm page`);
  row('e2e', CASE, `meetcite pool x${POOL} (chromium)`, 'warm_ms', median(full.ms), 'ms',
    `VerifierPool.verify: plan on worker 0, ${full.pairs} pairs scored on ${POOL} workers, verify with the scores; median of 5 after one untimed run; ${same(full)}`);
  row('e2e', CASE, `meetcite pool x${POOL}, premiseTokens ${PT} (chromium)`, 'warm_ms', median(pt.ms), 'ms',
    `as pool x${POOL} with premiseTokens ${PT}; median of 5 after one untimed run; ${same(pt)}`);
  row('e2e', CASE, `meetcite pool x${POOL}, both pairs (chromium)`, 'warm_ms', median(both.ms), 'ms',
    `as pool x${POOL} with both_pairs (no quote-first cascade), ${both.pairs} pairs; median of 5 after one untimed run; ${same(both)}`);
  if (pooled.nli) {
    row('nli', 'int8 b8 t128', `meetcite-int8 wasm pool x${POOL}`, 'ms', median(pooled.nli.ms), 'ms',
      `VerifierPool.score of the 8 pairs (${POOL} workers, 4 pairs each): tokenize + infer; median of ${pooled.nli.ms.length} runs after 2 warm-ups; max |dp| vs the page's Verifier (same build) ${pooled.nli.dp.toExponential(1)}`);
  }
}
