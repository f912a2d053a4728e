//! [`PrefixCounts`]: one namespace's memory counts per key prefix, as `summarize --depth N`
//! reports them. At depth 3 a store has about one prefix per key, so the paths share one
//! buffer instead of being a string (an allocation) each.

use serde::{Serialize, Serializer};

use crate::key::push_dotted;

/// Memory counts per key prefix (a dot path) of one namespace, in path order. Serialises
/// as a JSON object from path to count.
#[derive(Debug, Clone, Default)]
pub struct PrefixCounts {
    /// The paths, one after another.
    text: String,
    /// Each path's start and end in `text`, and its count, in path order.
    entries: Vec<(usize, usize, u64)>,
}

impl PrefixCounts {
    /// The prefixes and their counts, in path order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, u64)> + '_ {
        self.entries.iter().map(|&(s, e, n)| (&self.text[s..e], n))
    }

    /// The count of one prefix, if it has any memory.
    pub fn get(&self, path: &str) -> Option<u64> {
        self.entries
            .binary_search_by(|&(s, e, _)| self.text[s..e].cmp(path))
            .ok()
            .map(|i| self.entries[i].2)
    }

    /// How many prefixes there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no prefix has a memory.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl PartialEq for PrefixCounts {
    /// The same paths with the same counts, however the buffer is laid out.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for PrefixCounts {}

impl<S: AsRef<str>> FromIterator<(S, u64)> for PrefixCounts {
    /// From pairs in any order; a path given twice has the sum of its counts.
    fn from_iter<I: IntoIterator<Item = (S, u64)>>(pairs: I) -> Self {
        let mut b = PrefixCountsBuilder::default();
        for (p, n) in pairs {
            b.push(p.as_ref().as_bytes(), n);
        }
        b.finish()
    }
}

impl Serialize for PrefixCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Gathers prefix counts from a walk in key order (encoded group paths, with segment
/// separators); the same group may be added more than once.
#[derive(Debug, Default)]
pub(crate) struct PrefixCountsBuilder {
    bytes: Vec<u8>,
    entries: Vec<(usize, usize, u64)>,
}

impl PrefixCountsBuilder {
    /// A builder with room for the groups of `keys` keys (as many groups as keys at most,
    /// capped: a shallow summary has few), so a deep one grows without copying.
    pub(crate) fn for_keys(keys: u64) -> Self {
        let groups = keys.min(1 << 14) as usize;
        PrefixCountsBuilder {
            bytes: Vec::with_capacity(groups * 32),
            entries: Vec::with_capacity(groups),
        }
    }

    /// Adds `n` memories under the encoded path `encoded_path` (the part of an encoded key
    /// or group after its namespace; dot paths pass through unchanged). A path added again
    /// is merged by [`PrefixCountsBuilder::finish`].
    pub(crate) fn push(&mut self, encoded_path: &[u8], n: u64) {
        let start = self.bytes.len();
        push_dotted(encoded_path, &mut self.bytes);
        self.entries.push((start, self.bytes.len(), n));
    }

    /// The counts, sorted by path (key order is nearly path order: the sort meets runs
    /// already in order). Paths that are not valid UTF-8, which no valid key has, are
    /// replaced lossily, as everywhere keys are shown.
    pub(crate) fn finish(self) -> PrefixCounts {
        let (text, mut entries) = match String::from_utf8(self.bytes) {
            Ok(text) => (text, self.entries),
            Err(e) => {
                let bytes = e.into_bytes();
                let mut text = String::with_capacity(bytes.len());
                let entries = self
                    .entries
                    .iter()
                    .map(|&(s, e, n)| {
                        let start = text.len();
                        text.push_str(&String::from_utf8_lossy(&bytes[s..e]));
                        (start, text.len(), n)
                    })
                    .collect();
                (text, entries)
            }
        };
        entries.sort_by(|a, b| text[a.0..a.1].cmp(&text[b.0..b.1]));
        // Equal paths (a path added once per key, or made equal by lossy replacement)
        // become one, with the sum of their counts.
        entries.dedup_by(|later, kept| {
            let same = text[later.0..later.1] == text[kept.0..kept.1];
            if same {
                kept.2 += later.2;
            }
            same
        });
        PrefixCounts { text, entries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::SEG_SEP;

    /// Encoded paths become dot paths sorted as text (not in key order, where the
    /// separator sorts before every character); a repeated group adds up.
    #[test]
    fn counts_are_sorted_by_dot_path_and_merged() {
        let mut b = PrefixCountsBuilder::default();
        b.push(&[b'a', SEG_SEP, b'b'], 2);
        b.push(&[b'a', SEG_SEP, b'b'], 1);
        b.push(b"a-c", 1);
        b.push("é".as_bytes(), 3);
        let pc = b.finish();
        let got: Vec<(&str, u64)> = pc.iter().collect();
        assert_eq!(got, vec![("a-c", 1), ("a.b", 3), ("é", 3)]);
        assert_eq!(pc.get("a.b"), Some(3));
        assert_eq!(pc.get("a"), None);
        assert_eq!(pc.len(), 3);
        assert_eq!(
            serde_json::to_string(&pc).unwrap(),
            r#"{"a-c":1,"a.b":3,"é":3}"#
        );
    }

    /// Invalid UTF-8 is shown lossily, and two paths it makes equal are one.
    #[test]
    fn invalid_utf8_is_replaced_and_merged() {
        let mut b = PrefixCountsBuilder::default();
        b.push(&[b'x', 0xff], 1);
        b.push(b"m", 4);
        b.push(&[b'x', 0xfe], 2);
        let pc = b.finish();
        let got: Vec<(&str, u64)> = pc.iter().collect();
        assert_eq!(got, vec![("m", 4), ("x\u{fffd}", 3)]);
        let from_pairs: PrefixCounts = [("x\u{fffd}", 3), ("m", 4)].into_iter().collect();
        assert_eq!(from_pairs, pc);
    }
}
