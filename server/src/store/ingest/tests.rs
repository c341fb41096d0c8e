//! Unit tests of ingest (`super`): batches checked and stored once, in one transaction.

use super::*;

#[test]
fn tags_accept_known_names_and_reject_others() {
    let mut t = Tags::new();
    assert!(t.set("host", "node-a").is_ok());
    assert!(t.set("vtap", "agent-1").is_ok());
    assert_eq!(t.column("agent"), Some("agent-1"));
    assert!(t.set("k8s.label.app", "web").is_ok());
    assert!(t.set("is_ipv4", "1").is_ok());
    assert!(t.set("is_ipv4", "yes").unwrap_err().contains("integer"));
    assert!(t.set("colour", "red").unwrap_err().contains("unknown tag"));
    assert!(t.set("time", "1").unwrap_err().contains("per-sample"));
    assert!(t.set("k8s.env", "x").unwrap_err().contains("needs a key"));
}

#[test]
fn fingerprints_differ_by_any_tag() {
    let meta = |tags: Tags| BatchMeta {
        app_service: "a".into(),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags,
    };
    let a = fingerprint(&meta(Tags::new().with("host", "x").expect("tag")));
    let b = fingerprint(&meta(Tags::new().with("pod", "x").expect("tag")));
    let c = fingerprint(&meta(Tags::new().with("k8s.label.host", "x").expect("tag")));
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert_eq!(
        a,
        fingerprint(&meta(Tags::new().with("host", "x").expect("tag")))
    );
}

#[test]
fn empty_frames_are_found_wherever_they_are() {
    let batch = |stack: &str| Batch {
        meta: BatchMeta {
            app_service: "a".into(),
            language: "eBPF".into(),
            event_type: "on-cpu".into(),
            unit: "microseconds".into(),
            tags: Tags::new(),
        },
        samples: vec![Sample {
            time: 1,
            stack: stack.into(),
            value: 1,
            detail: None,
        }],
    };
    for stack in ["", ";", ";a", "a;", "a;;b", "a;b;;", ";;", "a;;;b"] {
        assert!(stack.split(';').any(str::is_empty), "{stack}");
        assert!(validate(&[batch(stack)]).is_err(), "{stack:?}");
    }
    for stack in ["a", "a;b", "[t] x;[k] y; z", " ; "] {
        assert!(validate(&[batch(stack)]).is_ok(), "{stack:?}");
    }
}
