#!/usr/bin/env python3
"""Every command in the docs runs: checks README.md and docs/*.md.

1. Links: every relative link (and image) of every page resolves to a file, every `#anchor` to a
   heading of the page it names (GitHub's slugs), and docs/README.md links every page in docs/.
2. Commands: fenced blocks whose info string is `sh runnable` (or `bash runnable`) are run against
   a started service. The release `embers-server` (built beforehand: `cargo build --release -p
   embers-server`) is started with `serve --demo` on a free loopback port, with a temporary HOME
   and XDG_DATA_HOME so its default database (which `embers-server import` also writes) is a
   fresh temporary file. Its directory (`target/release`, or `$EMBERS_SERVER`'s) goes first on PATH, `http://127.0.0.1:8080` in a block
   becomes the started address, and each block runs with `bash -euo pipefail`; the blocks of one
   page share a temporary directory and run in page order, as a reader following the page would.

A failure names the page, the line and the command. Prints how many blocks ran and how many shell
blocks each page leaves unmarked (commands that need perf, a real DeepFlow, a ClickHouse cluster,
or scripts/run.sh itself), and TAP-style `# pass N` / `# fail N` lines for scripts/test.sh.

    python3 scripts/doc_commands.py               # links and commands
    python3 scripts/doc_commands.py --links-only  # links only (no server needed)
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS_ADDRESS = "http://127.0.0.1:8080"
SHELLS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
BLOCK_TIMEOUT = 120
START_TIMEOUT = 120


class Block:
    """A fenced code block: its page, the line of its opening fence, info words and text."""

    def __init__(self, page, line, info, text):
        self.page, self.line, self.info, self.text = page, line, info, text

    @property
    def is_shell(self):
        return bool(self.info) and self.info[0] in SHELLS

    @property
    def runnable(self):
        return self.is_shell and "runnable" in self.info[1:]


def pages():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def split_page(path):
    """The page's fenced blocks, and its other lines as (number, text) for links and headings."""
    blocks, prose, fence, start, info, body = [], [], None, 0, [], []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence, start, info, body = m.group(1), number, m.group(2).split(), []
        elif fence is not None and line.strip().startswith(fence[0] * len(fence)) \
                and not line.strip().strip(fence[0]):
            blocks.append(Block(path, start, info, "\n".join(body)))
            fence = None
        elif fence is not None:
            body.append(line)
        else:
            prose.append((number, line))
    return blocks, prose


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in split_page(path)[1]:
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check_link(page, number, target):
    """A problem with one link of `page`, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None  # http:, https:, mailto: ...
    path_part, _, anchor = target.partition("#")
    dest = (page.parent / path_part).resolve() if path_part else page
    where = f"{page.relative_to(ROOT)}:{number}: link {target}"
    if not dest.exists():
        return f"{where}: {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest} does not exist"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{where}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}"
    return None


def check_links():
    problems = []
    for page in pages():
        for number, line in split_page(page)[1]:
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                problem = check_link(page, number, target)
                if problem:
                    problems.append(problem)
    index = ROOT / "docs" / "README.md"
    linked = set()
    for _, line in split_page(index)[1]:
        linked.update(t.partition("#")[0] for t in LINK.findall(line))
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page != index and page.name not in linked:
            problems.append(f"docs/README.md: the index does not link docs/{page.name}")
    return problems


def server_binary():
    # scripts/test.sh points this at the release archive's binary (scripts/release.sh).
    if os.environ.get("EMBERS_SERVER", "").strip():
        return Path(os.environ["EMBERS_SERVER"].strip()).resolve()
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    binary = target / "release" / "embers-server"
    if not binary.is_file():
        sys.exit(f"{binary} is missing: build it first (cargo build --release -p embers-server)")
    return binary


def start_server(binary, env, workdir):
    """Starts the service with demo data; returns (process, base URL)."""
    log = open(workdir / "server.log", "w")
    proc = subprocess.Popen(
        [str(binary), "serve", "--demo", "--listen", "127.0.0.1:0",
         "--static-dir", str(workdir / "no-viewer")],
        stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"Embers is running at (http://[^/\s]+)/", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    sys.exit("embers-server did not start:\n" + (workdir / "server.log").read_text()[-3000:])


# Prepended to every block: report the failing command and its line, then let -e stop the block.
PRELUDE = "set -o errtrace\ntrap 'echo \"DOC-COMMAND-FAILED $LINENO: $BASH_COMMAND\" >&2' ERR\n"


def run_block(block, base, env, cwd):
    """Runs one block; returns None or a message naming page, line and command."""
    script = PRELUDE + block.text.replace(DOCS_ADDRESS, base) + "\n"
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{block.page.relative_to(ROOT)}:{block.line}: the block did not finish in {BLOCK_TIMEOUT} s"
    if done.returncode == 0:
        return None
    where, what = block.line, "the block"
    m = re.search(r"DOC-COMMAND-FAILED (\d+): (.*)", done.stderr)
    if m:
        # The script's lines 1 and 2 are the prelude; its line 3 is the block's first line.
        offset = int(m.group(1)) - 2
        lines = block.text.split("\n")
        source = lines[offset - 1].strip() if 0 < offset <= len(lines) else ""
        where, what = block.line + offset, f"`{source}` (the failing command: `{m.group(2)}`)"
    output = "\n".join(("stdout: " + done.stdout[-1500:], "stderr: " + done.stderr[-1500:]))
    return (f"{block.page.relative_to(ROOT)}:{where}: {what} exited with status "
            f"{done.returncode}\n{output}")


def run_commands(blocks_by_page):
    binary = server_binary()
    failures, ran = [], {}
    with tempfile.TemporaryDirectory(prefix="embers-doc-commands-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "data"),
                   PATH=f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        (tmp / "home").mkdir()
        proc, base = start_server(binary, env, tmp)
        try:
            for number, (page, blocks) in enumerate(blocks_by_page.items()):
                cwd = tmp / f"page-{number}"
                cwd.mkdir()
                for block in (b for b in blocks if b.runnable):
                    ran[page] = ran.get(page, 0) + 1
                    failure = run_block(block, base, env, cwd)
                    if failure:
                        failures.append(failure)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return ran, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links-only", action="store_true", help="check links, run nothing")
    args = parser.parse_args()
    problems = check_links()
    for p in problems:
        print(f"FAIL {p}")
    print(f"links: {len(problems)} problem(s) in {len(pages())} pages", flush=True)
    if args.links_only:
        return 1 if problems else 0
    blocks_by_page = {p: split_page(p)[0] for p in pages()}
    ran, failures = run_commands(blocks_by_page)
    for f in failures:
        print(f"FAIL {f}")
    total = sum(ran.values())
    per_page = ", ".join(f"{p.relative_to(ROOT)} {n}" for p, n in ran.items())
    print(f"doc commands: {total} runnable blocks ran ({per_page}), {len(failures)} failed")
    unmarked = {p: sum(b.is_shell and not b.runnable for b in bs) for p, bs in blocks_by_page.items()}
    print("left unmarked (shell blocks not run): " + ", ".join(
        f"{p.relative_to(ROOT)} {n}" for p, n in unmarked.items() if n))
    print(f"# pass {total - len(failures) + (0 if problems else 1)}")
    print(f"# fail {len(failures) + (1 if problems else 0)}")
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main())
