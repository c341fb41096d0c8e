#!/usr/bin/env bash
# Fuzzes every parser with libFuzzer (coverage-guided, stable Rust: cargo-fuzz's
# `--sanitizer none` build needs no -Z flag). See fuzz/README.md.
#
#   scripts/fuzz.sh              same as --short
#   scripts/fuzz.sh --short      ~7 s per target, ~60 s in all (after the first build)
#   scripts/fuzz.sh --long 600   600 s per target, optimized build
#   scripts/fuzz.sh --long 600 folded ingest    only these targets
#   scripts/fuzz.sh --build      only builds the targets (scripts/test.sh builds them beside the
#                                release build, whose last minutes use one core)
#
# Installs cargo-fuzz (crates.io) if missing; libFuzzer itself is compiled from the
# libfuzzer-sys crate and needs a C++ compiler (Debian: `apt-get install g++`, as root).
# Targets run one after another at `nice -n 19`. Corpora grow in fuzz/corpus/ (seeded from the
# fixtures and fuzz/seeds/), crashes land in fuzz/artifacts/, logs in fuzz/logs/.
# Exits non-zero if any target crashed, hung, ran out of memory or failed to build.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

CARGO_FUZZ_VERSION=0.13.2
TARGETS=(response shape_a shape_b folded tag_filter tag_filter_render ingest otlp pprof jfr perf pyroscope)
seconds=7
build_only=false
# --short and --build (CI's fuzz steps) build the targets unoptimized (cargo fuzz --dev): a
# 7-second run is a smoke run, where reaching the parsers' branches matters, not executions per
# second, and the unoptimized build of the service's dependencies costs far less CPU than the
# optimized one (docs/development.md, Cold run). --long builds them optimized.
build_profile=(--dev)
profile_dir=debug
case "${1:-}" in
  "" | --short) shift $(($# > 0)) ;;
  --build) build_only=true; shift ;;
  --long)
    seconds=${2:?"--long needs a number of seconds per target"}
    build_profile=()
    profile_dir=release
    shift 2
    ;;
  *)
    echo "usage: $0 [--short | --long SECONDS | --build] [TARGET...]" >&2
    exit 2
    ;;
esac
[ $# -gt 0 ] && TARGETS=("$@")

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  echo "[fuzz] installing cargo-fuzz $CARGO_FUZZ_VERSION"
  # It only runs `cargo build` here (the targets run directly), so it is compiled unoptimized.
  nice -n 19 env CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" || exit 1
fi
if ! command -v c++ >/dev/null; then
  echo "[fuzz] libFuzzer needs a C++ compiler: apt-get install g++ (as root)" >&2
  exit 1
fi

cd fuzz
# -s none: no sanitizer (they need nightly), so the build uses only stable flags.
# -a: debug assertions, hence overflow checks: arithmetic overflow is a crash here.
echo "[fuzz] building (the first build takes a few minutes)"
mkdir -p logs
if ! nice -n 19 cargo fuzz build "${build_profile[@]}" --sanitizer none --debug-assertions >logs/build.log 2>&1; then
  tail -n 30 logs/build.log
  exit 1
fi
$build_only && { echo "[fuzz] built"; exit 0; }
# cargo fuzz builds into $CARGO_TARGET_DIR when it is set (a target directory shared by worktrees).
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/$profile_dir

# Per target: dictionary and largest input.
options() {
  case $1 in
    response) echo "-dict=dict/response.dict -max_len=32768" ;;
    folded) echo "-dict=dict/folded.dict -max_len=8192" ;;
    tag_filter) echo "-dict=dict/tag_filter.dict -max_len=1024" ;;
    ingest) echo "-dict=dict/ingest.dict -max_len=8192" ;;
    otlp) echo "-dict=dict/otlp.dict -max_len=8192" ;;
    pprof) echo "-max_len=16384" ;;
    jfr) echo "-max_len=16384" ;;
    pyroscope) echo "-dict=dict/pyroscope.dict -max_len=8192" ;;
    *) echo "-max_len=8192" ;;
  esac
}

crashed=()
printf '%-18s %8s %12s %9s %8s %8s  %s\n' target seconds executions exec/s cov corpus result
for t in "${TARGETS[@]}"; do
  corpus=corpus/$t
  mkdir -p "$corpus" "artifacts/$t"
  [ -d "seeds/$t" ] && cp -n seeds/"$t"/* "$corpus"/ 2>/dev/null
  if [ "$t" = response ]; then
    for f in ../model/tests/data/fixtures/*/response.json; do
      cp -n "$f" "$corpus/fixture-$(basename "$(dirname "$f")").json"
    done
  fi
  log=logs/$t.log
  start=$SECONDS
  # shellcheck disable=SC2046 # the options are words
  nice -n 19 "$bin/$t" "$corpus" $(options "$t") -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1
  status=$?
  execs=$(grep -oE 'number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$')
  rate=$(grep -oE 'average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$')
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
  corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
  if [ $status -eq 0 ]; then
    result=ok
  else
    result="CRASH (exit $status): $(grep -oE 'artifacts/[^ ]+' "$log" | tail -n 1)"
    crashed+=("$t")
  fi
  printf '%-18s %8d %12s %9s %8s %8s  %s\n' "$t" $((SECONDS - start)) "${execs:--}" \
    "${rate:--}" "${cov:--}" "${corp:--}" "$result"
  if [ $status -ne 0 ]; then
    grep -E 'panicked at|^==[0-9]+== ERROR|ERROR: libFuzzer' -A 2 "$log" | head -n 12 | sed 's/^/    /'
  fi
done

echo "fuzz: ${#TARGETS[@]} targets, ${#crashed[@]} crashed${crashed[*]:+ (${crashed[*]})}"
echo "reproduce a crash: $([[ $bin = /* ]] || echo fuzz/)$bin/TARGET fuzz/artifacts/TARGET/crash-... (EMBERS_FUZZ_SHOW=1 prints structured inputs)"
[ ${#crashed[@]} -eq 0 ]
