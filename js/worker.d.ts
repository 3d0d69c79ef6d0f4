// Types of meetcite/worker (worker.js): meetcite in a Web Worker, promise API.
// No DOM types: this compiles under `lib: ["es2022"]` alone.
import type { Chunk, Chunked, ChunkOptions, Context, ContextOptions, Finished, Gold, MatchOptions, Metrics, ModelConfig, ParsedAnswer, Probs, QuoteMatch, RenderOptions, Report, Source, StreamEvent, VerifyOptions } from './meetcite.js';
import type { LoadModelOptions, ModelFolder, ModelSource } from './model.js';

export type { ModelProgress, ModelSource, LoadModelOptions } from './model.js';

/** An answer being verified as it arrives, in a worker (`VerifierWorker#stream`, `VerifierPool#stream`). */
export interface RemoteStream {
  /** The verdicts of the claims this piece completed (NLI included when a model is loaded). */
  push(piece: string): Promise<StreamEvent[]>;
  /** `{events, report}`: `report` is what `verify` returns on the whole text; `events` what the end changed. */
  finish(): Promise<Finished>;
}

export interface WorkerOptions {
  /** Where worker-thread.js is (default: next to worker.js; bundlers that recognise `new Worker(new URL(...))` find it). */
  workerUrl?: string | { readonly href: string };
  /** Where the wasm build to run is (default: `wasmUrl()` of meetcite/wasm-url: meetcite_relaxed_bg.wasm where relaxed SIMD validates, else meetcite_bg.wasm). */
  wasmUrl?: string | { readonly href: string };
  /** meetcite's wasm already compiled (a `WebAssembly.Module`): used instead of `wasmUrl`. */
  module?: object;
}

export interface WorkerLoadOptions extends Omit<LoadModelOptions, 'fetch' | 'signal' | 'credentials'> {
  /** NLI workers: 1 (default: the model in this worker), n, or "auto" = min(cores, 4) (a VerifierPool, one model each). */
  workers?: number | 'auto';
  /** Where pool-worker.js is, for `workers` > 1 (default: next to pool.js). */
  poolWorkerUrl?: string | { readonly href: string };
}

/** What a load did. */
export interface LoadInfo {
  config: ModelConfig;
  /** NLI workers in use (1 when the pool could not start: see `poolError`) */
  workers: number;
  poolError: { code: string; message: string } | null;
  /** all files came from the Cache API */
  cached: boolean;
  modelBytes: number;
  /** getting the files (download or cache), overlapped with the wasm start in `VerifierWorker.load` */
  fetchMs: number;
  /** building the Verifier (or the pool) from the files */
  initMs: number;
  /** the wasm build this worker (and its pool) runs, when it picked the file itself (`wasmUrl()` of meetcite/wasm-url); `null` when `wasmUrl` or `module` was given */
  build: 'relaxed-simd' | 'simd128' | null;
}

/** meetcite in a Web Worker: the functions of the main module and of `Verifier`, as promises. */
export declare class VerifierWorker {
  /** Start the worker and its wasm instance (no model: verify checks quotes, numbers, speakers, history). */
  static create(options?: WorkerOptions): Promise<VerifierWorker>;
  /** `create` and `load` at once (the model downloads while the wasm compiles): the counterpart of `Verifier.load`. */
  static load(model: ModelSource | ModelFolder, options?: WorkerOptions & WorkerLoadOptions): Promise<VerifierWorker>;
  /** The model's config.json once a model is loaded, else null. */
  readonly config: ModelConfig | null;
  readonly loaded: boolean;
  readonly loadInfo: LoadInfo | null;
  /** The crate version. */
  readonly version: string | null;
  /** Load (or replace) the NLI model: URLs (or a model folder, whose config.json names the files) are fetched in the worker (progress, Cache API), bytes are copied. */
  load(model: ModelSource | ModelFolder, options?: WorkerLoadOptions): Promise<LoadInfo>;
  parseChunks(chunks: Chunk[] | { chunks: Chunk[] } | string): Promise<Chunk[]>;
  chunkTranscript(text: string, opts: ChunkOptions, format?: string): Promise<Chunked>;
  buildContext(chunks: Chunk[] | { chunks: Chunk[] } | string, opts?: ContextOptions): Promise<Context>;
  parseAnswer(answer: string): Promise<ParsedAnswer>;
  matchQuote(text: string, quote: string, opts?: MatchOptions): Promise<QuoteMatch>;
  /** With NLI once a model is loaded (waits for a load in progress), else the deterministic checks. */
  verify(answer: string, sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<Report>;
  /** Verify an answer while it arrives: each claim's verdict as soon as its JSON object is complete. */
  stream(sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<RemoteStream>;
  plan(answer: string, sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<[premise: string, hypothesis: string][]>;
  score(pairs: [premise: string, hypothesis: string][]): Promise<Probs[]>;
  renderHtml(report: Report, opts?: RenderOptions): Promise<string>;
  renderMarkdown(report: Report, opts?: RenderOptions): Promise<string>;
  metrics(report: Report, gold?: Gold): Promise<Metrics>;
  /** Stop the worker; pending and later calls reject with code `terminated`. */
  terminate(): void;
}

export default VerifierWorker;
