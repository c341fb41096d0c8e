//! Event types, language types and the defaults of a request, and what an event type implies:
//! which support the per-host `Total` graph, what its values are a number of ([`quantity`],
//! the one event type → unit mapping the service stores and the viewer formats by) and what
//! they measure ([`measure`]). eBPF event types are DeepFlow's agent's; the language SDKs'
//! ([`SDK_EVENT_TYPES`]) are Pyroscope's names, which DeepFlow stores as they come.

/// The fixed value of `app_service` that asks for the per-host graph.
pub const TOTAL_APP_SERVICE: &str = "Total";

/// eBPF event types the querier knows, in menu order.
pub const EVENT_TYPES: [&str; 6] = [
    "on-cpu",
    "off-cpu",
    "mem-alloc",
    "mem-inuse",
    "hbm-alloc",
    "hbm-inuse",
];

/// Language types the querier knows, in menu order (`eBPF` is the agent's own data).
pub const LANGUAGE_TYPES: [&str; 8] = [
    "eBPF", "Golang", "Java", "python", "ruby", "PHP", "dotnet", "Node",
];

/// Pyroscope's `spyName` → `profile_language_type`, exactly as DeepFlow's ingester maps them
/// (its map also has `eBPF` → `eBPF`; `ebpfspy`, Pyroscope's own eBPF agent, is Embers'
/// addition).
pub const SPY_LANGUAGES: [(&str, &str); 9] = [
    ("gospy", "Golang"),
    ("javaspy", "Java"),
    ("pyspy", "python"),
    ("rbspy", "ruby"),
    ("phpspy", "PHP"),
    ("dotnetspy", "dotnet"),
    ("nodespy", "Node"),
    ("eBPF", "eBPF"),
    ("ebpfspy", "eBPF"),
];

/// The language type of a Pyroscope `spyName`, when it is one DeepFlow knows.
pub fn language_of_spy(spy_name: &str) -> Option<&'static str> {
    SPY_LANGUAGES
        .iter()
        .find(|(spy, _)| *spy == spy_name)
        .map(|(_, language)| *language)
}

/// `profile_language_type` when none is given: the agent's own eBPF data.
pub const DEFAULT_LANGUAGE: &str = "eBPF";
/// `profile_event_type` when none is given.
pub const DEFAULT_EVENT_TYPE: &str = "on-cpu";
/// `profile_value_unit` of stored samples (DeepFlow labels every eBPF event type so).
pub const DEFAULT_UNIT: &str = "microseconds";

/// Whether an event type profiles memory: its values are bytes (though stored as
/// "microseconds") and the leaves of its stacks are allocated object types.
pub fn is_memory_event(event_type: &str) -> bool {
    event_type.starts_with("mem-") || event_type.starts_with("hbm-")
}

/// The event types of language SDK profiles (Pyroscope's names, which DeepFlow stores as they
/// come), the `profile_value_unit` DeepFlow stores with each (its `dbwriter/profile.go`), and
/// what their values measure.
pub const SDK_EVENT_TYPES: [(&str, &str, Measure); 18] = [
    ("cpu", "samples", Measure::CpuSamples),
    ("itimer", "samples", Measure::CpuSamples),
    ("wall", "samples", Measure::WallSamples),
    ("inuse_objects", "objects", Measure::ObjectsInUse),
    ("alloc_objects", "objects", Measure::AllocatedObjects),
    (
        "alloc_in_new_tlab_objects",
        "objects",
        Measure::AllocatedObjects,
    ),
    (
        "alloc_outside_tlab_objects",
        "objects",
        Measure::AllocatedObjects,
    ),
    ("inuse_space", "bytes", Measure::InUse),
    ("alloc_space", "bytes", Measure::Allocated),
    ("alloc_in_new_tlab_bytes", "bytes", Measure::Allocated),
    ("alloc_outside_tlab_bytes", "bytes", Measure::Allocated),
    ("goroutines", "goroutines", Measure::Goroutines),
    ("mutex_duration", "lock_nanoseconds", Measure::LockTime),
    ("block_duration", "lock_nanoseconds", Measure::BlockedTime),
    ("lock_duration", "lock_nanoseconds", Measure::LockTime),
    ("mutex_count", "lock_samples", Measure::Contentions),
    ("block_count", "lock_samples", Measure::BlockingEvents),
    ("lock_count", "lock_samples", Measure::Contentions),
];

