//! Input rules every face shares: how a key is written (`path` or `ns:path`), what a memory's
//! content may be, the refusal of content or keys that look like a credential, and how much
//! a face may read from a file or a stream for one request.

use std::io::{BufRead, BufReader, Read};

use crate::key::{nfc, Key, DEFAULT_NAMESPACE};
use crate::memory::secrets::{self, SecretKind};
use crate::object::ObjectId;
use crate::prolly::{MAX_PROOF_NODES, MAX_PROOF_NODE_BYTES};

use super::{MemoirError, MemoirResult};

/// Longest content one memory may hold.
pub const MAX_CONTENT_BYTES: usize = 16 << 20;
/// Most bytes of JSON Lines one `import` reads.
pub const MAX_IMPORT_BYTES: usize = 1 << 30;
/// Most bytes in one line of an import (a record: its entries' contents, escaped, and more).
pub const MAX_IMPORT_LINE_BYTES: usize = 64 << 20;
/// Most bytes of a proof given as text (hex, surrounding whitespace included): well above
/// the largest proof the format allows, in hex.
pub const MAX_PROOF_TEXT_BYTES: usize = 4 << 20;

/// `n` bytes in words: `16 MiB`, `1 GiB`.
pub(crate) fn size(n: usize) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// Reads all of `reader` as UTF-8 text, holding at most `limit` + 1 bytes: more than `limit`
/// is refused as soon as it arrives. `what` names the input in errors (`stdin`, `proof file
/// p.hex`). Errors are exit 1.
pub fn read_text(reader: impl Read, limit: usize, what: &str) -> MemoirResult<String> {
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| MemoirError::invalid(format!("cannot read {what}: {e}")))?;
    if bytes.len() > limit {
        return Err(MemoirError::invalid(format!(
            "cannot read {what}: it is longer than {}, the most memoir reads there",
            size(limit)
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| MemoirError::invalid(format!("cannot read {what}: it is not UTF-8 text")))
}

/// Reads JSON Lines for `import` from `reader`: at most [`MAX_IMPORT_BYTES`] in all and
/// [`MAX_IMPORT_LINE_BYTES`] per line, each refused (naming the line) as soon as it is passed,
/// so an endless stream ends quickly. Errors are exit 1.
pub fn read_import(reader: impl Read, what: &str) -> MemoirResult<String> {
    let cannot = |why: String| MemoirError::invalid(format!("cannot read {what}: {why}"));
    let mut input = BufReader::new(reader.take(MAX_IMPORT_BYTES as u64 + 1));
    let mut bytes = Vec::new();
    for n in 1.. {
        let start = bytes.len();
        let got = (&mut input)
            .take(MAX_IMPORT_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| cannot(e.to_string()))?;
        if got == 0 {
            break;
        }
        if bytes.len() > MAX_IMPORT_BYTES {
            return Err(cannot(format!(
                "it is longer than {}, the most one import reads; split it into several files",
                size(MAX_IMPORT_BYTES)
            )));
        }
        let line = &bytes[start..];
        if line.strip_suffix(b"\n").unwrap_or(line).len() > MAX_IMPORT_LINE_BYTES {
            return Err(cannot(format!(
                "line {n} is longer than {}, the most one line may hold; nothing imported",
                size(MAX_IMPORT_LINE_BYTES)
            )));
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        cannot(format!("line {line} is not UTF-8 text; nothing imported"))
    })
}

/// Refuses import text longer than [`MAX_IMPORT_BYTES`] (exit 1), for faces that pass the
/// text itself; [`read_import`] refuses it while reading. Lines are checked as they are parsed.
pub(crate) fn check_import_size(text: &str) -> MemoirResult<()> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(MemoirError::invalid(format!(
            "the import is longer than {}, the most one import takes; nothing imported",
            size(MAX_IMPORT_BYTES)
        )));
    }
    Ok(())
}

/// Refuses one import line longer than [`MAX_IMPORT_LINE_BYTES`] (exit 1).
pub(crate) fn check_import_line(n: usize, line: &str) -> MemoirResult<()> {
    if line.len() > MAX_IMPORT_LINE_BYTES {
        return Err(MemoirError::invalid(format!(
            "line {n} is longer than {}, the most one line may hold; nothing imported",
            size(MAX_IMPORT_LINE_BYTES)
        )));
    }
    Ok(())
}

/// Refuses a proof text longer than [`MAX_PROOF_TEXT_BYTES`] (exit 1).
pub(crate) fn check_proof_size(text: &str) -> MemoirResult<()> {
    if text.len() > MAX_PROOF_TEXT_BYTES {
        return Err(MemoirError::invalid(format!(
            "the proof is longer than {}, more than any proof holds",
            size(MAX_PROOF_TEXT_BYTES)
        )));
    }
    Ok(())
}

/// The longest proof the format allows, in bytes (before hex).
const _: () = assert!(
    2 * (MAX_PROOF_NODES * (MAX_PROOF_NODE_BYTES + 8) + 1024) < MAX_PROOF_TEXT_BYTES,
    "a proof of the largest size must fit MAX_PROOF_TEXT_BYTES"
);

