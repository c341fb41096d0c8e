"""An OTLP profile with source lines and per-sample times, built with the official
`opentelemetry-proto` package (PyPI) and sent to Embers over HTTP; prints one JSON object: the
answer and what Embers must answer for it (written here, not derived from Embers).

Used by server/tests/producer_detail/otlp.rs, in the venv of `scripts/setup.sh --test`.

    otlp_detail.py URL

The profile has the eBPF profiler's on-CPU shape (samples/count at 20 Hz with timestamps,
`thread.id` per sample): `hot_loop` (src/hot.c) runs its loop body, line 14, in 12 samples
and its loop test, line 13, in 3; `main` (src/main.c) calls it at line 30. `idle` has no
file, so no line.
"""

import json
import sys

from opentelemetry.proto.collector.profiles.v1development import (
    profiles_service_pb2 as service,
)

from otlp_client import NS, Dictionary, key_value, on_cpu, sample, send_http

T0 = 1_700_000_100
HOT_FILE, MAIN_FILE = "src/hot.c", "src/main.c"


def location(d, name, file, line):
    loc = d.d.location_table.add()
    f = d.d.function_table.add()
    f.name_strindex = d.string(name)
    f.filename_strindex = d.string(file)
    ln = loc.lines.add()
    ln.function_index = len(d.d.function_table) - 1
    ln.line = line
    loc.attribute_indices.append(d.attr("profile.frame.type", "native"))
    return len(d.d.location_table) - 1


def build():
    request = service.ExportProfilesServiceRequest()
    d = Dictionary()
    rp = request.resource_profiles.add()
    rp.resource.attributes.append(key_value(d, "service.name", "lines-demo"))
    sp = rp.scope_profiles.add()
    main = location(d, "main", MAIN_FILE, 30)
    body = location(d, "hot_loop", HOT_FILE, 14)
    test = location(d, "hot_loop", HOT_FILE, 13)
    idle = location(d, "idle", "", 0)
    s_body, s_test, s_idle = d.stack([body, main]), d.stack([test, main]), d.stack([idle, main])
    thread = d.attr("thread.name", "worker")
    tid_a, tid_b = d.attr("thread.id", 4243), d.attr("thread.id", 4244)
    profile = sp.profiles.add()
    on_cpu(d, profile, T0)
    # (Unix ns, thread.id, stack): milliseconds that are not multiples of anything in particular.
    times = []
    for k in range(12):
        times.append((T0 * NS + k * 137_000_000 + 5_000_000 + k * 1_003, 4243, s_body))
    for k in range(3):
        times.append(((T0 + 1) * NS + k * 211_000_000 + 42_000_000, 4244, s_test))
    times.append(((T0 + 2) * NS + 999_500_000, 4243, s_idle))
    for ns, tid, stack in times:
        sample(profile, stack, [thread, tid_a if tid == 4243 else tid_b], [ns])
    request.dictionary.CopyFrom(d.d)
    leaf = {s_body: "hot_loop", s_test: "hot_loop", s_idle: "idle"}
    expected = sorted((ns // 1_000_000, tid, leaf[stack]) for ns, tid, stack in times)
    return request, expected


def main():
    request, expected = build()
    answer = send_http(sys.argv[1], request, False, False, None)
    json.dump({"answer": answer, "samples": expected, "time_start": T0,
               "hot": [HOT_FILE, 14]}, sys.stdout)


if __name__ == "__main__":
    main()
