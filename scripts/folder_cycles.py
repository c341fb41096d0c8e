#!/usr/bin/env python3
"""Folder-level import cycles of every crate: each `crate::a::...` path outside test modules of a
file under folder X is an edge X -> a between sibling folders, at every level. Exits 1 when a
cycle exists. rust_shape.py checks files; this checks folders (model/tests/layers.rs runs the
same rule for the model in cargo test). Usage: python3 scripts/folder_cycles.py [crate src dirs]"""
import os, re, sys, itertools
from collections import defaultdict

CRATES = sys.argv[1:] or ["src", "model/src", "worker/src", "server/src", "bench/src"]
PATH = re.compile(r"\bcrate::((?:[a-z_][a-z0-9_]*::)*[a-zA-Z_][a-zA-Z0-9_]*)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)

def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel

def targets(text):
    text = re.sub(r"//[^\n]*", "", text)
    # Test modules (`#[cfg(test)] mod tests` at the end of a file) are not part of the build's
    # import graph; a test may read a profile through `wire` to check `tree`.
    text = re.split(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)[0]
    for m in PATH.finditer(text):
        yield m.group(1).split("::")
    for m in USE_GROUP.finditer(text):
        for part in re.split(r"[,\s{}]+", m.group(1)):
            pass  # grouped `use crate::{a::x, b}`: handled roughly below
        for item in re.findall(r"([a-z_][a-z0-9_]*)(?:::|\s*[,}]|\s*$)", m.group(1)):
            yield [item]

def cycles(root):
    files = []
    for d, _, fs in os.walk(root):
        files += [os.path.join(d, f) for f in fs if f.endswith(".rs") and f != "tests.rs"]
    mods = {tuple(module_of(root, f)) for f in files}
    # edges at each level: between siblings under the same parent
    edges = defaultdict(set)  # (parent tuple) -> set of (a, b)
    for f in files:
        src = tuple(module_of(root, f))
        for t in targets(open(f).read()):
            # longest prefix that is a module
            tgt = tuple(t)
            while tgt and tgt not in mods:
                tgt = tgt[:-1]
            # find common parent and first differing components
            i = 0
            while i < min(len(src), len(tgt)) and src[i] == tgt[i]:
                i += 1
            if i < len(src) and i < len(tgt):
                edges[src[:i]].add((src[i], tgt[i], f))
    found = []
    for parent, es in edges.items():
        g = defaultdict(set)
        why = {}
        for a, b, f in es:
            g[a].add(b); why.setdefault((a, b), f)
        # Tarjan SCC
        index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
        def strong(v):
            index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
            for w in g.get(v, ()):
                if w not in index:
                    strong(w); low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v: break
                if len(comp) > 1:
                    out.append(comp)
        for v in list(g):
            if v not in index:
                strong(v)
        for comp in out:
            ev = [f"{a}->{b} ({os.path.relpath(why[(a,b)], root)})" for a in comp for b in comp if (a, b) in why]
            found.append(("::".join(parent) or "crate", sorted(comp), ev))
    return found

total = 0
for root in CRATES:
    if not os.path.isdir(root):
        continue
    cs = cycles(root)
    total += len(cs)
    print(f"{root}: {len(cs)} folder-level cycle(s)")
    for parent, comp, ev in cs:
        print(f"  under {parent}: {comp}")
        for e in ev:
            print(f"    {e}")
sys.exit(1 if total else 0)
