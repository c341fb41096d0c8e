//! Event types, language types and the defaults of a request, and what an event type implies:
//! which support the per-host `Total` graph, and what their values measure ([`measure`]).

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

/// What the values of an event type measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Time on the CPU (`on-cpu`).
    CpuTime,
    /// Time off the CPU, waiting (`off-cpu`).
    WaitingTime,
    /// Bytes allocated over the range (`mem-alloc`, `hbm-alloc`).
    Allocated,
    /// Bytes still allocated (`mem-inuse`, `hbm-inuse`).
    InUse,
    /// An event type this contract does not know.
    Other,
}

/// What `event_type`'s values measure: the CPU events by name, the memory events (host or
/// HBM) by their `-alloc`/`-inuse` suffix.
pub fn measure(event_type: &str) -> Measure {
    match event_type {
        "on-cpu" => Measure::CpuTime,
        "off-cpu" => Measure::WaitingTime,
        e if is_memory_event(e) && e.ends_with("-alloc") => Measure::Allocated,
        e if is_memory_event(e) && e.ends_with("-inuse") => Measure::InUse,
        _ => Measure::Other,
    }
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
    fn every_event_type_has_a_measure() {
        let measures: Vec<Measure> = EVENT_TYPES.iter().map(|e| measure(e)).collect();
        use Measure::*;
        assert_eq!(
            measures,
            [CpuTime, WaitingTime, Allocated, InUse, Allocated, InUse]
        );
        assert_eq!(measure("mem-other"), Other);
        assert_eq!(measure("cpu"), Other);
    }
}
