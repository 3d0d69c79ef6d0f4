// XSS corpus in headless Chromium. Transcript chunks (title, speakers, text, recording URL) and an
// LLM answer (claim texts, quotes, source labels) carry ~35 classic payloads; the report rendered by
// the package's renderHtml is put into a page with innerHTML (the way integrators use it), every
// link is hovered and clicked, and nothing may run: each payload calls window.__x(), which counts
// in window.__xss. The test page has no CSP, and a positive control proves that an injected
// handler would run there. The Markdown rendering goes through a small naive Markdown-to-HTML step.
// Then the real demo page (www/, with its CSP) is driven with the same payloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SLOW, serveAndLaunch, artifact } from './lib.mjs';

const env = serveAndLaunch();

// Hover and click every visible element matching `selector`; http(s) link clicks are kept in the
// page (recorded in window.__nav) instead of navigating. Returns the matching elements.
async function hoverAndClickAll(page, selector) {
  await page.evaluate(() => {
    window.__nav = [];
    document.addEventListener('click', (e) => {
      const a = e.target.closest('a');
      if (a && /^https?:/i.test(a.href)) {
        e.preventDefault();
        window.__nav.push(a.href);
      }
    }, true);
  });
  const els = await page.$$(selector);
  for (const el of els) {
    if (!(await el.isVisible())) continue;
    await el.hover({ timeout: 1_000 }).catch(() => {});
    await el.click({ timeout: 1_000 }).catch(() => {});
  }
  return els;
}

const X = '__x()';
// markup, attribute breaking, mXSS, template and Markdown injection
const PAYLOADS = [
  `<script>${X}</script>`,
  `<img src=x onerror=${X}>`,
  `<svg onload=${X}>`,
  `<svg><script>${X}</script></svg>`,
  `"><img src=x onerror=${X}>`,
  `'><img src=x onerror=${X}>`,
  `" onmouseover="${X}" x="`,
  `' onmouseover='${X}' x='`,
  `\` onmouseover=\`${X}\``,
  `</a><script>${X}</script>`,
  `</span></li></ol></div><img src=x onerror=${X}>`,
  `<iframe src="javascript:${X}"></iframe>`,
  `<iframe srcdoc="<script>parent.${X}</script>"></iframe>`,
  `<a href="javascript:${X}">link</a>`,
  `<body onload=${X}>`,
  `<input autofocus onfocus=${X}>`,
  `<details open ontoggle=${X}>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${X}>`,
  `<noscript><p title="</noscript><img src=x onerror=${X}>">`,
  `<style>@import 'javascript:${X}';</style>`,
  `<object data="javascript:${X}"></object>`,
  `<embed src="javascript:${X}">`,
  `<form><button formaction=javascript:${X}>go</button></form>`,
  `&lt;img src=x onerror=${X}&gt;`,
  `&#60;img src=x onerror=${X}&#62;`,
  `<img src=x onerror=&#95;&#95;x()>`,
  `<a href="&#106;avascript:${X}">link</a>`,
  `<<script>script>${X}<</script>/script>`,
  `<x-y onpointerenter=${X}>hover</x-y>`,
  `<a href=# onclick=${X}>click</a>`,
  '${' + X + '}',
  `{{constructor.constructor('${X}')()}}`,
  `[click](javascript:${X})`,
  `[click](<javascript:${X}>)`,
  `<img src=x onerror=alert(1)>`,
];
// recording URL templates; only http(s) may become a link
const URLS = [
  `javascript:${X}`,
  `JaVaScRiPt:${X}`,
  ` javascript:${X}`,
  `&#106;avascript:${X}`,
  `java\tscript:${X}`,
  `data:text/html,<script>${X}</script>`,
  `vbscript:${X}`,
  `https://rec.example.com/a.mp4" onmouseover="${X}`,
  `https://rec.example.com/a'onmouseover='${X}'.mp4`,
  `https://rec.example.com/{t}"><img src=x onerror=${X}>`,
  `//evil.example/a.mp4`,
  `https://rec.example.com/ok.mp4`,
];

