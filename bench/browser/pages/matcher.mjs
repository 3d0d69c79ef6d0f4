// Quote matcher benchmark body, shared by Node and the Chromium page: one accuracy pass (also the
// warm-up), one more warm-up pass, then `reps` timed passes over every case.
export function benchMatcher(matchQuote, cases, reps) {
  let tp = 0, fn = 0, tn = 0, fp = 0;
  for (const c of cases) {
    const m = matchQuote(c.text, c.quote);
    if (c.label) m.matched ? tp++ : fn++;
    else m.matched ? fp++ : tn++;
  }
  for (const c of cases) matchQuote(c.text, c.quote);
  let sink = 0;
  const t0 = performance.now();
  for (let r = 0; r < reps; r++) for (const c of cases) sink += matchQuote(c.text, c.quote).score;
  const ms = performance.now() - t0;
  const tpr = tp / Math.max(1, tp + fn), tnr = tn / Math.max(1, tn + fp);
  return { pairs: cases.length * reps, ms, pairsPerS: (cases.length * reps) / (ms / 1000), tpr, tnr, balAcc: (tpr + tnr) / 2, tp, fn, tn, fp, sink };
}

export function parseJsonl(text) {
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

// In the page: load the package and run on the served fixture.
export async function runInPage(reps) {
  const mod = await import('/pkg/meetcite.js');
  await mod.default({ module_or_path: '/pkg/meetcite_bg.wasm' });
  const cases = parseJsonl(await (await fetch('/tests/fixtures/quotes_test.jsonl')).text());
  return benchMatcher(mod.matchQuote, cases, reps);
}