/// Parses a key given as `path` or `ns:path` (the namespace is everything before the last
/// `:`); bare paths take `namespace`, else `default`. The key is normalised to NFC and
/// checked under the input rules ([`Key::new`]). A prefix that disagrees with `namespace` is
/// an error (exit 1).
pub fn parse_key(text: &str, namespace: Option<&str>) -> MemoirResult<Key> {
    match text.rsplit_once(':') {
        Some((ns, path)) => {
            if ns.is_empty() || path.is_empty() {
                return Err(MemoirError::invalid(format!(
                    "invalid key {text:?}: empty namespace or path around ':'"
                )));
            }
            if let Some(f) = namespace.filter(|f| nfc(f) != nfc(ns)) {
                return Err(MemoirError::invalid(format!(
                    "key {text:?} names namespace '{ns}' but -n says '{f}'"
                )));
            }
            Ok(Key::new(ns, path)?)
        }
        None => Ok(Key::new(namespace.unwrap_or(DEFAULT_NAMESPACE), text)?),
    }
}

/// A key named by a reader (`get`, `forget`), before it is looked up: the key as memoir
/// writes it (NFC, input rules) and, when it differs, the text exactly as given under the
/// stored rules, so that a key an earlier version stored in another normalisation form, or
/// with a character now refused, is still found by its exact spelling.
pub(crate) struct NamedKey {
    written: MemoirResult<Key>,
    exact: Option<Key>,
}

impl NamedKey {
    /// Parses `text` as [`parse_key`] does, keeping the exact spelling too. Fails only when
    /// neither reading is a key.
    pub(crate) fn parse(text: &str, namespace: Option<&str>) -> MemoirResult<NamedKey> {
        let written = parse_key(text, namespace);
        let exact = match text.rsplit_once(':') {
            Some((ns, path)) if namespace.is_none_or(|f| f == ns) => Key::existing(ns, path).ok(),
            Some(_) => None,
            None => Key::existing(namespace.unwrap_or(DEFAULT_NAMESPACE), text).ok(),
        }
        .filter(|e| written.as_ref().map_or(true, |w| w != e));
        match (written, exact) {
            (Err(e), None) => Err(e),
            (written, exact) => Ok(NamedKey { written, exact }),
        }
    }

    /// Whether either reading of the key is in namespace `ns`.
    pub(crate) fn in_namespace(&self, ns: &str) -> bool {
        let is = |k: &Key| k.namespace() == ns;
        self.written.as_ref().is_ok_and(is) || self.exact.as_ref().is_some_and(is)
    }

    /// The key exactly as spelled when that differs from how memoir writes it (a key an
    /// earlier version stored), else the written form: what a purge erases.
    pub(crate) fn into_spelled(self) -> MemoirResult<Key> {
        match self.exact {
            Some(exact) => Ok(exact),
            None => self.written,
        }
    }

    /// The key to read: the exact spelling if `lookup` finds a value there, else the
    /// written form (or its error, when the text is a key only under the stored rules).
    pub(crate) fn resolve(
        self,
        lookup: impl Fn(&Key) -> MemoirResult<Option<ObjectId>>,
    ) -> MemoirResult<(Key, Option<ObjectId>)> {
        if let Some(exact) = self.exact {
            if let Some(id) = lookup(&exact)? {
                return Ok((exact, Some(id)));
            }
        }
        let key = self.written?;
        let id = lookup(&key)?;
        Ok((key, id))
    }
}

/// Why a content may not be stored, if it may not: it is blank, or longer than
/// [`MAX_CONTENT_BYTES`].
fn content_fault(content: &str) -> Option<String> {
    if content.trim().is_empty() {
        Some("the memory's content is empty".into())
    } else if content.len() > MAX_CONTENT_BYTES {
        Some(format!(
            "the memory's content is longer than {}",
            size(MAX_CONTENT_BYTES)
        ))
    } else {
        None
    }
}

/// Refuses a blank content or one longer than [`MAX_CONTENT_BYTES`] (exit 1).
pub fn check_content(content: &str) -> MemoirResult<()> {
    match content_fault(content) {
        Some(why) => Err(MemoirError::invalid(format!("{why}; nothing was stored"))),
        None => Ok(()),
    }
}

/// [`check_content`] for entry `entry` (from 1) of line `line` of an import.
pub(crate) fn check_imported_content(line: usize, entry: usize, content: &str) -> MemoirResult<()> {
    match content_fault(content) {
        Some(why) => Err(MemoirError::invalid(format!(
            "line {line}: entry {entry}: {why}; nothing imported"
        ))),
        None => Ok(()),
    }
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
        Some(kind) if !allow => Err(secret_refusal(kind, Found::Content, None)),
        _ => Ok(()),
    }
}

/// Refuses a key whose namespace or path looks like it holds a credential, unless allowed:
/// keys are history too, and are printed everywhere. The message never repeats the key.
pub fn refuse_secrets_in_key(key: &Key, allow: bool) -> MemoirResult<()> {
    refuse_secrets_in_names(key.namespace(), [key.path()], allow, None)
}