/// The [`SDK_EVENT_TYPES`] entry of `event_type`.
fn sdk_event(event_type: &str) -> Option<&'static (&'static str, &'static str, Measure)> {
    SDK_EVENT_TYPES.iter().find(|(e, _, _)| *e == event_type)
}

/// What a stored value is a number of: the one mapping from event types to units that the
/// service stores (`profile_value_unit`) and the viewer formats values by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Quantity {
    /// Microseconds: every eBPF time event (and the label DeepFlow gives its memory events).
    #[default]
    Microseconds,
    /// Nanoseconds (`lock_nanoseconds`: time waiting for a lock or blocked).
    Nanoseconds,
    /// Bytes.
    Bytes,
    /// Samples taken at a fixed interval (CPU time counted in ticks).
    Samples,
    /// Allocated or live objects.
    Objects,
    /// Goroutines.
    Goroutines,
    /// Lock contentions or blocking events (`lock_samples`).
    Events,
}

impl Quantity {
    /// The `profile_value_unit` DeepFlow stores for values of this quantity.
    pub fn unit_label(self) -> &'static str {
        match self {
            Quantity::Microseconds => DEFAULT_UNIT,
            Quantity::Nanoseconds => "lock_nanoseconds",
            Quantity::Bytes => "bytes",
            Quantity::Samples => "samples",
            Quantity::Objects => "objects",
            Quantity::Goroutines => "goroutines",
            Quantity::Events => "lock_samples",
        }
    }

    /// The quantity a stored unit label names (Pyroscope's `units` values and ours).
    pub fn from_unit_label(unit: &str) -> Option<Quantity> {
        Some(match unit {
            "microseconds" => Quantity::Microseconds,
            "lock_nanoseconds" | "nanoseconds" => Quantity::Nanoseconds,
            "bytes" => Quantity::Bytes,
            "samples" => Quantity::Samples,
            "objects" => Quantity::Objects,
            "goroutines" => Quantity::Goroutines,
            "lock_samples" => Quantity::Events,
            _ => return None,
        })
    }
}

/// What the values of `event_type` are: the eBPF events in microseconds (memory ones really in
/// bytes), the SDK events by [`SDK_EVENT_TYPES`], other names by their suffix (`_bytes`,
/// `_space`, `_objects`, `_duration`, `_count`), anything else microseconds as eBPF data.
pub fn quantity(event_type: &str) -> Quantity {
    if is_memory_event(event_type) {
        return Quantity::Bytes;
    }
    if let Some((_, unit, _)) = sdk_event(event_type) {
        return Quantity::from_unit_label(unit).unwrap_or_default();
    }
    let suffix = event_type.rsplit('_').next().unwrap_or("");
    match suffix {
        "bytes" | "space" => Quantity::Bytes,
        "objects" => Quantity::Objects,
        "duration" | "nanoseconds" => Quantity::Nanoseconds,
        "count" => Quantity::Events,
        "samples" => Quantity::Samples,
        _ => Quantity::Microseconds,
    }
}

/// The `profile_value_unit` stored with samples of `event_type` ([`quantity`]'s label, except
/// that DeepFlow labels its memory events `microseconds` too).
pub fn unit_of(event_type: &str) -> &'static str {
    if is_memory_event(event_type) {
        DEFAULT_UNIT
    } else {
        quantity(event_type).unit_label()
    }
}

