//! What the sweeps of `stream` read of an index's parents' order, once per state of it:
//! where each parent's records end, where a sweep is split between two threads, and each
//! parent's shortest and longest records.

use super::blocks::{Columns, HOLD_MOST};
use super::LexicalIndex;

/// Records from which the second sweep is split between two threads (when the machine has
/// two cores): each sweeps half, and what they keep is merged.
const SPLIT_FROM: u32 = if cfg!(test) { 64 } else { 1 << 17 };

/// Whether a search of `n` records splits its work between two threads: on a large index,
/// when the machine has two cores (asked once per process: the answer reads the system's
/// limits).
pub(super) fn two_threads(n: u32) -> bool {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    n >= SPLIT_FROM
        && *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |c| c.get())) >= 2
}

/// What the sweeps of an index read of its parents' order, the same for every search of
/// one state of it, so a process that searches again does not read it again: each parent's
/// last record (none when a parent's records spread over more than can be held), and where
/// a second sweep that waits for them is split, and the lengths of each parent's shortest
/// and longest records (what bounds its records' scores, see `parent_bounds`).
pub(super) struct SweepOrder {
    pub(super) last: Option<Vec<u32>>,
    pub(super) split: Option<u32>,
    pub(super) shortest: Vec<f64>,
    pub(super) longest: Vec<f64>,
}

impl LexicalIndex {
    /// Each parent's last record (none when a parent's records spread over more than a sweep
    /// holds), where a sweep waiting for them is split, and its records' shortest and
    /// longest lengths.
    pub(super) fn sweep_order(&self, n: u32, groups: usize, cols: Columns<'_>) -> SweepOrder {
        let mut first = vec![u32::MAX; groups];
        let mut last = vec![0u32; groups];
        let mut shortest = vec![f64::INFINITY; groups];
        let mut longest = vec![f64::NEG_INFINITY; groups];
        cols.for_each(0, n, |d, p, len| {
            let p = p as usize;
            if let (Some(f), Some(l)) = (first.get_mut(p), last.get_mut(p)) {
                *f = (*f).min(d);
                *l = d;
                // (NaN, which no checked file holds, is kept: it allows no bound.)
                if len < shortest[p] || len.is_nan() {
                    shortest[p] = len;
                }
                if len > longest[p] || len.is_nan() {
                    longest[p] = len;
                }
            }
        });
        let spread = first
            .iter()
            .zip(&last)
            .any(|(f, l)| *f != u32::MAX && l - f > HOLD_MOST);
        let last = (!spread).then_some(last);
        SweepOrder {
            split: last
                .as_deref()
                .filter(|l| !l.is_empty())
                .and_then(|l| self.split_at(n, Some(l), cols)),
            last,
            shortest,
            longest,
        }
    }

    /// Where the second sweep is split between two threads, if it is: near the middle, where
    /// no parent has records on both sides when their best own scores are summed as the
    /// sweep goes (`ahead`).
    pub(super) fn split_at(&self, n: u32, ahead: Option<&[u32]>, cols: Columns<'_>) -> Option<u32> {
        if !two_threads(n) {
            return None;
        }
        let Some(last) = ahead else {
            return Some(n / 2);
        };
        // Before record `s`, the last record of any parent reached.
        let (mut reached, mut best) = (0u32, None::<u32>);
        cols.for_each(0, n.saturating_sub(1), |r, p, _| {
            let s = r + 1;
            reached = reached.max(last.get(p as usize).copied().unwrap_or(u32::MAX));
            if reached < s && best.is_none_or(|b| s.abs_diff(n / 2) < b.abs_diff(n / 2)) {
                best = Some(s);
            }
        });
        best
    }
}
