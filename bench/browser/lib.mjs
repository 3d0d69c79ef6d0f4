// Shared helpers for the browser/wasm benchmarks: result rows, a static server with COOP/COEP,
// a fresh headless Chromium, statistics.
import http from 'node:http';
import fs from 'node:fs';
import { mkdirSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchFresh } from '../../scripts/chromium.mjs';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const ORT_DIST = path.join(HERE, 'node_modules/onnxruntime-web/dist');
export const OUT = path.resolve(ROOT, process.env.BENCH_OUT || 'target/bench/results/browser.jsonl');
export const MODELS = {
  int8: path.join(ROOT, 'models/nli-minilm-l6-int8.onnx'),
  f32: path.join(ROOT, process.env.BENCH_F32_MODEL || 'target/bench/models/nli-minilm-l6-f32.onnx'),
  dynint8: path.join(ROOT, 'target/bench/models/nli-minilm-l6-dynint8.onnx'),
};
// the ORT bundle the pages import (wasm execution provider only)
export const ORT_BUNDLE = 'ort.wasm.min.mjs';

/** Append one result row (one JSON line) to $BENCH_OUT and echo a short line. */
export function row(section, kase, impl, metric, value, unit, note) {
  const r = { section, case: kase, impl, metric, value: Number(value), unit };
  if (note) r.note = note;
  mkdirSync(path.dirname(OUT), { recursive: true });
  appendFileSync(OUT, JSON.stringify(r) + '\n');
  const v = Number.isInteger(r.value) ? r.value : Number(r.value.toPrecision(4));
  console.log(`  ${section} | ${kase} | ${impl} | ${metric} = ${v} ${unit}${note ? `  (${note})` : ''}`);
  return r;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
};

/**
 * Static server over the repository root with cross-origin isolation (COOP/COEP, so
 * SharedArrayBuffer and wasm threads work) and no caching. `/ort/` maps to onnxruntime-web's
 * dist/. Records every path served (to know which ORT files a run really loads).
 */
export async function startServer() {
  const served = new Set();
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (rel === '/') rel = '/bench/browser/pages/blank.html';
    if (rel === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    let base = ROOT;
    if (rel.startsWith('/ort/')) {
      base = ORT_DIST;
      rel = rel.slice(4);
    }
    const file = path.resolve(base, '.' + rel);
    if (!file.startsWith(base + path.sep)) {
      res.writeHead(403).end();
      return;
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      served.add(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream',
        'content-length': st.size,
        'cache-control': 'no-store',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
        'cross-origin-resource-policy': 'same-origin',
      });
      if (req.method === 'HEAD') res.end();
      else fs.createReadStream(file).pipe(res);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return { url, served, close: () => new Promise((r) => server.close(r)) };
}

/** A fresh headless Chromium with its own new profile (empty HTTP and code caches). */
export async function launch() {
  const { chromium } = await import('playwright-core');
  return launchFresh(chromium, { profilePrefix: 'meetcite-bench-chromium-' });
}

/** Open the blank page, forward its console errors, fail on page errors. */
export async function openPage(context, url) {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || process.env.BENCH_VERBOSE) console.log(`  [page ${m.type()}] ${m.text()}`);
  });
  page.on('pageerror', (e) => console.log(`  [pageerror] ${e.message}`));
  page.setDefaultTimeout(600_000);
  await page.goto(url);
  return page;
}