/// What the values of an event type measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Time on the CPU (`on-cpu`).
    CpuTime,
    /// Time off the CPU, waiting (`off-cpu`).
    WaitingTime,
    /// Bytes allocated over the range (`mem-alloc`, `hbm-alloc`, `alloc_space`, ...).
    Allocated,
    /// Bytes still allocated (`mem-inuse`, `hbm-inuse`, `inuse_space`).
    InUse,
    /// CPU time counted in samples (`cpu`, `itimer`).
    CpuSamples,
    /// Wall-clock time counted in samples (`wall`).
    WallSamples,
    /// Objects allocated over the range (`alloc_objects`, ...).
    AllocatedObjects,
    /// Objects still allocated (`inuse_objects`).
    ObjectsInUse,
    /// Goroutines (`goroutines`).
    Goroutines,
    /// Time waiting for locks (`mutex_duration`, `lock_duration`).
    LockTime,
    /// Time blocked (`block_duration`).
    BlockedTime,
    /// Lock contentions (`mutex_count`, `lock_count`).
    Contentions,
    /// Blocking events (`block_count`).
    BlockingEvents,
    /// An event type this contract does not know.
    Other,
}

/// What `event_type`'s values measure: the CPU events by name, the memory events (host or
/// HBM) by their `-alloc`/`-inuse` suffix, the SDK events by [`SDK_EVENT_TYPES`].
pub fn measure(event_type: &str) -> Measure {
    match event_type {
        "on-cpu" => Measure::CpuTime,
        "off-cpu" => Measure::WaitingTime,
        e if is_memory_event(e) && e.ends_with("-alloc") => Measure::Allocated,
        e if is_memory_event(e) && e.ends_with("-inuse") => Measure::InUse,
        e => sdk_event(e).map_or(Measure::Other, |(_, _, m)| *m),
    }
}

/// DeepFlow's instant event types (its querier's `InstanceProfileEventType`): each upload is a
/// snapshot of what is live (bytes or objects in use, goroutines), so a range is read as the
/// latest snapshot of each process (Embers: each app_service and tag set) summed over processes,
/// never as the sum of every snapshot in it (an hour of uploads every 10 s would read 360 times
/// the memory in use). `hbm-inuse` is not in DeepFlow's list and is summed as DeepFlow sums it.
pub const INSTANT_EVENT_TYPES: [&str; 4] =
    ["inuse_objects", "inuse_space", "goroutines", "mem-inuse"];

/// Whether `event_type` is an instant ([`INSTANT_EVENT_TYPES`]): the one rule every reader of
/// a range (flame graph, explore, functions, compare, pprof, MCP) follows.
pub fn is_instant(event_type: &str) -> bool {
    INSTANT_EVENT_TYPES.contains(&event_type)
}

/// The event types a query form offers: the CPU ones always, the memory ones (host and HBM)
/// only when `present` (the event types with data in the form's range) has them, then every
/// other event type present (the SDKs': `inuse_space`, `cpu`, ...) in its order, and `selected`
/// wherever it is not already listed, so a question asked by link keeps its event type.
pub fn event_menu(present: &[String], selected: &str) -> Vec<String> {
    let has = |e: &str| present.iter().any(|p| p == e);
    let mut out: Vec<String> = EVENT_TYPES
        .iter()
        .filter(|e| !is_memory_event(e) || has(e))
        .map(|e| (*e).to_owned())
        .collect();
    for e in present.iter().map(String::as_str).chain([selected]) {
        if !e.is_empty() && !out.iter().any(|o| o == e) {
            out.push(e.to_owned());
        }
    }
    out
}

/// Whether the per-host (`Total`) graph exists for an event type: on-CPU only.
pub fn supports_whole_host(event_type: &str) -> bool {
    event_type == "on-cpu"
}

