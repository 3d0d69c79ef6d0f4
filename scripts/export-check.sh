#!/usr/bin/env bash
# The export script in CI: build the tiny model of every family (tests/families/build.py), export each
# with models/export_hf.py exactly as a user exports a checkpoint (its own checks: onnxruntime vs
# PyTorch, tokenizer.json vs the checkpoint's tokenizer, generic labels refused), then pin tract to the
# probabilities that fresh export wrote (tests/families.rs with MEETCITE_FAMILIES). Nothing is
# downloaded but the pinned Python packages (tests/families/requirements.txt) from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/venv-export
if [ ! -x "$VENV/bin/python" ] || ! cmp -s tests/families/requirements.txt "$VENV/requirements.txt"; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv "$VENV"; }
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/families/requirements.txt
  cp tests/families/requirements.txt "$VENV/requirements.txt"
fi
OUT=target/families-export
rm -rf "$OUT"
"$VENV/bin/python" tests/families/build.py --out "$OUT"
MEETCITE_FAMILIES="$PWD/$OUT" cargo test --release --test all families::
