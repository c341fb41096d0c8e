#!/usr/bin/env python3
"""The CPU samples the JDK's own reader (`jfr print --json`) finds in a recording, with their
times: the first line is the first sample's Unix millisecond, then one line per sample,
`milliseconds after the first<TAB>OS thread id`, in time order (sleeping threads' samples left
out, as Embers reads `cpu`). The service's samples endpoint is held to it
(server/tests/producer_detail/jfr.rs).

    python3 times.py workload.jfr > workload.cpu-times.tsv
"""
import calendar
import json
import subprocess
import sys
import time


def unix_ms(iso):
    # 2026-11-27T15:18:53.039960609Z: seconds by the calendar, the fraction as digits.
    whole, frac = iso.rstrip("Z").split(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1000 + int((frac + "000")[:3])


def main(path):
    out = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "1", "--events", "jdk.ExecutionSample", path],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = []
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        if v.get("state") == "STATE_SLEEPING":
            continue
        rows.append((unix_ms(v["startTime"]), v["sampledThread"]["osThreadId"]))
    rows.sort()
    first = rows[0][0]
    print(first)
    for ms, tid in rows:
        print(f"{ms - first}\t{tid}")


if __name__ == "__main__":
    main(sys.argv[1])
