#!/usr/bin/env bash
# All tests: formatting and lints, the Rust crate (unit, integration, CLI, shipped-model parity),
# then the wasm packages in Node (including tsc over the declarations) and headless Chromium
# (installs chromium, wasm-bindgen-cli, playwright-core, vite and typescript when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
# the native crate with every feature (the wasm bindings compile natively too), tests and benches
cargo clippy --all-targets --all-features -- -D warnings
cargo test --release
bash .ci/browser.sh
