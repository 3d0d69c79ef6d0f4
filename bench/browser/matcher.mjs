// Section "matcher": matchQuote (default options) over tests/fixtures/quotes_test.jsonl x20, in Node
// (pkg/node.js) and in headless Chromium.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, row, startServer, launch, openPage } from './lib.mjs';
import { benchMatcher, parseJsonl } from './pages/matcher.mjs';

const REPS = 20;
const CASE = `quotes_test x${REPS}`;

function report(impl, r) {
  const note = `${r.pairs} pairs in ${r.ms.toFixed(0)} ms; TP ${r.tp} FN ${r.fn} TN ${r.tn} FP ${r.fp}`;
  row('matcher', CASE, impl, 'pairs_per_s', r.pairsPerS, 'pairs/s', note);
  row('matcher', CASE, impl, 'bal_acc', r.balAcc, '');
  row('matcher', CASE, impl, 'tpr', r.tpr, '');
  row('matcher', CASE, impl, 'tnr', r.tnr, '');
}

console.log('matcher: Node');
const { matchQuote } = await import(path.join(ROOT, 'pkg/node.js'));
const cases = parseJsonl(readFileSync(path.join(ROOT, 'tests/fixtures/quotes_test.jsonl'), 'utf8'));
report('meetcite wasm (node)', benchMatcher(matchQuote, cases, REPS));

console.log('matcher: Chromium');
const server = await startServer();
const browser = await launch();
try {
  const page = await openPage(browser.context, server.url);
  const r = await page.evaluate(async (reps) => (await import('/bench/browser/pages/matcher.mjs')).runInPage(reps), REPS);
  report('meetcite wasm (chromium)', r);
} finally {
  await browser.close();
  await server.close();
}
