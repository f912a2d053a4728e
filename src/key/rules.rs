//! The rules a name must pass: which characters a namespace or a path may hold (under the
//! input rules or the stored ones), normalisation to NFC, and the limits on lengths and
//! depth.

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;
use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
use icu_properties::{CodePointMapData, CodePointSetData};

use super::{KeyError, MAX_NAMESPACE_BYTES, MAX_PATH_BYTES, MAX_SEGMENTS, MAX_SEGMENT_BYTES};

/// ` (U+3164)`: the code point of a character outside ASCII, which may print as nothing;
/// empty for ASCII.
pub(super) fn code_point(ch: char) -> String {
    if ch.is_ascii() {
        String::new()
    } else {
        format!(" (U+{:04X})", u32::from(ch))
    }
}

/// Why a character may not appear in a name, if it may not.
pub(super) fn forbidden(ch: char, in_namespace: bool) -> Option<&'static str> {
    if ch.is_control() {
        return Some("control character");
    }
    if ch.is_whitespace() {
        return Some("whitespace");
    }
    match ch {
        '.' if !in_namespace => Some("'.' separates segments"),
        ':' if !in_namespace => Some("':' separates the namespace from the path"),
        '*' | '?' | '[' | ']' | '{' | '}' | '\\' => Some("glob metacharacter"),
        // Invisible format characters: zero-width, bidirectional controls, BOM.
        '\u{00AD}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}' => Some("invisible formatting character"),
        _ => None,
    }
}

/// Why a character may not appear in a new name, beyond [`forbidden`]: characters that
/// print as nothing, judged by Unicode property so that new ones are covered as Unicode
/// assigns them.
fn refused_on_input(ch: char) -> Option<&'static str> {
    if ch.is_ascii() {
        return None;
    }
    if CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(ch) {
        // Zero-width characters, joiners, variation selectors, tags, Hangul fillers, the
        // Mongolian vowel separator, the combining grapheme joiner, ...
        return Some("invisible: a default-ignorable code point");
    }
    if CodePointMapData::<GeneralCategory>::new().get(ch) == GeneralCategory::Format {
        return Some("invisible: a format character (Cf)");
    }
    if ch == '\u{2800}' {
        return Some("invisible: the blank braille pattern");
    }
    None
}

/// Why a character may not appear in a name under `rules`, if it may not.
pub(super) fn refusal(ch: char, in_namespace: bool, rules: Rules) -> Option<&'static str> {
    forbidden(ch, in_namespace).or_else(|| match rules {
        Rules::Input => refused_on_input(ch),
        Rules::Stored => None,
    })
}

/// Which rules judge a name: [`Rules::Input`] for a key memoir is about to write or look up,
/// [`Rules::Stored`] for a key already in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rules {
    Input,
    Stored,
}

/// `text` in Unicode normalisation form C (borrowed when it already is).
pub fn nfc(text: &str) -> Cow<'_, str> {
    ComposingNormalizerBorrowed::new_nfc().normalize(text)
}

/// Whether `text` is in Unicode normalisation form C.
pub fn is_nfc(text: &str) -> bool {
    ComposingNormalizerBorrowed::new_nfc().is_normalized(text)
}

/// Whether an ASCII byte may appear in a namespace (and, except `.` and `:`, in a path):
/// printable, not a space, not a glob metacharacter. Bytes of 0x80 and above are not
/// judged here. Written as comparisons joined without short-circuit, so that a pass over
/// a key's bytes has no branch per byte.
#[inline]
pub(super) fn ascii_name_byte(b: u8) -> bool {
    (b.wrapping_sub(0x21) < 0x5e)
        & (b != b'*')
        & (b != b'?')
        & (b != b'[')
        & (b != b']')
        & (b != b'{')
        & (b != b'}')
        & (b != b'\\')
}

/// Whether every byte of `bytes` is an [`ascii_name_byte`], in one pass without a branch
/// per byte.
pub(super) fn all_name_bytes(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |ok, &b| ok & ascii_name_byte(b))
}

/// Whether `path`, with segments separated by `sep`, is a valid path of plain ASCII (nearly
/// every path): 1..=[`MAX_PATH_BYTES`] bytes, every one `sep` or a name byte other than `.`
/// and `:`, in 1..=[`MAX_SEGMENTS`] segments of 1..=[`MAX_SEGMENT_BYTES`] bytes. Checks the
/// bytes in one pass without a branch per byte, then walks the few separators. `false`
/// says only that the full check must judge it (see [`check_path`]).
pub(super) fn plain_path_ok(path: &[u8], sep: u8) -> bool {
    let bytes_ok = path.iter().fold(true, |ok, &b| {
        ok & ((b == sep) | (ascii_name_byte(b) & (b != b'.') & (b != b':')))
    });
    if path.is_empty() || path.len() > MAX_PATH_BYTES || !bytes_ok {
        return false;
    }
    let mut segments = 0;
    for seg in path.split(|&b| b == sep) {
        if seg.is_empty() || seg.len() > MAX_SEGMENT_BYTES {
            return false;
        }
        segments += 1;
    }
    segments <= MAX_SEGMENTS
}

/// What memoir's own namespaces start with (`memoir:taxonomy`, `memoir:watch`): records it
/// keeps for itself, which searches and counts leave out unless a namespace names them.
pub const INTERNAL_NAMESPACE_PREFIX: &str = "memoir:";

/// Whether `ns` is one of memoir's own namespaces.
pub fn is_internal_namespace(ns: &str) -> bool {
    ns.starts_with(INTERNAL_NAMESPACE_PREFIX)
}

