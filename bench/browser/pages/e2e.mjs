// End-to-end body that runs in the page: from nothing loaded (fresh profile, no cache) to a report.
// Steps are sequential so the parts add up: import + instantiate the wasm package, fetch the model
// files and the data, Verifier.load, buildContext + verify.
async function get(url, kind) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return kind === 'text' ? r.text() : new Uint8Array(await r.arrayBuffer());
}

export async function cold({ pkg, model, tokenizer, config, chunks, answer, options }) {
  const t0 = performance.now();
  const mod = await import(`${pkg}meetcite.js`);
  await mod.default(); // the build the package picks here (wasm-url.js)
  const t1 = performance.now();
  const { wasmUrl } = await import(`${pkg}wasm-url.js`);
  const [m, tok, cfg, chunksText, answerText] = await Promise.all([get(model), get(tokenizer), get(config), get(chunks, 'text'), get(answer, 'text')]);
  const t2 = performance.now();
  const verifier = await mod.Verifier.load({ model: m, tokenizer: tok, config: cfg });
  const t3 = performance.now();
  const ctx = mod.buildContext(chunksText, options);
  const report = verifier.verify(answerText, ctx.sources, { policy: 'warn' });
  const t4 = performance.now();
  self.__bench = { verifier, ctx, answerText, files: { model: m, tokenizer: tok, config: cfg }, pkg };
  return {
    coldMs: t4 - t0, initMs: t1 - t0, fetchMs: t2 - t1, loadMs: t3 - t2, verifyMs: t4 - t3,
    sources: ctx.sources.length, claims: report.claims.length, counts: report.counts, nliUsed: report.nli_used,
    nliClaims: report.claims.filter((c) => c.nli).length, nliPairs: pairsScored(report), conflicts: report.conflicts.length,
    statuses: statusesOf(report), wasm: wasmUrl().pathname.split('/').pop(),
  };
}

// The same cold start the way the package's worker does it (meetcite/worker's
// VerifierWorker.load: the model files download while the wasm compiles, one worker, no pool),
// in a fresh profile: coldMs from nothing to the first report. The parts overlap, so only the
// load's own split is returned beside it.
export async function coldWorker({ pkg, model, tokenizer, config, chunks, answer, options }) {
  const t0 = performance.now();
  const { VerifierWorker } = await import(`${pkg}worker.js`);
  const [w, chunksText, answerText] = await Promise.all([
    VerifierWorker.load({ model, tokenizer, config }, { workers: 1, cache: false }),
    get(chunks, 'text'), get(answer, 'text'),
  ]);
  const t1 = performance.now();
  const ctx = await w.buildContext(chunksText, options);
  const report = await w.verify(answerText, ctx.sources, { policy: 'warn' });
  const t2 = performance.now();
  const info = w.loadInfo;
  w.terminate();
  return {
    coldMs: t2 - t0, verifyMs: t2 - t1, fetchMs: info.fetchMs, buildMs: info.initMs,
    statuses: statusesOf(report),
  };
}

// "status:reason+reason" per claim, to compare the verdicts of two runs
const statusesOf = (report) => report.claims.map((c) => `${c.status}${c.reasons.length ? ':' + c.reasons.map((r) => r.code).join('+') : ''}`);

// `warmup` untimed runs first (a new option value: the first run is not representative)
export function warm(n, opts = { policy: 'warn' }, warmup = 0) {
  const { verifier, ctx, answerText } = self.__bench;
  const ms = [];
  let pairs = 0;
  for (let i = 0; i < warmup + n; i++) {
    const t = performance.now();
    const report = verifier.verify(answerText, ctx.sources, opts);
    if (i >= warmup) ms.push(performance.now() - t);
    pairs = pairsScored(report);
  }
  return { ms, pairs };
}

// NLI pairs a report scored: the quote pair, plus the context pair unless the model's quote-first
// cascade decided the claim from the quote pair alone (then `nli.context` is null).
function pairsScored(report) {
  return report.claims.filter((c) => c.nli).reduce((n, c) => n + (c.nli.quote ? 1 : 0) + (c.nli.context ? 1 : 0), 0);
}

// Largest probability difference between two lists of pair scores; a pair scored in one list and
// not in the other (null) counts as a difference of 1.
const maxDiff = (a, b) => {
  let d = 0;
  a.forEach((p, i) => {
    if (!p || !b[i]) d = Math.max(d, p || b[i] ? 1 : 0);
    else ['entailment', 'neutral', 'contradiction'].forEach((k) => { d = Math.max(d, Math.abs(p[k] - b[i][k])); });
  });
  return d;
};
const verdicts = (r) => r.claims.map((c) => `${c.status}:${c.reasons.map((x) => x.code).join('+')}`).join(',');

// VerifierPool (pkg/pool.js) on the loaded page: create from the same bytes, then per variant one
// untimed verify and `runs` timed ones; then pool.score of `pairs` (2 warm-ups + `nliRuns`).
export async function pool({ size, runs, variants, pairs, nliRuns }) {
  const { verifier, ctx, answerText, files, pkg } = self.__bench;
  const { VerifierPool } = await import(`${pkg}pool.js`);
  let t = performance.now();
  const p = await VerifierPool.create(files, { size }); // the package's own pick of build
  const out = { createMs: performance.now() - t, variants: {}, nli: null };
  try {
    for (const { name, opts } of variants) {
      const first = await p.verify(answerText, ctx.sources, opts);
      const ms = [];
      for (let i = 0; i < runs; i++) {
        t = performance.now();
        await p.verify(answerText, ctx.sources, opts);
        ms.push(performance.now() - t);
      }
      const single = verifier.verify(answerText, ctx.sources, opts);
      const dp = maxDiff(first.claims.filter((c) => c.nli).flatMap((c) => [c.nli.context, c.nli.quote]),
        single.claims.filter((c) => c.nli).flatMap((c) => [c.nli.context, c.nli.quote]));
      out.variants[name] = { ms, sameVerdicts: verdicts(first) === verdicts(single), dp, pairs: pairsScored(first) };
    }
    if (pairs) {
      const ms = [];
      for (let i = 0; i < 2 + nliRuns; i++) {
        t = performance.now();
        await p.score(pairs);
        if (i >= 2) ms.push(performance.now() - t);
      }
      out.nli = { ms, dp: maxDiff(await p.score(pairs), verifier.score(pairs)) };
    }
  } finally {
    p.terminate();
  }
  return out;
}
