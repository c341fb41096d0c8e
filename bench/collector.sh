#!/usr/bin/env bash
# The collector's overhead: while every CPU runs a busy program (agent/tests/workloads/hot.c
# without frame pointers: user code, system calls), the release embers-agent samples at 99 Hz
# for DURATION seconds in each mode, and this prints, per mode:
#   - the collector's CPU time (user + system, from /proc/PID/stat) as a share of the machine
#     (CPU seconds / (wall seconds × CPUs)),
#   - its BPF programs' own run time (the kernel's bpf_stats, turned on for the run), which is
#     spent in the sampled tasks' context and is not in the collector's CPU time,
#   - its peak RSS (VmHWM: with the file pages of the binaries it reads, shared with the page
#     cache) and the peak of its own anonymous memory,
#   - the samples it took and lost, and the share of user stacks cut short (its stats lines).
# Other work on the machine shows in the numbers (new processes and big binaries cost the
# collector most): the script prints the busiest processes at the end.
# Windows go to --print > /dev/null, so the numbers are the collector's, not a service's.
#   bash bench/collector.sh [DURATION]        (default 30; needs root; run it under `heavy`)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
duration=${1:-30}
cpus=$(nproc)
work=$(mktemp -d)
agent_pid=""
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
  pkill -P $$ -x embers-bench-busy 2>/dev/null || true
  echo "$old_stats" > /proc/sys/kernel/bpf_stats_enabled
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\033[1;36m[collector]\033[0m %s\n' "$*" >&2; }

say "building the release collector"
cargo build --release -q -p embers-agent
agent="${CARGO_TARGET_DIR:-target}/release/embers-agent"
cc -O2 -g -fomit-frame-pointer -pthread -o "$work/embers-bench-busy" agent/tests/workloads/hot.c

ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The run time of the collector's programs: those named on_cpu/on_switch loaded since the ids in
# "$1" were listed (bpftool here cannot say which process owns a program).
prog_ids() { bpftool prog show -j | python3 -c 'import json, sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'; }
bpf_ns() {
  bpftool prog show -j | python3 -c '
import json, sys
before = set(sys.argv[1].split())
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin)
          if str(p["id"]) not in before and p.get("name") in ("on_cpu", "on_switch")))' "$1"
}

echo 1 > /proc/sys/kernel/bpf_stats_enabled
say "$cpus busy programs on $cpus CPUs"
for _ in $(seq "$cpus"); do
  "$work/embers-bench-busy" $((duration * 4 + 60)) 0 >/dev/null &
done
sleep 2

printf '%-16s %10s %8s %8s %10s %10s %8s %6s %8s %10s\n' mode collector bpf total peak_rss peak_anon samples lost stacks_cut stacks_lost
for mode in "dwarf" "dwarf --off-cpu" "fp"; do
  # shellcheck disable=SC2086
  set -- --unwind $mode
  before=$(prog_ids)
  "$agent" --print --interval 10s "$@" >/dev/null 2>"$work/log" &
  agent_pid=$!
  start=$(date +%s.%N)
  # The kernel keeps the peak RSS (VmHWM, with the pages of the binaries it maps and reads);
  # the peak of its own (anonymous) memory is polled.
  anon=0
  for _ in $(seq "$duration"); do
    sleep 1
    now_anon=$(awk '/^RssAnon/ {print $2}' "/proc/$agent_pid/status")
    [ "$now_anon" -gt "$anon" ] && anon=$now_anon
  done
  end=$(date +%s.%N)
  used=$(cpu_ticks "$agent_pid")
  bpf=$(bpf_ns "$before")
  rss=$(awk '/^VmHWM/ {print $2}' "/proc/$agent_pid/status")
  kill "$agent_pid"
  wait "$agent_pid" || true
  agent_pid=""
  sed 's/\x1b\[[0-9;]*m//g' "$work/log" | python3 -c '
import re, sys
used, bpf, rss, anon, start, end, cpus, ticks, mode = sys.argv[1:]
wall, cpus = float(end) - float(start), int(cpus)
text = sys.stdin.read()
samples = sum(int(n) for n in re.findall(r"window \d+: (\d+) samples", text))
lost = stacks_lost = 0
for a, b, c in re.findall(r"lost: (\d+) events \(ring buffer full\), (\d+) counts \(map full\), (\d+) stacks", text):
    lost += int(a) + int(b)
    stacks_lost += int(c)
cut = sum(int(n) for n in re.findall(r"(\d+) of \d+ user stacks cut short", text))
unwound = sum(int(n) for n in re.findall(r"\d+ of (\d+) user stacks cut short", text))
collector = int(used) / int(ticks) / (wall * cpus) * 100
prog = int(bpf) / 1e9 / (wall * cpus) * 100
cut_share = f"{cut / unwound * 100:.1f}%" if unwound else "-"
print(f"{mode:<16} {collector:9.2f}% {prog:7.2f}% {collector + prog:7.2f}% {int(rss) / 1024:7.1f} MB {int(anon) / 1024:7.1f} MB {samples:8d} {lost:6d} {cut_share:>8} {stacks_lost:10d}")
' "$used" "$bpf" "$rss" "$anon" "$start" "$end" "$cpus" "$ticks" "$mode"
  if grep -q "samples were dropped" "$work/log"; then
    say "$mode: the kernel dropped samples (see the stats lines)"
  fi
done
say "the busiest processes at the end (other work skews the numbers):"
top -b -n 1 -o %CPU | sed -n '7,12p' >&2
