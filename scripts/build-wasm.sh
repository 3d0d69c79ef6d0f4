#!/usr/bin/env bash
# Build the meetcite WebAssembly package (pkg/) and assemble the demo site (www/).
#
#   scripts/build-wasm.sh            # release build -> pkg/ (npm meetcite), pkg-model/ (npm
#                                    # meetcite-model-minilm) + www/{pkg,models,data}
#   SKIP_CARGO=1 scripts/build-wasm.sh   # only re-run wasm-bindgen and the copies
#
# Cargo profile `wasm-release` (Cargo.toml): dependencies at opt-level z except tract-linalg's
# kernels (3), fat LTO, one codegen unit: 10.3 MB raw / 2.86 MB gzip at the speed of a plain
# release build (a plain release build: 17.9 / 4.5 MB).
#
# Needs: rustup target wasm32-unknown-unknown, wasm-bindgen-cli matching Cargo.lock
# (.ci/browser.sh installs both). MEETCITE_WASM_OPT=-Oz runs binaryen's wasm-opt (optional).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET_DIR=${MEETCITE_WASM_TARGET_DIR:-$ROOT/target/wasm}
OUT=$ROOT/pkg
WWW=$ROOT/www
FIXTURES=${MEETCITE_FIXTURES:-tests/fixtures}
# the demo opens on this example (a QMSum-derived meeting)
DEFAULT_EXAMPLE=${MEETCITE_DEFAULT_EXAMPLE:-qmsum}

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

# Two packages, each in two builds (js/wasm-url.js picks the build at run time, by feature detection):
#   pkg/ (npm `meetcite`): meetcite's own int8 encoder and no tract (cargo features `wasm`): runs the
#     shipped model (weight-only int8 BERT), the matcher and everything else; ~1.5 MB gzip smaller.
#   pkg/full/ (`meetcite/full`): tract as well (`wasm,tract`): every model family, f32 and dynamic
#     int8 files, `runtime: "tract"`. The same API; `meetcite` refuses what needs tract with the
#     error code `model_needs_tract`.
# and for each:
#   simd128 (meetcite_bg.wasm): every current browser and Node >= 16.
#   relaxed SIMD as well (meetcite_relaxed_bg.wasm): Chrome/Edge >= 114, Node >= 22; fused
#     multiply-add in tract's f32 kernels, 1.04-1.20x on tract's NLI runs (BENCHMARKS.md).
# Each build has its own cargo target dir: the flags differ, so one dir would rebuild everything on
# each switch. A cold build takes ~4 min on 2 cores with tract, ~2 without; after a change to src/,
# about a minute each.
LITE_TARGET_DIR=${MEETCITE_WASM_LITE_TARGET_DIR:-$ROOT/target/wasm-lite}
LITE_RELAXED_TARGET_DIR=${MEETCITE_WASM_LITE_RELAXED_TARGET_DIR:-$ROOT/target/wasm-lite-relaxed}
RELAXED_TARGET_DIR=${MEETCITE_WASM_RELAXED_TARGET_DIR:-$ROOT/target/wasm-relaxed}
build() { # target dir, target features, cargo features
  local t0
  t0=$(date +%s)
  RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=$2" CARGO_TARGET_DIR="$1" \
    cargo build --profile wasm-release --target wasm32-unknown-unknown --no-default-features --features "$3" --lib
  echo "cargo build (wasm32, $2, features $3) took $(( $(date +%s) - t0 )) s"
}
if [ -z "${SKIP_CARGO:-}" ]; then
  build "$LITE_TARGET_DIR" +simd128 wasm
  build "$LITE_RELAXED_TARGET_DIR" +simd128,+relaxed-simd wasm
  build "$TARGET_DIR" +simd128 wasm,tract
  build "$RELAXED_TARGET_DIR" +simd128,+relaxed-simd wasm,tract
