// meetcite-model-minilm in Node: the same API, reading the files from this package's folder.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MANIFEST } from './manifest.js';

export const modelFiles = {
  model: new URL('./nli-minilm-l6-int8.onnx', import.meta.url),
  tokenizer: new URL('./tokenizer.json', import.meta.url),
  config: new URL('./config.json', import.meta.url),
};
export const manifest = MANIFEST;
export const sizes = Object.fromEntries(Object.entries(MANIFEST.files).map(([k, f]) => [k, f.bytes]));
export const sha256 = Object.fromEntries(Object.entries(MANIFEST.files).map(([k, f]) => [k, f.sha256]));

/** The model files as bytes (`Uint8Array`s), read from disk; `onProgress` is called once per file. */
export async function loadModel(options = {}) {
  const { onProgress, bytes } = options || {};
  const u8 = (v) => (v instanceof Uint8Array ? v : ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v));
  if (bytes) return { model: u8(bytes.model), tokenizer: u8(bytes.tokenizer), config: u8(bytes.config), cached: false };
  const out = { cached: false };
  const keys = ['model', 'tokenizer', 'config'];
  const total = keys.reduce((a, k) => a + sizes[k], 0);
  let loaded = 0;
  for (const k of keys) {
    out[k] = new Uint8Array(await readFile(fileURLToPath(modelFiles[k])));
    loaded += out[k].length;
    onProgress?.({ file: k, loaded: out[k].length, total: out[k].length, cached: false, overall: { loaded, total } });
  }
  return out;
}

export default loadModel;
