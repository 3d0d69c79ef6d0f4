#!/usr/bin/env bash
# Build the meetcite WebAssembly package (pkg/) and assemble the demo site (www/).
#
#   scripts/build-wasm.sh            # release build -> pkg/ + www/{pkg,models,data}
#   SKIP_CARGO=1 scripts/build-wasm.sh   # only re-run wasm-bindgen and the copies
#
# Needs: rustup target wasm32-unknown-unknown, wasm-bindgen-cli matching Cargo.lock
# (.ci/browser.sh installs both). wasm-opt is used when present (optional).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET_DIR=${MEETCITE_WASM_TARGET_DIR:-$ROOT/target/wasm}
OUT=$ROOT/pkg
WWW=$ROOT/www
FIXTURE_CHUNKS=${MEETCITE_EXAMPLE_CHUNKS:-tests/fixtures/pricing_chunks.json}
FIXTURE_ANSWER=${MEETCITE_EXAMPLE_ANSWER:-tests/fixtures/pricing_answer.json}

want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ -z "$have" ]; then
  echo "error: wasm-bindgen not found; install it with: cargo install wasm-bindgen-cli --version $want" >&2
  exit 1
fi
if [ -n "$want" ] && [ "$have" != "$want" ]; then
  echo "error: wasm-bindgen-cli $have does not match the wasm-bindgen $want in Cargo.lock" >&2
  echo "       cargo install wasm-bindgen-cli --version $want --force" >&2
  exit 1
fi

if [ -z "${SKIP_CARGO:-}" ]; then
  t0=$(date +%s)
  # simd128: every current browser and Node >= 16 supports it; tract's kernels use it.
  RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" CARGO_TARGET_DIR="$TARGET_DIR" \
    cargo build --release --target wasm32-unknown-unknown --no-default-features --features wasm --lib
  echo "cargo build (wasm32) took $(( $(date +%s) - t0 )) s"
fi
WASM=$TARGET_DIR/wasm32-unknown-unknown/release/meetcite.wasm
[ -f "$WASM" ] || { echo "error: $WASM not built" >&2; exit 1; }

rm -rf "$OUT"
wasm-bindgen --target web --out-dir "$OUT" --out-name meetcite "$WASM"
if command -v wasm-opt >/dev/null 2>&1 && [ -z "${SKIP_WASM_OPT:-}" ]; then
  wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
    "$OUT/meetcite_bg.wasm" -o "$OUT/meetcite_bg.opt.wasm" && mv "$OUT/meetcite_bg.opt.wasm" "$OUT/meetcite_bg.wasm" \
    || echo "warning: wasm-opt failed; keeping the unoptimised module" >&2
fi

# npm manifest from the template, version from Cargo.toml
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
sed "s/\"version\": \"0.0.0\"/\"version\": \"$version\"/" pkg.json > "$OUT/package.json"
# Node entry point: synchronous init from the bundled bytes, so `import ... from 'meetcite'` just works.
cat > "$OUT/node.js" <<'JS'
// Node entry: instantiate the module synchronously from the file next to this one.
import { readFileSync } from 'node:fs';
import { initSync } from './meetcite.js';
initSync({ module: readFileSync(new URL('./meetcite_bg.wasm', import.meta.url)) });
export * from './meetcite.js';
export { default } from './meetcite.js';
JS
cp "$OUT/meetcite.d.ts" "$OUT/node.d.ts"
[ -f README.md ] && cp README.md "$OUT/README.md" || true
for l in LICENSE-MIT LICENSE-APACHE LICENSE; do [ -f "$l" ] && cp "$l" "$OUT/"; done
rm -f "$OUT/.gitignore"

# Demo site: package, model files, example data (all generated; www/.gitignore lists them).
rm -rf "$WWW/pkg" "$WWW/models" "$WWW/data"
mkdir -p "$WWW/pkg" "$WWW/models" "$WWW/data"
cp "$OUT/meetcite.js" "$OUT/meetcite_bg.wasm" "$WWW/pkg/"
cp models/nli-minilm-l6-int8.onnx models/tokenizer.json models/config.json "$WWW/models/"
if [ -f "$FIXTURE_CHUNKS" ] && [ -f "$FIXTURE_ANSWER" ]; then
  cp "$FIXTURE_CHUNKS" "$WWW/data/example_chunks.json"
  cp "$FIXTURE_ANSWER" "$WWW/data/example_answer.json"
else
  echo "warning: example fixtures $FIXTURE_CHUNKS / $FIXTURE_ANSWER not found; the demo starts empty" >&2
  echo '[]' > "$WWW/data/example_chunks.json"
  echo '{"claims":[]}' > "$WWW/data/example_answer.json"
fi

raw=$(stat -c %s "$OUT/meetcite_bg.wasm")
gz=$(gzip -9 -c "$OUT/meetcite_bg.wasm" | wc -c)
echo "pkg/meetcite_bg.wasm: $raw bytes raw, $gz bytes gzip -9"
echo "demo: node www/serve.mjs  ->  http://localhost:8080/"
