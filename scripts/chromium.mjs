// The one way this project starts Chromium (tests in tests/browser/, benchmarks in bench/browser/):
// Debian's /usr/bin/chromium, headless, with a fresh profile directory removed on close.
// `chromium` is playwright-core's export, passed in so each package keeps its own playwright-core.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// No network beyond the page's own server, no GPU, no sandbox (containers), nothing synced or updated.
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/**
 * A headless Chromium with a new, empty profile; `close()` also deletes the profile.
 * `extraArgs` are appended to CHROMIUM_ARGS; other options go to launchPersistentContext.
 */
export async function launchFresh(chromium, { profilePrefix = 'meetcite-chromium-', extraArgs = [], ...options } = {}) {
  const profile = mkdtempSync(path.join(tmpdir(), profilePrefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    ...options,
  });
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}