/// Checks a namespace under the input rules: 1..=64 bytes of printable characters without
/// whitespace, glob or invisible characters, in NFC; `:` and `.` allowed inside, not at either
/// end. (A namespace in another normalisation form is refused here;
/// [`Key::new`](crate::key::Key::new) normalises it first.)
pub fn validate_namespace(ns: &str) -> Result<(), KeyError> {
    check_namespace(ns, Rules::Input)?;
    if !is_nfc(ns) {
        return Err(KeyError::BadNamespace {
            ns: ns.to_string(),
            why: "not in Unicode normalisation form C".into(),
        });
    }
    Ok(())
}

pub(super) fn check_namespace(ns: &str, rules: Rules) -> Result<(), KeyError> {
    let bad = |why: String| KeyError::BadNamespace {
        ns: ns.to_string(),
        why,
    };
    if ns.is_empty() {
        return Err(bad("empty".into()));
    }
    if ns.len() > MAX_NAMESPACE_BYTES {
        return Err(bad(format!("longer than {MAX_NAMESPACE_BYTES} bytes")));
    }
    // Plain ASCII namespaces pass byte by byte (as paths do in `check_path`).
    let refused = if all_name_bytes(ns.as_bytes()) {
        None
    } else {
        ns.chars().find_map(|c| Some((c, refusal(c, true, rules)?)))
    };
    if let Some((ch, why)) = refused {
        return Err(bad(format!(
            "character {ch:?}{} is not allowed ({why})",
            code_point(ch)
        )));
    }
    if ns.starts_with([':', '.']) || ns.ends_with([':', '.']) {
        return Err(bad("may not start or end with ':' or '.'".into()));
    }
    Ok(())
}

/// Checks a dot path under the input rules: 1..=8 non-empty segments of at most 64 bytes,
/// 256 bytes in all, no whitespace, control, glob or invisible characters, no `:`, in NFC.
/// (A path in another normalisation form is refused here;
/// [`Key::new`](crate::key::Key::new) normalises it first.)
pub fn validate_path(path: &str) -> Result<(), KeyError> {
    check_path(path, Rules::Input)?;
    if !is_nfc(path) {
        return Err(KeyError::NotNfc(path.to_string()));
    }
    Ok(())
}

pub(super) fn check_path(path: &str, rules: Rules) -> Result<(), KeyError> {
    if plain_path_ok(path.as_bytes(), b'.') {
        return Ok(());
    }
    check_path_fully(path, rules)
}

/// [`check_path`] without its fast path: the judgement of any path, naming what is wrong.
fn check_path_fully(path: &str, rules: Rules) -> Result<(), KeyError> {
    if path.is_empty() {
        return Err(KeyError::EmptyPath(path.to_string()));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(KeyError::TooLong(path.to_string()));
    }
    // One pass over the bytes: whether every one is a plain ASCII name byte (nearly all
    // keys), the number of segments, and the first empty or overlong segment. Anything not
    // plain is judged per character, which also names the refused one.
    // A final '.' closes the last segment like the others.
    let (mut plain, mut n, mut seg, mut shape) = (true, 0usize, 0usize, None);
    for b in path.bytes().chain([b'.']) {
        if b == b'.' {
            if shape.is_none() && (seg == 0 || seg > MAX_SEGMENT_BYTES) {
                shape = Some(seg == 0);
            }
            n += 1;
            seg = 0;
        } else {
            plain &= b != b':' && ascii_name_byte(b);
            seg += 1;
        }
    }
    if let Some((ch, why)) = (!plain)
        .then(|| {
            path.chars()
                .filter(|&c| c != '.')
                .find_map(|c| Some((c, refusal(c, false, rules)?)))
        })
        .flatten()
    {
        return Err(KeyError::BadChar {
            key: path.to_string(),
            ch,
            why,
        });
    }
    match shape {
        Some(true) => return Err(KeyError::EmptySegment(path.to_string())),
        Some(false) => return Err(KeyError::TooLong(path.to_string())),
        None => {}
    }
    if n > MAX_SEGMENTS {
        return Err(KeyError::TooDeep(path.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_byte_is_printable_ascii_other_than_space_and_glob_characters() {
        for b in 0..=255u8 {
            let want = b.is_ascii_graphic() && !b"*?[]{}\\".contains(&b);
            assert_eq!(ascii_name_byte(b), want, "{b:#x}");
            assert_eq!(all_name_bytes(&[b'a', b, b'z']), want, "{b:#x}");
        }
    }

    /// The fast path passes exactly the plain ASCII paths the full check passes.
    #[test]
    fn the_fast_path_check_agrees_with_the_full_one() {
        let mut paths: Vec<String> = Vec::new();
        for b in 0..=0x7fu8 {
            let c = b as char;
            paths.extend([
                format!("{c}"),
                format!("a{c}b"),
                format!("a.{c}"),
                format!("{c}.a"),
            ]);
        }
        let seg = |n: usize| "x".repeat(n);
        for n in [63, 64, 65] {
            paths.push(seg(n));
            paths.push(format!("a.{}", seg(n)));
        }
        for n in [7, 8, 9] {
            paths.push(vec!["s"; n].join("."));
        }
        paths.push([seg(64), seg(64), seg(64), seg(61)].join("."));
        paths.push([seg(64), seg(64), seg(64), seg(62)].join("."));
        paths.extend(["", ".", "a..b", "a.", ".a", "é.a", "a.b.c"].map(String::from));
        for p in &paths {
            let full = check_path_fully(p, Rules::Stored).is_ok();
            let fast = plain_path_ok(p.as_bytes(), b'.');
            assert!(
                !fast || full,
                "{p:?}: fast passes what the full check refuses"
            );
            if p.is_ascii() {
                assert_eq!(fast, full, "{p:?}");
            }
            assert_eq!(check_path(p, Rules::Stored).is_ok(), full, "{p:?}");
        }
    }
}
