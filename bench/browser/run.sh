#!/usr/bin/env bash
# Browser/wasm benchmarks: matcher (Node + Chromium), NLI (tract wasm vs onnxruntime-web in
# Chromium), end-to-end verify in Chromium, download sizes. Appends one JSON row per result to
# $BENCH_OUT (default target/bench/results/browser.jsonl). Does not build the wasm: run
# scripts/build-wasm.sh first (bench/run does; it makes both builds, simd128 and relaxed-simd). Sections: BENCH_SECTIONS="matcher nli e2e size transcript" (default all; "families" on request: bench/run families).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
export BENCH_OUT=$(realpath -m "${BENCH_OUT:-target/bench/results/browser.jsonl}")
export CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
sections=${BENCH_SECTIONS:-matcher nli e2e size transcript}

for f in pkg/meetcite_bg.wasm pkg/meetcite.js pkg/node.js; do
  [ -f "$f" ] || { echo "error: $f missing: build the wasm package first with scripts/build-wasm.sh" >&2; exit 1; }
done
[ -x "$CHROMIUM_PATH" ] || { echo "error: no Chromium at $CHROMIUM_PATH (apt-get install -y chromium, or set CHROMIUM_PATH)" >&2; exit 1; }
if [ ! -d "$HERE/node_modules/onnxruntime-web" ] || [ ! -d "$HERE/node_modules/playwright-core" ]; then
  (cd "$HERE" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi
if [ ! -f target/bench/models/nli-minilm-l6-f32.onnx ] && [[ " $sections " == *" nli "* || " $sections " == *" size "* ]]; then
  python3 bench/tools/f32_model.py || echo "warning: could not write the f32 model (pip install onnx numpy); f32 cases skipped" >&2
fi
if [ -f target/bench/models/nli-minilm-l6-f32.onnx ] && [ ! -f target/bench/models/nli-minilm-l6-dynint8.onnx ] && [[ " $sections " == *" nli "* ]]; then
  python3 bench/tools/dyn_int8_model.py || echo "warning: could not write the dynamic-int8 model (pip install onnx onnxruntime); dynint8 cases skipped" >&2
fi
[ -f bench/fixtures/e2e_chunks.json ] && [ -f bench/fixtures/e2e_answer.json ] || node bench/tools/e2e_fixture.mjs

mkdir -p "$(dirname "$BENCH_OUT")"
touch "$BENCH_OUT"
start_line=$(( $(wc -l < "$BENCH_OUT") + 1 ))
t0=$(date +%s)
rc=0
for s in $sections; do
  t=$(date +%s)
  node "$HERE/$s.mjs" || { echo "error: section $s failed" >&2; rc=1; }
  echo "  [$s: $(( $(date +%s) - t )) s]"
done

echo "---- summary (bench/browser, $(( $(date +%s) - t0 )) s; rows in $BENCH_OUT) ----"
tail -n +"$start_line" "$BENCH_OUT" | node "$HERE/summary.mjs"
exit "$rc"
