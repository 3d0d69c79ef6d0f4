// Point the wasm-bindgen glue's default init() at the build this engine runs best (wasm-url.js):
// `init()` with no argument fetches meetcite_relaxed_bg.wasm where relaxed SIMD validates and
// meetcite_bg.wasm elsewhere. One exact rewrite of the generated file, checked: a wasm-bindgen
// that writes the default URL differently fails the build here instead of shipping a glue that
// ignores the relaxed build.
//   node scripts/fix-glue.mjs pkg/meetcite.js
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
const src = readFileSync(file, 'utf8');
const DEFAULT_URL = "new URL('meetcite_bg.wasm', import.meta.url)";
const n = src.split(DEFAULT_URL).length - 1;
if (n !== 1) {
  console.error(`error: expected one \`${DEFAULT_URL}\` in ${file}, found ${n}; update scripts/fix-glue.mjs for this wasm-bindgen`);
  process.exit(1);
}
writeFileSync(file, `import { wasmUrl } from './wasm-url.js';\n${src.replace(DEFAULT_URL, 'wasmUrl()')}`);
