// Shared helpers for the Chromium tests: a static server for www/ and a fresh browser profile.
import { before, after } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { launchFresh } from '../../../scripts/chromium.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const ARTIFACTS = path.join(ROOT, 'tests/browser/artifacts');
export const SLOW = Number(process.env.MEETCITE_TEST_TIMEOUT_MS || 240_000);

export async function startServer() {
  const proc = spawn(process.execPath, [path.join(ROOT, 'www/serve.mjs'), '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start')), 10_000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/[^:]+:(\d+)\//);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}/`);
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url, close: () => proc.kill('SIGTERM') };
}

/** Start the demo server and a browser before the file's tests, close both after them. */
export function serveAndLaunch() {
  const env = {};
  before(async () => {
    env.server = await startServer();
    env.browser = await launch();
  });
  after(async () => {
    await env.browser?.close();
    env.server?.close();
  });
  return env;
}

export async function launch() {
  return launchFresh(chromium, { viewport: { width: 1280, height: 900 } });
}

export function artifact(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

// Every request a context makes (pages and workers), in order.
export function recordRequests(context) {
  const log = [];
  context.on('request', (r) => log.push({ url: r.url(), method: r.method(), postData: r.postData() || '', headers: r.headers(), t: Date.now() }));
  return log;
}
