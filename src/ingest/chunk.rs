//! Cutting a document's text into chunks whose boundaries and names depend only on nearby
//! content.
//!
//! The text is first cut into *units*: paragraphs (runs of lines between blank lines),
//! Markdown headings (a unit each) and fenced code blocks (whole). A unit longer than
//! [`MAX_CHUNK_BYTES`] is cut into pieces at line ends (a line longer than that at a space)
//! by the same content rule as chunks. Units are then gathered into chunks, in order:
//!
//! - a chunk ends before a Markdown heading of level 1 to 3;
//! - a chunk ends before a unit that would take it past [`MAX_CHUNK_BYTES`];
//! - a chunk of at least [`MIN_CHUNK_BYTES`] ends after a unit (not a heading) whose hash
//!   has its two low bits clear (one unit in four, decided by the unit's text alone).
//!
//! So an edit changes the chunk it falls in and at most the few after it, until the next
//! boundary that depends on unchanged text. A chunk is named by its first words (its heading
//! when it starts with one) and the first 12 hex digits of the BLAKE3 hash of its text:
//! equal text gives equal names, and changed text a new name.

use crate::key::{nfc, validate_path};

use super::Format;

/// Below this a chunk ends only at a heading or the end of the document.
pub const MIN_CHUNK_BYTES: usize = 512;
/// No chunk is longer than this.
pub const MAX_CHUNK_BYTES: usize = 4096;
/// A chunk (or a piece of a long unit) of at least [`MIN_CHUNK_BYTES`] ends after a unit
/// whose hash has these bits clear.
const BOUNDARY_MASK: u64 = 3;
/// Most bytes of the words that start a chunk's name.
const NAME_WORD_BYTES: usize = 40;
/// Hex digits of the content hash in a chunk's name.
const NAME_HASH_HEX: usize = 12;

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Its name: a valid key segment, `words-0123456789ab` (or only the hash digits when
    /// the chunk starts with no usable words).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// A unit of text, with what joins it to the unit before it in one chunk.
struct Unit<'a> {
    text: &'a str,
    joiner: &'static str,
    /// A heading of level 1..=3 (a chunk ends before it).
    breaks: bool,
    heading: bool,
}

/// The chunks of `text` (as extracted, with `\n` line ends), in document order.
pub fn chunks(text: &str, format: Format) -> Vec<Chunk> {
    let markdown = matches!(format, Format::Markdown | Format::Html);
    let mut units = Vec::new();
    for block in blocks(text, markdown) {
        let level = if markdown && block.len() <= MAX_CHUNK_BYTES {
            heading_level(block)
        } else {
            None
        };
        if level.is_some() || block.len() <= MAX_CHUNK_BYTES {
            units.push(Unit {
                text: block,
                joiner: "\n\n",
                breaks: level.is_some_and(|l| l <= 3),
                heading: level.is_some(),
            });
        } else {
            for (i, (piece, joiner)) in pieces(block).into_iter().enumerate() {
                units.push(Unit {
                    text: piece,
                    joiner: if i == 0 { "\n\n" } else { joiner },
                    breaks: false,
                    heading: false,
                });
            }
        }
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for u in units {
        if !cur.is_empty()
            && (u.breaks || cur.len() + u.joiner.len() + u.text.len() > MAX_CHUNK_BYTES)
        {
            out.push(named(std::mem::take(&mut cur)));
        }
        if !cur.is_empty() {
            cur.push_str(u.joiner);
        }
        cur.push_str(u.text);
        if !u.heading && cur.len() >= MIN_CHUNK_BYTES && boundary(u.text) {
            out.push(named(std::mem::take(&mut cur)));
        }
    }
    if !cur.is_empty() {
        out.push(named(cur));
    }
    out
}

/// Whether a unit ends a chunk (once the chunk is long enough): one in four, by its text.
fn boundary(text: &str) -> bool {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes()) & BOUNDARY_MASK == 0
}

