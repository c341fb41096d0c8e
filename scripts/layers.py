#!/usr/bin/env python3
"""Checks that each crate's top-level modules (its layers) import only the layers they may.

The tables below are the ones docs/architecture.md shows; a `crate::` path from one layer to a
layer it may not import, an import cycle between layers, or a top-level module missing from its
table fails the check (exit 1), so the documented layering cannot drift from the code. Test code
(`#[cfg(test)] mod … { }` blocks and `tests.rs` files) is left out: tests may reach anywhere.

    python3 scripts/layers.py          (run in the project root; scripts/test.sh runs it)
"""

import os
import re
import sys

# layer -> the layers it may import ("*" = anything: composition roots and test/bench support).
# "root" stands for items of the crate root itself (lib.rs); the service's layers use none.
LAYERS = {
    "model/src": {
        "stats": [],
        "contract": ["stats"],
        "budget": [],
        "tree": ["contract"],
        "wire": ["contract", "tree", "budget"],
        "formats": ["wire"],
        "view": ["contract", "tree"],
        "export": ["contract", "tree", "view", "wire"],
        "summary": ["stats", "contract", "tree", "view"],
        "synth": ["*"],
        "testkit": ["*"],
        "lib": ["*"],
    },
    "src": {
        "net": [],
        "state": [],
        "session": ["net", "state"],
        "on_demand": ["net"],
        "components": ["state", "session", "on_demand"],
        "app": ["*"],
        "lib": ["*"],
        "main": ["*"],
        "bin": ["*"],
    },
    "server/src": {
        "store": [],
        "diagnostics": [],
        "blocking": [],
        "error": ["store", "diagnostics", "blocking"],
        "limits": ["store", "error", "blocking"],
        "input": ["limits", "store"],
        "formats": ["limits", "store", "input"],
        "tree": ["store"],
        "store_args": ["store"],
        "retention": ["store", "store_args", "blocking"],
        "demo": ["store", "blocking"],
        "host_profile": ["input", "limits", "store"],
        "listen": ["error"],
        "api_types": [],
        "alerts": ["store", "store_args"],
        "http": [
            "error", "diagnostics", "store", "retention", "tree", "input", "formats", "limits",
            "api_types", "host_profile", "listen", "blocking", "alerts",
        ],
        "openapi": ["http", "error", "store", "tree", "api_types", "mcp"],
        "mcp": ["http", "error", "store_args", "limits", "store", "blocking"],
        "router": ["http", "error", "limits", "mcp", "openapi"],
        "cli": ["*"],
        "bin": ["*"],
        "lib": ["*"],
        "main": ["*"],
    },
    "worker/src": {
        "job": [],
        "error": ["job"],
        "message": ["error", "job"],
        "serve": ["error", "root"],
        "answer": ["error", "job", "message"],
        "import": ["error", "job", "message"],
        "warm_up": ["root", "answer"],
        "lib": ["*"],
        "main": ["*"],
        "file_main": ["*"],
    },
    "agent/src": {
        "frame": [],
        "files": [],
        "names": [],
        "maps": [],
        "error": [],
        "options": [],
        "host": [],
        "report": [],
        "sink": ["error", "report"],
        "preflight": ["error"],
        "seconds": [],
        "window": ["names", "seconds"],
        "bpf": ["error", "options", "report"],
        "modules": ["files", "frame", "maps"],
        "procs": ["bpf", "frame", "maps", "modules"],
        "symbols": ["files", "frame", "modules", "names"],
        "intake": ["bpf", "frame", "modules", "procs", "report", "seconds", "window"],
        "memory": ["bpf", "error", "frame", "intake", "modules", "options", "report", "symbols",
                   "window"],
        "collector": ["bpf", "error", "frame", "host", "intake", "memory", "modules", "options",
                      "preflight", "report", "seconds", "sink", "symbols", "window"],
        "cli": ["options", "sink"],
        "lib": ["*"],
        "main": ["*"],
    },
    "bench/src": {"tree": [], "formats": ["tree"], "main": ["*"]},
}


def strip_comments_and_strings(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def without_test_modules(text):
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, end = 0, len(text)
        for j in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                end = j + 1
                break
        text = text[: m.start()] + text[end:]


def split_top_level(inner):
    parts, depth, cur = [], 0, ""
    for c in inner:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return parts + [cur]


def imported_names(code):
    """First path segments after every `crate::` (grouped `crate::{a::x, b}` forms included)."""
    for m in re.finditer(r"crate::(\{)?", code):
        if not m.group(1):
            name = re.match(r"(\w+)", code[m.end():])
            if name:
                yield name.group(1)
            continue
        depth, j = 1, m.end()
        while depth and j < len(code):
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        for part in split_top_level(code[m.end(): j - 1]):
            name = re.match(r"\s*(\w+)", part)
            if name:
                yield name.group(1)


def layer_imports(root):
    """{layer: {imported layer: first file that does it}} for one crate root."""
    modules = {n.removesuffix(".rs") for n in os.listdir(root)}
    graph = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            # `tests.rs` (or `tests/mod.rs` and its files) is a module's `#[cfg(test)] mod
            # tests;` moved to its own file.
            in_tests = "tests" in os.path.relpath(dirpath, root).split(os.sep)
            if not f.endswith(".rs") or f == "tests.rs" or in_tests:
                continue
            path = os.path.join(dirpath, f)
            layer = os.path.relpath(path, root).split(os.sep)[0].removesuffix(".rs")
            code = without_test_modules(strip_comments_and_strings(open(path).read()))
            for name in imported_names(code):
                target = name if name in modules else "root"
                if target != layer:
                    graph.setdefault(layer, {}).setdefault(target, path)
    return modules, graph


def find_cycle(graph):
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in graph.get(n, {}):
            if m == "root":
                continue
            if state.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)):
                return c
        state[n] = "done"
        stack.pop()
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n)):
            return c
    return None


def check(root, table):
    problems = []
    modules, graph = layer_imports(root)
    for layer in sorted(modules):
        if layer not in table:
            problems.append(f"{root}/{layer}: a top-level module missing from scripts/layers.py")
    for layer, targets in sorted(graph.items()):
        allowed = table.get(layer, [])
        for target, path in sorted(targets.items()):
            if "*" not in allowed and target not in allowed:
                problems.append(f"{path}: layer `{layer}` may not import `{target}` (allowed: {allowed})")
    cycle = find_cycle(graph)
    if cycle:
        problems.append(f"{root}: import cycle between layers: {' -> '.join(cycle)}")
    return problems


def main():
    problems = []
    for root, table in LAYERS.items():
        if os.path.isdir(root):
            problems += check(root, table)
    for p in problems:
        print(p)
    print(f"layers: {len(LAYERS)} crates checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
