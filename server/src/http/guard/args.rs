//! The command-line options of the guard (flattened into `serve`'s options), the [`Guard`] they
//! make, and the warning `serve` gives when it listens beyond loopback without tokens.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use embers_model::contract::embed::normalize_origin;

use super::rules::{host_name, Hosts};
use super::token::{Token, Tokens};
use super::Guard;

/// Who may use the service.
#[derive(Debug, Clone, Default, Args)]
pub struct GuardArgs {
    /// A host name clients use to reach the service (repeatable; `*` accepts any). IP
    /// addresses and `localhost` are always accepted; other names, e.g. the one a reverse
    /// proxy forwards, must be listed.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// An origin (https://portal.example.com) whose pages may call the API from the browser:
    /// answered with CORS, and allowed to send writes (repeatable) [default: none besides the
    /// service's own].
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allow_origins: Vec<String>,
    /// An origin whose pages may embed the viewer in a frame and drive it with postMessage
    /// (repeatable) [default: none besides the service's own].
    #[arg(long = "embed-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub embed_origins: Vec<String>,
    /// File holding the token that writes (ingest, saving and deleting snapshots) need as
    /// `Authorization: Bearer <token>`.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// File holding the token that queries need (the --token-file token is accepted too;
    /// without --token-file, writes need this one).
    #[arg(long, value_name = "FILE")]
    pub query_token_file: Option<PathBuf>,
    /// Honour `"debug": true` in requests: answer the statements run and the detail of
    /// failures in `debug`, and forward it to the --upstream querier. Off, it is ignored.
    #[arg(long)]
    pub allow_debug: bool,
}

/// The warning for a service listening on `addr` with `args`: beyond loopback, without tokens,
/// anyone who reaches the port may write and delete.
pub fn exposure_warning(addr: &SocketAddr, args: &GuardArgs) -> Option<String> {
    if addr.ip().is_loopback() || args.token_file.is_some() || args.query_token_file.is_some() {
        return None;
    }
    Some(format!(
        "listening on {addr}, beyond loopback, without access tokens: anyone who reaches this \
         port may ingest, save and delete; give writes a token with --token-file FILE (and \
         queries one with --query-token-file FILE)"
    ))
}

fn parse_origin(text: &str) -> Result<String, String> {
    normalize_origin(text).map_err(|e| e.to_string())
}

impl GuardArgs {
    /// The guard for a service listening on `listen` (its host is accepted too, when a name).
    pub fn guard(&self, listen: &str) -> Result<Guard, String> {
        let hosts = if self.allowed_hosts.iter().any(|h| h.trim() == "*") {
            Hosts::Any
        } else {
            let mut names = vec!["localhost".to_owned()];
            names.extend(host_name(listen));
            for host in &self.allowed_hosts {
                names.push(
                    host_name(host)
                        .ok_or_else(|| format!("--allowed-host {host:?} is not a host name"))?,
                );
            }
            names.sort();
            names.dedup();
            Hosts::Names(names)
        };
        let read = |path: &Option<PathBuf>| path.as_deref().map(Token::read).transpose();
        let tokens = Tokens {
            write: read(&self.token_file)?,
            read: read(&self.query_token_file)?,
        };
        Ok(Guard::new(
            hosts,
            self.allow_origins.clone(),
            self.embed_origins.clone(),
            tokens,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_the_listen_address_and_the_options() {
        let args = GuardArgs {
            allowed_hosts: vec!["Embers.Example:443".into()],
            ..GuardArgs::default()
        };
        let guard = args.guard("myhost:8080").unwrap();
        assert_eq!(
            guard.hosts,
            Hosts::Names(vec![
                "embers.example".into(),
                "localhost".into(),
                "myhost".into()
            ])
        );
        let any = GuardArgs {
            allowed_hosts: vec!["*".into()],
            ..GuardArgs::default()
        };
        assert_eq!(any.guard("0.0.0.0:80").unwrap().hosts, Hosts::Any);
        let bad = GuardArgs {
            allowed_hosts: vec!["a/b".into()],
            ..GuardArgs::default()
        };
        assert!(bad.guard("127.0.0.1:0").unwrap_err().contains("a/b"));
        assert!(
            parse_origin("https://Portal.example/").is_ok_and(|o| o == "https://portal.example")
        );
        assert!(parse_origin("portal.example").is_err());
    }

    #[test]
    fn only_an_open_port_beyond_loopback_is_warned_about() {
        let open = GuardArgs::default();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let warning = exposure_warning(&any, &open).expect("warned");
        assert!(warning.contains("--token-file"), "{warning}");
        // One line of prose: the source's line breaks are not in the message.
        assert!(!warning.contains("  "), "{warning}");
        assert!(exposure_warning(&"[::]:1".parse().unwrap(), &open).is_some());
        assert!(exposure_warning(&"127.0.0.1:8080".parse().unwrap(), &open).is_none());
        assert!(exposure_warning(&"[::1]:8080".parse().unwrap(), &open).is_none());
        let tokens = GuardArgs {
            token_file: Some("t".into()),
            ..GuardArgs::default()
        };
        assert!(exposure_warning(&any, &tokens).is_none());
    }

    #[test]
    fn token_files_are_read_at_start() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (good, empty) = (dir.join("good"), dir.join("empty"));
        std::fs::write(&good, "s3cret\n").unwrap();
        std::fs::write(&empty, "\n").unwrap();
        let args = |path: &std::path::Path| GuardArgs {
            token_file: Some(path.to_path_buf()),
            ..GuardArgs::default()
        };
        assert!(args(&good).guard("127.0.0.1:0").unwrap().tokens.any());
        assert!(args(&empty)
            .guard("127.0.0.1:0")
            .unwrap_err()
            .contains("empty"));
        assert!(args(&dir.join("missing"))
            .guard("x:1")
            .unwrap_err()
            .contains("cannot read"));
    }
}
