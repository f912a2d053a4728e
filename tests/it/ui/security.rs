//! Who may use `memoir ui`: only loopback addresses are bound; a request must name this
//! machine in `Host`; a page of another site (its `Origin`) is refused; a write without the
//! launch token of the served page is refused and writes nothing.

use std::net::TcpListener;

use serde_json::json;

use super::{cli_at, json, seeded, Ui, T0};
use crate::common::memoir;

#[test]
fn non_loopback_addresses_are_refused_before_anything_listens() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let any = format!("0.0.0.0:{port}");
    for addr in [any.as_str(), "192.0.2.1:1", "[::]:0", "10.1.2.3:8766"] {
        let o = memoir()
            .args(["ui", "--addr", addr, "--store"])
            .arg(&store)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{addr}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a loopback address"), "{addr}: {err}");
    }
    // Nothing listens on the port the refused address named.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    // A store that is not one is refused before listening, too (exit 3).
    let o = memoir()
        .args(["ui", "--addr", "127.0.0.1:0", "--store"])
        .arg(dir.path().join("nothing"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn foreign_origins_and_missing_tokens_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let ui = Ui::start(&store, &[]);
    let body = json!({"content": "injected", "paths": ["evil.write"]}).to_string();
    let ct = ("Content-Type", "application/json");
    let token = ("X-Memoir-Token", ui.token.as_str());
    let page = ("Origin", ui.base.as_str());
    let refused = |headers: &[(&str, &str)], what: &str| {
        let (code, text) = ui.raw("POST", "/api/remember", headers, &body);
        assert_eq!(code, 403, "{what}: {text}");
        assert_eq!(json(&text)["success"], false, "{what}");
    };
    refused(&[ct], "no token");
    refused(&[ct, page], "no token from the page's origin");
    refused(
        &[ct, ("X-Memoir-Token", "0".repeat(64).as_str()), page],
        "a wrong token",
    );
    refused(
        &[ct, token, ("Origin", "https://evil.example")],
        "a foreign origin",
    );
    refused(
        &[ct, token, ("Origin", "http://127.0.0.1:1")],
        "another local port",
    );
    refused(&[ct, token, ("Origin", "null")], "an opaque origin");
    refused(&[ct, token, ("Host", "evil.example")], "DNS rebinding");
    for path in [
        "/api/forget",
        "/api/merge",
        "/api/branch",
        "/api/checkout",
        "/api/fsck",
    ] {
        let (code, text) = ui.raw("POST", path, &[ct, page], "{}");
        assert_eq!(code, 403, "{path}: {text}");
    }
    // Reads from a foreign page or host are refused too; a plain client (no Origin) reads.
    let (code, _) = ui.raw(
        "GET",
        "/api/tree",
        &[("Origin", "https://evil.example")],
        "",
    );
    assert_eq!(code, 403);
    let (code, _) = ui.raw("GET", "/", &[("Host", "evil.example:80")], "");
    assert_eq!(code, 403);
    let (code, _) = ui.raw("GET", "/api/tree", &[], "");
    assert_eq!(code, 200);
    // Nothing was written.
    let (_, log) = cli_at(&store, T0, &["log"]);
    assert_eq!(log["count"], 7);
    let (c, _) = cli_at(&store, T0, &["get", "evil.write"]);
    assert_eq!(c, 2);
    // With the token, from the page, the same write goes through.
    let (code, text) = ui.raw("POST", "/api/remember", &[ct, token, page], &body);
    assert_eq!(code, 200, "{text}");
    // The page is served with a policy that forbids framing and foreign scripts.
    let mut s = std::net::TcpStream::connect(&ui.authority).unwrap();
    use std::io::{Read, Write};
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        ui.authority
    )
    .unwrap();
    let mut head = String::new();
    s.read_to_string(&mut head).unwrap();
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("content-security-policy: default-src 'self'"),
        "{head}"
    );
    assert!(head.contains("x-frame-options: deny"), "{head}");
}

#[test]
fn a_new_launch_has_a_new_token() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let mut a = Ui::start(&store, &[]);
    let first = a.token.clone();
    assert_eq!(a.stop(), Some(0));
    let b = Ui::start(&store, &[]);
    assert_ne!(first, b.token);
    let (code, _) = b.raw(
        "POST",
        "/api/fsck",
        &[("X-Memoir-Token", &first), ("Origin", &b.base)],
        "{}",
    );
    assert_eq!(code, 403, "the token of an earlier launch is refused");
}
