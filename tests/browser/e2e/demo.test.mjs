// End-to-end test of the demo in headless Chromium: load, verify the shipped example, seek the
// media at a citation, screenshot; privacy: no request after the model loads, none carries
// transcript text; the model comes from the Cache API on the second visit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, SLOW, serveAndLaunch, artifact, recordRequests } from './lib.mjs';

const env = serveAndLaunch();

// Distinctive pieces of the transcript: none may appear in any request.
function transcriptProbes() {
  const index = JSON.parse(readFileSync(path.join(ROOT, 'www/data/examples.json'), 'utf8'));
  const ex = index.examples.find((e) => e.name === index.default);
  const raw = JSON.parse(readFileSync(path.join(ROOT, 'www', ex.chunks), 'utf8'));
  const chunks = Array.isArray(raw) ? raw : raw.chunks;
  const probes = [];
  for (const c of chunks) {
    const words = c.text.split(/\s+/).filter((w) => w.length > 3);
    for (let i = 0; i + 4 <= words.length && probes.length < 200; i += 7) probes.push(words.slice(i, i + 4).join(' '));
  }
  return probes;
}

function leaks(req, probes) {
  const hay = [decodeURIComponent(req.url), req.postData, JSON.stringify(req.headers)].join('\n').toLowerCase();
  const enc = req.url.toLowerCase();
  return probes.filter((p) => hay.includes(p.toLowerCase()) || enc.includes(encodeURIComponent(p).toLowerCase()));
}

const network = (r) => !r.url.startsWith('blob:') && !r.url.startsWith('data:');

