#!/usr/bin/env bash
# Run the Node package tests and the Chromium tests. Expects pkg/ and www/ built
# (scripts/build-wasm.sh) and playwright-core installed here (npm ci / .ci/browser.sh).
#   tests/browser/run.sh            # both suites
#   tests/browser/run.sh node       # only the Node package tests
#   tests/browser/run.sh e2e        # only the Chromium tests
set -uo pipefail
cd "$(dirname "$0")"
suites=${1:-all}
files=()
[ "$suites" = all ] || [ "$suites" = node ] && files+=(node/*.test.mjs)
[ "$suites" = all ] || [ "$suites" = e2e ] && files+=(e2e/*.test.mjs)
[ -f ../../pkg/meetcite_bg.wasm ] || { echo "error: pkg/ not built; run scripts/build-wasm.sh" >&2; exit 1; }
mkdir -p artifacts
log=artifacts/test-output.txt
node --test --test-concurrency=1 --test-reporter=spec "${files[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo "---- summary (tests/browser) ----"
grep -E '^(ℹ|#) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$log" || true
grep -E '^# (node|chromium|extension):' "$log" | sort -u || true
exit "$rc"
