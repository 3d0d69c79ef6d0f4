#!/usr/bin/env bash
# All tests: formatting and lints, the Rust crate (unit, integration, CLI, shipped-model parity),
# the export script on every model family (a Python venv in target/), then the wasm packages in
# Node (including tsc over the declarations) and headless Chromium (installs chromium,
# wasm-bindgen-cli, playwright-core, vite and typescript when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
# the native crate with every feature (the wasm bindings compile natively too), tests and benches
cargo clippy --all-targets --all-features -- -D warnings
# the build the npm package's default wasm is made of (no tract): its own cfg paths
cargo clippy --lib --no-default-features --features nli -- -D warnings
cargo test --release
# the export script (models/export_hf.py) on a fresh tiny model of every family, tract pinned to its output
bash scripts/export-check.sh
bash .ci/browser.sh