test('demo: load, verify the example, seek at a citation, no leaks', { timeout: SLOW + 120_000 }, async () => {
  const { context } = env.browser;
  const requests = recordRequests(context);
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  const t0 = Date.now();
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.model === 'ready' || document.body.dataset.model === 'failed', null, { timeout: SLOW });
  const modelState = await page.evaluate(() => document.body.dataset.model);
  assert.equal(modelState, 'ready', `model failed to load: ${await page.textContent('#model-text')} ${consoleErrors.join('\n')}`);
  assert.match(await page.textContent('#model-text'), /relaxed-simd build/, 'the demo names the wasm build it runs');
  assert.ok(requests.some((r) => r.url.endsWith('/pkg/meetcite_relaxed_bg.wasm')) && !requests.some((r) => r.url.endsWith('/pkg/meetcite_bg.wasm')), 'one wasm fetched: the relaxed-SIMD build');
  const loadedAt = requests.length;
  // the recorder sees the worker's requests too (otherwise the privacy checks would be vacuous)
  assert.ok(requests.some((r) => r.url.endsWith('.onnx')), `model request observed: ${requests.map((r) => r.url).join(' ')}`);
  const timings = await page.evaluate(() => window.meetciteDemo.timings.load);
  console.log(`# chromium: page + model ready in ${Date.now() - t0} ms (fetch ${timings.fetchMs} ms, init ${timings.initMs} ms)`);

  // the example is in the text areas
  assert.ok((await page.inputValue('#chunks')).length > 100, 'example chunks loaded');
  assert.ok((await page.inputValue('#answer')).includes('claims'), 'example answer loaded');

  // Build prompt
  await page.click('#build');
  await page.waitForFunction(() => document.querySelector('#prompt').textContent.includes('[S1]'));
  assert.equal(await page.isEnabled('#copy'), true);

  // Verify
  await page.click('#verify');
  await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
  const statuses = await page.$$eval('#claims > li', (lis) => lis.map((li) => li.dataset.status));
  console.log(`# chromium: statuses ${statuses.join(', ')}; verify ${await page.evaluate(() => window.meetciteDemo.timings.verify)} ms`);
  assert.ok(statuses.includes('supported'), `a supported claim: ${statuses}`);
  assert.ok(statuses.some((s) => s !== 'supported'), `a flagged claim: ${statuses}`);
  assert.equal(await page.evaluate(() => window.meetciteDemo.report.nli_used), true, 'the NLI model took part');
  assert.ok(await page.$('#claims .quote .tip'), 'quote tooltip present');
  assert.ok((await page.$$('#claims [data-reason]')).length >= 1, 'warning badges present');

  // Citation seeks the media element to the cited second
  const cite = await page.$('#claims li[data-status="supported"] .cite');
  assert.ok(cite, 'a citation button on a supported claim');
  const seconds = Number(await cite.getAttribute('data-seconds'));
  assert.ok(seconds > 0, `cited second ${seconds}`);
  await page.waitForFunction(() => document.querySelector('#media').readyState >= 1, null, { timeout: 30_000 });
  await cite.click();
  await page.waitForFunction((s) => Math.abs(document.querySelector('#media').currentTime - s) < 0.01, seconds, { timeout: 10_000 });
  const current = await page.evaluate(() => document.querySelector('#media').currentTime);
  assert.ok(Math.abs(current - seconds) < 0.01, `currentTime ${current} == ${seconds}`);

  await page.hover('#claims .quote');
  await page.screenshot({ path: artifact('demo.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: artifact('demo-mobile.png'), fullPage: true });

  // Privacy: nothing after the model loaded; nothing carries transcript text; all same-origin
  const after = requests.slice(loadedAt).filter(network);
  assert.deepEqual(after.map((r) => r.url), [], 'no request after the model loaded');
  const probes = transcriptProbes();
  assert.ok(probes.length > 5, 'probes from the transcript');
  const origin = new URL(env.server.url).origin;
  for (const r of requests.filter(network)) {
    assert.equal(new URL(r.url).origin, origin, `third-party request ${r.url}`);
    assert.equal(r.method, 'GET', `${r.method} ${r.url}`);
    assert.deepEqual(leaks(r, probes), [], `request ${r.url} carries transcript text`);
  }
  assert.deepEqual(consoleErrors, [], 'no console errors');
});

// The README's worked example (pricing) in the demo, with the model on: every verdict as in the
// README and tests/support.rs, claim 1 superseded by the May review.
test('demo: the pricing example gives the README verdicts with the model on', { timeout: SLOW + 60_000 }, async () => {
  const { context } = env.browser;
  const page = await context.newPage();
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.model === 'ready', null, { timeout: SLOW });
  await page.selectOption('#example-select', 'pricing');
  await page.waitForFunction(() => document.querySelector('#answer').value.includes('fifteen percent'), null, { timeout: 30_000 });
  await page.selectOption('#order', 'date');
  await page.click('#build');
  await page.waitForFunction(() => document.querySelector('#prompt').textContent.includes('[S1]'));
  await page.evaluate(() => { document.body.dataset.verified = ''; });
  await page.click('#verify');
  await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
  const report = await page.evaluate(() => window.meetciteDemo.report);
  assert.equal(report.nli_used, true, 'the NLI model took part');
  const got = report.claims.map((c) => [c.status, c.reasons[0]?.code ?? null]);
  assert.deepEqual(got, [
    ['flagged', 'superseded'],
    ['flagged', 'claim_number_mismatch'],
    ['flagged', 'speaker_mismatch'],
    ['supported', null],
    ['supported', null],
    ['unknown_source', 'unknown_source'],
  ]);
  const statuses = await page.$$eval('#claims > li', (lis) => lis.map((li) => li.dataset.status));
  assert.deepEqual(statuses, got.map((g) => g[0]), 'the page shows the report');

  // The "stream" toggle: the answer is replayed at an LLM's pace; verdicts show while it streams,
  // and the final report is the one verify gave
  const answerLength = (await page.inputValue('#answer')).length;
  await page.check('#stream');
  await page.evaluate(() => { document.body.dataset.verified = ''; });
  await page.click('#verify');
  await page.waitForFunction(() => document.body.dataset.streaming === 'true' && document.querySelectorAll('#claims > li').length >= 1, null, { timeout: SLOW });
  const typedWhenShown = (await page.inputValue('#answer')).length;
  await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
  const streamed = await page.evaluate(() => ({ report: window.meetciteDemo.report, events: window.meetciteDemo.streamEvents }));
  const claimEvents = streamed.events.filter((e) => e.type === 'claim');
  console.log(`# chromium: demo stream: first verdict with ${typedWhenShown} of ${answerLength} characters typed; verdicts at ${claimEvents.map((e) => `${e.at} ms`).join(', ')}`);
  assert.ok(typedWhenShown < answerLength, 'a verdict was on the page before the answer finished');
  assert.equal(claimEvents.length, 6);
  assert.ok(claimEvents[0].typed < answerLength, 'the first verdict came while the answer streamed');
  assert.ok(streamed.events.some((e) => e.type === 'update'), 'the superseded decision is updated at the end');
  assert.deepEqual(streamed.report, report, 'the streamed report is the verify report');
  assert.equal((await page.inputValue('#answer')).length, answerLength);
  const streamedStatuses = await page.$$eval('#claims > li', (lis) => lis.map((li) => li.dataset.status));
  assert.deepEqual(streamedStatuses, got.map((g) => g[0]));
  await page.close();
});

// Issue 13's flow: pick a transcript file (a Teams VTT), verify an answer about it; the transcript
// panel marks the exact cited characters in the verdict's colour, a citation click scrolls to them
// and seeks the media, and the mark is reachable by keyboard. Nothing is uploaded.
test('demo: a transcript file in, cited words highlighted in the transcript panel, click seeks', { timeout: SLOW + 60_000 }, async () => {
  const { context } = env.browser;
  const requests = recordRequests(context);
  const page = await context.newPage();
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.model === 'ready', null, { timeout: SLOW });
  const before = requests.length;
  await page.fill('#meeting-date', '2024-05-03');
  await page.setInputFiles('#transcript-file', path.join(ROOT, 'tests/fixtures/transcripts/teams.vtt'));
  await page.waitForFunction(() => document.body.dataset.transcript === 'vtt', null, { timeout: 30_000 });
  assert.match(await page.textContent('#transcript-status'), /teams\.vtt: read as vtt, 1 chunk\(s\)/);
  // the panel shows the meeting turn by turn before any verification
  assert.deepEqual(await page.$$eval('#transcript .who', (xs) => xs.map((x) => x.textContent)), ['Priya Raman', 'Luis Vega']);
  const quote = 'And the pilot stays at three months.';
  await page.fill('#answer', JSON.stringify({ claims: [
    { text: 'Luis Vega said the pilot stays at three months.', source: 'S1', quote },
    { text: 'Priya Raman said the discount is now fifteen percent.', source: 'S1', quote: 'The pilot discount is now five percent.' },
  ] }));
  await page.evaluate(() => { document.body.dataset.verified = ''; });
  await page.click('#verify');
  await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
  const marks = await page.$$eval('#transcript mark.cite-span', (ms) => ms.map((m) => ({ text: m.textContent, cls: m.className, claim: m.dataset.claim, seconds: Number(m.dataset.seconds) })));
  const report = await page.evaluate(() => window.meetciteDemo.report);
  assert.equal(marks.length, 2);
  // the marks are exactly the matched characters (the matcher's span: words, not the quote's final period)
  assert.deepEqual(marks.map((m) => m.text).sort(), report.claims.map((c) => c.matched_text).sort(), 'the exact matched characters');
  assert.deepEqual(marks.map((m) => m.text).sort(), ['And the pilot stays at three months', 'The pilot discount is now five percent']);
  const luis = marks.find((m) => m.claim === '0');
  assert.equal(luis.cls, `cite-span status-${report.claims[0].status}`);
  assert.match(marks.find((m) => m.claim === '1').cls, /status-flagged/, 'the wrong number is flagged in its colour');
  // a citation click scrolls the panel to the cited words and seeks the media to their second
  await page.waitForFunction(() => document.querySelector('#media').readyState >= 1, null, { timeout: 30_000 });
  await page.click('#claims li[data-index="0"] .cite');
  await page.waitForFunction((s) => Math.abs(document.querySelector('#media').currentTime - s) < 0.01, luis.seconds, { timeout: 10_000 });
  assert.equal(await page.$eval('#cite-span-0', (m) => m.classList.contains('current')), true);
  // keyboard: focus the other mark and press Enter
  await page.focus('#cite-span-1');
  await page.keyboard.press('Enter');
  const other = marks.find((m) => m.claim === '1').seconds;
  await page.waitForFunction((s) => Math.abs(document.querySelector('#media').currentTime - s) < 0.01, other, { timeout: 10_000 });
  // dropping a file on the input panel reads it the same way (here the Zoom-style VTT)
  const zoom = readFileSync(path.join(ROOT, 'tests/fixtures/transcripts/zoom.vtt'), 'utf8');
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'zoom.vtt', { type: 'text/vtt' }));
    document.querySelector('.panel.inputs').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, zoom);
  await page.waitForFunction(() => /zoom\.vtt: read as vtt/.test(document.querySelector('#transcript-status').textContent), null, { timeout: 30_000 });
  assert.ok((await page.$$eval('#transcript .turn', (ts) => ts.length)) >= 1, 'the dropped transcript is shown');
  // the transcript went nowhere: no request after the page loaded the model
  assert.deepEqual(requests.slice(before).filter(network).map((r) => r.url), []);
  await page.close();
});

