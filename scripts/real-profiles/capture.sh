#!/usr/bin/env bash
# Records real off-CPU stacks (perf, sched:sched_switch with call graphs) of small C, Go and
# Java programs that wait in every common way, and folds them with DeepFlow's frame names into
# model/tests/data/real/*.folded — the idle-wait presets' and long names' test data. Needs root
# (perf tracepoints), gcc, go and a JDK. Values are context switches, not microseconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../model/tests/data/real"
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT
mkdir -p "$out"
seconds=${SECONDS_TO_RECORD:-3}

record() { # name pid -- perf options
  local name=$1 pid=$2; shift 2
  perf record -q -e sched:sched_switch "$@" -p "$pid" -o "$work/$name.data" -- sleep "$seconds" 2>/dev/null
}

gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/idle-c" "$here/idle.c"
"$work/idle-c" & pid=$!
sleep 1; record c "$pid" -g; kill "$pid"
perf script -i "$work/c.data" 2>/dev/null | python3 "$here/fold_perf.py" idle-c > "$out/offcpu-c.folded"

(cd "$work" && cp "$here/idle.go" . && GO111MODULE=off go build -o idle-go idle.go)
"$work/idle-go" & pid=$!
sleep 1; record go "$pid" -g; kill "$pid"
perf script -i "$work/go.data" 2>/dev/null | python3 "$here/fold_perf.py" idle-go > "$out/offcpu-go.folded"

javac -d "$work" "$here/Idle.java"
java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
  -cp "$work" Idle $((seconds + 3)) & pid=$!
sleep 2; record java "$pid" -g; wait "$pid" || true
perf script -i "$work/java.data" 2>/dev/null | python3 "$here/fold_perf.py" java > "$out/offcpu-java.folded"
rm -f "/tmp/perf-$pid.map"

# Rust: the Embers service itself (tokio), idle but for a few requests; release builds keep no
# frame pointers, so perf unwinds with DWARF.
server="$here/../../target/release/embers-server"
if [ -x "$server" ]; then
  "$server" serve --db "$work/embers.db" --listen 127.0.0.1:0 --static-dir "$work" > "$work/server.log" 2>&1 & pid=$!
  sleep 1
  port=$(grep -o '127.0.0.1:[0-9]*' "$work/server.log" | head -1)
  (for _ in $(seq 1 40); do curl -s "http://$port/v1/profile/services" -H 'content-type: application/json' -d '{}' > /dev/null || true; sleep 0.05; done) &
  record rust "$pid" --call-graph dwarf,16384; kill "$pid"
  perf script -i "$work/rust.data" 2>/dev/null | python3 "$here/fold_perf.py" embers-server > "$out/offcpu-rust.folded"
fi
wc -l "$out"/offcpu-*.folded
