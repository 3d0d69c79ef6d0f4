// Section "size": what a page downloads. meetcite: the wasm build a page fetches (one of two:
// pkg/meetcite_relaxed_bg.wasm where relaxed SIMD validates, as in Chromium; pkg/meetcite_bg.wasm
// elsewhere), and pkg/meetcite.js + pkg/wasm-url.js.
// onnxruntime-web: the .wasm and JS files the NLI runs actually fetched (recorded by nli.mjs in
// ort-files.json next to $BENCH_OUT; the defaults below otherwise). gzip -9, brotli quality 11.
import { readFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { ROOT, ORT_DIST, ORT_BUNDLE, OUT, MODELS, row } from './lib.mjs';

const gzip = promisify(zlib.gzip), brotli = promisify(zlib.brotliCompress);
const sizes = async (f) => {
  const b = readFileSync(f);
  const [gz, br] = await Promise.all([
    gzip(b, { level: 9 }),
    brotli(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }),
  ]);
  return { raw: b.length, gz: gz.length, br: br.length };
};

const sidecar = path.join(path.dirname(OUT), 'ort-files.json');
let ortFiles = [ORT_BUNDLE, 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'];
let from = 'default list';
if (existsSync(sidecar)) {
  ortFiles = JSON.parse(readFileSync(sidecar, 'utf8'));
  from = 'files fetched by the NLI runs';
}
// the model rows once per runtime: the simd128 build loads the same files as the relaxed one.
// `meetcite` (pkg/, what the package and the demo load) has no tract; `meetcite/full` (pkg/full/)
// adds it, for files other than the shipped int8 BERT form.
const glue = (d) => [`${d}/meetcite.js`, `${d}/wasm-url.js`].map((f) => path.join(ROOT, f));
const impls = {
  'meetcite relaxed-simd build (chromium)': { wasm: [path.join(ROOT, 'pkg/meetcite_relaxed_bg.wasm')], js: glue('pkg'), models: true },
  'meetcite simd128 build (other engines)': { wasm: [path.join(ROOT, 'pkg/meetcite_bg.wasm')], js: glue('pkg'), models: false },
  'meetcite/full relaxed-simd build (chromium)': { wasm: [path.join(ROOT, 'pkg/full/meetcite_relaxed_bg.wasm')], js: glue('pkg/full'), models: false },
  'meetcite/full simd128 build (other engines)': { wasm: [path.join(ROOT, 'pkg/full/meetcite_bg.wasm')], js: glue('pkg/full'), models: false },
  'onnxruntime-web': {
    wasm: ortFiles.filter((f) => f.endsWith('.wasm')).map((f) => path.join(ORT_DIST, f)),
    js: ortFiles.filter((f) => /\.m?js$/.test(f)).map((f) => path.join(ORT_DIST, f)),
    models: true,
  },
};
console.log('size');
for (const [impl, { wasm, js, models }] of Object.entries(impls)) {
  const names = (fs) => fs.map((f) => path.basename(f)).join(' + ');
  const w = { raw: 0, gz: 0, br: 0 };
  for (const f of wasm) {
    const s = await sizes(f);
    w.raw += s.raw; w.gz += s.gz; w.br += s.br;
  }
  const note = impl.startsWith('meetcite') ? names(wasm) : `${names(wasm)} (${from})`;
  row('size', '.wasm raw', impl, 'bytes', w.raw, 'B', note);
  row('size', '.wasm gzip', impl, 'bytes', w.gz, 'B', `${note}; gzip -9`);
  row('size', '.wasm brotli', impl, 'bytes', w.br, 'B', `${note}; brotli q11`);
  row('size', 'JS glue raw', impl, 'bytes', js.reduce((a, f) => a + statSync(f).size, 0), 'B', names(js));
  if (!models) continue;
  for (const [name, f] of Object.entries(MODELS)) {
    if (existsSync(f)) row('size', `model ${name}`, impl, 'bytes', statSync(f).size, 'B', `${path.relative(ROOT, f)} (same file for both runtimes)`);
  }
}
