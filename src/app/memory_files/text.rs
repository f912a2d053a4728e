//! The memory tool's text work, free of the store: numbered lines for `view`, the directory
//! listing, `str_replace` and `insert` on a file's text. Formats and semantics follow the
//! tool's reference implementation (lines split on `\n`, numbers right-aligned in six
//! columns and a tab; sizes as `512B`, `1.5K`).

use std::collections::BTreeMap;

use super::MemoryFileError;

/// Most lines a file may have to be viewed.
const MAX_LINES: usize = 999_999;

/// One numbered line: the number right-aligned in six columns, a tab, the line.
fn numbered_line(n: usize, line: &str) -> String {
    format!("{n:>6}\t{line}")
}

/// Python's `seq[lo:hi]` bounds for a sequence of `len` items.
fn slice_bounds(lo: i64, hi: i64, len: usize) -> (usize, usize) {
    let clamp = |i: i64| -> usize {
        if i < 0 {
            (len as i64 + i).max(0) as usize
        } else {
            (i as usize).min(len)
        }
    };
    let (lo, hi) = (clamp(lo), clamp(hi));
    (lo, hi.max(lo))
}

/// `view` of a file: its lines numbered from 1, or those of `range` (`[first, last]`, last
/// `-1` for the end).
pub(super) fn numbered(
    content: &str,
    path: &str,
    range: Option<&[i64]>,
) -> Result<String, MemoryFileError> {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() > MAX_LINES {
        return Err(MemoryFileError::TooManyLines {
            path: path.to_string(),
        });
    }
    let (start, end) = match range {
        Some([first, last]) => {
            let start = (*first).max(1) - 1;
            let end = if *last == -1 {
                lines.len() as i64
            } else {
                *last
            };
            slice_bounds(start, end, lines.len())
        }
        _ => (0, lines.len()),
    };
    let shown: Vec<String> = lines[start..end]
        .iter()
        .enumerate()
        .map(|(i, l)| numbered_line(start + i + 1, l))
        .collect();
    Ok(format!(
        "Here's the content of {path} with line numbers:\n{}",
        shown.join("\n")
    ))
}

/// A byte count as the listing shows it: `0B`, `512B`, `4K`, `1.5K`, `2.3M`.
pub(super) fn size_text(bytes: u64) -> String {
    if bytes == 0 {
        return "0B".to_string();
    }
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    let i = (((63 - bytes.leading_zeros()) / 10) as usize).min(UNITS.len() - 1);
    let size = bytes as f64 / 1024f64.powi(i as i32);
    if size.fract() == 0.0 {
        format!("{}{}", size as u64, UNITS[i])
    } else {
        format!("{size:.1}{}", UNITS[i])
    }
}

/// One name at one level of a listing: a file there, a directory there, or both (a key
/// can be a memory and the prefix of others).
#[derive(Default)]
struct Slot {
    file: Option<u64>,
    dir: Option<u64>,
    children: BTreeMap<String, Slot>,
}

/// `view` of a directory: every file and directory up to two levels below `path`, sorted by
/// name, hidden names (starting with `.`) left out; sizes are of the files, summed for a
/// directory. `files` holds each file below as its names from `path` on and its size.
pub(super) fn listing(path: &str, files: &[(Vec<String>, u64)]) -> String {
    let mut top: BTreeMap<String, Slot> = BTreeMap::new();
    let mut total = 0;
    for (names, size) in files {
        total += size;
        let mut level = &mut top;
        for (depth, name) in names.iter().take(2).enumerate() {
            let slot = level.entry(name.clone()).or_default();
            if depth + 1 == names.len() {
                slot.file = Some(*size);
            } else {
                *slot.dir.get_or_insert(0) += size;
            }
            level = &mut slot.children;
        }
    }
    let base = path.trim_end_matches('/');
    let mut lines = vec![format!("{}\t{path}", size_text(total))];
    fn walk(level: &BTreeMap<String, Slot>, prefix: &str, depth: usize, out: &mut Vec<String>) {
        for (name, slot) in level {
            if name.starts_with('.') {
                continue;
            }
            let at = format!("{prefix}/{name}");
            if let Some(size) = slot.file {
                out.push(format!("{}\t{at}", size_text(size)));
            }
            if let Some(size) = slot.dir {
                out.push(format!("{}\t{at}/", size_text(size)));
                if depth < 2 {
                    walk(&slot.children, &at, depth + 1, out);
                }
            }
        }
    }
    walk(&top, base, 1, &mut lines);
    format!(
        "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{}",
        lines.join("\n")
    )
}

