#!/usr/bin/env bash
# The candidate pipeline of step 6 (train/README.md) in one command: a training checkpoint becomes a model folder
# beside the shipped one, the support score is fitted for it on the calib meetings (QMSum train, never trained on by
# the clean retrain), and it is evaluated like a user in one run with the shipped model and word overlap beside it,
# then on the NLI sets. Nothing under models/ is touched: shipping stays a separate, manual step (README step 7-8).
#
#   models/train/candidate.sh CKPT OUT_DIR [LABEL]
#     CKPT     a train.py checkpoint (final.pt / best.pt / last.pt) or a carry file (int8 weights; see --carry)
#     OUT_DIR  outside the checkout or under models/train/out/ (ignored by git)
#
# Needs the training venv ($PY, default /work/venv-train/bin/python) and the data of step 4d (out/support_calib.jsonl).
# About 30-40 min on 2 idle cores, most of it the meetcite CLI scoring the calib and evaluation records twice.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PY:-/work/venv-train/bin/python}
export HF_HUB_OFFLINE=1
[ $# -ge 2 ] || { sed -n 7,9p "$0"; exit 2; }
CKPT=$(realpath "$1")
OUT=$(realpath -m "$2")
LABEL=${3:-candidate}
[ -f "$HERE/out/support_calib.jsonl" ] || { echo "missing out/support_calib.jsonl: run step 4d's data commands" >&2; exit 1; }
mkdir -p "$OUT"

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

step "meetcite CLI (tract) for scoring"
(cd "$ROOT" && cargo build --release --quiet)

step "export: f32 ONNX, onnxruntime == torch, weight-only int8"
# a carry file (int8 weights per row) loads as well as a full checkpoint
(cd "$HERE" && "$PY" export.py "$CKPT" "$OUT/nli-minilm-l6-int8.onnx" "$OUT/nli-minilm-l6-f32.onnx")
cp "$ROOT/models/tokenizer.json" "$ROOT/models/config.json" "$OUT/"

step "support score fitted for this model on the calib meetings (writes $OUT/config.json \"support\")"
(cd "$HERE" && "$PY" fit_support.py --model "$OUT" --scored "$OUT/calib_scored.jsonl")

step "evaluation like a user: $LABEL vs the shipped model, word overlap beside"
(cd "$ROOT/models/eval" && "$PY" support_eval.py --model "$OUT=$LABEL" --model "$ROOT/models=shipped" \
  --json "$OUT/support_results.json" --markdown "$OUT/support_table.md")

step "NLI sets (SNLI test, MNLI dev-mismatched, QMSum-val pairs, ...)"
(cd "$ROOT/models/eval" && "$PY" evaluate.py --model "$OUT/nli-minilm-l6-int8.onnx" --results "$OUT/results.json" \
  --parity-out "$OUT/parity.jsonl" --skip-docs)

step "done"
echo "table: $OUT/support_table.md; NLI: $OUT/results.json"
