#!/usr/bin/env bash
# Installs (or checks) the pinned tools Embers builds and tests with. Idempotent: a tool that is
# already at the right version is left alone, so a second run takes seconds.
#   scripts/setup.sh            build tools: wasm32 target, trunk, wasm-bindgen-cli, binaryen (npm)
#   scripts/setup.sh --test     also Chromium + chromedriver, g++, golang-go and clickhouse-server
#                               (Debian), playwright-core (npm)
# Versions: see ../shared/TOOLCHAIN.md. Source this file's exports via scripts/env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
want_browser=false
[ "${1:-}" = "--test" ] && want_browser=true

say() { printf '\033[1;33m[setup]\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (takes ~9 min the first time)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes ~3 min the first time)"
  # Not --locked: its lockfile pins a yanked webpki-roots.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# binaryen (wasm-opt) and playwright-core come from npm, pinned by e2e/package-lock.json.
if [ ! -x e2e/node_modules/.bin/wasm-opt ] || [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ]; then
  say "installing npm packages (binaryen, playwright-core)"
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
fi

if $want_browser && ! { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }; then
  say "installing Debian chromium + chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# The fuzz step builds libFuzzer from source (the libfuzzer-sys crate): it needs a C++ compiler.
if $want_browser && ! command -v c++ >/dev/null; then
  say "installing Debian g++ (for the fuzz targets)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq g++ >/dev/null
fi
# The formats tests profile a real Go program (runtime/pprof) and read pprof with `go tool pprof`.
if $want_browser && ! command -v go >/dev/null; then
  say "installing Debian golang-go (for the pprof tests)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq golang-go >/dev/null
fi
# The ClickHouse backend's tests run against Debian's clickhouse-server (scripts/clickhouse.sh).
if $want_browser; then
  bash scripts/clickhouse.sh install
fi
say "tools ready"
