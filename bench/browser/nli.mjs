// Section "nli": the NLI cross-encoder in headless Chromium. meetcite's tract wasm (Verifier.score:
// tokenize + infer) vs onnxruntime-web's wasm backend (1 thread, and hardwareConcurrency threads
// with cross-origin isolation; infer only, pre-tokenized), on the int8, f32 and dynamic-int8 model files.
// Inputs: bench/fixtures/nli_pairs.json (8 pairs of exactly 128 and 256 tokens).
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, ORT_DIST, OUT, MODELS, row, median, startServer, launch, openPage } from './lib.mjs';

const sets = JSON.parse(readFileSync(path.join(ROOT, 'bench/fixtures/nli_pairs.json'), 'utf8')).sets;
const shapes = [[1, 128], [8, 128], [1, 256], [8, 256]];
const RUNS = Number(process.env.BENCH_NLI_RUNS || 10);
// b8 t256 may use fewer runs (at least 5) when 10 would take more than BENCH_NLI_BUDGET_MS
const timing = {
  default: { warm: 2, runs: RUNS, budgetMs: Infinity },
  '8 256': { warm: 2, runs: RUNS, budgetMs: Number(process.env.BENCH_NLI_BUDGET_MS || 12000) },
};
const url = (f) => '/' + path.relative(ROOT, f).split(path.sep).join('/');
const onlyModels = process.env.BENCH_NLI_MODELS; // comma-separated model names, for quick runs
const models = Object.entries(MODELS).filter(([name, f]) => {
  if (onlyModels && !onlyModels.split(',').includes(name)) return false;
  if (existsSync(f)) return true;
  console.log(`  skip ${name}: ${f} missing (python3 bench/tools/f32_model.py, bench/tools/dyn_int8_model.py)`);
  return false;
}).map(([name, f]) => ({ name, url: url(f) }));

// both builds the package ships (Chromium runs the relaxed one: js/wasm-url.js)
// meetcite-int8: the default package (`meetcite`, pkg/: no tract) on the shipped int8 file (its own
// encoder); it refuses the f32 and dynint8 files (they need tract), so those rows are left out.
// tract: `meetcite/full` (pkg/full/), runtime "tract", every file.
const impls = [
  { impl: 'tract wasm simd128', kind: 'tract', runtime: 'tract', pkg: '/pkg/full/', wasm: 'meetcite_bg.wasm' },
  { impl: 'tract wasm relaxed-simd', kind: 'tract', runtime: 'tract', pkg: '/pkg/full/', wasm: 'meetcite_relaxed_bg.wasm' },
  { impl: 'meetcite-int8 wasm simd128', kind: 'tract', runtime: 'auto', pkg: '/pkg/', wasm: 'meetcite_bg.wasm' },
  { impl: 'meetcite-int8 wasm relaxed-simd', kind: 'tract', runtime: 'auto', pkg: '/pkg/', wasm: 'meetcite_relaxed_bg.wasm' },
];
impls.push({ impl: 'onnxruntime-web wasm 1 thread', kind: 'ort', threads: 1 });
impls.push({ impl: 'onnxruntime-web wasm 2 threads', kind: 'ort', threads: 'max' });
const only = process.env.BENCH_NLI_IMPLS; // comma-separated substrings, for quick runs

const maxDiff = (a, b) => {
  let d = 0;
  a.forEach((p, i) => ['entailment', 'neutral', 'contradiction'].forEach((k) => { d = Math.max(d, Math.abs(p[k] - b[i][k])); }));
  return d;
};

const server = await startServer();
const browser = await launch();
const results = {};
try {
  for (const it of impls) {
    if (only && !only.split(',').some((s) => it.impl.includes(s))) continue;
    console.log(`nli: ${it.impl}`);
    const page = await openPage(browser.context, server.url);
    const t0 = Date.now();
    const r = await page.evaluate(async (arg) => {
      const m = await import('/bench/browser/pages/nli.mjs');
      return arg.kind === 'tract' ? m.runTract(arg) : m.runOrt(arg);
      // (meetcite-int8 rows: the shipped int8 file only; the default package refuses the others)
    }, { ...it, models: it.runtime === 'auto' ? models.filter((x) => x.name === 'int8') : models, shapes, sets, timing, tokenizerUrl: '/models/tokenizer.json', configUrl: '/models/config.json' });
    await page.close();
    results[it.impl] = r;
    let note = '';
    if (it.kind === 'tract') note = `Verifier.score: tokenize + infer (runtime ${it.runtime})`;
    else {
      note = 'infer only, pre-tokenized';
      if (it.threads !== 1) note += `; numThreads=${r.threads} (hardwareConcurrency), crossOriginIsolated=${r.crossOriginIsolated}`;
    }
    const ref = results['tract wasm simd128'];
    for (const [name, ms] of Object.entries(r.loads)) {
      const extra = it.kind === 'ort' && r.init[name] ? `; first create (untimed${name === models[0].name ? ', incl. ORT wasm init' : ''}) ${r.init[name].toFixed(0)} ms` : '';
      row('nli', `${name} load`, it.impl, 'ms', ms, 'ms', `bytes -> ready session, after one untimed load${extra}`);
    }
    for (const c of r.cases) {
      let n = `${note}; median of ${c.ms.length} runs`;
      const key = `${c.model} ${c.T}`;
      if (c.b === 8 && ref && it.impl !== 'tract wasm simd128' && ref.probs[key]) n += `; max |dp| vs tract simd128 ${maxDiff(r.probs[key], ref.probs[key]).toExponential(1)}`;
      row('nli', `${c.model} b${c.b} t${c.T}`, it.impl, 'ms', median(c.ms), 'ms', n);
    }
    console.log(`  (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
} finally {
  await browser.close();
  await server.close();
}
// the onnxruntime-web files the pages really fetched, for size.mjs
const ortFiles = [...server.served].filter((f) => f.startsWith(ORT_DIST + path.sep)).map((f) => path.relative(ORT_DIST, f)).sort();
if (ortFiles.length) {
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(path.join(path.dirname(OUT), 'ort-files.json'), JSON.stringify(ortFiles) + '\n');
  console.log(`  onnxruntime-web files fetched: ${ortFiles.join(', ')}`);
}
