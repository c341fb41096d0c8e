"""Builds OTLP profiles requests with the official `opentelemetry-proto` package (PyPI) and
sends them to Embers over HTTP (urllib) or gRPC (grpcio); prints one JSON object: the answer and
what Embers must have stored (hand-written stacks and microseconds, not derived from Embers).

Used by server/tests/otlp.rs; the venv comes from `scripts/setup.sh --test` (.tools/otlp-venv).

    otlp_client.py http URL [--json] [--gzip] [--token T] [--scenario good|bad]
    otlp_client.py grpc HOST:PORT [--gzip] [--token T] [--scenario good|bad]

The "good" request has the OpenTelemetry eBPF profiler's shape (on-CPU samples/count at 20 Hz
with timestamps, an off-CPU profile in nanoseconds, thread names per sample, frame types per
location, unsymbolized frames with their mapping, a sample linked to a trace) plus an SDK-style
resource with service.name and Kubernetes attributes. "bad" has a stack index out of range.
"""

import argparse
import base64
import gzip
import json
import sys
import urllib.error
import urllib.request

from google.protobuf import json_format
from opentelemetry.proto.collector.profiles.v1development import (
    profiles_service_pb2 as service,
)
from opentelemetry.proto.common.v1 import common_pb2 as common
from opentelemetry.proto.profiles.v1development import profiles_pb2 as pb
from opentelemetry.proto.resource.v1 import resource_pb2 as resource_pb

T0 = 1_700_000_000
NS = 1_000_000_000
PERIOD_NS = 50_000_000  # 20 Hz, the eBPF profiler's default: one sample is 50,000 us
TRACE_ID = bytes(range(0x10, 0x20))
SPAN_ID = bytes([0xAB] * 8)


class Dictionary:
    """ProfilesDictionary tables with their zero entries first, as the spec requires."""

    def __init__(self):
        self.d = pb.ProfilesDictionary()
        self.d.mapping_table.add()
        self.d.location_table.add()
        self.d.function_table.add()
        self.d.link_table.add()
        self.d.string_table.append("")
        self.d.attribute_table.add()
        self.d.stack_table.add()
        self.strings = {"": 0}

    def string(self, s):
        if s not in self.strings:
            self.strings[s] = len(self.d.string_table)
            self.d.string_table.append(s)
        return self.strings[s]

    def attr(self, key, value):
        a = self.d.attribute_table.add()
        a.key_strindex = self.string(key)
        if isinstance(value, int):
            a.value.int_value = value
        else:
            # Reference-based string values (v1.10+), as pdata writes them.
            a.value.string_value_strindex = self.string(value)
        return len(self.d.attribute_table) - 1

    def mapping(self, path):
        m = self.d.mapping_table.add()
        m.filename_strindex = self.string(path)
        m.memory_start, m.memory_limit = 0x400000, 0x800000
        return len(self.d.mapping_table) - 1

    def location(self, functions, frame_type, mapping=0, address=0):
        """`functions` innermost first (inlined callees before their caller)."""
        loc = self.d.location_table.add()
        loc.mapping_index = mapping
        loc.address = address
        for name in functions:
            f = self.d.function_table.add()
            f.name_strindex = self.string(name)
            line = loc.lines.add()
            line.function_index = len(self.d.function_table) - 1
            line.line = 10
        loc.attribute_indices.append(self.attr("profile.frame.type", frame_type))
        return len(self.d.location_table) - 1

    def stack(self, leaf_first):
        s = self.d.stack_table.add()
        s.location_indices.extend(leaf_first)
        return len(self.d.stack_table) - 1

    def link(self, trace_id, span_id):
        link = self.d.link_table.add()
        link.trace_id, link.span_id = trace_id, span_id
        return len(self.d.link_table) - 1

    def value_type(self, vt, kind, unit):
        vt.type_strindex, vt.unit_strindex = self.string(kind), self.string(unit)


def key_value(d, key, value, by_index=False):
    kv = common.KeyValue()
    if by_index:
        kv.key_strindex = d.string(key)
    else:
        kv.key = key
    if isinstance(value, int):
        kv.value.int_value = value
    else:
        kv.value.string_value = value
    return kv


def sample(profile, stack, attrs, stamps=(), values=(), link=0):
    s = profile.samples.add()
    s.stack_index = stack
    s.attribute_indices.extend(attrs)
    s.timestamps_unix_nano.extend(stamps)
    s.values.extend(values)
    s.link_index = link
    return s


def on_cpu(d, profile, start):
    d.value_type(profile.sample_type, "samples", "count")
    d.value_type(profile.period_type, "cpu", "nanoseconds")
    profile.period = PERIOD_NS
    profile.time_unix_nano = start * NS
    profile.duration_nano = 60 * NS


