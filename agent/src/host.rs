//! The machine's own tags: `host` and `host_hostname` (its hostname) and `host_ip` (the
//! address it would reach the outside from). `--tag` overrides any of them, e.g. in a
//! Kubernetes pod, whose hostname is the pod's: `--tag host=$(NODE_NAME)`.

use std::collections::BTreeMap;
use std::net::{IpAddr, UdpSocket};

use serde_json::Value;

/// This machine's hostname.
pub fn hostname() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The local address of the route to a public address: connecting a UDP socket sends
/// nothing, it only picks the route.
pub fn primary_ip() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_unspecified()).then_some(ip)
}

/// The tags every batch carries: the machine's, then the user's (which win).
pub fn tags(
    hostname: Option<String>,
    ip: Option<IpAddr>,
    user: &BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    let mut tags = BTreeMap::new();
    if let Some(h) = hostname {
        tags.insert("host".to_owned(), Value::from(h.clone()));
        tags.insert("host_hostname".to_owned(), Value::from(h));
    }
    if let Some(ip) = ip {
        tags.insert("host_ip".to_owned(), Value::from(ip.to_string()));
    }
    tags.extend(user.iter().map(|(k, v)| (k.clone(), v.clone())));
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_tags_and_user_overrides() {
        let user = BTreeMap::from([
            ("host".to_owned(), Value::from("node-7")),
            ("region".to_owned(), Value::from("eu")),
        ]);
        let t = tags(Some("box".into()), "10.0.0.5".parse().ok(), &user);
        assert_eq!(t["host"], "node-7");
        assert_eq!(t["host_hostname"], "box");
        assert_eq!(t["host_ip"], "10.0.0.5");
        assert_eq!(t["region"], "eu");
        assert!(tags(None, None, &BTreeMap::new()).is_empty());
        assert!(hostname().is_some(), "Linux always has one");
    }
}
