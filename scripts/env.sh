# Sourced by the other scripts: puts the project's tools first on PATH.
# npm's binaryen must win over any Debian wasm-opt (108 silently breaks Leptos wasm).
EMBERS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$EMBERS_ROOT/e2e/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
