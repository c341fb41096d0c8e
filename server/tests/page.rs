//! The page's security headers over real HTTP: CSP with `frame-ancestors` from
//! `--embed-origin`, `nosniff`, the referrer policy, `GET /embers-config.json`, and a missing
//! content-hashed asset answered 404 while client routes still get `index.html`.

use crate::common;

use std::sync::Arc;

use common::http::send;
use common::{TempDb, TestServer};
use embers_server::http::guard::args::GuardArgs;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn the_page_gets_security_headers_and_missing_assets_are_404() {
    let db = TempDb::new();
    let dist = db.dir.path().join("dist");
    std::fs::create_dir_all(&dist).expect("mkdir");
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><title>Embers</title>",
    )
    .expect("write");
    std::fs::write(dist.join("embers-0123456789abcdef.js"), "export {}").expect("write");
    let args = GuardArgs {
        embed_origins: vec![
            "http://portal.example:8443".into(),
            "https://b.example".into(),
        ],
        ..GuardArgs::default()
    };
    let guard = Arc::new(args.guard("127.0.0.1:0").expect("guard"));
    let server = TestServer::start_with(&db.path(), |s| {
        s.static_dir = Some(dist.clone());
        s.guard = guard;
    })
    .await;
    for path in [
        "/",
        "/some/client/route",
        "/embers-0123456789abcdef.js",
        "/v1/nope",
        "/healthz",
    ] {
        let a = send(&server, Method::GET, path, &[], "").await;
        let csp = a.header("content-security-policy");
        assert!(
            csp.contains("script-src 'self' 'wasm-unsafe-eval';"),
            "{path}: {csp}"
        );
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(
            csp.ends_with("frame-ancestors 'self' http://portal.example:8443 https://b.example"),
            "{csp}"
        );
        assert_eq!(a.header("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(a.header("referrer-policy"), "same-origin", "{path}");
    }
    let a = send(&server, Method::GET, "/embers-config.json", &[], "").await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.body,
        json!({"embed_origins": ["http://portal.example:8443", "https://b.example"]})
    );
    assert!(a.header("content-type").starts_with("application/json"));
    for missing in [
        "/embers-fedcba9876543210.js",
        "/embers-fedcba9876543210_bg.wasm",
        "/main-fedcba9876543210.css",
        // Trunk's hashes lose leading zeros; the boot file is the externalised boot script.
        "/embers-c576ffce998945_bg.wasm",
        "/embers-boot-0123456789abcdef.js",
        "/decode_worker_loader.js",
    ] {
        let a = send(&server, Method::GET, missing, &[], "").await;
        assert_eq!(a.status, 404, "{missing}: {}", a.body);
        assert!(
            !a.body.to_string().contains("<title>"),
            "{missing} is not the page"
        );
    }
    let a = send(&server, Method::GET, "/some/client/route", &[], "").await;
    assert_eq!(a.status, 200);
    assert!(a.body.to_string().contains("<title>Embers</title>"));
    server.stop().await;

    // By default only the service's own pages may frame it.
    let server = TestServer::start(&db.path()).await;
    let a = send(&server, Method::GET, "/embers-config.json", &[], "").await;
    assert_eq!(a.body, json!({"embed_origins": []}));
    assert!(a
        .header("content-security-policy")
        .ends_with("frame-ancestors 'self'"));
    server.stop().await;
}
