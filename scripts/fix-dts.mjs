// Make wasm-bindgen's meetcite.d.ts compile with `tsc --strict` under `lib: ["es2022"]` alone
// (no DOM lib, no esnext.disposable) and without skipLibCheck (scripts/build-wasm.sh).
// The glue's init() types name DOM types (RequestInfo, Response, URL, BufferSource) and the
// WebAssembly namespace, which only the DOM lib and @types/node declare; every class gets a
// `[Symbol.dispose](): void` member, which needs esnext.disposable. These become structural types
// and the member is dropped from the declarations (the runtime still defines it where the engine has
// Symbol.dispose; `free()` is the portable way). The build fails if any such name is left.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
let s = readFileSync(file, 'utf8');
const rules = [
  [/^\s*\[Symbol\.dispose\]\(\): void;\n/gm, ''],
  [/^export type InitInput = .*$/m, '/** A URL (string or `URL`), a `Response`, the bytes of meetcite_bg.wasm or meetcite_relaxed_bg.wasm, or a compiled `WebAssembly.Module`. */\nexport type InitInput = string | { readonly href: string } | ArrayBuffer | ArrayBufferView | object;'],
  [/^export type SyncInitInput = .*$/m, '/** The bytes of meetcite_bg.wasm or meetcite_relaxed_bg.wasm, or a compiled `WebAssembly.Module`. */\nexport type SyncInitInput = ArrayBuffer | ArrayBufferView | object;'],
];
for (const [re, to] of rules) s = s.replace(re, to);
const isComment = (l) => /^\s*(\*|\/\*|\/\/)/.test(l);
s = s
  .split('\n')
  .map((l) => (isComment(l) ? l : l.replace(/WebAssembly\.Memory/g, '{ readonly buffer: ArrayBuffer }').replace(/WebAssembly\.(Table|Global|Module|Instance)/g, 'object')))
  .join('\n');
// optional trailing arguments: wasm-bindgen drops the `?` of an `Option<JsValue>` parameter that
// has an `unchecked_param_type` (function and method signatures only, not interface fields)
s = s.replace(/^(export function |\s+\w+\().*$/gm, (line) => line.replace(/\b(opts|gold|speaker|recording_url|format): /g, '$1?: '));
const code = s.split('\n').filter((l) => !isComment(l));
const left = code.filter((l) => /\b(RequestInfo|Response|BufferSource|URL)\b|WebAssembly\.|Symbol\.dispose/.test(l.replace(/\/\*\*.*?\*\//g, '')));
if (left.length) {
  console.error(`fix-dts: ${file} still names DOM-only types:\n${left.join('\n')}`);
  process.exit(1);
}
writeFileSync(file, s);
