// Types of meetcite-model-minilm. No DOM types: this compiles under `lib: ["es2022"]` alone.
import type { LoadModelOptions, LoadedModel } from './load.js';

export type { LoadModelOptions, LoadedModel, ModelProgress } from './load.js';

/** URLs of the three files (`URL` objects). */
export declare const modelFiles: { readonly model: { readonly href: string }; readonly tokenizer: { readonly href: string }; readonly config: { readonly href: string } };
export interface ManifestFile { name: string; bytes: number; sha256: string }
export declare const manifest: { name: string; version: string; files: { model: ManifestFile; tokenizer: ManifestFile; config: ManifestFile } };
export declare const sizes: { model: number; tokenizer: number; config: number };
export declare const sha256: { model: string; tokenizer: string; config: string };

export interface ModelPackageOptions extends Omit<LoadModelOptions, 'sizes' | 'sha256'> {
  /** Where you serve the files, when not from this package's folder. */
  urls?: { model: string | { readonly href: string }; tokenizer: string | { readonly href: string }; config: string | { readonly href: string } };
  /** The files' bytes: no fetching. */
  bytes?: { model: Uint8Array | ArrayBuffer; tokenizer: Uint8Array | ArrayBuffer; config: Uint8Array | ArrayBuffer };
}

/** The model files as bytes, for `Verifier.load` (browsers: fetched with progress and the Cache API; Node: read from disk). */
export declare function loadModel(options?: ModelPackageOptions): Promise<LoadedModel>;
export default loadModel;