fi
built() { echo "$1/wasm32-unknown-unknown/wasm-release/meetcite.wasm"; }
for d in "$LITE_TARGET_DIR" "$LITE_RELAXED_TARGET_DIR" "$TARGET_DIR" "$RELAXED_TARGET_DIR"; do
  w=$(built "$d")
  [ -f "$w" ] || { echo "error: $w not built" >&2; exit 1; }
  # wasm-ld wraps every export in a constructor call unless the module calls them itself (src/wasm.rs
  # `start`); the wrappers are named `<export>.command_export` in the name section cargo leaves in.
  if grep -q -a 'command_export' "$w"; then
    echo "error: $w re-runs its constructors on every export call (see start() in src/wasm.rs)" >&2
    exit 1
  fi
done

# wasm-opt is opt-in: on this crate -Oz takes minutes and saves ~2 MB raw, nothing after gzip.
opt() { # .wasm file, the features its code uses
  local w=$1
  shift
  wasm-opt "$MEETCITE_WASM_OPT" "$@" "$w" -o "$w.opt" && mv "$w.opt" "$w" \
    || echo "warning: wasm-opt failed on $w; keeping the unoptimised module" >&2
}
bindgen() { wasm-bindgen --target web --out-dir "$1" --out-name meetcite --remove-name-section --remove-producers-section "$2"; }
# One package directory from one pair of builds: glue, both .wasm files, declarations, the Node
# entry and the JS modules of js/ (which import './meetcite.js', so each package's pool, worker and
# model loader run that package's build).
assemble() { # out dir, simd128 target dir, relaxed target dir
  local out=$1 scratch=$3/bindgen
  mkdir -p "$out"
  bindgen "$out" "$(built "$2")"
  # one glue serves both builds: the relaxed build must export and import exactly what the simd128 one does
  rm -rf "$scratch"
  bindgen "$scratch" "$(built "$3")"
  if ! cmp -s "$out/meetcite.js" "$scratch/meetcite.js"; then
    echo "error: wasm-bindgen wrote a different meetcite.js for the relaxed-SIMD build of $out; one glue cannot load both" >&2
    exit 1
  fi
  mv "$scratch/meetcite_bg.wasm" "$out/meetcite_relaxed_bg.wasm"
  # init() with no argument fetches the build wasm-url.js picks
  node scripts/fix-glue.mjs "$out/meetcite.js"
  if [ -n "${MEETCITE_WASM_OPT:-}" ] && command -v wasm-opt >/dev/null 2>&1; then
    opt "$out/meetcite_bg.wasm" --enable-simd
    opt "$out/meetcite_relaxed_bg.wasm" --enable-simd --enable-relaxed-simd
  fi
  # The declarations must compile with `tsc --strict` without the DOM lib, without esnext.disposable
  # and without skipLibCheck (a Node or worker project): the glue's init() types name DOM types
  # (RequestInfo, Response, URL, BufferSource, WebAssembly.Module) and every class gets a
  # `[Symbol.dispose]()`. Both are rewritten to structural types; the runtime is unchanged. Optional
  # trailing arguments get their `?` back (wasm-bindgen drops it when a parameter type is given).
  node scripts/fix-dts.mjs "$out/meetcite.d.ts"
  # Node entry point: synchronous init from the bundled bytes, so `import ... from 'meetcite'` just works.
  cat > "$out/node.js" <<'JS'
// Node entry: instantiate the module synchronously from the file next to this one.
import { readFileSync } from 'node:fs';
import { initSync } from './meetcite.js';
import { wasmUrl } from './wasm-url.js';
// the relaxed-SIMD build where this Node has it (>= 22), else the simd128 one
initSync({ module: readFileSync(wasmUrl()) });
export * from './meetcite.js';
export { default } from './meetcite.js';
JS
  cp "$out/meetcite.d.ts" "$out/node.d.ts"
  # meetcite/pool (the NLI model on several Web Workers), meetcite/worker (everything in a Web
  # Worker, promise API), meetcite/model (fetch the model files with progress and the Cache API):
  # sources in js/
  cp js/pool.js js/pool-worker.js js/pool.d.ts js/worker.js js/worker-thread.js js/worker.d.ts js/model.js js/model.d.ts js/wasm-url.js js/wasm-url.d.ts "$out/"
  rm -f "$out/.gitignore"
}
rm -rf "$OUT"
assemble "$OUT" "$LITE_TARGET_DIR" "$LITE_RELAXED_TARGET_DIR"
assemble "$OUT/full" "$TARGET_DIR" "$RELAXED_TARGET_DIR"
# (for resolvers that ignore the exports map, e.g. TypeScript's node10: `meetcite/full` is a folder)
printf '{\n  "type": "module",\n  "main": "./meetcite.js",\n  "types": "./meetcite.d.ts"\n}\n' > "$OUT/full/package.json"

