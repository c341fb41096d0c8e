#!/usr/bin/env bash
# Regenerates every screenshot under docs/ from the real page and a real service with demo data:
#   e2e/docs-shots.mjs       the viewer's (screenshot, timeline, home, functions, grew,
#                            function-timeline, analysis, compare)
#   e2e/collector-shots.mjs  the collector's (collector-total, collector-process): needs root
#                            (eBPF), cc and a server built with --features profile-host; skipped
#                            with a note otherwise
# Builds what is missing (the release server and the viewer) unless --no-build; the tools come
# from scripts/setup.sh (trunk, wasm-opt, Playwright's Chromium).
#   bash scripts/screenshots.sh              # every shot
#   bash scripts/screenshots.sh --no-build   # use target/release/embers-server and dist/ as they are
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

build=1
[ "${1:-}" = "--no-build" ] && build=0

if [ "$build" = 1 ]; then
  # The collector's shots need the collector in the binary; it needs clang and libelf to build.
  features=()
  if [ "$(id -u)" = 0 ] && command -v clang >/dev/null; then features=(--features profile-host); fi
  cargo build --release -p embers-server "${features[@]}"
  [ -f dist/index.html ] || embers_build_viewer
fi

(cd e2e && node docs-shots.mjs)

if [ "$(id -u)" != 0 ]; then
  echo "screenshots: collector shots skipped (they need root for eBPF): sudo bash scripts/screenshots.sh --no-build" >&2
elif grep -qa 'was built without the collector' target/release/embers-server; then
  echo "screenshots: collector shots skipped: target/release/embers-server has no collector (cargo build --release -p embers-server --features profile-host)" >&2
else
  (cd e2e && node collector-shots.mjs)
fi