// Issue 17: a checker exported with models/export_hf.py, picked from disk as a folder. Its name, kind
// and load time show; verification uses it (other NLI numbers than the shipped model's); nothing is
// uploaded; a folder that is not a model leaves the loaded one in use.
test('demo: a model folder picked from disk replaces the shipped model', { timeout: SLOW + 60_000 }, async () => {
  const { context } = env.browser;
  const requests = recordRequests(context);
  const page = await context.newPage();
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.model === 'ready', null, { timeout: SLOW });
  const verifyNow = async () => {
    await page.evaluate(() => { document.body.dataset.verified = ''; });
    await page.click('#verify');
    await page.waitForFunction(() => document.body.dataset.verified === 'true', null, { timeout: SLOW });
    return page.evaluate(() => window.meetciteDemo.report);
  };
  const shipped = await verifyNow();
  const before = requests.length;
  await page.setInputFiles('#model-folder', path.join(ROOT, 'tests/fixtures/families/deberta-v3'));
  await page.waitForFunction(() => document.body.dataset.modelName === 'deberta-v3', null, { timeout: SLOW });
  const status = await page.textContent('#model-text');
  assert.match(status, /Model deberta-v3 ready \(deberta-v2, 3-way NLI, [\d.]+ [kM]B, loaded in \d+ ms/);
  console.log(`# chromium: ${status}`);
  assert.equal(await page.textContent('#model-name'), 'deberta-v3 (from your disk)');
  const mine = await verifyNow();
  assert.equal(mine.nli_used, true);
  const nli = (r) => r.claims.filter((c) => c.nli).map((c) => c.nli.quote.entailment);
  assert.ok(nli(mine).length >= 1, JSON.stringify(mine.claims.map((c) => [c.status, c.nli])));
  assert.notDeepEqual(nli(mine), nli(shipped), 'the picked model scored the claims');
  // a folder without config.json: an error, and the picked model stays in use
  const notModel = mkdtempSync(path.join(tmpdir(), 'meetcite-not-a-model-'));
  for (const f of ['model.onnx', 'tokenizer.json']) copyFileSync(path.join(ROOT, 'tests/fixtures/families/bert', f), path.join(notModel, f));
  await page.setInputFiles('#model-folder', notModel);
  await page.waitForFunction(() => /Could not use that folder \(invalid_input\)/.test(document.querySelector('#model-text').textContent), null, { timeout: 30_000 });
  assert.deepEqual(nli(await verifyNow()), nli(mine));
  // the new workers fetch the package's own files (deberta-v3 needs tract: meetcite/full's scripts
  // and .wasm, from /pkg/full/); nothing else goes out, nothing is sent
  const after = requests.slice(before).filter(network);
  assert.deepEqual(after.filter((r) => r.method !== 'GET' || r.postData || !/\/pkg\/(full\/)?[\w-]+\.(js|wasm)$/.test(new URL(r.url).pathname)).map((r) => r.url), [], 'nothing uploaded or fetched');
  assert.ok(after.some((r) => new URL(r.url).pathname.startsWith('/pkg/full/meetcite')), 'meetcite/full was fetched for the deberta-v3 folder');
  await page.close();
});