# npm manifest from the template, version from Cargo.toml
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
sed "s/\"version\": \"0.0.0\"/\"version\": \"$version\"/" pkg.json > "$OUT/package.json"
cp README.md LICENSE-MIT LICENSE-APACHE "$OUT/"

# The model as a package (pkg-model/ -> npm `meetcite-model-minilm`): every file at the top of
# models/ (weights, tokenizer, config, model card, licence, notice), the loader, and a manifest of
# sizes and SHA-256 digests computed here from whatever models/ holds now.
MODEL_OUT=$ROOT/pkg-model
rm -rf "$MODEL_OUT" && mkdir -p "$MODEL_OUT"
find models -maxdepth 1 -type f ! -name '.*' -exec cp {} "$MODEL_OUT/" \;
for need in tokenizer.json config.json MODEL_CARD.md LICENSE NOTICE.md; do
  [ -f "$MODEL_OUT/$need" ] || { echo "error: models/$need is missing (the model package ships it)" >&2; exit 1; }
done
onnx=$(cd "$MODEL_OUT" && ls *.onnx)
[ "$(echo "$onnx" | wc -l)" = 1 ] || { echo "error: expected exactly one .onnx file in models/, found: $onnx" >&2; exit 1; }
for f in index.js node.js index.d.ts; do sed "s/nli-minilm-l6-int8\.onnx/$onnx/g" "js/model-pkg/$f" > "$MODEL_OUT/$f"; done
cp js/model.js "$MODEL_OUT/load.js"
cp js/model.d.ts "$MODEL_OUT/load.d.ts"
cp LICENSE-MIT LICENSE-APACHE "$MODEL_OUT/"
node scripts/model-package.mjs "$MODEL_OUT" "$onnx" "$version"

# Demo site: package, model files, example data (all generated; www/.gitignore lists them).
rm -rf "$WWW/pkg" "$WWW/models" "$WWW/data"
mkdir -p "$WWW/pkg" "$WWW/models" "$WWW/data"
# pkg/full too: the demo switches to it when a picked model folder needs tract
mkdir -p "$WWW/pkg/full"
for d in "" full/; do
  for f in meetcite.js wasm-url.js meetcite_bg.wasm meetcite_relaxed_bg.wasm pool.js pool-worker.js worker.js worker-thread.js model.js; do
    cp "$OUT/$d$f" "$WWW/pkg/$d"
  done
