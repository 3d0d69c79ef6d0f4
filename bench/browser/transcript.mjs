// Section "transcript": import + chunk of the synthetic 3-hour meeting (target/bench/transcript_3h.json
// and .vtt, written by `cargo bench --bench transcript`) in headless Chromium, through the package's
// chunkTranscript, with the same options as the native bench. Median of 10 after 2 untimed runs;
// the text is already in the page (what a dropped file gives), so this is import + chunk alone.
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { ROOT, row, median, startServer, launch, openPage } from './lib.mjs';

const files = [['whisperx 3h', 'transcript_3h.json', 'whisperx'], ['vtt 3h', 'transcript_3h.vtt', 'vtt']]
  .filter(([, f]) => existsSync(path.join(ROOT, 'target/bench', f)) || (console.log(`  skip: target/bench/${f} missing (cargo bench --bench transcript writes it)`), false));
const server = await startServer();
const browser = await launch();
try {
  const page = await openPage(browser.context, server.url);
  for (const [kase, file, format] of files) {
    const text = readFileSync(path.join(ROOT, 'target/bench', file), 'utf8');
    const r = await page.evaluate(async ({ text, format }) => {
      const mod = await import('/pkg/meetcite.js');
      await mod.default({ module_or_path: '/pkg/meetcite_bg.wasm' });
      const opts = { meeting_id: 'm', date: '2024-04-12' };
      const time = (fmt) => {
        const ms = [];
        let chunks = 0;
        for (let i = 0; i < 12; i++) {
          const t = performance.now();
          chunks = mod.chunkTranscript(text, opts, fmt).chunks.length;
          if (i >= 2) ms.push(performance.now() - t);
        }
        return { ms, chunks };
      };
      return { given: time(format), auto: time('auto') };
    }, { text, format });
    row('transcript', `import + chunk ${kase}`, 'meetcite wasm (chromium)', 'ms', median(r.given.ms), 'ms', `chunkTranscript, ${r.given.chunks} chunks; the text already in the page`);
    row('transcript', `import + chunk ${kase}`, 'meetcite wasm (chromium), format auto', 'ms', median(r.auto.ms), 'ms', 'chunkTranscript(text, opts, "auto")');
  }
  await page.close();
} finally {
  await browser.close();
  await server.close();
}
