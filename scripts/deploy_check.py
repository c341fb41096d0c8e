#!/usr/bin/env python3
"""The deploy files are right without a cluster or a running systemd (deploy/).

    .tools/venv/bin/python scripts/deploy_check.py [BIN_DIR]

BIN_DIR holds the release binaries (default: bin/ of the newest archive staged in
target/release-archive/ by scripts/release.sh).

- systemd (deploy/systemd/*.service): `systemd-analyze verify` in a scratch root holding the
  units, the binaries at their ExecStart paths and this machine's system units; any line it
  prints (an unknown key, a bad value, a missing binary) fails. `systemd-analyze security`
  must rate the service's exposure at most 1.5 and the collector's (root with six capabilities)
  at most 3.5, and each ExecStart's arguments must parse with the real binary.
- Kubernetes (deploy/kubernetes/base and its clickhouse overlay): built with `kubectl kustomize`;
  every object checked field by field against the Kubernetes API's own types (the official
  Python client's models, generated from the API's OpenAPI document): an unknown field, a wrong
  type or a missing required field fails. Every container's volume mounts name a volume of its
  pod, and the arguments of the embers-server and embers-agent containers parse with the real
  binaries. (`kubectl apply --dry-run=client` cannot do this here: even with --validate=false it
  needs an API server to map kinds to resources.)

Prints `ok`/`not ok` per check and `# pass N` / `# fail N` for scripts/test.sh.
"""

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tap import check, finish

import yaml
from kubernetes import client

ROOT = Path(__file__).resolve().parent.parent
UNITS = {"embers.service": ("embers-server", 15), "embers-agent.service": ("embers-agent", 35)}
OVERLAYS = ("deploy/kubernetes/base", "deploy/kubernetes/clickhouse")
def run(*cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def args_parse(binary, args, what):
    """clap parses (and checks the values of) every argument before it answers the final --help."""
    done = run(str(binary), *args, "--help")
    check(f"{what}: its arguments parse with {binary.name}", done.returncode == 0,
          f"{' '.join(args)}: {done.stderr.strip()[-600:]}")


def exec_start_args(unit_text):
    """ExecStart's arguments after the binary, less the $VARIABLE of extra options."""
    line = next(l for l in unit_text.splitlines() if l.startswith("ExecStart="))
    return [a for a in line.split("=", 1)[1].split()[1:] if not a.startswith("$")]


def check_systemd(bins):
    system_units = next(p for p in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system"))
                        if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="embers-units-") as tmp:
        root = Path(tmp)
        (root / "usr/local/bin").mkdir(parents=True)
        (root / "etc/systemd/system").mkdir(parents=True)
        shutil.copytree(system_units, root / "usr/lib/systemd/system", symlinks=True)
        for unit, (binary, threshold) in UNITS.items():
            shutil.copy2(bins / binary, root / "usr/local/bin" / binary)
            text = (ROOT / "deploy/systemd" / unit).read_text()
            (root / "etc/systemd/system" / unit).write_text(text)
            path = str(root / "etc/systemd/system" / unit)
            done = run("systemd-analyze", "verify", f"--root={root}", path)
            said = (done.stdout + done.stderr).strip()
            check(f"{unit}: systemd-analyze verify is silent", done.returncode == 0 and not said, said)
            done = run("systemd-analyze", "security", "--offline=true", f"--root={root}",
                       f"--threshold={threshold}", path)
            level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", done.stdout)
            print(f"# {unit}: exposure {level.group(1) if level else '?'}")
            check(f"{unit}: exposure at most {threshold / 10}", done.returncode == 0 and level,
                  done.stdout[-800:] + done.stderr[-400:])
            args_parse(bins / binary, exec_start_args(text), unit)


def schema_problems(value, kind, path):
    """Where value does not fit the Kubernetes type named kind (the client's type strings)."""
    if kind in ("object", "datetime"):
        return []
    scalar = {"str": str, "int": int, "bool": bool, "float": (int, float)}.get(kind)
    if scalar:
        wrong = not isinstance(value, scalar) or (kind == "int" and isinstance(value, bool))
        return [f"{path}: {value!r} is not {kind}"] if wrong else []
    if kind.startswith("list["):
        if not isinstance(value, list):
            return [f"{path}: not a list"]
        return [p for i, v in enumerate(value) for p in schema_problems(v, kind[5:-1], f"{path}[{i}]")]
    if kind.startswith("dict("):
        if not isinstance(value, dict):
            return [f"{path}: not a map"]
        inner = kind[5:-1].split(", ", 1)[1]
        return [p for k, v in value.items() for p in schema_problems(v, inner, f"{path}.{k}")]
    model = getattr(client, kind)
    if not isinstance(value, dict):
        return [f"{path}: not an object ({kind})"]
    by_json = {j: a for a, j in model.attribute_map.items()}
    problems = []
    for key, item in value.items():
        if key not in by_json:
            problems.append(f"{path}.{key}: no such field in {kind}")
        else:
            problems += schema_problems(item, model.openapi_types[by_json[key]], f"{path}.{key}")
    return problems


def check_object(obj, overlay, bins):
    group_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    what = f"{overlay}: {kind} {obj.get('metadata', {}).get('name')}"
    model = f"{group_version.rsplit('/', 1)[-1].capitalize()}{kind}"
    if not check(f"{what}: a known API type ({group_version})", hasattr(client, model), model):
        return
    problems = schema_problems(obj, model, kind)
    try:
        # The client's own deserializer: required fields and enumerations.
        client.ApiClient()._ApiClient__deserialize(obj, model)
    except (ValueError, TypeError) as e:
        problems.append(str(e))
    check(f"{what}: fits the API's types", not problems, "; ".join(problems[:8]))
    pod = obj.get("spec", {}).get("template", {}).get("spec")
    if not pod:
        return
    volumes = {v["name"] for v in pod.get("volumes", [])}
    for container in pod.get("containers", []):
        mounts = {m["name"] for m in container.get("volumeMounts", [])}
        check(f"{what}: {container['name']} mounts only the pod's volumes", mounts <= volumes,
              f"unknown: {sorted(mounts - volumes)}")
        image = container.get("image", "").split("/")[-1].split(":")[0]
        if image in ("embers-server", "embers-agent"):
            args_parse(bins / image, container.get("args", []), f"{what}: {container['name']}")


def check_kubernetes(bins):
    for overlay in OVERLAYS:
        done = run("kubectl", "kustomize", overlay, cwd=ROOT)
        if not check(f"kubectl kustomize {overlay}", done.returncode == 0, done.stderr[-800:]):
            continue
        objects = [o for o in yaml.safe_load_all(done.stdout) if o]
        kinds = sorted(o["kind"] for o in objects)
        print(f"# {overlay}: {', '.join(kinds)}")
        for obj in objects:
            check_object(obj, overlay, bins)


def newest_bins():
    staged = sorted((p for p in (ROOT / "target/release-archive").glob("embers-*-x86_64-linux")
                     if p.is_dir()), key=lambda p: p.stat().st_mtime)
    if not staged:
        sys.exit("no staged archive in target/release-archive/: run bash scripts/release.sh")
    return staged[-1] / "bin"


def main():
    bins = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else newest_bins()
    started = time.monotonic()
    check_systemd(bins)
    check_kubernetes(bins)
    print(f"# deploy checks took {time.monotonic() - started:.1f} s")
    finish()


if __name__ == "__main__":
    main()
