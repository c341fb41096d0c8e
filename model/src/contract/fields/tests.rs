//! Tests of the field table: resolving names, aliases and open families, the key charset,
//! the wording of resolve errors, and the names the viewer offers.

use super::*;

#[test]
fn resolves_columns_aliases_and_families() {
    assert_eq!(
        resolve("pod").map(|f| f.name().to_owned()),
        Ok("pod".to_owned())
    );
    assert_eq!(
        resolve("vtap").map(|f| f.name().to_owned()),
        Ok("agent".to_owned())
    );
    match resolve("k8s.label.app.kubernetes.io/name") {
        Ok(FieldRef::Open { family, name }) => {
            assert_eq!(family, Family::K8sLabel);
            assert_eq!(name, "k8s.label.app.kubernetes.io/name");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        resolve("k8s.label"),
        Err(ResolveError::MissingKey(Family::K8sLabel))
    );
    assert_eq!(
        resolve("cloud.tag."),
        Err(ResolveError::MissingKey(Family::CloudTag))
    );
    assert_eq!(resolve("Pod"), Err(ResolveError::Unknown("Pod".into())));
    assert!(resolve("k8s.labels.app").is_err());
}

#[test]
fn open_keys_are_kubernetes_keys() {
    for good in [
        "k8s.annotation.example.com/v-1_x",
        "cloud.tag.Team",
        "k8s.env.A_1",
    ] {
        assert!(resolve(good).is_ok(), "{good}");
    }
    let longest = format!("k8s.label.{}", "a".repeat(MAX_KEY_LEN));
    assert!(resolve(&longest).is_ok());
    for bad in [
        "k8s.label.a\\",
        "k8s.label.a`b",
        "k8s.label.a b",
        "k8s.label.a'b",
        "k8s.env.a\nb",
        "cloud.tag.é",
        "k8s.label.a)--",
        &format!("{longest}a"),
    ] {
        let e = resolve(bad).unwrap_err();
        assert!(matches!(e, ResolveError::InvalidKey(..)), "{bad}: {e:?}");
        assert!(e.to_string().contains("letters, digits"), "{e}");
    }
}

#[test]
fn resolve_errors_say_what_to_write() {
    let e = resolve("nope").unwrap_err().to_string();
    assert!(
        e.starts_with("unknown tag 'nope'; known tags: _id, time,"),
        "{e}"
    );
    assert!(e.ends_with("agent, vtap, and k8s.label.<key>, k8s.annotation.<key>, k8s.env.<key>, cloud.tag.<key>"), "{e}");
    assert_eq!(
        resolve("k8s.env").unwrap_err().to_string(),
        "tag family 'k8s.env' needs a key, e.g. k8s.env.app"
    );
}

#[test]
fn names_are_plain_identifiers() {
    for def in FIELDS {
        assert!(def
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()));
    }
}

#[test]
fn every_offered_name_resolves_once_completed() {
    for name in offered_names() {
        let complete = if name.ends_with('.') {
            format!("{name}key")
        } else {
            name.clone()
        };
        assert!(resolve(&complete).is_ok(), "{name}");
    }
    assert!(offered_names().iter().any(|n| n == "k8s.label."));
    assert!(!offered_names().iter().any(|n| n == "tag."));
}
