/** Whether this engine validates relaxed-SIMD WebAssembly (checked once). */
export declare function relaxedSimd(): boolean;
/**
 * The build this engine runs, as a `URL`: meetcite_relaxed_bg.wasm where relaxed SIMD validates
 * (Chrome and Edge >= 114, Node >= 22), meetcite_bg.wasm (simd128) elsewhere.
 */
export declare function wasmUrl(): { readonly href: string; readonly pathname: string };
