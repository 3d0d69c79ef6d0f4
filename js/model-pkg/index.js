// meetcite-model-minilm: meetcite's NLI model (weights, tokenizer, config) as an npm package.
//
//   import { loadModel } from 'meetcite-model-minilm';
//   const files = await loadModel({ onProgress });             // bytes, fetched with progress + Cache API
//   const verifier = await Verifier.load(files);               // or VerifierWorker.load(modelFiles, ...)
//
// The file URLs are `new URL('./file', import.meta.url)`, which bundlers (Vite, webpack 5, Parcel)
// turn into emitted assets. Sizes and SHA-256 digests (manifest.js, written by the build) give exact
// progress behind compressing servers and key the cache, so a new model version is fetched again.
import { loadModel as load } from './load.js';
import { MANIFEST } from './manifest.js';

/** URLs of the three files, for `VerifierWorker.load(modelFiles, {sizes, sha256})` or your own fetch. */
export const modelFiles = {
  model: new URL('./nli-minilm-l6-int8.onnx', import.meta.url),
  tokenizer: new URL('./tokenizer.json', import.meta.url),
  config: new URL('./config.json', import.meta.url),
};

/** `{files: {model: {name, bytes, sha256}, ...}, version}` of the files in this package. */
export const manifest = MANIFEST;
export const sizes = Object.fromEntries(Object.entries(MANIFEST.files).map(([k, f]) => [k, f.bytes]));
export const sha256 = Object.fromEntries(Object.entries(MANIFEST.files).map(([k, f]) => [k, f.sha256]));

/**
 * The model files as bytes: fetched from this package's URLs (or `options.urls`, when you serve
 * the files yourself) with progress events and the Cache API; see meetcite/model's loadModel for
 * the options. Pass `{model, tokenizer, config}` bytes as `options.bytes` to skip fetching.
 */
export function loadModel(options = {}) {
  const { urls, bytes, ...rest } = options || {};
  return load(bytes || urls || modelFiles, { sizes, sha256, ...rest });
}

export default loadModel;
