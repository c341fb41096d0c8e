#!/usr/bin/env bash
# Runs every test: formatting and lints, native unit/golden/integration tests (model, service,
# viewer helpers), wasm-bindgen tests in headless Chromium, the release build of the viewer, the
# end-to-end suite (Playwright against the real service and page) and a benchmark smoke run.
# Installs what it needs first (scripts/setup.sh --test). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/setup.sh --test || exit 1

log_dir=target/test-logs
mkdir -p "$log_dir"
passed=0
failed=0
failed_steps=()

# Adds up the counts a step printed (cargo's "test result" lines and node's "# pass/# fail").
count() {
  local log=$1 p f
  p=$(grep -hoE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | grep -oE '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
  f=$(grep -hoE '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
  p=$((p + $(grep -hoE '^# pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  f=$((f + $(grep -hoE '^# fail [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  passed=$((passed + p))
  failed=$((failed + f))
}

step() {
  local name=$1; shift
  local log="$log_dir/$name.log" start=$SECONDS
  printf '\033[1;34m[test]\033[0m %-14s ' "$name"
  if "$@" >"$log" 2>&1; then
    printf 'ok (%ds)\n' $((SECONDS - start))
  else
    printf 'FAILED (%ds), log: %s\n' $((SECONDS - start)) "$log"
    tail -n 40 "$log" | sed 's/^/    /'
    failed_steps+=("$name")
  fi
  count "$log"
}

step fmt       cargo fmt --all -- --check
step clippy    cargo clippy --workspace --all-targets -- -D warnings
step clippy-wasm cargo clippy -p embers -p embers-decode-worker --target wasm32-unknown-unknown --all-targets -- -D warnings
step native    cargo test --workspace
step wasm      cargo test -p embers --target wasm32-unknown-unknown
step build     trunk build --release --offline
step server    cargo build --release -p embers-server
step e2e       bash -c 'cd e2e && npm test'
step bench-smoke bash bench/run.sh --smoke

echo "steps failed: ${#failed_steps[@]}${failed_steps[*]:+ (${failed_steps[*]})}"
echo "embers: $passed passed, $failed failed"
[ ${#failed_steps[@]} -eq 0 ] && [ "$failed" -eq 0 ]