/// The paragraphs, headings and fenced code blocks of `text` (headings and fences only when
/// `markdown`), without the blank lines between them.
fn blocks<'t>(text: &'t str, markdown: bool) -> Vec<&'t str> {
    let mut out = Vec::new();
    // Byte range of the block being read.
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut fence: Option<&str> = None;
    let flush = |start: &mut Option<usize>, end: usize, out: &mut Vec<&'t str>| {
        if let Some(s) = start.take() {
            out.push(&text[s..end]);
        }
    };
    let mut at = 0;
    for line in text.split('\n') {
        let line_start = at;
        let line_end = at + line.len();
        at = line_end + 1;
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            end = line_end;
            if trimmed.starts_with(f) {
                fence = None;
                flush(&mut start, end, &mut out);
            }
            continue;
        }
        if markdown && (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
            flush(&mut start, end, &mut out);
            fence = Some(&trimmed[..3]);
            start = Some(line_start);
            end = line_end;
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut start, end, &mut out);
            continue;
        }
        if markdown && heading_level(line).is_some() {
            flush(&mut start, end, &mut out);
            out.push(line);
            continue;
        }
        start.get_or_insert(line_start);
        end = line_end;
    }
    flush(&mut start, end, &mut out);
    out
}

/// The level of a Markdown ATX heading line (`## Title`), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    if line.contains('\n') {
        return None;
    }
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    let after = line.as_bytes().get(hashes);
    ((1..=6).contains(&hashes) && matches!(after, None | Some(b' ' | b'\t'))).then_some(hashes)
}