/// The event type whose values add up with `event_type`'s into wall-clock time: on-CPU (running)
/// and off-CPU (waiting) are both microseconds of one thread's time.
pub fn wall_partner(event_type: &str) -> Option<&'static str> {
    match event_type {
        "on-cpu" => Some("off-cpu"),
        "off-cpu" => Some("on-cpu"),
        _ => None,
    }
}

/// Whether a language type is the agent's eBPF data, for which `max_kernel_stack_depth` applies.
pub fn is_ebpf(language: &str) -> bool {
    language.eq_ignore_ascii_case(DEFAULT_LANGUAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_events_and_whole_host_support() {
        assert!(is_memory_event("mem-alloc") && is_memory_event("hbm-inuse"));
        assert!(!is_memory_event("on-cpu") && !is_memory_event("off-cpu"));
        assert!(supports_whole_host("on-cpu"));
        assert_eq!(wall_partner("on-cpu"), Some("off-cpu"));
        assert_eq!(wall_partner("off-cpu"), Some("on-cpu"));
        assert_eq!(wall_partner("mem-alloc"), None);
        assert!(!EVENT_TYPES[1..].iter().any(|e| supports_whole_host(e)));
        assert!(is_ebpf("ebpf") && !is_ebpf("Java"));
    }

    #[test]
    fn in_use_event_types_are_instants_as_deepflow_reads_them() {
        for e in ["inuse_space", "inuse_objects", "goroutines", "mem-inuse"] {
            assert!(is_instant(e), "{e}");
        }
        for e in [
            "on-cpu",
            "mem-alloc",
            "alloc_space",
            "cpu",
            "hbm-inuse",
            "Mem-Inuse",
        ] {
            assert!(!is_instant(e), "{e}");
        }
    }

    #[test]
    fn memory_event_types_are_offered_only_with_data() {
        let menu = |present: &[&str], selected| {
            let present: Vec<String> = present.iter().map(|e| (*e).to_owned()).collect();
            event_menu(&present, selected)
        };
        assert_eq!(menu(&[], "on-cpu"), ["on-cpu", "off-cpu"]);
        assert_eq!(
            menu(&["inuse_space", "mem-inuse", "on-cpu"], "on-cpu"),
            ["on-cpu", "off-cpu", "mem-inuse", "inuse_space"]
        );
        assert_eq!(menu(&[], "mem-alloc"), ["on-cpu", "off-cpu", "mem-alloc"]);
    }

    #[test]
    fn every_event_type_has_a_measure() {
        let measures: Vec<Measure> = EVENT_TYPES.iter().map(|e| measure(e)).collect();
        use Measure::*;
        assert_eq!(
            measures,
            [CpuTime, WaitingTime, Allocated, InUse, Allocated, InUse]
        );
        assert_eq!(measure("mem-other"), Other);
        assert_eq!(measure("cpu"), CpuSamples);
        assert_eq!(measure("frobs"), Other);
    }

    #[test]
    fn every_sdk_event_type_has_its_deepflow_unit_and_a_measure() {
        for (event, unit, _) in SDK_EVENT_TYPES {
            assert_eq!(unit_of(event), unit, "{event}");
            assert_ne!(measure(event), Measure::Other, "{event}");
        }
        assert_eq!(quantity("inuse_space"), Quantity::Bytes);
        assert_eq!(quantity("mutex_duration"), Quantity::Nanoseconds);
        assert_eq!(quantity("cpu"), Quantity::Samples);
        assert_eq!(quantity("on-cpu"), Quantity::Microseconds);
        assert_eq!(quantity("mem-alloc"), Quantity::Bytes);
        assert_eq!(unit_of("mem-alloc"), "microseconds");
        assert_eq!(quantity("my_heap_bytes"), Quantity::Bytes);
        assert_eq!(quantity("custom"), Quantity::Microseconds);
        assert_eq!(
            Quantity::from_unit_label("lock_samples"),
            Some(Quantity::Events)
        );
        assert_eq!(Quantity::from_unit_label("furlongs"), None);
    }
}