// One chunk per payload (own meeting, so none is a duplicate), and an answer whose claims quote
// them, plus claims that cite a missing source or cannot be read.
function scenario() {
  const chunks = PAYLOADS.map((p, i) => ({
    id: `c${i}-${p}`,
    meeting_id: `m${i}${p}`,
    meeting_title: `Title ${p}`,
    date: "2024-04-12", // one date, increasing starts: date order keeps S(i+1) = payload i
    start: 60 * i,
    end: 60 * i + 59,
    speakers: [`Speaker ${p}`],
    text: `Speaker ${i}: we agreed on item ${i} ${p} and that is final.`,
    recording_url: URLS[i % URLS.length],
    turns: undefined,
  }));
  const claims = PAYLOADS.map((p, i) => ({ text: `Claim ${p}`, source: `S${i + 1}`, quote: `we agreed on item ${i} ${p}` }));
  claims.push({ text: `Missing ${PAYLOADS[1]}`, source: 'S999', quote: PAYLOADS[0] });
  claims.push({ text: `Bad source ${PAYLOADS[2]}`, source: PAYLOADS[1], quote: PAYLOADS[3] });
  claims.push({ text: PAYLOADS[4], source: 7, quote: PAYLOADS[5] });
  return { chunks, answer: `Here you go ${PAYLOADS[0]}\n\`\`\`json\n${JSON.stringify({ claims })}\n\`\`\`\n${PAYLOADS[1]}` };
}

// Checks run in the page: what the DOM under `root` may contain.
const DOM_CHECK = (root) => {
  const bad = [];
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (['script', 'iframe', 'object', 'embed', 'style', 'svg', 'math', 'img', 'form', 'input', 'button', 'details', 'body', 'noscript', 'x-y'].includes(tag) && !el.closest('[data-allowed]')) {
      bad.push(`<${tag}>`);
    }
    for (const a of el.attributes) {
      if (/^on/i.test(a.name) || ['srcdoc', 'formaction', 'src', 'style'].includes(a.name.toLowerCase())) bad.push(`${tag}[${a.name}=${a.value}]`);
    }
    if (el.hasAttribute('href')) {
      const h = el.getAttribute('href');
      if (h !== '#' && !/^https?:\/\//i.test(h)) bad.push(`href ${h}`);
      if (h !== '#' && !/^https?:$/.test(new URL(h, location.href).protocol)) bad.push(`resolved href ${h}`);
    }
  }
  return bad;
};

