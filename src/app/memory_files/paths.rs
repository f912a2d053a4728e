//! Paths of the memory tool (`/memories/dir/file.md`) and the keys they name.
//!
//! A path is `/memories` followed by names separated by `/`; `.` names are dropped and `..`
//! goes up one level, but never above `/memories`. Each name is one key segment: `%` is
//! written `%25` and `.` is written `%2E` (key segments cannot hold a dot), so
//! `/memories/notes/todo.md` is the key `notes.todo%2Emd`. Every other character must be one
//! the key rules allow in a segment, and the path obeys their limits (at most 8 names, 64
//! bytes a name after escaping, 256 in all).

use crate::key::{Key, SEG_SEP};

use super::MemoryFileError;

/// The directory every path lives under.
pub const ROOT: &str = "/memories";

/// A checked path: what the caller wrote (for messages) and the key segments it names
/// (none for `/memories` itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemoryPath {
    /// The path as given.
    pub shown: String,
    /// Key segments (escaped names), outermost first.
    pub segments: Vec<String>,
}

impl MemoryPath {
    /// Checks `path` (see the module documentation) for keys of `namespace`.
    pub fn parse(path: &str, namespace: &str) -> Result<MemoryPath, MemoryFileError> {
        let rest = match path.strip_prefix(ROOT) {
            Some(r) if r.is_empty() || r.starts_with('/') => r,
            _ => {
                return Err(MemoryFileError::OutsideRoot {
                    path: path.to_string(),
                })
            }
        };
        let mut names: Vec<&str> = Vec::new();
        for name in rest.split('/') {
            match name {
                "" | "." => {}
                ".." => {
                    if names.pop().is_none() {
                        return Err(MemoryFileError::Escapes {
                            path: path.to_string(),
                        });
                    }
                }
                n => names.push(n),
            }
        }
        let segments: Vec<String> = names.iter().map(|n| escape(n)).collect();
        if !segments.is_empty() {
            Key::new(namespace, &segments.join(".")).map_err(|e| MemoryFileError::InvalidName {
                path: path.to_string(),
                why: e.to_string(),
            })?;
        }
        Ok(MemoryPath {
            shown: path.to_string(),
            segments,
        })
    }

    /// Whether this is `/memories` itself.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The key of the file at this path (none for the root).
    pub fn key(&self, namespace: &str) -> Option<Key> {
        if self.is_root() {
            return None;
        }
        Key::new(namespace, &self.segments.join(".")).ok()
    }

    /// The encoded prefix of every key strictly below this path (a directory's contents).
    pub fn below(&self, namespace: &str) -> Vec<u8> {
        let mut out = crate::key::namespace_prefix(namespace);
        for s in &self.segments {
            out.extend_from_slice(s.as_bytes());
            out.push(SEG_SEP);
        }
        out
    }
}

/// A name as a key segment: `%` as `%25`, `.` as `%2E`.
pub(crate) fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in name.chars() {
        match ch {
            '%' => out.push_str("%25"),
            '.' => out.push_str("%2E"),
            c => out.push(c),
        }
    }
    out
}

/// A key segment as a name: `%2E` (or `%2e`) as `.`, `%25` as `%`; any other `%` stays.
pub(crate) fn unescape(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    let mut rest = segment;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail
            .strip_prefix("%2E")
            .or_else(|| tail.strip_prefix("%2e"))
        {
            out.push('.');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("%25") {
            out.push('%');
            rest = after;
        } else {
            out.push('%');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(p: &str) -> Vec<String> {
        MemoryPath::parse(p, "default").expect(p).segments
    }

    #[test]
    fn names_map_to_segments_and_back() {
        assert_eq!(segs("/memories"), Vec::<String>::new());
        assert_eq!(segs("/memories/"), Vec::<String>::new());
        assert_eq!(segs("/memories/notes/todo.md"), ["notes", "todo%2Emd"]);
        assert_eq!(segs("/memories/a/./b/../c"), ["a", "c"]);
        assert_eq!(segs("/memories/100%.txt"), ["100%25%2Etxt"]);
        for name in ["todo.md", "100%.txt", "a%2Eb", "plain"] {
            assert_eq!(unescape(&escape(name)), name);
        }
    }

    #[test]
    fn paths_outside_the_root_or_the_key_rules_are_refused() {
        let e = MemoryPath::parse("/etc/passwd", "default").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Path must start with /memories, got: /etc/passwd"
        );
        assert!(MemoryPath::parse("/memoriesx/a", "default").is_err());
        let e = MemoryPath::parse("/memories/../etc", "default").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Path /memories/../etc would escape /memories directory"
        );
        let e = MemoryPath::parse("/memories/my notes.md", "default").unwrap_err();
        assert!(matches!(e, MemoryFileError::InvalidName { .. }), "{e}");
        let deep = format!("/memories/{}", ["d"; 9].join("/"));
        assert!(MemoryPath::parse(&deep, "default").is_err());
    }
}