def redis_resource(request, d):
    """A host process seen by the eBPF profiler: no service.name, the executable's name."""
    rp = request.resource_profiles.add()
    rp.resource.attributes.extend(
        [
            key_value(d, "process.executable.name", "redis-server"),
            key_value(d, "process.executable.path", "/usr/bin/redis-server"),
            key_value(d, "process.pid", 4242),
            key_value(d, "host.name", "node-a", by_index=True),
            key_value(d, "k8s.pod.name", "redis-0"),
            key_value(d, "k8s.namespace.name", "cache"),
            key_value(d, "k8s.node.name", "node-a"),
            key_value(d, "k8s.cluster.name", "prod"),
            key_value(d, "k8s.pod.labels.app", "redis"),
            key_value(d, "container.id", "c0ffee"),
        ]
    )
    sp = rp.scope_profiles.add()
    sp.scope.name = "go.opentelemetry.io/ebpf-profiler"
    libc = d.mapping("/usr/lib/x86_64-linux-gnu/libc.so.6")
    jemalloc = d.mapping("/usr/lib/libjemalloc.so.2")
    exe = d.mapping("/usr/bin/redis-server")
    main = d.location(["main"], "native", exe, 0x1100)
    read = d.location(["__libc_read"], "native", libc, 0x2200)
    ksys = d.location(["ksys_read"], "kernel")
    command = d.location(["processCommand"], "native", exe, 0x1300)
    bare = d.location([], "native", jemalloc, 0x1A2B)
    inlined = d.location(["inl_leaf", "caller"], "native", exe, 0x1400)
    epoll = d.location(["epoll_wait"], "native", libc, 0x2300)
    schedule = d.location(["schedule"], "kernel")
    s_read = d.stack([ksys, read, main])
    s_bare = d.stack([bare, command, main])
    s_inl = d.stack([inlined, main])
    s_wait = d.stack([schedule, epoll, main])
    io1, io2, mainth = (d.attr("thread.name", t) for t in ("io-1", "io-2", "main"))
    tid, cpu = d.attr("thread.id", 4243), d.attr("cpu.logical_number", 1)
    link = d.link(TRACE_ID, SPAN_ID)

    cpu_profile = sp.profiles.add()
    on_cpu(d, cpu_profile, T0)
    sample(cpu_profile, s_read, [io1, tid, cpu], [T0 * NS, T0 * NS + NS // 2, (T0 + 1) * NS])
    sample(cpu_profile, s_bare, [mainth, tid], [(T0 + 30) * NS])
    sample(cpu_profile, s_inl, [io2, cpu], [(T0 + 2) * NS], link=link)

    off = sp.profiles.add()
    d.value_type(off.sample_type, "off_cpu", "nanoseconds")
    off.time_unix_nano = T0 * NS
    sample(off, s_wait, [mainth], [(T0 + 3) * NS, (T0 + 3) * NS + 200_000_000],
           values=[2_000_000, 3_000_000])


def checkout_resource(request, d):
    """An instrumented service with Kubernetes attributes, Python frames."""
    rp = request.resource_profiles.add()
    rp.resource.attributes.extend(
        [
            key_value(d, "service.name", "checkout"),
            key_value(d, "service.instance.id", "checkout-1"),
            key_value(d, "k8s.pod.name", "checkout-7f"),
            key_value(d, "k8s.namespace.name", "shop"),
            key_value(d, "k8s.deployment.name", "checkout"),
            key_value(d, "host.name", "node-b"),
            key_value(d, "cloud.region", "eu-west-1"),
            key_value(d, "cloud.availability_zone", "eu-west-1a"),
        ]
    )
    sp = rp.scope_profiles.add()
    handle = d.location(["handle"], "cpython")
    serve = d.location(["serve"], "cpython")
    stack = d.stack([handle, serve])
    thread = d.attr("thread.name", "MainThread")
    profile = sp.profiles.add()
    on_cpu(d, profile, T0 + 20)
    sample(profile, stack, [thread], [(T0 + 10) * NS + i for i in range(4)])
    # Values without timestamps: 3 samples at the profile's time.
    sample(profile, stack, [thread], values=[3])


REDIS_TAGS = {
    "host": "node-a",
    "pod": "redis-0",
    "pod_ns": "cache",
    "pod_node": "node-a",
    "pod_cluster": "prod",
    "k8s.label.app": "redis",
}
CHECKOUT_TAGS = {
    "app_instance": "checkout-1",
    "pod": "checkout-7f",
    "pod_ns": "shop",
    "pod_group": "checkout",
    "host": "node-b",
    "region": "eu-west-1",
    "az": "eu-west-1a",
}
US = PERIOD_NS // 1000
READ = "[t] io-1;main;[l] __libc_read;[k] ksys_read"
# What Embers must store: (app_service, event type, tags, [(second, stack, microseconds)]).
EXPECTED = [
    ("redis-server", "on-cpu", REDIS_TAGS, [
        (T0, READ, 2 * US),
        (T0 + 1, READ, US),
        (T0 + 30, "[t] main;main;processCommand;[libjemalloc.so.2] +0x1a2b", US),
    ]),
    ("redis-server", "on-cpu",
     dict(REDIS_TAGS, trace_id=TRACE_ID.hex(), span_name=SPAN_ID.hex()), [
        (T0 + 2, "[t] io-2;main;caller;inl_leaf", US),
    ]),
    ("redis-server", "off-cpu", REDIS_TAGS, [
        (T0 + 3, "[t] main;main;[l] epoll_wait;[k] schedule", 5_000),
    ]),
    ("checkout", "on-cpu", CHECKOUT_TAGS, [
        (T0 + 10, "[t] MainThread;serve;handle", 4 * US),
        (T0 + 20, "[t] MainThread;serve;handle", 3 * US),
    ]),
]


def build(scenario):
    request = service.ExportProfilesServiceRequest()
    d = Dictionary()
    redis_resource(request, d)
    checkout_resource(request, d)
    if scenario == "bad":
        request.resource_profiles[1].scope_profiles[0].profiles[0].samples[1].stack_index = 999
    request.dictionary.CopyFrom(d.d)
    return request


def otlp_json(request):
    """OTLP/JSON: proto3 JSON, except that trace and span ids are hex, not base64."""
    body = json_format.MessageToDict(request)
    for link in body.get("dictionary", {}).get("linkTable", []):
        for key in ("traceId", "spanId"):
            if key in link:
                link[key] = base64.b64decode(link[key]).hex()
    return json.dumps(body).encode()


def send_http(url, request, as_json, compress, token):
    body = otlp_json(request) if as_json else request.SerializeToString()
    headers = {"Content-Type": "application/json" if as_json else "application/x-protobuf"}
    if compress:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url + "/v1development/profiles", body, headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            status, ctype, data = answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as e:
        status, ctype, data = e.code, e.headers["Content-Type"], e.read()
    message = ""
    if status != 200 and ctype == "application/x-protobuf":
        message = decode_status(data)
    elif status != 200:
        message = data.decode("utf-8", "replace")
    elif ctype == "application/x-protobuf":
        # The success body must be an ExportProfilesServiceResponse.
        service.ExportProfilesServiceResponse.FromString(data)
    return {"status": status, "content_type": ctype, "message": message}


def decode_status(data):
    """google.rpc.Status {code = 1, message = 2}, read with the protobuf runtime."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = descriptor_pb2.FileDescriptorProto(name="embers_status.proto", package="embers")
    msg = proto.message_type.add(name="Status")
    msg.field.add(name="code", number=1, type=5, label=1)
    msg.field.add(name="message", number=2, type=9, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("embers.Status"))
    status = cls.FromString(data)
    return f"{status.code}: {status.message}"


def send_grpc(addr, request, compress, token):
    import grpc
    from opentelemetry.proto.collector.profiles.v1development import (
        profiles_service_pb2_grpc as grpc_service,
    )

    with grpc.insecure_channel(addr) as channel:
        stub = grpc_service.ProfilesServiceStub(channel)
        metadata = [("authorization", "Bearer " + token)] if token else None
        compression = grpc.Compression.Gzip if compress else grpc.Compression.NoCompression
        try:
            stub.Export(request, timeout=30, metadata=metadata, compression=compression)
            return {"status": "OK", "message": ""}
        except grpc.RpcError as e:
            return {"status": e.code().name, "message": e.details()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("transport", choices=["http", "grpc"])
    p.add_argument("address")
    p.add_argument("--json", action="store_true")
    p.add_argument("--gzip", action="store_true")
    p.add_argument("--token")
    p.add_argument("--scenario", choices=["good", "bad"], default="good")
    args = p.parse_args()
    request = build(args.scenario)
    if args.transport == "http":
        answer = send_http(args.address, request, args.json, args.gzip, args.token)
    else:
        answer = send_grpc(args.address, request, args.gzip, args.token)
    expected = [
        {"app_service": a, "event": e, "tags": t, "rows": rows} for a, e, t, rows in EXPECTED
    ]
    json.dump({"answer": answer, "expected": expected}, sys.stdout)


if __name__ == "__main__":
    main()
