#!/usr/bin/env python3
"""The MCP interface, exercised with the official Python MCP client (PyPI `mcp`).

Starts `embers-server serve --demo` on a free port over a fresh database, then, over both
transports — streamable HTTP at /mcp and stdio (`embers-server mcp --db` on the same file) —
lists the tools and calls each with good and bad arguments. The texts are checked against
figures computed here from the service's own HTTP API (ProfileTracing, services, timeline) and
against the demo's planted regression: api-gateway's
github.com/example/gateway/render.jsonEncodeResponse grows in the last 20 minutes, and
compare_profiles and top_functions (what grew against the previous period) must name it first.

    .tools/venv/bin/python scripts/mcp_test.py [--bin target/release/embers-server]

Prints `ok`/`not ok` per check and `# pass N` / `# fail N` for scripts/test.sh.
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REGRESSION = "github.com/example/gateway/render.jsonEncodeResponse"
TOOLS = {"list_services", "top_functions", "summarize_profile", "compare_profiles", "timeline", "function_lines",
         "list_snapshots", "read_snapshot"}
LINES_APP = "mcp-lines"
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}" + ("" if ok else f"\n  # {detail}"), flush=True)


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def shape_a(base, app, start, end):
    body = {"app_service": app, "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
            "time_start": start, "time_end": end, "result_shape": "A"}
    return post(base, "/v1/profile/ProfileTracing", body)["result"]


def shares(nodes):
    """Per function: (self share, outermost total share) of the root total, from shape A nodes."""
    by_id = {n["node_id"]: n for n in nodes}
    root_total = next(n["total_value"] for n in nodes if n["parent_node_id"] == "-1")
    self_of, total_of = {}, {}
    for n in nodes:
        name = n["profile_location_str"]
        self_of[name] = self_of.get(name, 0) + n["self_value"]
        parent, outermost = by_id.get(n["parent_node_id"]), True
        while parent is not None:
            if parent["profile_location_str"] == name:
                outermost = False
                break
            parent = by_id.get(parent["parent_node_id"])
        if outermost:
            total_of[name] = total_of.get(name, 0) + n["total_value"]
    pct = lambda v: 100.0 * v / root_total
    return {k: pct(v) for k, v in self_of.items()}, {k: pct(v) for k, v in total_of.items()}


def percent(text):
    return float(text.rstrip("%").lstrip("<"))


async def call(session, name, args):
    result = await session.call_tool(name, args)
    error = getattr(result, "is_error", False)
    return bool(error), "".join(c.text for c in result.content if hasattr(c, "text"))


async def exercise(session, transport, base, snapshot_id):
    await session.initialize()
    tools = {t.name: t for t in (await session.list_tools()).tools}
    check(f"{transport}: the tools are listed", set(tools) == TOOLS, sorted(tools))
    check(f"{transport}: every tool has a description and an input schema",
          all(t.description and t.input_schema for t in tools.values()))
    now = int(time.time())
    last20 = (now - 1199, now)
    before = (now - 2399, now - 1200)
    await services(session, transport, base, (now - 3599, now))
    await summary(session, transport, base, last20)
    await compare(session, transport, base, last20, before)
    await top_functions(session, transport, base, last20, before)
    await timeline(session, transport, base, (now - 3599, now))
    await function_lines(session, transport)
    await snapshots(session, transport, base, snapshot_id, last20)
    await bad_arguments(session, transport)


async def services(session, transport, base, rng):
    error, text = await call(session, "list_services", {"time_start": rng[0], "time_end": rng[1]})
    rows = post(base, "/v1/profile/services", {"time_start": rng[0], "time_end": rng[1],
                                                "profile_event_type": "on-cpu"})["result"]["values"]
    on_cpu = [r for r in rows if r[0] != "Total"]
    want = 100.0 * next(r[3] for r in on_cpu if r[0] == "api-gateway") / sum(r[3] for r in on_cpu)
    line = next((l for l in text.splitlines() if l.endswith("  api-gateway")), "")
    got = re.search(r"([\d.]+)%", line)
    check(f"{transport}: list_services gives api-gateway's share of on-CPU time",
          not error and got is not None and abs(percent(got.group(1)) - want) < 0.1, f"{want:.2f} vs {line!r}")
    check(f"{transport}: list_services names event types with their measure",
          "on-cpu (CPU time), eBPF" in text and "off-cpu (waiting time), eBPF" in text, text[:400])


async def summary(session, transport, base, rng):
    error, text = await call(session, "summarize_profile",
                             {"app_service": "api-gateway", "time_start": rng[0], "time_end": rng[1], "rows": 10})
    self_share, total_share = shares(shape_a(base, "api-gateway", *rng))
    top = max(self_share, key=lambda k: (self_share[k], k))
    first = text.split("Hottest functions by self")[1].splitlines()[1] if "Hottest functions by self" in text else ""
    m = re.match(r"\s*1\.\s+([\d.]+)%\s+.+?\s{2}(\S.*)$", first)
    check(f"{transport}: summarize_profile's hottest self function and share match ProfileTracing",
          not error and m is not None and m.group(2) == top and abs(percent(m.group(1)) - self_share[top]) < 0.1,
          f"{top} {self_share[top]:.2f} vs {first!r}")
    line = next((l for l in text.splitlines() if l.endswith("  " + REGRESSION)), "")
    got = re.search(r"([\d.]+)%", line)
    check(f"{transport}: summarize_profile gives the regressing function's total share",
          got is not None and abs(percent(got.group(1)) - total_share[REGRESSION]) < 0.1,
          f"{total_share.get(REGRESSION)} vs {line!r}")
    check(f"{transport}: summarize_profile states the total with its unit", "of CPU time" in text, text[:300])


async def compare(session, transport, base, last20, before):
    args = {"app_service": "api-gateway", "time_start": last20[0], "time_end": last20[1],
            "baseline_time_start": before[0], "baseline_time_end": before[1], "rows": 5}
    error, text = await call(session, "compare_profiles", args)
    lines = text.splitlines()
    grew = lines[lines.index(next(l for l in lines if l.startswith("Grew"))) + 1] if any(
        l.startswith("Grew") for l in lines) else ""
    check(f"{transport}: compare_profiles names the planted regression first",
          not error and re.match(r"\s*1\.\s+\+", grew) is not None and f"  {REGRESSION}" in grew, grew or text[:500])
    _, b = shares(shape_a(base, "api-gateway", *before))
    _, c = shares(shape_a(base, "api-gateway", *last20))
    got = re.search(r"([\d.]+)% → ([\d.]+)%", grew)
    check(f"{transport}: compare_profiles' shares match ProfileTracing on both sides",
          got is not None and abs(percent(got.group(1)) - b[REGRESSION]) < 0.1
          and abs(percent(got.group(2)) - c[REGRESSION]) < 0.1, f"{b[REGRESSION]:.2f} → {c[REGRESSION]:.2f} vs {grew!r}")
    error, text = await call(session, "compare_profiles", {"app_service": "api-gateway", "last": "20m"})
    check(f"{transport}: compare_profiles' default baseline is the range just before",
          not error and f"  {REGRESSION}" in text.split("Grew")[1].splitlines()[1], text[:600])


def first_row(text):
    """The first numbered row of a top_functions table, and the line below it (its services)."""
    lines = text.splitlines()
    i = next((i for i, l in enumerate(lines) if re.match(r"\s*1\. ", l)), None)
    return ("", "") if i is None or i + 1 >= len(lines) else (lines[i], lines[i + 1])


async def top_functions(session, transport, base, last20, before):
    body = {"time_start": last20[0], "time_end": last20[1], "profile_event_type": "on-cpu",
            "profile_language_type": "eBPF", "limit": 5}
    error, text = await call(session, "top_functions", {"time_start": last20[0], "time_end": last20[1], "limit": 5})
    want = post(base, "/v1/profile/functions", body)["result"]
    top = want["values"][0]
    row, places = first_row(text)
    m = re.match(r"\s*1\.\s+([\d.<]+)%\s+.+?\s{2}(\S.*)$", row)
    check(f"{transport}: top_functions' hottest function and self share are the functions endpoint's",
          not error and m is not None and row.split("  ")[-1] == top[0] and abs(percent(m.group(1)) - top[3]) < 0.1,
          f"{top[0]} {top[3]:.2f} vs {row!r}")
    check(f"{transport}: top_functions names the services it runs in",
          places.strip().startswith("in ") and all(p[0] in places for p in top[11][:5]), f"{top[11][:5]} vs {places!r}")
    args = {"time_start": last20[0], "time_end": last20[1], "baseline": "previous", "limit": 5}
    error, text = await call(session, "top_functions", args)
    grew = post(base, "/v1/profile/functions", {**body, "baseline_time_start": before[0], "baseline_time_end": before[1],
                                                "metric": "total", "order_by": "place_change"})["result"]
    first = grew["values"][0]
    row, places = first_row(text)
    m = re.match(r"\s*1\.\s+\+([\d.]+) pp\s", row)
    check(f"{transport}: top_functions against the previous period names the planted regression first, as the endpoint does",
          not error and first[0] == REGRESSION and row.endswith("  " + REGRESSION) and m is not None
          and abs(float(m.group(1)) - first[9]) < 0.6 and "api-gateway +" in places,
          f"{first[0]} {first[9]:.2f} vs {row!r} {places!r}")
    check(f"{transport}: top_functions names its baseline", f"Baseline: " in text and "Comparison:" in text, text[:300])


async def timeline(session, transport, base, rng):
    error, text = await call(session, "timeline", {"app_service": "api-gateway", "time_start": rng[0], "time_end": rng[1]})
    body = {"app_service": "api-gateway", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
            "time_start": rng[0], "time_end": rng[1]}
    points = post(base, "/v1/profile/timeline", body)["result"]["values"]
    peak = max(points, key=lambda p: (p[1], -p[0]))
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(peak[0]))
    check(f"{transport}: timeline's peak is the timeline endpoint's", not error and f"at {when} UTC" in text,
          f"{when} vs {text[:300]!r}")
    check(f"{transport}: timeline lists one line per bucket", text.count("\n2") >= len(points) - 1, len(points))


def ingest_lines(base):
    """A Go-like profile with source lines: main.work spends 9 of 10 samples at work.go:12."""
    folded = "main.main;main.work 9\nmain.main;main.work 1\n"
    details = [{"sample": 0, "lines": [{"file": "main.go", "line": 5}, {"file": "work.go", "line": 12}]},
               {"sample": 1, "lines": [{"file": "main.go", "line": 5}, {"file": "work.go", "line": 14}]}]
    post(base, "/v1/profile/ingest", {"app_service": LINES_APP, "profile_language_type": "Golang",
                                      "profile_event_type": "cpu", "profile_value_unit": "samples",
                                      "time": int(time.time()) - 60, "folded": folded, "details": details})


async def function_lines(session, transport):
    args = {"app_service": LINES_APP, "language": "Golang", "event_type": "cpu", "function": "main.work",
            "last": "1h"}
    error, text = await call(session, "function_lines", args)
    rows = [l for l in text.splitlines() if l.startswith("- ")]
    check(f"{transport}: function_lines lists the hottest line first, with its share of the function",
          not error and rows[:1] == [rows[0]] and rows[0].startswith("- work.go:12  total") and "90" in rows[0]
          and len(rows) == 2, text[:400])
    error, text = await call(session, "function_lines", {"app_service": "api-gateway", "function": REGRESSION,
                                                         "last": "1h"})
    check(f"{transport}: function_lines says why eBPF demo data has no lines",
          not error and "No lines: this function's samples carry no line information" in text, text[:400])


async def snapshots(session, transport, base, snapshot_id, rng):
    error, text = await call(session, "list_snapshots", {})
    check(f"{transport}: list_snapshots lists the saved snapshot", not error and snapshot_id in text, text[:300])
    error, text = await call(session, "read_snapshot", {"id": snapshot_id, "rows": 3})
    check(f"{transport}: read_snapshot summarises it",
          not error and text.startswith(f"Snapshot {snapshot_id}") and "Hottest functions by self" in text, text[:300])


BAD = [
    ("summarize_profile", {"last": "1h"}, "app_service"),
    ("summarize_profile", {"app_service": "api-gateway", "time_start": 9, "time_end": 5}, "time_start (9) is after time_end (5)"),
    ("summarize_profile", {"app_service": "api-gateway", "last": "soon"}, "last: 'soon' is not a duration"),
    ("summarize_profile", {"app_service": "api-gateway", "time_start": 5}, "give both time_start and time_end"),
    ("summarize_profile", {"app_service": "api-gateway", "tag_filter": "host = "}, "tag_filter"),
    ("compare_profiles", {"app_service": "api-gateway", "baseline_snapshot": "nope"}, "'nope' is not a snapshot id"),
    ("compare_profiles", {"app_service": "api-gateway", "baseline_snapshot": "A" * 26, "baseline_last": "1h"}, "not both"),
    ("timeline", {"interval": -5}, "interval must be a positive number of seconds"),
    ("timeline", {"group_by": "no such tag!"}, "group_by"),
    ("read_snapshot", {"id": "A" * 26}, "there is no snapshot"),
    ("list_services", {"last": "30d"}, "longer than a week"),
    ("top_functions", {"limit": 0}, "limit must be 1 to 50, got 0"),
    ("top_functions", {"limit": 500}, "limit must be 1 to 50, got 500"),
    ("top_functions", {"metric": "cycles"}, 'metric must be "self" or "total"'),
    ("top_functions", {"baseline": "last week"}, 'baseline must be "previous" or "yesterday"'),
    ("top_functions", {"order_by": "change"}, "need a baseline"),
    ("top_functions", {"baseline": "previous", "baseline_time_start": 5}, "not both"),
    ("top_functions", {"tag_filter": "host = "}, "tag_filter"),
    ("function_lines", {"function": "  "}, "function is required"),
    ("function_lines", {"function": "a;b"}, "without ';'"),
]


async def bad_arguments(session, transport):
    for name, args, expected in BAD:
        error, text = await call(session, name, args)
        check(f"{transport}: {name} {json.dumps(args)} is a tool error naming the problem",
              error and expected in text, f"error={error} {text[:200]!r}")
    error, text = await call(session, "summarize_profile", {"app_service": "no-such-service", "last": "1h"})
    check(f"{transport}: an unknown service is an empty answer, not an error",
          not error and "No samples match" in text, text[:200])
    try:
        error, text = await call(session, "no_such_tool", {})
        check(f"{transport}: an unknown tool is an error", error, text[:200])
    except Exception as e:  # the SDK raises the JSON-RPC error
        check(f"{transport}: an unknown tool is an error", "no_such_tool" in str(e) or "not found" in str(e).lower(), e)


def start_server(binary, tmp):
    db = os.path.join(tmp, "embers.db")
    server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--db", db, "--static-dir",
                               os.path.join(tmp, "no-viewer"), "--demo"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**os.environ, "RUST_LOG": "warn"})
    line = server.stdout.readline()
    if not line.startswith("Embers is running at "):
        raise SystemExit(f"the service did not start: {line!r}")
    return server, line.split()[-1].rstrip("/"), db


def save_snapshot(base):
    now = int(time.time())
    request = {"app_service": "api-gateway", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
               "time_start": now - 1199, "time_end": now}
    answer = post(base, "/v1/profile/ProfileTracing", request)
    return post(base, "/v1/profile/snapshots", {"request": request, "response": answer})["result"]["id"]


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/embers-server")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        server, base, db = start_server(args.bin, tmp)
        try:
            snapshot_id = save_snapshot(base)
            ingest_lines(base)
            async with streamable_http_client(base + "/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await exercise(session, "http", base, snapshot_id)
            params = StdioServerParameters(command=args.bin, args=["mcp", "--db", db], env={"RUST_LOG": "warn"})
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await exercise(session, "stdio", base, snapshot_id)
        finally:
            server.terminate()
            server.wait(timeout=30)
    passed = sum(results)
    print(f"mcp: {len(results)} checks in {time.monotonic() - started:.1f} s")
    print(f"# pass {passed}\n# fail {len(results) - passed}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
