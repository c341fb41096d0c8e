#!/usr/bin/env python3
"""The release archive and the service's image work where no toolchain is.

    python3 scripts/release_check.py archive [TARBALL]   unpack the archive (default: the newest
                                                         in target/release-archive/) and run it
    python3 scripts/release_check.py image [TARBALL]     build the image of deploy/Containerfile
                                                         from it with podman and run its entrypoint

`archive` unpacks into a fresh temporary directory and runs, from there, with only
`PATH=/usr/bin:/bin` and HOME set (no cargo, rustc or trunk reachable): both binaries'
`--version`; `embers-server serve --demo` on a free loopback port without `--static-dir`, whose
page (GET /), its wasm (GET of the `.wasm` index.html names) and a ProfileTracing query of the
demo data must answer; and the backup operations.md gives (`VACUUM INTO` while the service runs),
whose copy must pass `PRAGMA integrity_check` and hold the samples.

`image` builds the `server` and `agent` targets (FROM scratch: nothing is pulled), checks the
server image's entrypoint and command, copies the entrypoint binaries out of created containers
(`podman run` is not allowed in this sandbox: it cannot set rlimits), runs their `--version`
and serves with the service's (the page and its wasm).

Prints `ok`/`not ok` per check and `# pass N` / `# fail N` for scripts/test.sh.
"""

