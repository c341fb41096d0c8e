#!/usr/bin/env bash
# Builds the release archive target/release-archive/embers-<version>-x86_64-linux.tar.gz: the
# service with the viewer inside and the collector, both static (no shared library at all, so
# they run on any x86_64 Linux), with the deploy files (image, systemd units, Kubernetes) and a
# README and LICENSE that point at the docs.
#   bash scripts/release.sh                 builds the viewer (trunk), the binaries, the archive
#   bash scripts/release.sh --viewer DIR    embeds a viewer built before (CI: its build step's dist/)
# How each binary is linked:
#   embers-server  x86_64-unknown-linux-musl: musl and everything else (bundled SQLite, compiled
#                  by musl-gcc) linked in. Without the collector (`--profile-host`): its libelf
#                  (elfutils) does not build against musl, which has no argp, fts or obstack.
#   embers-agent   x86_64-unknown-linux-gnu with glibc linked in (crt-static), libbpf, libelf and
#                  zlib built from libbpf-sys's sources (the agent's `vendored` feature). glibc
#                  2.34+ answers host names from /etc/hosts and DNS inside libc, without loading
#                  NSS modules, so `--to http://name:port` resolves in a static binary too.
# Needs scripts/setup.sh --release (the musl target, musl-gcc, the autotools libelf's build uses).
# Prints each binary's linkage, the archive's path, size and SHA-256, and the time taken; the
# later CI steps run target/x86_64-unknown-linux-musl/release/embers-server, the archive's bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\033[1;32m[release]\033[0m %s\n' "$*"; }
die() { printf 'release: %s\n' "$*" >&2; exit 1; }

viewer=""
while [ $# -gt 0 ]; do
  case "$1" in
    --viewer) viewer="${2:?--viewer needs a directory}"; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done

started=$SECONDS
MUSL=x86_64-unknown-linux-musl
GNU=x86_64-unknown-linux-gnu
target_dir="${CARGO_TARGET_DIR:-target}"
command -v musl-gcc >/dev/null || die "musl-gcc is missing: run bash scripts/setup.sh --release"
rustup target list --installed | grep -qx "$MUSL" || die "the $MUSL target is missing: run bash scripts/setup.sh --release"

if [ -z "$viewer" ]; then
  say "building the viewer (embers_build_viewer)"
  embers_build_viewer
  viewer=dist
fi
[ -f "$viewer/index.html" ] || die "$viewer/index.html is missing: build the viewer first (source scripts/env.sh && embers_build_viewer)"
viewer="$(cd "$viewer" && pwd)"

say "building embers-server for $MUSL with the viewer of $viewer"
t=$SECONDS
# cc picks musl-gcc for the musl target by itself; named here so a cross gcc on PATH cannot win.
CC_x86_64_unknown_linux_musl=musl-gcc EMBERS_VIEWER_DIST="$viewer" \
  cargo build --release --locked --target "$MUSL" -p embers-server --bin embers-server
say "embers-server built in $((SECONDS - t)) s"

say "building embers-agent for $GNU, statically linked"
t=$SECONDS
# With --target, these flags reach the agent and its dependencies, not build scripts or proc
# macros (those stay dynamic host programs).
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --target "$GNU" -p embers-agent --features vendored
say "embers-agent built in $((SECONDS - t)) s"

server="$target_dir/$MUSL/release/embers-server"
agent="$target_dir/$GNU/release/embers-agent"
version="$("$server" --version | awk '{print $2}')"
[ -n "$version" ] || die "$server --version printed no version"

# Static or not, said plainly: `ldd` names every shared library a dynamic binary would load.
linkage() {
  local out
  out="$(ldd "$1" 2>&1 || true)"
  if [[ "$out" == *"not a dynamic executable"* || "$out" == *"statically linked"* ]]; then
    echo "static (no shared libraries)"
  else
    echo "DYNAMIC, needs: $(awk '{print $1}' <<<"$out" | tr '\n' ' ')"
  fi
}
for bin in "$server" "$agent"; do
  say "$(basename "$bin"): $(linkage "$bin")"
  [[ "$(linkage "$bin")" == static* ]] || die "$bin is not static"
done

name="embers-$version-x86_64-linux"
out="$target_dir/release-archive"
stage="$out/$name"
rm -rf "$stage" "$out/$name.tar.gz"
mkdir -p "$stage/bin" "$stage/deploy"
install -m 755 "$server" "$agent" "$stage/bin/"
cp -R deploy/Containerfile deploy/systemd deploy/kubernetes "$stage/deploy/"
sed "s/@VERSION@/$version/g" deploy/archive/README.md >"$stage/README.md"
cp deploy/archive/LICENSE "$stage/LICENSE"
# The same bytes for the same inputs: fixed owner, order and times.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$out" -czf "$out/$name.tar.gz" "$name"

say "binaries: embers-server $(du -h "$server" | cut -f1), embers-agent $(du -h "$agent" | cut -f1)"
say "archive: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1), $(stat -c %s "$out/$name.tar.gz") bytes)"
say "sha256: $(sha256sum "$out/$name.tar.gz" | cut -d' ' -f1)"
say "done in $((SECONDS - started)) s"
