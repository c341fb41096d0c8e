#!/usr/bin/env python3
"""The stacks the JDK's own reader (`jfr print --json`) finds in a recording, in the form
model/tests/jfr.rs compares Embers' reader with: `event_type<TAB>[t] thread;frame;...<TAB>value`
per distinct stack, sorted (an event with neither thread nor stack is `[unknown]`). Frames are named as Embers names them (model/src/wire/jfr/names.rs):
dotted classes, hidden-class addresses and lambda numbers dropped.

    python3 expected.py workload.jfr > workload.expected.tsv
"""
import json
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

EVENTS = {
    "jdk.ExecutionSample": [("cpu", lambda v: 1)],
    "jdk.ObjectAllocationInNewTLAB": [
        ("alloc_in_new_tlab_objects", lambda v: 1),
        ("alloc_in_new_tlab_bytes", lambda v: v["tlabSize"]),
    ],
    "jdk.ObjectAllocationOutsideTLAB": [
        ("alloc_outside_tlab_objects", lambda v: 1),
        ("alloc_outside_tlab_bytes", lambda v: v["allocationSize"]),
    ],
    "jdk.ObjectAllocationSample": [("alloc_space", lambda v: v["weight"])],
    "jdk.JavaMonitorEnter": [("lock_count", lambda v: 1), ("lock_duration", lambda v: nanos(v["duration"]))],
    "jdk.ThreadPark": [("lock_count", lambda v: 1), ("lock_duration", lambda v: nanos(v["duration"]))],
    "profiler.WallClockSample": [("wall", lambda v: v["samples"])],
}


def nanos(iso):
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", iso)
    h, mi, s = (m.group(1) or 0, m.group(2) or 0, m.group(3) or "0")
    return int((int(h) * 3600 + int(mi) * 60 + Decimal(s)) * 1_000_000_000)


def class_name(raw):
    m = re.match(r"(.*?\$\$Lambda)(?:[$/+].*)?$", raw)
    if m:
        return m.group(1).replace("/", ".")
    raw = re.sub(r"[/+]0x[0-9a-fA-F]+(\.\d+)?$", "", raw)
    return raw.replace("/", ".")


def frame(f):
    method = f["method"]
    cls = class_name((method.get("type") or {}).get("name") or "")
    name = method.get("name") or ""
    return f"{cls}.{name}" if cls else (name or "[unknown]")


def main(path):
    out = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "2048", "--events",
         ",".join([*EVENTS, "jdk.ActiveSetting"]), path],
        check=True, capture_output=True, text=True,
    ).stdout
    events = json.loads(out)["recording"]["events"]
    # async-profiler says what its execution samples are in an `event` setting.
    modes = [e["values"]["value"] for e in events
             if e["type"] == "jdk.ActiveSetting" and e["values"]["name"] == "event"]
    mode = modes[-1] if modes and modes[-1] in ("itimer", "wall") else "cpu"
    sums = defaultdict(int)
    for e in events:
        v = e["values"]
        if e["type"] == "jdk.ActiveSetting":
            continue
        if e["type"] == "jdk.ExecutionSample" and mode != "wall" and v.get("state") == "STATE_SLEEPING":
            continue
        thread = v.get("sampledThread") or v.get("eventThread")
        frames = [f"[t] {thread['javaName'] or thread['osName']}"] if thread else []
        frames += [frame(f) for f in reversed((v.get("stackTrace") or {}).get("frames") or [])]
        frames = frames or ["[unknown]"]
        for event_type, value in EVENTS[e["type"]]:
            if e["type"] == "jdk.ExecutionSample":
                event_type = mode
            sums[(event_type, ";".join(frames))] += value(v)
    for (event_type, stack), value in sorted(sums.items()):
        if value:
            print(f"{event_type}\t{stack}\t{value}")


if __name__ == "__main__":
    main(sys.argv[1])