/// `str_replace`: the new text and the answer (a snippet around the change), when `old`
/// occurs exactly once in `content`.
pub(super) fn replace(
    content: &str,
    old: &str,
    new: &str,
    path: &str,
) -> Result<(String, String), MemoryFileError> {
    // Where `old` starts, overlapping occurrences included (each start, one character on).
    let mut starts = Vec::new();
    let mut from = 0;
    while from <= content.len() {
        let Some(i) = content[from..].find(old) else {
            break;
        };
        let at = from + i;
        starts.push(at);
        from = at + content[at..].chars().next().map_or(1, char::len_utf8);
    }
    let count = content.matches(old).count();
    if count == 0 {
        return Err(MemoryFileError::NoMatch {
            path: path.to_string(),
            old: old.to_string(),
        });
    }
    if count > 1 {
        let lines: Vec<String> = starts
            .iter()
            .map(|&at| (content[..at].matches('\n').count() + 1).to_string())
            .collect();
        return Err(MemoryFileError::NotUnique {
            old: old.to_string(),
            lines: lines.join(", "),
        });
    }
    let at = starts[0];
    let changed = content[..at].matches('\n').count();
    let updated = content.replacen(old, new, 1);
    let lines: Vec<&str> = updated.split('\n').collect();
    let first = changed.saturating_sub(2);
    let last = (changed + 3).min(lines.len());
    let snippet: Vec<String> = (first..last)
        .map(|i| numbered_line(i + 1, lines[i]))
        .collect();
    let answer = format!(
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
        snippet.join("\n")
    );
    Ok((updated, answer))
}

/// `insert`: `text` (without its trailing newlines) as a line after line `after` of
/// `content` (0: first), the result ending in a newline.
pub(super) fn insert(content: &str, after: i64, text: &str) -> Result<String, MemoryFileError> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    if after < 0 || after as usize > lines.len() {
        return Err(MemoryFileError::BadInsertLine {
            line: after,
            count: lines.len(),
        });
    }
    lines.insert(after as usize, text.trim_end_matches('\n'));
    let mut out = lines.join("\n");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_reference() {
        assert_eq!(size_text(0), "0B");
        assert_eq!(size_text(512), "512B");
        assert_eq!(size_text(1024), "1K");
        assert_eq!(size_text(1536), "1.5K");
        assert_eq!(size_text(3 * 1024 * 1024), "3M");
    }

    #[test]
    fn view_numbers_lines_and_honours_ranges() {
        let text = numbered("a\nb\nc", "/memories/f", None).unwrap();
        assert_eq!(
            text,
            "Here's the content of /memories/f with line numbers:\n     1\ta\n     2\tb\n     3\tc"
        );
        let text = numbered("a\nb\nc", "/memories/f", Some(&[2, -1])).unwrap();
        assert!(text.ends_with("     2\tb\n     3\tc"), "{text}");
        let text = numbered("a\nb\nc", "/memories/f", Some(&[1, 1])).unwrap();
        assert!(text.ends_with("     1\ta"), "{text}");
    }

    #[test]
    fn listings_go_two_levels_deep_and_hide_dot_names() {
        let f = |p: &[&str], n| (p.iter().map(|s| s.to_string()).collect::<Vec<_>>(), n);
        let files = [
            f(&["notes.md"], 10),
            f(&["proj", "todo.md"], 20),
            f(&["proj", "deep", "x.md"], 30),
            f(&[".hidden"], 5),
        ];
        let text = listing("/memories", &files);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
                "65B\t/memories",
                "10B\t/memories/notes.md",
                "50B\t/memories/proj/",
                "30B\t/memories/proj/deep/",
                "20B\t/memories/proj/todo.md",
            ]
        );
    }

    #[test]
    fn replace_needs_exactly_one_occurrence() {
        let (new, answer) = replace("one\ntwo\nthree\n", "two", "2", "/memories/f").unwrap();
        assert_eq!(new, "one\n2\nthree\n");
        assert!(answer.ends_with("     1\tone\n     2\t2\n     3\tthree\n     4\t"));
        let e = replace("x\nx\n", "x", "y", "/memories/f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2. Please ensure it is unique"
        );
        let e = replace("x", "z", "y", "/memories/f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "No replacement was performed, old_str `z` did not appear verbatim in /memories/f."
        );
    }

    #[test]
    fn insert_places_a_line_and_checks_the_range() {
        assert_eq!(insert("a\nb\n", 1, "x\n").unwrap(), "a\nx\nb\n");
        assert_eq!(insert("", 0, "x").unwrap(), "x\n");
        let e = insert("a\nb\n", 3, "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid `insert_line` parameter: 3. It should be within the range [0, 2]."
        );
    }
}
