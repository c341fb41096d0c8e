#!/usr/bin/env bash
# Runs Embers with demo data: builds the viewer (release) and the service, then serves both on
# one port and prints the URL. Ctrl-C stops it. A second run rebuilds only what changed.
#   PORT=9000 scripts/run.sh            another port (default 8080)
#   scripts/run.sh --upstream URL       proxy queries to a real DeepFlow querier instead of demo data
# Any extra arguments are passed to `embers-server serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/setup.sh

cargo fetch -q
echo "[run] building the viewer (trunk, release)"
trunk build --release --offline >/dev/null 2>target/trunk.log || { cat target/trunk.log; exit 1; }
echo "[run] building the service"
cargo build --release -q -p embers-server

# The demo always covers "the last hour", so it starts from a fresh database each run.
db="${EMBERS_DEMO_DB:-${TMPDIR:-/tmp}/embers-demo.db}"
rm -f "$db" "$db-wal" "$db-shm"
exec target/release/embers-server serve --demo --demo-live --db "$db" --static-dir dist --listen "127.0.0.1:${PORT:-8080}" "$@"
