#!/usr/bin/env python3
"""Folds `perf script` output into DeepFlow-named folded stacks: `root;[t] thread;frames value`.

Frames are named the way DeepFlow's agent names them: `[k] f` for kernel functions, `[l] f` for
functions in a shared library, plain names for the executable (and for JIT code named by a
perf map), `[/path]` where the symbol is unknown in a known file, `[unknown] 0x..` otherwise;
offsets (`+0x1a`) are dropped. Each sample counts 1. Usage: perf script | fold_perf.py ROOT
"""
import re
import sys
from collections import Counter

HEADER = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def name(addr, sym, dso):
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    if dso == "[kernel.kallsyms]":
        return f"[k] {sym}" if sym != "[unknown]" else f"[unknown] 0x{addr}"
    if sym == "[unknown]":
        return f"[{dso}]" if dso.startswith("/") else f"[unknown] 0x{addr}"
    if ".so" in dso.rsplit("/", 1)[-1]:
        return f"[l] {sym}"
    return sym


def main():
    root = sys.argv[1]
    stacks = Counter()
    thread, frames = None, []

    def flush():
        if thread is not None and frames:
            stacks[";".join([root, f"[t] {thread}"] + frames[::-1])] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            thread, frames = None, []
            continue
        m = FRAME.match(line)
        if m and thread is not None:
            frames.append(name(*m.groups()).replace(";", ":"))
            continue
        h = HEADER.match(line)
        if h:
            flush()
            thread, frames = h.group(1).strip(), []
    flush()
    for stack, count in sorted(stacks.items()):
        print(f"{stack} {count}")


if __name__ == "__main__":
    main()
