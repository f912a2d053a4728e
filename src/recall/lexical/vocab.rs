//! The terms of an index build, numbered in the order they are first seen. Their names sit
//! end to end in one buffer and the table holds only numbers, so the millions of distinct
//! terms of a large store (numbers, item names) cost no allocation each to add, and none
//! each to free when the build is done.

use hashbrown::HashTable;

/// Term names by number, and the number of each name.
#[derive(Default)]
pub(super) struct Vocab {
    /// Every name, end to end.
    names: String,
    /// Per term, where its name ends in `names`.
    ends: Vec<usize>,
    /// (term number, the name's 32-bit hash), found by the name.
    table: HashTable<(u32, u32)>,
}

/// A name's hash: 32 bits (kept beside the number, so growing the table reads no name),
/// spread over 64 for the table, which takes its bucket from the low bits and its tag
/// from the high ones.
fn hash32(name: &str) -> u32 {
    use std::hash::Hasher;
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(name.as_bytes());
    hasher.finish() as u32
}

/// Term `id`'s name, given the names and where each ends.
fn name_in<'a>(names: &'a str, ends: &[usize], id: u32) -> &'a str {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &names[start..ends[id]]
}

fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Vocab {
    /// Terms numbered so far.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The name of term `id`.
    pub(super) fn name(&self, id: u32) -> &str {
        name_in(&self.names, &self.ends, id)
    }

    /// The number of term `name`, numbering it next if it is new.
    pub(super) fn id(&mut self, name: &str) -> u32 {
        let h = hash32(name);
        let Vocab { names, ends, table } = self;
        let found = table.find(spread(h), |&(id, hid)| {
            hid == h && name_in(names, ends, id) == name
        });
        if let Some(&(id, _)) = found {
            return id;
        }
        let id = ends.len() as u32;
        names.push_str(name);
        ends.push(names.len());
        table.insert_unique(spread(h), (id, h), |&(_, hid)| spread(hid));
        id
    }

    /// The term numbers in name order (byte order). Millions of names are compared by their
    /// first sixteen bytes held inline first (numbered names such as `item000123` share
    /// their first eight), so most comparisons neither read the names nor call memcmp; only
    /// names that share those bytes are compared whole.
    pub(super) fn sorted(&self) -> Vec<u32> {
        let head = |s: &str| {
            let mut b = [0u8; 16];
            let n = s.len().min(16);
            b[..n].copy_from_slice(&s.as_bytes()[..n]);
            u128::from_be_bytes(b)
        };
        let mut order: Vec<(u128, u32)> = (0..self.len() as u32)
            .map(|id| (head(self.name(id)), id))
            .collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.name(a.1).cmp(self.name(b.1)))
        });
        order.into_iter().map(|(_, id)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_first_seen_order_and_sorts_by_name() {
        let mut v = Vocab::default();
        let words = [
            "pytest",
            "item000123",
            "",
            "a",
            "pytest",
            "itemz",
            "item000123",
            "é",
        ];
        let ids: Vec<u32> = words.iter().map(|w| v.id(w)).collect();
        assert_eq!(ids, [0, 1, 2, 3, 0, 4, 1, 5]);
        assert_eq!(v.len(), 6);
        assert_eq!(v.name(1), "item000123");
        assert_eq!(v.name(2), "");
        let names: Vec<&str> = v.sorted().into_iter().map(|id| v.name(id)).collect();
        assert_eq!(names, ["", "a", "item000123", "itemz", "pytest", "é"]);
        // Many terms: the table grows and every name keeps its number.
        for i in 0..50_000 {
            assert_eq!(v.id(&format!("n{i}")), 6 + i);
        }
        for i in (0..50_000).step_by(997) {
            assert_eq!(v.id(&format!("n{i}")), 6 + i);
        }
        let sorted = v.sorted();
        assert!(sorted.windows(2).all(|w| v.name(w[0]) < v.name(w[1])));
    }
}