import json
import os
import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from tap import check, finish

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 120
# A function the demo's api-gateway spends its time in (server/src/demo/).
DEMO_HOT_FUNCTION = "github.com/example/gateway/render.jsonEncodeResponse"
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "RUST_LOG": "warn"}
def newest_archive():
    found = sorted((ROOT / "target" / "release-archive").glob("embers-*-x86_64-linux.tar.gz"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        sys.exit("no archive in target/release-archive/: run bash scripts/release.sh")
    return found[-1]


def unpack(tarball, into):
    with tarfile.open(tarball) as tar:
        # The "data" filter (no absolute paths, links out or devices) where this Python has it.
        tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


def run(cmd, cwd, env, timeout=60):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def get(url, accept_encoding=None):
    headers = {"Accept-Encoding": accept_encoding} if accept_encoding else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def start(binary, workdir, env, demo):
    """`serve` (with `--demo`) from workdir; returns (process, base URL) or (process, None)."""
    log = open(workdir / "server.log", "w")
    proc = subprocess.Popen(
        [str(binary), "serve", *(["--demo"] if demo else []), "--listen", "127.0.0.1:0", "--db",
         str(workdir / "embers.db")],
        cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.match(r"Embers is running at (http://\S+?)/?$", line.strip())
        if m:
            return proc, m.group(1)
    return proc, None


def serves_page_and_profiles(binary, workdir, what, demo=True):
    """The page and its wasm; with demo, also ProfileTracing on the demo data and a backup."""
    env = dict(CLEAN_ENV, HOME=str(workdir))
    proc, base = start(binary, workdir, env, demo)
    try:
        if not check(f"{what}: serve starts without --static-dir", base,
                     (workdir / "server.log").read_text()[-2000:]):
            return
        status, ctype, page = get(base + "/")
        check(f"{what}: GET / is the viewer's page", status == 200 and "text/html" in ctype
              and b"<title>Embers" in page, f"{status} {ctype} {page[:200]!r}")
        wasm = re.search(rb'href="(/[^"]+\.wasm)"', page)
        if check(f"{what}: the page names its wasm", wasm, page[:500]):
            status, ctype, body = get(base + wasm.group(1).decode())
            check(f"{what}: GET {wasm.group(1).decode()} is wasm",
                  status == 200 and ctype == "application/wasm" and body[:4] == b"\0asm",
                  f"{status} {ctype} {body[:8]!r}")
        if not demo:
            return
        now = int(time.time())
        answer = post(base + "/v1/profile/ProfileTracing", {
            "app_service": "api-gateway", "profile_language_type": "eBPF",
            "profile_event_type": "on-cpu", "time_start": now - 3600, "time_end": now})
        functions = (answer.get("result") or {}).get("functions") or []
        check(f"{what}: ProfileTracing answers the demo's api-gateway with its hot function",
              answer.get("OPT_STATUS") == "SUCCESS" and DEMO_HOT_FUNCTION in functions,
              json.dumps(answer)[:300])
        backup_while_serving(workdir, what)
    finally:
        proc.terminate()
        check(f"{what}: stops on SIGTERM", proc.wait(timeout=30) == 0, f"exit {proc.returncode}")


def backup_while_serving(workdir, what):
    """operations.md's online backup: VACUUM INTO a new file while the service runs."""
    copy = workdir / "backup.db"
    with sqlite3.connect(workdir / "embers.db") as db:
        db.execute("VACUUM INTO ?", (str(copy),))
    with sqlite3.connect(copy) as db:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        samples = db.execute("SELECT count(*) FROM samples").fetchone()[0]
    check(f"{what}: VACUUM INTO backs the database up while it serves",
          integrity == "ok" and samples > 0, f"integrity {integrity}, {samples} samples")


def check_archive(tarball):
    with tempfile.TemporaryDirectory(prefix="embers-release-") as tmp:
        top = unpack(tarball, Path(tmp))
        print(f"# {tarball.name} unpacked into {top}")
        env = dict(CLEAN_ENV, HOME=tmp)
        tools = run(["sh", "-c", "command -v cargo rustc trunk || true"], top, env).stdout.strip()
        check("no cargo, rustc or trunk on the PATH the binaries run with", tools == "", tools)
        for name in ("embers-server", "embers-agent"):
            done = run([str(top / "bin" / name), "--version"], top, env)
            check(f"bin/{name} --version", done.returncode == 0 and name in done.stdout,
                  done.stdout + done.stderr)
        for path in ("README.md", "LICENSE", "deploy/Containerfile",
                     "deploy/systemd/embers.service", "deploy/kubernetes/base/kustomization.yaml"):
            check(f"the archive holds {path}", (top / path).is_file())
        workdir = Path(tmp) / "run"
        workdir.mkdir()
        serves_page_and_profiles(top / "bin" / "embers-server", workdir, "archive")


def podman(*args, timeout=300):
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)}: {done.stderr.strip()[-1500:]}")
    return done.stdout.strip()


def check_image(tarball):
    with tempfile.TemporaryDirectory(prefix="embers-image-") as tmp:
        top = unpack(tarball, Path(tmp))
        version = top.name.split("-")[1]
        tags = {}
        for target in ("server", "agent"):
            tags[target] = f"localhost/embers-{target}:{version}"
            started = time.monotonic()
            podman("build", "--quiet", "--pull=never", "-f", str(top / "deploy/Containerfile"),
                   "--target", target, "-t", tags[target], str(top))
            print(f"# built {tags[target]} in {time.monotonic() - started:.1f} s")
        config = json.loads(podman("image", "inspect", tags["server"]))[0]["Config"]
        check("the server image runs /embers-server serve as uid 65532",
              config.get("Entrypoint") == ["/embers-server"] and config.get("Cmd", [])[:1] == ["serve"]
              and config.get("User") == "65532:65532", json.dumps(config)[:400])
        workdir = Path(tmp) / "from-image"
        workdir.mkdir()
        for target in ("server", "agent"):
            container = podman("create", tags[target])
            try:
                podman("cp", f"{container}:/embers-{target}", str(workdir / f"embers-{target}"))
            finally:
                podman("rm", container)
            done = run([str(workdir / f"embers-{target}"), "--version"], workdir,
                       dict(CLEAN_ENV, HOME=str(workdir)))
            check(f"the {target} image's entrypoint runs: --version",
                  done.returncode == 0 and version in done.stdout, done.stdout + done.stderr)
        # The same bytes as the archive's, whose run checks ProfileTracing: the page suffices.
        serves_page_and_profiles(workdir / "embers-server", workdir, "image", demo=False)
        for tag in tags.values():
            podman("rmi", tag)


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in ("archive", "image"):
        sys.exit(__doc__)
    tarball = Path(sys.argv[2]) if len(sys.argv) == 3 else newest_archive()
    started = time.monotonic()
    try:
        (check_archive if sys.argv[1] == "archive" else check_image)(tarball.resolve())
    except (OSError, RuntimeError, subprocess.SubprocessError, ValueError) as e:
        check(f"{sys.argv[1]} check ran to its end", False, repr(e))
    print(f"# {sys.argv[1]} checks took {time.monotonic() - started:.1f} s")
    finish()


if __name__ == "__main__":
    main()
