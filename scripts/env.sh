# Sourced by the other scripts: puts the project's tools first on PATH.
# npm's binaryen must win over any Debian wasm-opt (108 silently breaks Leptos wasm).
EMBERS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$EMBERS_ROOT/e2e/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

# Trunk runs wasm-opt only when it finds it and otherwise skips it without a word (the bundle then
# grows by about a quarter and only the size ceiling fails, far from the cause), so every release
# build of the viewer goes through here and stops with the fix when npm's binaryen is missing.
embers_build_viewer() {
  if [ ! -x "$EMBERS_ROOT/e2e/node_modules/.bin/wasm-opt" ]; then
    echo "wasm-opt (npm's binaryen) is missing from e2e/node_modules: run bash scripts/setup.sh" >&2
    return 1
  fi
  (cd "$EMBERS_ROOT" && trunk build --release --offline "$@")
}
