#!/usr/bin/env bash
# The Embers browser benchmark, in one command:
#   bash bench/run.sh                           10k / 100k / 1M nodes: Embers, speedscope, Grafana
#   bash bench/run.sh --sizes 10000,100000      other sizes (also 100k, 1M)
#   bash bench/run.sh --smoke                   CI-sized: 10k nodes, Embers + JSON.parse baseline
#   bash bench/run.sh --viewers embers,grafana  a subset of viewers (Embers always runs)
#   bash bench/run.sh --deep 5000               depth of the deep-stack case (Embers only; 0 skips it)
# Other flags go to harness.mjs (--reps N, --interactions N, --no-shape-a, --no-compare, --profile, --no-timeline, --out FILE).
#
# Steps: installs bench/node_modules (npm ci; the smoke run skips the peers), builds the
# generator (cargo, CARGO_TARGET_DIR=target-bench), writes the profiles into bench/data/,
# snapshots dist/ (so a rebuild during the run cannot swap files under the page), bundles the
# Grafana page (esbuild), runs the harness, prints the table and writes bench/results/*.json.
# Exits non-zero when Embers fails to paint or the deep-stack case fails (with --smoke, also when
# any Embers interaction fails).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
cd "$ROOT"

say() { printf '\033[1;36m[bench]\033[0m %s\n' "$*" >&2; }

smoke=false
sizes=""
viewers=""
seed=1
deep=5000
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=true; pass+=("$1") ;;
    --sizes) sizes="$2"; shift ;;
    --viewers|--peers) viewers="$2"; shift ;;
    --seed) seed="$2"; pass+=("$1" "$2"); shift ;;
    --deep) deep="$2"; pass+=("$1" "$2"); shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$BENCH/run.sh"; exit 0 ;;
    *) pass+=("$1") ;;
  esac
  shift
done
if [ -z "$sizes" ]; then
  if $smoke; then sizes=10000; else sizes=10000,100000,1000000; fi
fi
if [ -z "$viewers" ]; then
  if $smoke; then viewers=embers; else viewers=embers,speedscope,grafana,grafanaGraph; fi
fi
needs_peers=false
case ",$viewers," in *,speedscope,*|*,grafana*) needs_peers=true ;; esac

command -v node >/dev/null || { echo "bench: node is required" >&2; exit 1; }
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] || { echo "bench: no Chromium at $CHROMIUM (scripts/setup.sh --test installs Debian's)" >&2; exit 1; }
export CHROMIUM

# 1. npm packages (pinned by bench/package-lock.json).
if $needs_peers; then
  if [ ! -d "$BENCH/node_modules/speedscope" ] || [ ! -d "$BENCH/node_modules/@grafana/flamegraph" ] \
     || [ "$BENCH/package-lock.json" -nt "$BENCH/node_modules/.package-lock.json" ]; then
    say "installing npm packages (playwright-core, speedscope, @grafana/flamegraph, esbuild)"
    (cd "$BENCH" && npm ci --no-audit --no-fund --loglevel=error)
  fi
elif [ ! -d "$BENCH/node_modules/playwright-core" ]; then
  say "installing npm packages (playwright-core only)"
  (cd "$BENCH" && npm ci --omit=optional --no-audit --no-fund --loglevel=error)
fi

# 2. The generator. The smoke run (CI's bench-smoke step) builds it at the dev profile in the
# main target directory with the native tests' packages and features, so every dependency is
# already built there (a release build in its own directory cost CI ~1 min from cold); its
# 10k-node profile is written in well under a second either way. Full runs build it at
# release in target-bench, for the 1M-node profiles.
if $smoke; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  say "building the generator (cargo build --workspace --features embers-server/profile-host --bin embers-bench-gen)"
  cargo build -q --workspace --features embers-server/profile-host --bin embers-bench-gen
  GEN="$CARGO_TARGET_DIR/debug/embers-bench-gen"
else
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target-bench}"
  say "building the generator (cargo build --release -p embers-bench)"
  cargo build --release -q -p embers-bench
  GEN="$CARGO_TARGET_DIR/release/embers-bench-gen"
fi

# 3. The profiles (regenerated when the generator is newer than them).
IFS=',' read -r -a size_list <<< "$sizes"
norm_sizes=()
for s in "${size_list[@]}"; do
  s="${s//_/}"
  case "$s" in
    *k|*K) n=$(( ${s%?} * 1000 )) ;;
    *m|*M) n=$(( ${s%?} * 1000000 )) ;;
    *) n=$s ;;
  esac
  norm_sizes+=("$n")
  out="$BENCH/data/n$n-s$seed"
  if [ ! -f "$out/meta.json" ] || [ "$GEN" -nt "$out/meta.json" ]; then
    extra=()
    # Folded stacks grow with stacks × depth (≈ 500 MB at 1M nodes); no viewer here needs them.
    [ "$n" -gt 100000 ] && extra+=(--no-folded)
    say "generating $n nodes (seed $seed) into bench/data/n$n-s$seed"
    "$GEN" --nodes "$n" --seed "$seed" --out "$out" "${extra[@]}"
  fi
done
sizes_csv=$(IFS=','; echo "${norm_sizes[*]}")
# The deep-stack case: 10k nodes plus one chain $deep levels deep (--deep 0 skips it).
if [ "$deep" -gt 0 ]; then
  out="$BENCH/data/deep$deep-s$seed"
  if [ ! -f "$out/meta.json" ] || [ "$GEN" -nt "$out/meta.json" ]; then
    say "generating the deep-stack profile (10000 nodes + a $deep-level chain)"
    "$GEN" --nodes 10000 --seed "$seed" --deep-chain "$deep" --out "$out" --no-shape-a --no-folded
  fi
fi

# 4. A snapshot of the Embers release build.
if [ ! -f "$ROOT/dist/index.html" ]; then
  say "no dist/: building the viewer (embers_build_viewer, ~1 min)"
  (source scripts/env.sh && embers_build_viewer)
fi
snap="$BENCH/data/dist-snapshot"
rm -rf "$snap"
mkdir -p "$snap"
cp -pR "$ROOT"/dist/. "$snap/"

# 5. The Grafana page.
if case ",$viewers," in *,grafana*) true ;; *) false ;; esac; then
  if [ ! -f "$BENCH/grafana/dist/main.js" ] || [ -n "$(find "$BENCH/grafana" -maxdepth 1 -newer "$BENCH/grafana/dist/main.js" -type f)" ]; then
    say "bundling the Grafana flame-graph page (esbuild)"
    node "$BENCH/grafana/build.mjs"
  fi
fi

# 6. The harness.
say "running the harness: sizes $sizes_csv; viewers $viewers"
exec node "$BENCH/harness.mjs" --sizes "$sizes_csv" --viewers "$viewers" --dist "$snap" "${pass[@]}"
