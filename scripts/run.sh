#!/usr/bin/env bash
# Runs Embers with demo data: builds the viewer (release) and the service, then serves both on
# one port and prints the URL. Ctrl-C stops it. A second run rebuilds only what changed.
#   PORT=9000 scripts/run.sh            another port (default 8080)
#   scripts/run.sh --upstream URL       proxy queries to a real DeepFlow querier instead of demo data
#   scripts/run.sh --clickhouse         the demo on a local ClickHouse (scripts/clickhouse.sh single,
#                                       database embers_demo) instead of SQLite
# Any extra arguments are passed to `embers-server serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/setup.sh

cargo fetch -q
mkdir -p target  # for trunk.log, also when CARGO_TARGET_DIR points elsewhere
echo "[run] building the viewer (trunk, release)"
embers_build_viewer >/dev/null 2>target/trunk.log || { cat target/trunk.log; exit 1; }
echo "[run] building the service"
cargo build --release -q -p embers-server

# The demo always covers "the last hour", so it starts from a fresh database each run.
if [ "${1:-}" = "--clickhouse" ]; then
  shift
  bash scripts/clickhouse.sh single
  curl -sf http://127.0.0.1:18123/ --data-binary "DROP DATABASE IF EXISTS embers_demo" >/dev/null
  echo "[run] storing in ClickHouse (http://127.0.0.1:18123, database embers_demo); stop it with scripts/clickhouse.sh stop"
  store=(--clickhouse-url http://127.0.0.1:18123 --clickhouse-database embers_demo)
else
  db="${EMBERS_DEMO_DB:-${TMPDIR:-/tmp}/embers-demo.db}"
  rm -f "$db" "$db-wal" "$db-shm"
  store=(--db "$db")
fi
exec "${CARGO_TARGET_DIR:-target}/release/embers-server" serve --demo --demo-live "${store[@]}" --static-dir dist --listen "127.0.0.1:${PORT:-8080}" "$@"
