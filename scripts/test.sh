#!/usr/bin/env bash
# All tests: the Rust crate (unit, integration, CLI, shipped-model parity) and then the wasm
# package in Node and headless Chromium (installs chromium, wasm-bindgen-cli, playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release
bash .ci/browser.sh