done
cp "$MODEL_OUT/$onnx" "$MODEL_OUT/tokenizer.json" "$MODEL_OUT/config.json" "$WWW/models/"
# every tests/fixtures/NAME_chunks.json with a NAME_answer.json becomes an example; index in examples.json
names=()
for f in "$FIXTURES"/*_chunks.json; do
  [ -f "$f" ] || continue
  name=$(basename "$f" _chunks.json)
  [ -f "$FIXTURES/${name}_answer.json" ] || continue
  cp "$f" "$WWW/data/${name}_chunks.json"
  cp "$FIXTURES/${name}_answer.json" "$WWW/data/${name}_answer.json"
  names+=("$name")
done
if [ ${#names[@]} -eq 0 ]; then
  echo "warning: no example fixtures (NAME_chunks.json + NAME_answer.json) in $FIXTURES; the demo starts empty" >&2
fi
node -e '
  const [def, ...names] = process.argv.slice(1);
  names.sort((a, b) => (b === def) - (a === def) || a.localeCompare(b));
  process.stdout.write(JSON.stringify({ default: names[0] || null, examples: names.map((n) => ({ name: n, chunks: `data/${n}_chunks.json`, answer: `data/${n}_answer.json` })) }, null, 1));
' "$DEFAULT_EXAMPLE" "${names[@]}" > "$WWW/data/examples.json"
echo "examples: ${names[*]:-none} (default: $(node -e 'console.log(require(process.argv[1]).default)' "$WWW/data/examples.json"))"

# Browser extension (www/extension): its own copy of the package, and an example page built from
# the pricing fixture (a page that embeds meetcite data, the extension overlays its verdicts).
rm -rf "$WWW/extension/pkg" && mkdir -p "$WWW/extension/pkg"
# (the simd128 build only: background.js names it, and the extension runs no NLI model)
cp "$OUT/meetcite.js" "$OUT/wasm-url.js" "$OUT/meetcite_bg.wasm" "$WWW/extension/pkg/"
ex=${MEETCITE_EXTENSION_EXAMPLE:-pricing}
if [ -f "$WWW/data/${ex}_chunks.json" ]; then
  node - "$WWW/data/${ex}_chunks.json" "$WWW/data/${ex}_answer.json" > "$WWW/extension/example.html" <<'JS'
const fs = require('fs');
const [chunksFile, answerFile] = process.argv.slice(2);
const chunks = JSON.parse(fs.readFileSync(chunksFile, 'utf8'));
const answer = fs.readFileSync(answerFile, 'utf8');
const data = JSON.stringify({ chunks, answer, options: { order: 'date' } }).replace(/</g, '\\u003c');
const end = Math.ceil(Math.max(60, ...(Array.isArray(chunks) ? chunks : chunks.chunks).map((c) => c.end))) + 5;
const esc = (s) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);
process.stdout.write(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>meetcite extension example</title></head>
<body>
<h1>Meeting assistant (example page)</h1>
<p>With the meetcite extension installed, a panel lists each claim below with its status.</p>
<audio id="rec" controls></audio>
<pre id="answer">${esc(answer)}</pre>
<script type="application/meetcite+json">${data}</script>
<script>
// a silent 8 kHz WAV standing in for the recording, so citations can seek it
const n = ${end} * 8000, b = new ArrayBuffer(44 + n), v = new DataView(b);
const w = (o, s) => [...s].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)));
w(0, 'RIFF'); v.setUint32(4, 36 + n, true); w(8, 'WAVE'); w(12, 'fmt '); v.setUint32(16, 16, true);
v.setUint16(20, 1, true); v.setUint16(22, 1, true); v.setUint32(24, 8000, true); v.setUint32(28, 8000, true);
v.setUint16(32, 1, true); v.setUint16(34, 8, true); w(36, 'data'); v.setUint32(40, n, true);
new Uint8Array(b, 44).fill(128);
document.getElementById('rec').src = URL.createObjectURL(new Blob([b], { type: 'audio/wav' }));
</script>
</body></html>
`);
JS
fi

for w in meetcite_bg meetcite_relaxed_bg full/meetcite_bg full/meetcite_relaxed_bg; do
  echo "pkg/$w.wasm: $(stat -c %s "$OUT/$w.wasm") bytes raw, $(gzip -9 -c "$OUT/$w.wasm" | wc -c) bytes gzip -9"
done
echo "demo: node www/serve.mjs  ->  http://localhost:8080/"
