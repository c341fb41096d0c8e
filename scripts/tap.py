"""TAP-style checks for the release and deploy scripts: each check prints `ok N - name` or
`not ok N - name` with its detail, and `finish` prints the `# pass` / `# fail` counts
scripts/test.sh adds up and exits with their verdict (a run that checked nothing fails)."""

import sys

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}" + ("" if ok else f"\n  # {detail}"),
          flush=True)
    return ok


def finish():
    print(f"# pass {sum(results)}")
    print(f"# fail {len(results) - sum(results)}")
    sys.exit(0 if results and all(results) else 1)
