//! Input rules every face shares: how a key is written (`path` or `ns:path`), what a memory's
//! content may be, and the refusal of content that looks like a credential.

use crate::key::{Key, DEFAULT_NAMESPACE};
use crate::memory::secrets::{self, SecretKind};

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

/// Refuses a blank content or one longer than [`MAX_CONTENT_BYTES`] (exit 1).
pub fn check_content(content: &str) -> MemoirResult<()> {
    if content.trim().is_empty() {
        return Err(MemoirError::invalid(
            "the memory's content is empty; nothing was stored",
        ));
    }
    if content.len() > MAX_CONTENT_BYTES {
        return Err(MemoirError::invalid(format!(
            "the memory's content is longer than {} MiB; nothing was stored",
            MAX_CONTENT_BYTES >> 20
        )));
    }
    Ok(())
}

/// Refuses a confidence outside 0.0..=1.0 (exit 1).
pub fn check_confidence(confidence: Option<f64>) -> MemoirResult<()> {
    match confidence {
        Some(c) if !(c.is_finite() && (0.0..=1.0).contains(&c)) => Err(MemoirError::invalid(
            format!("confidence {c} is not within 0.0..=1.0"),
        )),
        _ => Ok(()),
    }
}

/// Refuses `text` if it looks like it holds a credential ([`secrets::detect`]), unless the
/// caller allows secrets on purpose. Memories are versioned forever (even `forget` keeps
/// history), so every face refuses them by default. The message names the rule that matched,
/// never the text (exit 1).
pub fn refuse_secrets(text: &str, allow: bool) -> MemoirResult<()> {
    match secrets::detect(text) {
        Some(kind) if !allow => Err(secret_refusal(kind, None)),
        _ => Ok(()),
    }
}

/// The refusal of a credential found by `kind`, on line `line` of an import if given.
pub(crate) fn secret_refusal(kind: SecretKind, line: Option<usize>) -> MemoirError {
    let (at, nothing) = match line {
        Some(n) => (format!("line {n}: "), "nothing was imported"),
        None => (String::new(), "nothing was stored"),
    };
    MemoirError::invalid(format!(
        "{at}refused: the content looks like a credential (rule {}: {}); memoir keeps every \
         version forever, so it stores one only when explicitly allowed to; {nothing}. Remove \
         it and store a description instead",
        kind.rule(),
        kind.describe()
    ))
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

    #[test]
    fn content_and_secret_rules() {
        assert!(check_content(" \n").is_err());
        assert!(check_content(&"x".repeat(MAX_CONTENT_BYTES + 1)).is_err());
        assert!(check_content("x").is_ok());
        assert!(check_confidence(Some(1.5)).is_err());
        assert!(check_confidence(Some(f64::NAN)).is_err());
        assert!(check_confidence(Some(0.0)).is_ok());
        let text = "deploy with AKIAIOSFODNN7EXAMPLE";
        let e = refuse_secrets(text, false).unwrap_err();
        assert_eq!(e.code(), 1);
        let msg = e.to_string();
        assert!(
            msg.contains("credential") && msg.contains("aws_access_key"),
            "{msg}"
        );
        assert!(!msg.contains("AKIAIOSFODNN7EXAMPLE"), "{msg}");
        assert!(refuse_secrets(text, true).is_ok());
        assert!(refuse_secrets("prefers pytest", false).is_ok());
    }
}
