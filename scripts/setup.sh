#!/usr/bin/env bash
# Installs (or checks) the pinned tools Embers builds and tests with. Idempotent: a tool that is
# already at the right version is left alone, so a second run takes seconds.
#   scripts/setup.sh            build tools: wasm32 target, trunk, wasm-bindgen-cli, binaryen (npm),
#                               and, when root with apt-get, what the collector's BPF build needs
#                               (Debian clang, libelf-dev, zlib1g-dev, pkg-config)
#   scripts/setup.sh --test     also Chromium + chromedriver, g++, golang-go, libjemalloc2 and
#                               clickhouse-server (Debian),
#                               playwright-core (npm), the OTLP test client's venv (PyPI),
#                               and the Python tools of scripts/test-requirements.txt
#                               (schemathesis, the MCP client) in .tools/venv; the release tools
#                               below; podman (Debian), which builds the images in CI
#   scripts/setup.sh --release  also what scripts/release.sh needs: the x86_64-unknown-linux-musl
#                               target, musl-gcc (Debian musl-tools) and the autotools, flex,
#                               bison and gawk libbpf-sys builds libelf with (Debian)
# Versions: see ../shared/TOOLCHAIN.md. Source this file's exports via scripts/env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
want_browser=false
want_release=false
case "${1:-}" in
  --test) want_browser=true; want_release=true ;;
  --release) want_release=true ;;
esac

say() { printf '\033[1;33m[setup]\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# trunk and wasm-bindgen-cli are compiled once per machine and then run for seconds per build,
# so they are built for a short compile rather than with their own release profiles (trunk's:
# fat LTO and one codegen unit), and without the TLS clients of their default features: trunk's
# would download tools from GitHub and serve HTTPS, wasm-bindgen-test-runner's would fetch a
# driver; here every tool is installed by this script and the driver is Debian's, spoken to
# over plain HTTP on loopback. Measured CPU seconds: docs/development.md ("Cold run").
quick_build=(CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1)
if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (takes ~8 min the first time)"
  env "${quick_build[@]}" cargo install --locked trunk --version "$TRUNK_VERSION" --no-default-features
fi

if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes ~3 min the first time)"
  # Not --locked: its lockfile pins a yanked webpki-roots.
  env "${quick_build[@]}" cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" \
    --no-default-features
fi

# binaryen (wasm-opt) and playwright-core come from npm, pinned by e2e/package-lock.json.
if [ ! -x e2e/node_modules/.bin/wasm-opt ] || [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ]; then
  say "installing npm packages (binaryen, playwright-core)"
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
fi

# The collector (agent/, and the service's --profile-host) compiles its BPF program with clang and
# links libbpf against libelf and zlib. Without them everything else still builds: say so, go on.
if ! { command -v clang >/dev/null && pkg-config --exists libelf zlib 2>/dev/null; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian clang, libelf-dev, zlib1g-dev, pkg-config (the collector's BPF build)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq clang libelf-dev zlib1g-dev pkg-config >/dev/null; } \
      || say "could not install them: the collector (agent/, serve --profile-host) will not build here"
  else
    say "clang, libelf-dev or zlib1g-dev is missing and cannot be installed here (needs root and apt-get): the collector (agent/, serve --profile-host) will not build"
  fi
fi

# The release archive (scripts/release.sh): the service for the musl target (musl-gcc compiles
# its bundled SQLite), the collector with libbpf, libelf and zlib built from source (autotools).
if $want_release; then
  if ! rustup target list --installed | grep -qx x86_64-unknown-linux-musl; then
    say "adding the x86_64-unknown-linux-musl target"
    rustup target add x86_64-unknown-linux-musl
  fi
  for tool in musl-gcc autoreconf autopoint flex bison gawk make; do
    command -v "$tool" >/dev/null && continue
    say "installing Debian musl-tools, autoconf, automake, autopoint, libtool, flex, bison, gawk, make (scripts/release.sh)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq musl-tools autoconf automake autopoint libtool flex bison gawk make >/dev/null
    break
  done
fi
# The image check (scripts/release_check.py image) builds FROM scratch images: nothing is pulled.
if $want_browser && ! command -v podman >/dev/null; then
  say "installing Debian podman (the release image check)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq podman >/dev/null
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
# The collector's memory tests also trace a program on jemalloc (Debian's libjemalloc2, ~250 KB).
if $want_browser && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
  && ! ldconfig -p 2>/dev/null | grep -q 'libjemalloc\.so\.2 '; then
  say "installing Debian libjemalloc2 (the collector's memory test on jemalloc)"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq libjemalloc2 >/dev/null; } \
    || say "could not install libjemalloc2: the collector's jemalloc test will fail with CI=true"
fi
# Python test tools in a venv of their own (.tools/, gitignored), reinstalled only when
# scripts/test-requirements.txt changes.
if $want_browser && ! cmp -s scripts/test-requirements.txt .tools/venv/requirements.installed; then
  say "installing the Python test tools (scripts/test-requirements.txt) into .tools/venv"
  if ! python3 -m venv --help >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv >/dev/null
  fi
  [ -x .tools/venv/bin/pip ] || python3 -m venv .tools/venv
  .tools/venv/bin/pip install -q --disable-pip-version-check -r scripts/test-requirements.txt
  cp scripts/test-requirements.txt .tools/venv/requirements.installed
fi
# The OTLP tests build their requests with the official Python packages (pinned in
# server/tests/otlp_py/requirements.txt) in a venv of their own; rebuilt when the pins change.
otlp_requirements=server/tests/otlp_py/requirements.txt
if $want_browser && ! cmp -s "$otlp_requirements" .tools/otlp-venv/requirements.txt; then
  say "installing the OTLP test client's Python packages into .tools/otlp-venv"
  rm -rf .tools/otlp-venv
  python3 -m venv .tools/otlp-venv
  .tools/otlp-venv/bin/pip install --quiet --disable-pip-version-check -r "$otlp_requirements"
  cp "$otlp_requirements" .tools/otlp-venv/requirements.txt
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
