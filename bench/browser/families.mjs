// Section "families": base-size BERT / RoBERTa / DeBERTa v3 / ELECTRA (target/bench/families, from
// tests/families/build.py --base; bench/run families makes them) in headless Chromium: meetcite's tract
// wasm vs onnxruntime-web wasm 1 thread on the same weight-only int8 file. Needs the bench_ids.json
// that `bench/peers.py families` writes beside each model (onnxruntime-web has no tokenizer).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, row, median, startServer, launch, openPage } from './lib.mjs';

const base = path.join(ROOT, process.env.MEETCITE_FAMILIES || 'target/bench/families');
const fx = JSON.parse(readFileSync(path.join(ROOT, 'bench/fixtures/family_pairs.json'), 'utf8'));
const shapes = [[1, 128], [8, 256]];
const timing = { warm: 1, runs: Number(process.env.BENCH_NLI_RUNS || 5), budgetMs: Number(process.env.BENCH_NLI_BUDGET_MS || 30000) };
const families = existsSync(base) ? readdirSync(base).filter((f) => existsSync(path.join(base, f, 'bench_ids.json'))).sort() : [];
if (!families.length) console.log(`  no families in ${base} with bench_ids.json (bench/run families builds them)`);

const server = await startServer();
const browser = await launch();
try {
  for (const family of families) {
    const dir = '/' + path.relative(ROOT, path.join(base, family)).split(path.sep).join('/') + '/';
    const cfg = JSON.parse(readFileSync(path.join(base, family, 'config.json'), 'utf8'));
    const mb = readFileSync(path.join(base, family, cfg.model_file)).length / 1e6;
    const ids = JSON.parse(readFileSync(path.join(base, family, 'bench_ids.json'), 'utf8'));
    for (const it of [{ impl: 'tract wasm simd128', kind: 'tract' }, { impl: 'onnxruntime-web wasm 1 thread', kind: 'ort' }]) {
      const t0 = Date.now();
      const page = await openPage(browser.context, server.url);
      const r = await page.evaluate(async (arg) => {
        const m = await import('/bench/browser/pages/families.mjs');
        return arg.kind === 'tract' ? m.runTractFamily(arg) : m.runOrtFamily(arg);
      }, { kind: it.kind, pkg: '/pkg/full/', dir, premises: fx.premises, hypothesis: fx.hypothesis, ids, shapes, timing });
      await page.close();
      const load = it.kind === 'tract' ? r.loads['1 128'] : r.loads.session;
      row('families', `${family} load`, it.impl, 'ms', load, 'ms', `${cfg.architecture}, ${mb.toFixed(0)} MB weight-only int8; bytes -> ready`);
      for (const c of r.cases) row('families', `${family} b${c.b} t${c.T}`, it.impl, 'ms', median(c.ms), 'ms', `${it.kind === 'tract' ? 'Verifier.score: tokenize + infer' : 'infer only, pre-tokenized'}; median of ${c.ms.length}`);
      console.log(`  ${family} ${it.impl} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
} finally {
  await browser.close();
  await server.close();
}
