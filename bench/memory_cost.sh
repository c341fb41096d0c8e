#!/usr/bin/env bash
# What `embers-agent --memory` costs the programs it traces. Every malloc, calloc, realloc and
# free of a traced process traps into the kernel (a uprobe, and a uretprobe on the allocating
# calls), so the cost is per call, paid by the program, on its own CPU time. This runs
# agent/tests/workloads/mem.c in its cost mode (one thread making N malloc(64)+free pairs a
# second for DURATION seconds) at two rates, each without the collector and then traced by the
# release collector (--memory --memory-pid, default sampling), and prints per rate:
#   - the program's CPU time per pair untraced and traced, and what tracing adds to each pair,
#   - the slowdown of a program busy on one core that makes RATE pairs per second of its CPU
#     time: 1 + RATE × added (1M/s is allocation-heavy, 100k/s typical),
#   - pairs a second the traced program made (wall clock: below RATE when it cannot keep up),
#   - the collector's own CPU time over the traced run, as a share of one core.
# CPU times are the program's own (CLOCK_PROCESS_CPUTIME_ID), so other work on the machine
# changes them little; the rates are wall-clock, so a busy machine can lower the 1M/s one.
#   bash bench/memory_cost.sh [DURATION]   (default 5; needs root; EMBERS_AGENT=path skips the build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
duration=${1:-5}
work=$(mktemp -d)
agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\033[1;36m[memory-cost]\033[0m %s\n' "$*" >&2; }

agent="${EMBERS_AGENT:-}"
if [ -z "$agent" ]; then
  say "building the release collector"
  cargo build --release -q -p embers-agent
  agent="${CARGO_TARGET_DIR:-target}/release/embers-agent"
fi
cc -O2 -g -fomit-frame-pointer -o "$work/embers-mem" agent/tests/workloads/mem.c

# run RATE [traced]: prints "pairs cpu_ns wall_ns agent_ticks".
run() {
  local rate=$1 traced=${2:-} fifo="$work/in" out="$work/out" pid ticks=0
  rm -f "$fifo" && mkfifo "$fifo"
  exec 3<>"$fifo"
  "$work/embers-mem" --rate "$rate" "$duration" 64 <"$fifo" >"$out" &
  pid=$!
  until grep -q ready "$out" 2>/dev/null; do sleep 0.05; done
  if [ -n "$traced" ]; then
    RUST_LOG=info "$agent" --print --interval 1s --memory --memory-pid "$pid" \
      >/dev/null 2>"$work/log" &
    agent_pid=$!
    until grep -q "allocator uprobes attached" "$work/log" 2>/dev/null; do
      kill -0 "$agent_pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
      sleep 0.05
    done
  fi
  echo go >&3
  wait "$pid"
  exec 3>&-
  if [ -n "$traced" ]; then
    ticks=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat")
    kill -INT "$agent_pid"
    wait "$agent_pid" || true
    agent_pid=""
  fi
  sed -n 's/^pairs=\([0-9]*\) cpu_ns=\([0-9]*\) wall_ns=\([0-9]*\)$/\1 \2 \3/p' "$out" | tr '\n' ' '
  echo "$ticks"
}

hz=$(getconf CLK_TCK)
printf '%-10s %12s %14s %12s %10s %14s %14s\n' rate ns/pair ns/pair_traced added_ns slowdown made_traced/s collector_cpu
for rate in 1000000 100000; do
  say "rate $rate/s: untraced, then traced"
  read -r p0 c0 w0 _ < <(run "$rate")
  read -r p1 c1 w1 t1 < <(run "$rate" traced)
  python3 - "$rate" "$p0" "$c0" "$w0" "$p1" "$c1" "$w1" "$t1" "$hz" <<'PY'
import sys
rate, p0, c0, w0, p1, c1, w1, t1, hz = map(float, sys.argv[1:])
ns0, ns1 = c0 / p0, c1 / p1
added = ns1 - ns0
slowdown = 1 + rate * added / 1e9
made1 = p1 / (w1 / 1e9)
print(f"{int(rate):<10d} {ns0:12.1f} {ns1:14.1f} {added:12.1f} {slowdown:9.2f}x {made1:14.0f} {t1 / hz / (w1 / 1e9):13.1%}")
PY
done
