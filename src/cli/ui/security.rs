//! Who may use the interface. Every request must name this machine in `Host` (DNS
//! rebinding) and, when a browser says where it comes from, come from a page of this server
//! (`Origin`). A POST must also carry the launch token in the [`TOKEN_HEADER`] header: the
//! token is made from the system's random source when the server starts and is written only
//! into the page the server serves, so a page of another site, which can neither read that
//! page nor send the header without a CORS preflight this server never grants, cannot write.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;

use crate::cli::net;

/// The header a POST carries the launch token in.
pub const TOKEN_HEADER: &str = "x-memoir-token";

/// Why a request is refused (HTTP 403), or `None` when it may go on. `port` is the port the
/// server listens on; `token` the header's value, checked when `write`.
pub fn refusal(
    host: Option<&str>,
    origin: Option<&str>,
    port: u16,
    write: bool,
    token: Option<&str>,
    expected: &str,
) -> Option<&'static str> {
    if !net::host_allowed(host, Some(port)) {
        return Some("the Host header does not name this server on this machine");
    }
    if !net::origin_allowed(origin, Some(port)) {
        return Some("requests from pages of other sites are refused");
    }
    if write && !token.is_some_and(|t| same(t.as_bytes(), expected.as_bytes())) {
        return Some("a write needs the token of the page this server served (x-memoir-token)");
    }
    None
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A new launch token: 32 random bytes as hex, from `/dev/urandom` where there is one,
/// mixed with the standard library's randomly keyed hashers.
pub fn new_token() -> String {
    let mut seed = [0u8; 32];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .is_ok();
    let mut hasher = blake3::Hasher::new();
    hasher.update(&seed);
    hasher.update(&[u8::from(from_os)]);
    for i in 0..4u64 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(i);
        hasher.update(&h.finish().to_le_bytes());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.update(&now.to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    hasher.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_are_hex() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn refusals() {
        let t = "abc";
        let host = Some("127.0.0.1:8000");
        assert_eq!(refusal(host, None, 8000, false, None, t), None);
        assert_eq!(refusal(host, None, 8000, true, Some("abc"), t), None);
        assert!(refusal(host, None, 8000, true, None, t).is_some());
        assert!(refusal(host, None, 8000, true, Some("abd"), t).is_some());
        assert!(refusal(host, None, 8000, true, Some("ab"), t).is_some());
        assert!(refusal(Some("evil.example:8000"), None, 8000, false, None, t).is_some());
        let page = Some("http://127.0.0.1:8000");
        assert_eq!(refusal(host, page, 8000, true, Some("abc"), t), None);
        let foreign = Some("https://evil.example");
        assert!(refusal(host, foreign, 8000, true, Some("abc"), t).is_some());
        assert!(refusal(host, foreign, 8000, false, None, t).is_some());
    }
}
