#!/usr/bin/env bash
# Optional: a second meetcite wasm built with relaxed SIMD, for the "tract wasm relaxed-simd" NLI
# rows. Own cargo target dir (target/wasm-relaxed: a cold build of several minutes) and own output
# (target/bench/pkg-relaxed); pkg/ is not touched. Same cargo profile and wasm-bindgen flags as scripts/build-wasm.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET_DIR=${MEETCITE_WASM_RELAXED_TARGET_DIR:-$PWD/target/wasm-relaxed}
OUT=${BENCH_RELAXED_PKG:-target/bench/pkg-relaxed}
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128,+relaxed-simd" CARGO_TARGET_DIR="$TARGET_DIR" \
  cargo build --profile wasm-release --target wasm32-unknown-unknown --no-default-features --features wasm --lib
rm -rf "$OUT"
wasm-bindgen --target web --out-dir "$OUT" --out-name meetcite --remove-name-section --remove-producers-section \
  "$TARGET_DIR/wasm32-unknown-unknown/wasm-release/meetcite.wasm"
echo "$OUT/meetcite_bg.wasm: $(stat -c %s "$OUT/meetcite_bg.wasm") bytes"