/// A unit longer than [`MAX_CHUNK_BYTES`] cut into pieces, each with what joins it to the
/// one before: lines gathered by the chunk rule, a line longer than the limit cut at spaces.
fn pieces(block: &str) -> Vec<(&str, &'static str)> {
    let mut lines: Vec<(&str, &'static str)> = Vec::new();
    for line in block.split('\n') {
        let mut rest = line;
        let mut joiner = "\n";
        while rest.len() > MAX_CHUNK_BYTES {
            let cut = split_point(rest);
            lines.push((&rest[..cut], joiner));
            rest = rest[cut..].trim_start();
            joiner = " ";
        }
        if !rest.is_empty() {
            lines.push((rest, joiner));
        }
    }
    let mut out: Vec<(&str, &'static str)> = Vec::new();
    // Byte offsets within `block` of the piece being gathered.
    let base = block.as_ptr() as usize;
    let mut piece: Option<(usize, usize, &'static str)> = None;
    for (line, joiner) in lines {
        let s = line.as_ptr() as usize - base;
        let e = s + line.len();
        if let Some((ps, pe, pj)) = piece {
            if e - ps > MAX_CHUNK_BYTES {
                out.push((&block[ps..pe], pj));
                piece = None;
            }
        }
        let (ps, _, pj) = piece.unwrap_or((s, e, joiner));
        piece = Some((ps, e, pj));
        if e - ps >= MIN_CHUNK_BYTES && boundary(line) {
            out.push((&block[ps..e], pj));
            piece = None;
        }
    }
    if let Some((ps, pe, pj)) = piece {
        out.push((&block[ps..pe], pj));
    }
    out
}

/// Where to cut a line longer than [`MAX_CHUNK_BYTES`]: after the last whitespace within
/// the limit, else at the last character boundary within it.
fn split_point(line: &str) -> usize {
    let mut limit = MAX_CHUNK_BYTES;
    while !line.is_char_boundary(limit) {
        limit -= 1;
    }
    match line[..limit].rfind(char::is_whitespace) {
        Some(n) if n > MIN_CHUNK_BYTES => n,
        _ => limit,
    }
}

/// A chunk of `text`, named.
fn named(text: String) -> Chunk {
    let hash = blake3::hash(text.as_bytes()).to_hex();
    let first = text.lines().next().unwrap_or("");
    let words = slug(first.trim_start_matches('#'), NAME_WORD_BYTES);
    let name = if words.is_empty() {
        hash[..NAME_HASH_HEX].to_string()
    } else {
        format!("{words}-{}", &hash[..NAME_HASH_HEX])
    };
    Chunk { name, text }
}

/// `text` made into a key segment of at most `max` bytes: NFC, lower case, every run of
/// characters that are not letters or digits (or that keys refuse) one `-`, no `-` at either
/// end. Empty when `text` holds no letter or digit.
pub fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in nfc(text).chars().flat_map(char::to_lowercase) {
        let keep = c.is_alphanumeric()
            && (c.is_ascii() || validate_path(c.encode_utf8(&mut [0; 4])).is_ok());
        if !keep {
            dash = true;
            continue;
        }
        if dash && !out.is_empty() {
            if out.len() + 1 + c.len_utf8() > max {
                break;
            }
            out.push('-');
        }
        dash = false;
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    // Lower-casing can leave a string that is not NFC.
    let n = nfc(&out).into_owned();
    if validate_path(&n).is_ok() && n.len() <= max {
        n
    } else {
        out.retain(|c| c.is_ascii_alphanumeric() || c == '-');
        out.trim_matches('-').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn para(n: usize, words: usize) -> String {
        (0..words)
            .map(|w| format!("w{n}x{w}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn doc(paras: usize) -> String {
        (0..paras)
            .map(|n| {
                if n % 12 == 0 {
                    format!("## Section {n}\n\n{}", para(n, 20))
                } else {
                    para(n, 20 + n % 7)
                }
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    #[test]
    fn chunks_are_bounded_and_cover_the_text() {
        let text = doc(300);
        let cs = chunks(&text, Format::Markdown);
        assert!(cs.len() > 10);
        for c in &cs {
            assert!(c.text.len() <= MAX_CHUNK_BYTES, "{}", c.text.len());
            assert!(validate_path(&c.name).is_ok(), "{}", c.name);
            assert!(c.name.len() <= 64);
        }
        let joined: Vec<&str> = cs.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(joined.join("\n\n"), text);
        assert!(cs.iter().any(|c| c.text.starts_with("## Section 12")));
    }

    #[test]
    fn an_edit_in_the_middle_changes_only_nearby_chunks() {
        let text = doc(400);
        let before = chunks(&text, Format::Markdown);
        let edited = text.replacen("w200x3 ", "w200x3 inserted words here ", 1);
        assert_ne!(edited, text);
        let after = chunks(&edited, Format::Markdown);
        let old: std::collections::BTreeSet<_> = before.iter().map(|c| &c.name).collect();
        let new: std::collections::BTreeSet<_> = after.iter().map(|c| &c.name).collect();
        let changed = new.difference(&old).count();
        assert!((1..=3).contains(&changed), "{changed} of {}", after.len());
        assert!(old.difference(&new).count() <= 3);
    }

    #[test]
    fn long_lines_and_fences() {
        let long = "word ".repeat(5000);
        let cs = chunks(&long, Format::Text);
        assert!(cs.len() >= 5);
        assert!(cs.iter().all(|c| c.text.len() <= MAX_CHUNK_BYTES));
        let nospace = "x".repeat(10_000);
        assert!(chunks(&nospace, Format::Text)
            .iter()
            .all(|c| c.text.len() <= MAX_CHUNK_BYTES));
        let md = "intro\n\n```\ncode\n\n# not a heading\n```\n\n# Real\n\nbody";
        let cs = chunks(md, Format::Markdown);
        assert_eq!(cs.len(), 2, "{cs:?}");
        assert!(cs[0].text.contains("# not a heading"));
        assert!(cs[1].name.starts_with("real-"));
        // Plain text has no headings.
        assert_eq!(chunks("# a\n\nb", Format::Text).len(), 1);
    }

    #[test]
    fn slugs_are_key_segments() {
        assert_eq!(slug("My Notes.md", 48), "my-notes-md");
        assert_eq!(slug("Café déjà-vu!", 48), "café-déjà-vu");
        assert_eq!(slug("***", 48), "");
        assert_eq!(slug("a\u{3164}b", 48), "a-b");
        assert_eq!(slug("abcdef ghij", 8), "abcdef-g");
        assert!(slug(&"é".repeat(100), 40).len() <= 40);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any text cuts into bounded chunks with valid names, losing no visible character.
        #[test]
        fn any_text_cuts_into_bounded_chunks(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "# Title", "\n", "\n\n", "```", "word ", "é", "日本語", "\u{3164}", " ",
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                ]),
                0..400,
            ),
            repeat in 1usize..40,
            markdown: bool,
        ) {
            let text: String = parts.concat().repeat(repeat);
            let format = if markdown { Format::Markdown } else { Format::Text };
            let cs = chunks(&text, format);
            for c in &cs {
                proptest::prop_assert!(c.text.len() <= MAX_CHUNK_BYTES);
                proptest::prop_assert!(validate_path(&c.name).is_ok(), "{}", c.name);
            }
            let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
            let joined: String = cs.iter().map(|c| c.text.as_str()).collect();
            proptest::prop_assert_eq!(visible(&joined), visible(&text));
        }
    }
}
