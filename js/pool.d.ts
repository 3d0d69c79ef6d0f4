// Types of meetcite/pool (pool.js): a Verifier on several Web Workers.
import type { ModelConfig, ModelFiles, Probs, Report, Source, VerifyOptions } from './meetcite.js';
import type { RemoteStream } from './worker.js';

export interface PoolOptions {
  /** Number of workers, each with its own wasm instance and model (default `navigator.hardwareConcurrency || 2`). */
  size?: number;
  /** Where the wasm build to run is (default: `wasmUrl()` of meetcite/wasm-url: meetcite_relaxed_bg.wasm where relaxed SIMD validates, else meetcite_bg.wasm); fetched and compiled once, shared by the workers. */
  wasmUrl?: string | { readonly href: string };
  /** Where pool-worker.js is (default: next to pool.js; bundlers that recognise `new Worker(new URL(...))` find it). */
  workerUrl?: string | { readonly href: string };
  /** meetcite's wasm already compiled (a `WebAssembly.Module`): used instead of `wasmUrl`. */
  module?: object;
}

/** The NLI model on `size` Web Workers; `verify` splits the NLI pairs of one answer across them. */
export declare class VerifierPool {
  /** Start the workers; each loads a Verifier from a copy of `files`. Rejects with a coded `Error` (`MeetciteError`). */
  static create(files: ModelFiles, options?: PoolOptions): Promise<VerifierPool>;
  /** Number of workers. */
  readonly size: number;
  /** The model's config (as `Verifier#config`). */
  readonly config: ModelConfig;
  /** Same report as `Verifier#verify`: worker 0 plans, all workers score, worker 0 verifies with the scores. */
  verify(answer: string, sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<Report>;
  /** Verify an answer while it arrives, on one worker (concurrent streams take the workers in turn). */
  stream(sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<RemoteStream>;
  /** The pairs `verify` scores for this answer that `opts.scores` lacks (`Verifier#plan` on worker 0); with a quote-first cascade, plan again with their scores until empty. */
  plan(answer: string, sources: Source[] | { sources: Source[] }, opts?: VerifyOptions): Promise<[premise: string, hypothesis: string][]>;
  /** Score pairs on all workers in parallel; results in the order of `pairs`. */
  score(pairs: [premise: string, hypothesis: string][]): Promise<Probs[]>;
  /** Stop the workers; pending and later calls reject with code `terminated`. */
  terminate(): void;
}

/** Indices of `costs` split into `n` groups of about equal total cost (longest first, to the least loaded). */
export declare function balance(costs: number[], n: number): number[][];

export default VerifierPool;