test('demo: second visit loads the model from the Cache API', { timeout: SLOW }, async () => {
  const { context } = env.browser;
  const requests = recordRequests(context);
  const page = await context.newPage();
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.model === 'ready', null, { timeout: SLOW });
  const info = await page.evaluate(() => window.meetciteDemo.timings.load);
  console.log(`# chromium: cached model ready in ${info.totalMs} ms`);
  assert.equal(info.cached, true);
  assert.deepEqual(requests.filter((r) => r.url.endsWith('.onnx')).map((r) => r.url), [], 'the model was not fetched again');
  await page.close();
});

test('the package imports from a plain <script type="module"> (main thread)', { timeout: 60_000 }, async () => {
  const page = await env.browser.context.newPage();
  await page.goto(`${env.server.url}data/examples.json`); // same origin, no demo scripts running
  const r = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.type = 'module';
    s.textContent = `
      import init, { matchQuote, version } from '/pkg/meetcite.js';
      await init();
      const text = 'Dana: 🎉 we agreed on a ten percent discount.';
      const m = matchQuote(text, 'ten percent discount');
      window.__meetcite = { version: version(), slice: text.slice(m.start, m.end), start: m.start };
    `;
    document.head.append(s);
    for (let i = 0; i < 200 && !window.__meetcite; i++) await new Promise((r) => setTimeout(r, 50));
    return window.__meetcite;
  });
  assert.ok(r, 'module script ran');
  assert.equal(r.slice, 'ten percent discount');
  assert.equal(r.start, 'Dana: 🎉 we agreed on a '.length);
  await page.close();
});
