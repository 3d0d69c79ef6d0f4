// Which of meetcite's two WebAssembly builds this engine runs, and where that file is.
//
// meetcite ships meetcite_bg.wasm (simd128: every current browser, Node >= 16) and
// meetcite_relaxed_bg.wasm (the same code built with relaxed SIMD as well: Chrome and Edge >= 114,
// Node >= 22). The relaxed build's f32 kernels use fused multiply-add, which makes the NLI model
// 1.04-1.20x faster in Chromium (two CPUs); its probabilities differ from the simd128 build's by less than
// 1e-6 (BENCHMARKS.md). Every loader in the package (init() of meetcite.js, meetcite/worker,
// meetcite/pool, the Node entry) fetches the one file `wasmUrl()` names; a `wasmUrl` or
// `module_or_path` given by the caller wins.
//
// Bundlers: both URLs are literal `new URL('./…', import.meta.url)` expressions, the form Vite and
// webpack rewrite and emit as assets; a URL built from a variable would not be bundled.

// A module whose one function uses i8x16.relaxed_swizzle (0xfd 0x80 0x02); engines without relaxed
// SIMD reject it. The same probe as wasm-feature-detect's relaxedSimd().
const PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 15, 1, 13, 0, 65, 1, 253, 15, 65, 2, 253, 15, 253, 128, 2, 11]);

let relaxed = null;

/** Whether this engine validates relaxed-SIMD code (checked once). */
export function relaxedSimd() {
  if (relaxed === null) {
    try {
      relaxed = WebAssembly.validate(PROBE);
    } catch {
      relaxed = false;
    }
  }
  return relaxed;
}

/** The URL of the build this engine should run. */
export function wasmUrl() {
  return relaxedSimd() ? new URL('./meetcite_relaxed_bg.wasm', import.meta.url) : new URL('./meetcite_bg.wasm', import.meta.url);
}
