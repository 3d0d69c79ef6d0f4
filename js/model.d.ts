// Types of meetcite/model (model.js): fetch the NLI model files with progress and caching.
// No DOM types: this compiles under `lib: ["es2022"]` alone.

/** The three model files, each a URL or already its bytes (the JSON files also as text). */
export interface ModelSource {
  model: string | { readonly href: string } | Uint8Array | ArrayBuffer;
  tokenizer: string | { readonly href: string } | Uint8Array | ArrayBuffer;
  config: string | { readonly href: string } | Uint8Array | ArrayBuffer;
}

type Url = string | { readonly href: string };
/**
 * A model folder: its URL (`'/models/my-checker/'`), `{dir}`, or `{config}` alone as a URL; the
 * folder's config.json names the model and tokenizer files (`model_file`, `tokenizer_file`).
 */
export type ModelFolder = Url | { dir: Url } | { config: Url; model?: undefined; tokenizer?: undefined };

/** A progress event; sizes in bytes. `total` is null while the size is unknown. */
export interface ModelProgress {
  file: 'model' | 'tokenizer' | 'config';
  loaded: number;
  total: number | null;
  /** served from the Cache API */
  cached: boolean;
  /** all three files; `total` is null until every file's size is known */
  overall: { loaded: number; total: number | null };
}

/** Per file: `{model, tokenizer, config}`. */
export interface PerFile<T> { model?: T; tokenizer?: T; config?: T }

export interface LoadModelOptions {
  onProgress?: (event: ModelProgress) => void;
  /** Cache API: true (default, cache "meetcite-model-v1"), false, or a cache name. */
  cache?: boolean | string;
  /** Expected sizes: exact progress totals even without Content-Length (compressing servers). */
  sizes?: PerFile<number>;
  /** Expected SHA-256 (hex): keys the cache (a new model under the same URL is fetched again) and is checked where crypto.subtle exists. */
  sha256?: PerFile<string>;
  /** Base for relative URLs (default: the page's or worker's location). */
  baseUrl?: string;
  /** `credentials` of the requests (default "same-origin"). */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** An AbortSignal. */
  signal?: unknown;
  /** A fetch function to use instead of the global one. */
  fetch?: (url: string, init?: object) => Promise<unknown>;
}

/** The model files as bytes, ready for `Verifier.load`; `cached`: all three came from the cache. */
export interface LoadedModel { model: Uint8Array; tokenizer: Uint8Array; config: Uint8Array; cached: boolean }

/**
 * Fetch (or take) the model files. Rejects with an `Error` whose `code` is `model_fetch` (HTTP or
 * network error, an HTML page or an empty file instead of a model file, a digest mismatch) or
 * `invalid_input`.
 */
export declare function loadModel(source: ModelSource | ModelFolder, options?: LoadModelOptions): Promise<LoadedModel>;
/** What `modelFromFiles` returns: the bytes for `Verifier.load`, the model's name and total size. */
export interface PickedModel { model: Uint8Array; tokenizer: Uint8Array; config: Uint8Array; name: string; bytes: number }
/** A file of a picked folder (a DOM `File`: name, path in the folder, bytes). */
export interface FolderFile { readonly name: string; readonly webkitRelativePath?: string; arrayBuffer(): Promise<ArrayBuffer> }
/**
 * The model files from a folder picked from disk (`<input type="file" webkitdirectory>`'s `files`,
 * or dropped files): config.json names the other two. Rejects with `code` `invalid_input` naming
 * what is missing. Nothing is uploaded.
 */
export declare function modelFromFiles(files: ArrayLike<FolderFile> | Iterable<FolderFile>): Promise<PickedModel>;
/** Why `bytes` cannot be the model file `file` (empty, an HTML page), or null. */
export declare function badModelFile(bytes: Uint8Array, file: string, contentType?: string): string | null;
export declare const FILES: readonly ['model', 'tokenizer', 'config'];
export declare const DEFAULT_CACHE: string;
export default loadModel;
