#!/usr/bin/env bash
# Runs every test: formatting and lints, native unit/golden/integration tests (model, service,
# collector, viewer helpers), the collector under eBPF on real programs, a short coverage-guided fuzzing run of every parser (scripts/fuzz.sh --short),
# wasm-bindgen tests in headless Chromium, the release build of the viewer and its size against a
# ceiling (bench/bundle-size.mjs), the release archive (scripts/release.sh) run from a clean
# directory without the toolchain, its images and the deploy files' validators, the end-to-end
# suite (Playwright against the real service and page), the ClickHouse backend's differential tests against a local ClickHouse
# (scripts/clickhouse.sh), the docs' links and commands (scripts/doc_commands.py), schemathesis
# against the service's OpenAPI document (scripts/schemathesis.sh), the MCP tools with the official
# Python client (scripts/mcp_test.py) and a benchmark smoke run.
# Installs what it needs first (scripts/setup.sh --test, including the official Python OTLP client
# the native step's server/tests/otlp_python.rs drives). Ends with "embers: N passed, N failed",
# where a failing step that reported no test failures of its own (a lint, a build, the setup)
# counts as one failure, and steps that need a failed build are not run against stale outputs
# (each such step counts as a failure too).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# A test run builds from cold, so incremental state and full debug info only cost disk (a CI
# machine once ran out; a cold run now peaks at 10 GB, see docs/development.md). Line tables
# keep backtraces readable.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
export CARGO_PROFILE_TEST_DEBUG="${CARGO_PROFILE_TEST_DEBUG:-line-tables-only}"

log_dir=target/test-logs
mkdir -p "$log_dir"
passed=0
failed=0
failed_steps=()

summary() {
  echo "steps failed: ${#failed_steps[@]}${failed_steps[*]:+ (${failed_steps[*]})}"
  echo "embers: $passed passed, $failed failed"
}

