#!/usr/bin/env bash
# Runs Embers with demo data: builds the viewer (release) and the service, then serves both on
# one port and prints the URL. Ctrl-C stops it. A second run rebuilds only what changed.
#   PORT=9000 scripts/run.sh            another port (default 8080)
#   scripts/run.sh --upstream URL       proxy queries to a real DeepFlow querier instead of demo data
#   scripts/run.sh --clickhouse         the demo on a local ClickHouse (scripts/clickhouse.sh single,
#                                       database embers_demo) instead of SQLite
# Where the machine allows eBPF (root or CAP_BPF + CAP_PERFMON, a kernel with BTF, clang and libelf
# to build with), the service also profiles this host (serve --profile-host): its own processes
# appear next to the demo fleet. Otherwise it says why not and serves the demo alone.
# Any extra arguments are passed to `embers-server serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/setup.sh

cargo fetch -q
mkdir -p target  # for trunk.log, also when CARGO_TARGET_DIR points elsewhere
echo "[run] building the viewer (trunk, release)"
embers_build_viewer >/dev/null 2>target/trunk.log || { cat target/trunk.log; exit 1; }
# Why this host cannot be profiled, or nothing when it can.
why_not_profile() {
  if ! { command -v clang >/dev/null && pkg-config --exists libelf zlib 2>/dev/null; }; then
    echo "clang, libelf-dev or zlib1g-dev is missing (scripts/setup.sh installs them as root)"; return
  fi
  [ -e /sys/kernel/btf/vmlinux ] || { echo "this kernel has no BTF (/sys/kernel/btf/vmlinux)"; return; }
  local caps
  caps=$((16#$(awk '/^CapEff:/ {print $2}' /proc/self/status)))
  # CAP_SYS_ADMIN (21), or CAP_BPF (39) and CAP_PERFMON (38).
  if (( !(caps >> 21 & 1) && !((caps >> 39 & 1) && (caps >> 38 & 1)) )); then
    echo "eBPF needs root or CAP_BPF and CAP_PERFMON"
  fi
}
profile=()
why=$(why_not_profile)
# The service is built after the viewer: it carries dist/ inside (server/build.rs), so the binary
# alone serves the page, from any directory.
echo "[run] building the service (with the viewer inside)"
if [ -z "$why" ] && cargo build --release -q -p embers-server --features profile-host; then
  profile=(--profile-host)
  echo "[run] profiling this host with eBPF: its processes appear next to the demo fleet within 10 s"
else
  [ -n "$why" ] || why="the collector did not build (see above)"
  echo "[run] not profiling this host: $why; serving the demo only"
  cargo build --release -q -p embers-server
fi

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
bin="${CARGO_TARGET_DIR:-target}/release/embers-server"
echo "[run] to add your own profiles: $bin import --to http://127.0.0.1:${PORT:-8080} FILE (README.md)"
exec "$bin" serve --demo --demo-live "${store[@]}" "${profile[@]}" --listen "127.0.0.1:${PORT:-8080}" "$@"