test('package: renderHtml / renderMarkdown of a hostile report run nothing', { timeout: SLOW }, async () => {
  const page = await env.browser.context.newPage();
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // a blank page of the server's origin, without a CSP (the package is imported from the server)
  const url = `${env.server.url}__xss_test.html`;
  await page.route(url, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><html><head><meta charset="utf-8"></head><body><div id="out"></div><div id="md"></div></body></html>' }));
  await page.goto(url);
  await page.evaluate(() => {
    window.__xss = 0;
    window.__x = () => (window.__xss += 1);
  });
  // positive control: an injected handler does run in this page
  await page.evaluate(() => (document.getElementById('out').innerHTML = '<img src=x onerror="__x()">'));
  await page.waitForFunction(() => window.__xss === 1, null, { timeout: 5_000 });
  await page.evaluate(() => (window.__xss = 0));

  const { chunks, answer } = scenario();
  const info = await page.evaluate(async ({ chunks, answer }) => {
    const m = await import('/pkg/meetcite.js');
    await m.default();
    const ctx = m.buildContext(chunks, { order: 'date', question: '<script>__x()</script>' });
    const report = m.verify(answer, ctx.sources, { policy: 'warn' });
    const html = m.renderHtml(report, {}) + m.renderHtml(report, { hide_flagged: true });
    document.getElementById('out').innerHTML = html;
    const md = m.renderMarkdown(report, {});
    // a naive Markdown step, as an integrator might write it: links become <a>, the rest is
    // HTML already (escape_md turned < > & into entities), backslash escapes are dropped
    const mdHtml = md
      .split('\n')
      .map((line) => line.replace(/\[((?:\\.|[^\]\\])*)\]\(<([^>]*)>\)/g, (_, label, href) => `<a href="${href}">${label}</a>`).replace(/\\([\\`*_[\]()#!|~])/g, '$1'))
      .join('<br>');
    document.getElementById('md').innerHTML = mdHtml;
    window.__report = report;
    return {
      statuses: report.claims.map((c) => c.status),
      links: report.claims.filter((c) => c.link).map((c) => c.link.url),
      prompt: ctx.prompt,
      md,
    };
  }, { chunks, answer });
  assert.equal(info.statuses.length, PAYLOADS.length + 3);
  assert.ok(info.statuses.filter((s) => s !== 'unparsable' && s !== 'unknown_source').length >= PAYLOADS.length - 2, `most payload claims matched their quotes: ${info.statuses}`);
  assert.ok(info.links.length >= PAYLOADS.length - 2, 'citations carry links');
  const urls = info.links.filter(Boolean);
  assert.ok(urls.length >= 3, `some http(s) recording links survive: ${urls}`);
  assert.ok(urls.every((u) => /^https?:\/\//i.test(u)), `only http(s): ${urls}`);
  assert.ok(!/<script/i.test(info.prompt.slice(info.prompt.indexOf('<sources>'))), 'the prompt carries no markup');
  for (const m of info.md.matchAll(/\]\(<([^>]*)>\)/g)) assert.match(m[1], /^https?:\/\//i, 'markdown link targets are http(s)');

  // hover and click every link and button-like citation; keep http(s) navigations in the page
  const anchors = await hoverAndClickAll(page, '#out a, #md a, #out [title], #out span');
  await page.mouse.move(0, 0);
  await page.waitForTimeout(300);
  const result = await page.evaluate((check) => {
    const f = new Function(`return (${check})`)();
    return { xss: window.__xss, bad: [...f(document.getElementById('out')), ...f(document.getElementById('md'))], nav: window.__nav, scripts: document.scripts.length };
  }, DOM_CHECK.toString());
  console.log(`# chromium xss: ${PAYLOADS.length} payloads x ${URLS.length} URLs, ${anchors.length} elements hovered/clicked, ${result.nav.length} http(s) navigations kept`);
  assert.equal(result.xss, 0, 'no payload ran');
  assert.deepEqual(dialogs, [], 'no dialog');
  assert.deepEqual(result.bad, [], 'no script, handler or non-http(s) link in the rendered DOM');
  assert.equal(result.scripts, 0, 'no <script> element anywhere in the page');
  assert.ok(result.nav.every((u) => /^https?:\/\//.test(u)));
  assert.deepEqual(errors, [], 'no page errors');
  await page.screenshot({ path: artifact('xss-package.png'), fullPage: true });
  await page.close();
});

test('demo page: hostile chunks and answer run nothing', { timeout: SLOW + 60_000 }, async () => {
  const page = await env.browser.context.newPage();
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  await page.addInitScript(() => {
    window.__xss = 0;
    window.__x = () => (window.__xss += 1);
    // the demo's CSP blocks inline handlers: an injection would show up as a violation
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
  });
  await page.goto(env.server.url);
  await page.waitForFunction(() => !document.getElementById('verify').disabled, null, { timeout: SLOW });
  await page.waitForFunction(() => document.getElementById('chunks').value.length > 0, null, { timeout: 30_000 });
  const { chunks, answer } = scenario();
  await page.fill('#chunks', JSON.stringify(chunks));
  await page.fill('#answer', answer);
  await page.fill('#question', PAYLOADS[0]);
  await page.click('#build');
  await page.waitForFunction(() => document.querySelector('#prompt').textContent.includes('[S1]'), null, { timeout: SLOW });
  await page.evaluate(() => (document.body.dataset.verified = ''));
  await page.click('#verify');
  await page.waitForFunction(() => document.body.dataset.verified === 'true' || !document.getElementById('error').hidden, null, { timeout: SLOW });
  assert.equal(await page.evaluate(() => document.getElementById('error').hidden), true, await page.textContent('#error'));
  const n = await page.$$eval('#claims > li', (lis) => lis.length);
  assert.equal(n, PAYLOADS.length + 3);
  // keep http(s) recording links (target=_blank) from opening
  const els = await hoverAndClickAll(page, '#claims a, #claims .quote, #claims .cite, #claims [data-reason], #answer-errors *');
  await page.waitForTimeout(300);
  const result = await page.evaluate((check) => {
    const f = new Function(`return (${check})`)();
    // the demo's own buttons are expected
    for (const b of document.querySelectorAll('#claims button.cite')) b.setAttribute('data-allowed', '');
    return {
      xss: window.__xss,
      violations: window.__violations,
      bad: [...f(document.getElementById('claims')), ...f(document.getElementById('answer-errors')), ...f(document.getElementById('summary')), ...f(document.getElementById('prompt'))],
      recording: [...document.querySelectorAll('#claims a[href]')].map((a) => a.getAttribute('href')),
    };
  }, DOM_CHECK.toString());
  console.log(`# chromium xss demo: ${n} claims, ${els.length} elements hovered/clicked, ${result.recording.length} recording links`);
  assert.equal(result.xss, 0, 'no payload ran');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(result.violations, [], 'no injected markup even tried to run (CSP violations)');
  assert.deepEqual(result.bad, []);
  assert.ok(result.recording.every((h) => /^https?:\/\//.test(h)), result.recording.join(' '));
  await page.screenshot({ path: artifact('xss-demo.png'), fullPage: true });
  await page.close();
});