# Adds up the counts a step printed (cargo's "test result" lines and node's "# pass/# fail");
# leaves how many failures it found in $step_failures.
count() {
  local log=$1 p f
  p=$(grep -hoE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | grep -oE '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
  f=$(grep -hoE '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
  p=$((p + $(grep -hoE '^# pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  f=$((f + $(grep -hoE '^# fail [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')))
  passed=$((passed + p))
  failed=$((failed + f))
  step_failures=$f
}

step_failed() {
  failed_steps+=("$1")
  # A step that failed without failing tests (lint, build, crash) is one failure.
  [ "$2" -gt 0 ] || failed=$((failed + 1))
}

# Runs a step unless one of the steps it needs (comma-separated, after the name) failed.
step() {
  local name=$1 needs=$2; shift 2
  local log="$log_dir/$name.log" start=$SECONDS dep
  printf '\033[1;34m[test]\033[0m %-14s ' "$name"
  for dep in ${needs//,/ }; do
    if [[ " ${failed_steps[*]} " == *" $dep "* ]]; then
      printf 'SKIPPED (needs %s, which failed)\n' "$dep"
      step_failed "$name" 0
      return
    fi
  done
  if "$@" >"$log" 2>&1; then
    printf 'ok (%ds)\n' $((SECONDS - start))
    count "$log"
  else
    printf 'FAILED (%ds), log: %s\n' $((SECONDS - start)) "$log"
    tail -n 40 "$log" | sed 's/^/    /'
    count "$log"
    step_failed "$name" "$step_failures"
  fi
}

if ! bash scripts/setup.sh --test; then
  failed_steps+=(setup)
  failed=1
  summary
  exit 1
fi

step fmt         ""           bash -c 'cargo fmt --all -- --check && cargo fmt --manifest-path fuzz/Cargo.toml -- --check'
step clippy      ""           cargo clippy --workspace --all-targets --features embers-server/profile-host -- -D warnings
step layers      ""           python3 scripts/layers.py
step clippy-fuzz ""           cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
step clippy-wasm ""           cargo clippy -p embers -p embers-decode-worker --target wasm32-unknown-unknown --all-targets -- -D warnings
# The ClickHouse tests of the native step (differential against SQLite) need the local single
# node and two-shard cluster; they are stopped again when this script ends, whatever happens.
trap 'bash scripts/clickhouse.sh stop >/dev/null 2>&1 || true' EXIT
step clickhouse  ""           bash -c 'bash scripts/clickhouse.sh single && bash scripts/clickhouse.sh cluster'
# The viewer first: embers-server embeds dist/ when it is built (server/build.rs), and the native
# step's one_binary tests fail under CI=true when the binary they run has no viewer inside.
step build       ""           embers_build_viewer
# native and collector build the same packages with the same features (clippy's: the service
# with profile-host), so collector compiles nothing. `-p embers-server` alone resolved other
# features (no viewer, so proc-macro2 without leptos's span-locations) and on a cold tree rebuilt
# 127 of its 408 units (cargo --unit-graph; docs/development.md). native leaves the tests named
# host_profile:: to collector, which runs exactly those (the service's host_profile::tests too).
native_features=(--workspace --features embers-server/profile-host --no-fail-fast)
step native      ""           cargo test "${native_features[@]}" -- --skip host_profile::
# The collector on real programs (root here; CI=true makes a missing eBPF permission a failure),
# alone, so that no other test shares the CPU with the workloads it samples.
step collector   ""           cargo test "${native_features[@]}" --tests -- host_profile::
step wasm        ""           cargo test -p embers --target wasm32-unknown-unknown --no-fail-fast
step bundle-size build       node bench/bundle-size.mjs
# The release archive (scripts/release.sh): the static service with the viewer just built inside,
# and the static collector. Built once: every later step runs its service binary.
# The service's release build ends in minutes on one core (one codegen unit, then fat LTO), so
# the fuzz targets build beside it (fuzz/target, nice 19: nothing shared, no lock between them);
# the fuzz step then finds them built, and builds again, failing there, if this build failed.
release_and_fuzz_build() {
  # Its own duration at the end of its log: the build is not a step of its own.
  (
    start=$SECONDS
    bash scripts/fuzz.sh --build
    status=$?
    echo "[fuzz] build took $((SECONDS - start)) s (exit $status)"
    exit "$status"
  ) >"$log_dir/fuzz-build.log" 2>&1 &
  local fuzz_build=$! status=0
  bash scripts/release.sh --viewer dist || status=$?
  wait "$fuzz_build"
  return "$status"
}
step release     build        release_and_fuzz_build
# A short coverage-guided run of every parser (scripts/fuzz.sh, ~7 s a target).
step fuzz        ""           bash scripts/fuzz.sh --short
export EMBERS_SERVER="$PWD/${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-musl/release/embers-server"
export EMBERS_SERVER_BIN="$EMBERS_SERVER"
# The archive unpacked in a clean directory and run with PATH=/usr/bin:/bin (no toolchain): the
# page, its wasm, ProfileTracing on demo data and an online backup (scripts/release_check.py);
# then the images of deploy/Containerfile, built with podman and their entrypoints run; then the
# systemd units and Kubernetes manifests against their validators (scripts/deploy_check.py).
step release-run release      python3 scripts/release_check.py archive
step image       release      python3 scripts/release_check.py image
step deploy      release      .tools/venv/bin/python scripts/deploy_check.py
# The docs' links, and every `sh runnable` block of README.md and docs/*.md against the release
# server with demo data (scripts/doc_commands.py).
step docs        release      python3 scripts/doc_commands.py
# API testing from the contract: schemathesis against the release server's own /openapi.json for
# 60 s (scripts/schemathesis.sh): no 5xx, no answer the document does not describe, every 4xx a
# specific message.
step schemathesis release     bash scripts/schemathesis.sh 60
# The MCP tools with the official Python client over streamable HTTP and stdio, against the
# release server with demo data (scripts/mcp_test.py).
step mcp         release      .tools/venv/bin/python scripts/mcp_test.py --bin "$EMBERS_SERVER"
step e2e         build,release bash -c 'cd e2e && npm test'
step bench-smoke build        bash bench/run.sh --smoke

summary
[ ${#failed_steps[@]} -eq 0 ] && [ "$failed" -eq 0 ]