/// [`refuse_secrets_in_key`] for a namespace and paths, on line `line` of an import if given.
pub(crate) fn refuse_secrets_in_names<'a>(
    namespace: &'a str,
    paths: impl IntoIterator<Item = &'a str>,
    allow: bool,
    line: Option<usize>,
) -> MemoirResult<()> {
    if allow {
        return Ok(());
    }
    let found = std::iter::once(namespace)
        .chain(paths)
        .find_map(secrets::detect);
    match found {
        Some(kind) => Err(secret_refusal(kind, Found::Key, line)),
        None => Ok(()),
    }
}

/// Where a credential was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// In a memory's content.
    Content,
    /// In a key (its namespace or path, or a related key).
    Key,
}

/// The refusal of a credential found by `kind` in `found`, on line `line` of an import if
/// given.
pub(crate) fn secret_refusal(kind: SecretKind, found: Found, line: Option<usize>) -> MemoirError {
    let (at, nothing) = match line {
        Some(n) => (format!("line {n}: "), "nothing was imported"),
        None => (String::new(), "nothing was stored"),
    };
    let what = match found {
        Found::Content => "the content looks like",
        Found::Key => "the key looks like it holds",
    };
    MemoirError::invalid(format!(
        "{at}refused: {what} a credential (rule {}: {}); memoir keeps every version forever, \
         so it stores one only when explicitly allowed to (`--allow-secrets`; `allow_secrets` \
         over MCP and in Python); {nothing}. Remove it and store a description instead",
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

    #[test]
    fn reads_are_bounded() {
        let zeros = std::io::repeat(0);
        let e = read_text(zeros, 1 << 20, "stdin").unwrap_err();
        assert_eq!(e.code(), 1);
        assert!(e.to_string().contains("longer than 1 MiB"), "{e}");
        assert_eq!(read_text(&b"hello"[..], 5, "x").unwrap(), "hello");
        assert!(read_text(&b"\xff"[..], 5, "x")
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
        // An endless line is refused once it passes the line limit.
        let e = read_import(std::io::repeat(b'a'), "stdin").unwrap_err();
        assert!(
            e.to_string().contains("line 1 is longer than 64 MiB"),
            "{e}"
        );
        let e = read_import(&b"{}\n\xff\n"[..], "f").unwrap_err();
        assert!(e.to_string().contains("line 2 is not UTF-8"), "{e}");
        assert_eq!(read_import(&b"a\nb"[..], "f").unwrap(), "a\nb");
        let long = "x".repeat(MAX_PROOF_TEXT_BYTES + 1);
        assert!(check_proof_size(&long).is_err());
        assert!(check_import_line(3, &long[..MAX_IMPORT_LINE_BYTES.min(long.len())]).is_ok());
    }

    #[test]
    fn named_keys_find_an_earlier_spelling() {
        let nfd = "cafe\u{301}";
        let written = Key::new("default", nfd).unwrap();
        let exact = Key::existing("default", nfd).unwrap();
        assert_ne!(written, exact);
        // Only the exact spelling is stored: it is found.
        let stored = exact.clone();
        let look = |k: &Key| Ok((*k == stored).then(|| ObjectId::from_bytes([7; 32])));
        let (k, id) = NamedKey::parse(nfd, None).unwrap().resolve(look).unwrap();
        assert_eq!((k, id.is_some()), (exact.clone(), true));
        // Nothing stored: the written (NFC) key is reported.
        let none = |_: &Key| Ok(None);
        let (k, id) = NamedKey::parse(nfd, None).unwrap().resolve(none).unwrap();
        assert_eq!((k, id), (written, None));
        // A character now refused: found when stored so, else the input rule's error.
        let old = "a\u{3164}b";
        let stored = Key::existing("default", old).unwrap();
        let look = |k: &Key| Ok((*k == stored).then(|| ObjectId::from_bytes([7; 32])));
        assert!(NamedKey::parse(old, None).unwrap().resolve(look).is_ok());
        let e = NamedKey::parse(old, None)
            .unwrap()
            .resolve(none)
            .unwrap_err();
        assert!(e.to_string().contains("invisible"), "{e}");
        assert!(NamedKey::parse("a b", None).is_err());
        assert!(NamedKey::parse("x:a", Some("y")).is_err());
    }

    #[test]
    fn keys_holding_credentials_are_refused() {
        let key = Key::new("default", "tokens.ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
        let e = refuse_secrets_in_key(&key, false).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("key") && msg.contains("github_token"), "{msg}");
        assert!(!msg.contains("aaaaaaaaaaaaaaaa"), "{msg}");
        assert!(refuse_secrets_in_key(&key, true).is_ok());
        let ns = Key::new("sk-aaaaaaaaaaaaaaaaaaaaaaaaa", "a").unwrap();
        assert!(refuse_secrets_in_key(&ns, false).is_err());
        let fine = Key::new("secrets", "rotation.policy").unwrap();
        assert!(refuse_secrets_in_key(&fine, false).is_ok());
    }
}
