// The MV3 extension (www/extension) in headless Chromium: on a page that embeds meetcite data,
// the content script asks the service worker (wasm) to verify and overlays the verdicts; a
// citation seeks the page's <audio>.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, startServer, artifact } from './lib.mjs';
import { launchFresh } from '../../../scripts/chromium.mjs';

const EXT = path.join(ROOT, 'www/extension');
let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchFresh(chromium, {
    profilePrefix: 'meetcite-ext-',
    ignoreDefaultArgs: ['--disable-extensions'],
    extraArgs: [`--disable-extensions-except=${EXT}`, `--load-extension=${EXT}`],
  });
});
after(async () => {
  await browser?.close();
  server?.close();
});

test('extension overlays verdicts and seeks the page media', { timeout: 120_000, skip: !existsSync(path.join(EXT, 'example.html')) && 'extension example not built' }, async () => {
  const page = await browser.context.newPage();
  await page.goto(`${server.url}extension/example.html`);
  await page.waitForFunction(() => document.querySelector('#meetcite-overlay')?.getAttribute('data-meetcite') === 'done', null, { timeout: 60_000 });
  const statuses = await page.evaluate(() => [...document.querySelector('#meetcite-overlay').shadowRoot.querySelectorAll('li')].map((li) => li.dataset.status));
  console.log(`# extension: statuses ${statuses.join(', ')}`);
  assert.ok(statuses.includes('supported'), statuses.join());
  assert.ok(statuses.some((s) => s !== 'supported'), statuses.join());
  // the cited words in their transcript, marked on the exact matched characters
  const marked = await page.evaluate(() => [...document.querySelector('#meetcite-overlay').shadowRoot.querySelectorAll('li[data-status="supported"] mark')].map((m) => m.textContent));
  assert.deepEqual(marked, ['The pilot discount is now five percent', 'And the pilot stays at three months']);
  await page.waitForFunction(() => document.querySelector('#rec').readyState >= 1, null, { timeout: 30_000 });
  const seconds = await page.evaluate(() => {
    const b = document.querySelector('#meetcite-overlay').shadowRoot.querySelector('li[data-status="supported"] button.cite');
    b.click();
    return Number(b.dataset.seconds);
  });
  await page.waitForFunction((s) => Math.abs(document.querySelector('#rec').currentTime - s) < 0.01, seconds, { timeout: 10_000 });
  await page.screenshot({ path: artifact('extension.png') });
});
