// NLI benchmark bodies that run in the page: meetcite's tract-based Verifier (tokenize + infer, from
// the pair texts) and onnxruntime-web's wasm backend (infer only, from the pre-tokenized ids).
// Each case: `warm` untimed runs, then up to `runs` timed runs (fewer when one run is so slow that
// the case would exceed `budgetMs`); b1 runs rotate over the 8 pairs of the set.

export async function bytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

export async function timeCase(run, { warm, runs, budgetMs }) {
  let first = 0;
  for (let i = 0; i < warm; i++) {
    const t = performance.now();
    await run(i);
    first = performance.now() - t;
  }
  const n = Math.max(Math.min(5, runs), Math.min(runs, Math.floor(budgetMs / Math.max(first, 1e-3))));
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run(warm + i);
    ms.push(performance.now() - t);
  }
  return ms;
}

/** cases: [{model: 'int8'|'f32', url, sets: {T: pairs}, shapes: [[b, T], ...]}] */
export async function runTract({ pkg, wasm, runtime, models, tokenizerUrl, configUrl, shapes, sets, timing }) {
  const mod = await import(`${pkg}meetcite.js`);
  await mod.default({ module_or_path: `${pkg}${wasm}` });
  const [tokenizer, config] = await Promise.all([bytes(tokenizerUrl), bytes(configUrl)]);
  const out = { loads: {}, cases: [], probs: {} };
  for (const { name, url } of models) {
    const model = await bytes(url);
    // untimed first load (one-time lazy initialisation), then the timed one
    const first = await mod.Verifier.load({ model, tokenizer, config, runtime });
    // runtime 'auto' on a file meetcite's encoder does not take is tract: the tract rows have it
    const ran = first.runtime;
    first.free();
    if (runtime === 'auto' && ran !== 'meetcite-int8') continue;
    const t0 = performance.now();
    const v = await mod.Verifier.load({ model, tokenizer, config, runtime });
    out.loads[name] = performance.now() - t0;
    for (const [b, T] of shapes) {
      const set = sets[T].map((p) => [p.premise, p.hypothesis]);
      const batch = (i) => (b === set.length ? set : Array.from({ length: b }, (_, k) => set[(i * b + k) % set.length]));
      const ms = await timeCase((i) => v.score(batch(i)), timing[`${b} ${T}`] || timing.default);
      out.cases.push({ model: name, b, T, ms });
      if (b === set.length) out.probs[`${name} ${T}`] = v.score(set);
    }
    v.free();
  }
  return out;
}

export async function runOrt({ threads, models, shapes, sets, timing }) {
  const ort = await import('/ort/ort.wasm.min.mjs');
  ort.env.wasm.wasmPaths = '/ort/';
  const nThreads = threads === 'max' ? navigator.hardwareConcurrency : threads;
  ort.env.wasm.numThreads = nThreads;
  ort.env.logLevel = 'error';
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const out = { loads: {}, cases: [], probs: {}, threads: nThreads, crossOriginIsolated: self.crossOriginIsolated, init: {} };
  const feeds = (pairs) => {
    const b = pairs.length, T = pairs[0].input_ids.length;
    const ids = new BigInt64Array(b * T), tt = new BigInt64Array(b * T), am = new BigInt64Array(b * T);
    pairs.forEach((p, r) => {
      for (let j = 0; j < T; j++) {
        ids[r * T + j] = BigInt(p.input_ids[j]);
        tt[r * T + j] = BigInt(p.token_type_ids[j]);
        am[r * T + j] = 1n; // every pair is exactly T tokens: no padding
      }
    });
    return {
      input_ids: new ort.Tensor('int64', ids, [b, T]),
      attention_mask: new ort.Tensor('int64', am, [b, T]),
      token_type_ids: new ort.Tensor('int64', tt, [b, T]),
    };
  };
  for (const { name, url } of models) {
    const model = await bytes(url);
    // untimed first create (for the first model it also instantiates the ORT wasm runtime)
    let t0 = performance.now();
    await (await ort.InferenceSession.create(model, opts)).release();
    out.init[name] = performance.now() - t0;
    t0 = performance.now();
    const session = await ort.InferenceSession.create(model, opts);
    out.loads[name] = performance.now() - t0;
    for (const [b, T] of shapes) {
      const set = sets[T];
      const prepared = Array.from({ length: b === set.length ? 1 : set.length }, (_, i) => feeds(b === set.length ? set : Array.from({ length: b }, (_, k) => set[(i * b + k) % set.length])));
      const ms = await timeCase((i) => session.run(prepared[i % prepared.length]), timing[`${b} ${T}`] || timing.default);
      out.cases.push({ model: name, b, T, ms });
      if (b === set.length) {
        const logits = (await session.run(prepared[0])).logits.data;
        const probs = [];
        for (let r = 0; r < b; r++) {
          const l = Array.from(logits.slice(r * 3, r * 3 + 3));
          const m = Math.max(...l), e = l.map((x) => Math.exp(x - m)), s = e[0] + e[1] + e[2];
          probs.push({ entailment: e[0] / s, neutral: e[1] / s, contradiction: e[2] / s });
        }
        out.probs[`${name} ${T}`] = probs;
      }
    }
    await session.release();
  }
  return out;
}
