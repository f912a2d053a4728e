//! Input rules every face shares: how a key is written (`path` or `ns:path`) and how long a
//! memory may be.

use crate::key::{Key, DEFAULT_NAMESPACE};

use super::{MemoirError, MemoirResult};

/// Longest content one memory may hold.
pub const MAX_CONTENT_BYTES: usize = 16 << 20;

/// Parses a key given as `path` or `ns:path` (the namespace is everything before the last
/// `:`); bare paths take `namespace`, else `default`. A prefix that disagrees with
/// `namespace` is an error (exit 1).
pub fn parse_key(text: &str, namespace: Option<&str>) -> MemoirResult<Key> {
    match text.rsplit_once(':') {
        Some((ns, path)) => {
            if ns.is_empty() || path.is_empty() {
                return Err(MemoirError::invalid(format!(
                    "invalid key {text:?}: empty namespace or path around ':'"
                )));
            }
            if let Some(f) = namespace.filter(|f| *f != ns) {
                return Err(MemoirError::invalid(format!(
                    "key {text:?} names namespace '{ns}' but -n says '{f}'"
                )));
            }
            Ok(Key::new(ns, path)?)
        }
        None => Ok(Key::new(namespace.unwrap_or(DEFAULT_NAMESPACE), text)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_and_without_namespace() {
        assert_eq!(parse_key("a.b", None).unwrap().to_string(), "default:a.b");
        assert_eq!(parse_key("w:a.b", None).unwrap().to_string(), "w:a.b");
        assert_eq!(parse_key("a.b", Some("w")).unwrap().to_string(), "w:a.b");
        assert_eq!(parse_key("c:o:a", Some("c:o")).unwrap().namespace(), "c:o");
        assert!(parse_key("x:a", Some("y")).is_err());
        assert!(parse_key(":a", None).is_err());
        assert!(parse_key("a b", None).is_err());
    }
}
