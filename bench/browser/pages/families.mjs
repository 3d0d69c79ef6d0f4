// Bring your own checker, in the page: one base-size family model through meetcite's tract wasm
// (Verifier.score: tokenize + infer) and through onnxruntime-web's wasm backend (1 thread, infer only,
// the ids bench/peers.py families wrote). Shapes: batch 1 at 128 tokens, batch 8 at 256 tokens;
// config.json's max_length is set to the shape's length so the premise is cut to exactly that.
import { bytes, timeCase } from './nli.mjs';

export async function runTractFamily({ pkg, dir, premises, hypothesis, shapes, timing }) {
  const mod = await import(`${pkg}meetcite.js`);
  await mod.default({ module_or_path: `${pkg}meetcite_bg.wasm` });
  const cfg = JSON.parse(new TextDecoder().decode(await bytes(`${dir}config.json`)));
  const [model, tokenizer] = await Promise.all([bytes(`${dir}${cfg.model_file}`), bytes(`${dir}tokenizer.json`)]);
  const out = { loads: {}, cases: [] };
  // untimed first load (one-time lazy initialisation), as bench/browser/nli.mjs does
  (await mod.Verifier.load({ model, tokenizer, config: JSON.stringify(cfg) })).free();
  for (const [b, T] of shapes) {
    const config = JSON.stringify({ ...cfg, max_length: T });
    const t0 = performance.now();
    const v = await mod.Verifier.load({ model, tokenizer, config });
    out.loads[`${b} ${T}`] = performance.now() - t0;
    const pairs = premises.slice(0, b).map((p) => [p, hypothesis]);
    out.cases.push({ b, T, ms: await timeCase(() => v.score(pairs), timing) });
    v.free();
  }
  return out;
}

export async function runOrtFamily({ dir, ids, shapes, timing }) {
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const cfg = JSON.parse(new TextDecoder().decode(await bytes(`${dir}config.json`)));
  const model = await bytes(`${dir}${cfg.model_file}`);
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  // untimed first create (it also instantiates the ORT wasm runtime), then the timed one, as for tract
  await (await ort.InferenceSession.create(model, opts)).release();
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, opts);
  const out = { loads: { session: performance.now() - t0 }, cases: [] };
  for (const [b, T] of shapes) {
    const rows = ids[T].slice(0, b);
    const feed = {};
    const fill = (key) => {
      const a = new BigInt64Array(b * T);
      rows.forEach((r, i) => r[key].forEach((x, j) => { a[i * T + j] = BigInt(x); }));
      return new ort.Tensor('int64', a, [b, T]);
    };
    for (const name of ids.inputs) feed[name] = name === 'attention_mask' ? new ort.Tensor('int64', new BigInt64Array(b * T).fill(1n), [b, T]) : fill(name);
    out.cases.push({ b, T, ms: await timeCase(() => session.run(feed), timing) });
  }
  await session.release();
  return out;
}
