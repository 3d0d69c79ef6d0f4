#!/usr/bin/env bash
# Build the wasm package and serve the demo on http://localhost:${PORT:-8080}/
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIP_BUILD:-}" ] || scripts/build-wasm.sh
exec node www/serve.mjs --port "${PORT:-8080}" "$@"
