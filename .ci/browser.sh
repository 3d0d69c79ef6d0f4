#!/usr/bin/env bash
# Browser CI job: install what is missing (idempotent), build the wasm package once, run the
# Node and Chromium tests. Called from .ci/run; also runnable alone.
#   CHROMIUM_PATH   browser binary (default /usr/bin/chromium; apt-installed when missing)
#   SKIP_BUILD=1    reuse pkg/ and www/ as they are
#   INSTALL_ONLY=1  only install the toolchain, chromium and node packages (bench/run uses this)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)

step() { printf '\n== %s\n' "$*"; }

step "toolchain"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  # --locked can fail when the registry mirror lacks a pinned transitive version; retry unlocked
  cargo install wasm-bindgen-cli --version "$WB_VERSION" --locked --force || cargo install wasm-bindgen-cli --version "$WB_VERSION" --force
fi
wasm-bindgen --version

step "chromium"
if [ ! -x "$CHROMIUM_PATH" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium
  else
    echo "error: no Chromium at $CHROMIUM_PATH and no apt-get; set CHROMIUM_PATH" >&2
    exit 1
  fi
fi
"$CHROMIUM_PATH" --version 2>/dev/null | head -1 || true

step "node packages (playwright-core, vite, typescript; never downloads browsers)"
node --version
cd tests/browser
# every package of package.json present, else install exactly the lock file's versions
if ! node -e 'const p = require("./package.json"); for (const d of Object.keys({ ...p.dependencies, ...p.devDependencies })) require.resolve(d + "/package.json")' 2>/dev/null; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund || PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund
fi
cd "$ROOT"

[ -n "${INSTALL_ONLY:-}" ] && exit 0

if [ -z "${SKIP_BUILD:-}" ]; then
  step "wasm build"
  scripts/build-wasm.sh
fi

step "tests"
tests/browser/run.sh
