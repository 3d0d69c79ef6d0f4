#!/usr/bin/env node
// Tiny dependency-free static server for the meetcite demo (www/).
// Usage: node www/serve.mjs [--port 8080] [--root www]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const port = Number(opt('--port', process.env.PORT || 8080));
const host = opt('--host', '127.0.0.1');
const root = path.resolve(opt('--root', here));
const quiet = args.includes('--quiet');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

const server = http.createServer((req, res) => {
  let url;
  try {
    url = new URL(req.url, 'http://localhost');
  } catch {
    res.writeHead(400).end('bad request');
    return;
  }
  let rel = decodeURIComponent(url.pathname);
  if (rel.endsWith('/')) rel += 'index.html';
  const file = path.resolve(root, '.' + rel);
  if (file !== root && !file.startsWith(root + path.sep)) {
    res.writeHead(403).end('forbidden');
    return;
  }
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) {
      if (!quiet) console.log(`404 ${req.method} ${url.pathname}`);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const headers = {
      'content-type': TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream',
      'content-length': st.size,
      'cache-control': 'no-cache',
      // Strict CSP-ish hardening: the demo never talks to third parties.
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
    };
    if (!quiet) console.log(`200 ${req.method} ${url.pathname}`);
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return res.end();
    fs.createReadStream(file).pipe(res);
  });
});

server.listen(port, host, () => {
  const actual = server.address().port;
  const shown = host === '0.0.0.0' || host === '127.0.0.1' ? 'localhost' : host;
  console.log(`meetcite demo: http://${shown}:${actual}/  (root ${root})`);
});
