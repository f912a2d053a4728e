//! The query terms' matches read a block of records at a time, for the sweeps of `stream`:
//! their own scores and rows, computed as the other plans compute them, term by term in the
//! same order with the same functions.

use super::dates::{number, numbers};
use super::file_part::first_not_below;
use super::key_order::Spans;
use super::postings::Postings;
use super::score::{bm25_normed, length_norm};
use super::Params;

/// Where a query term's matches come from: an indexed term it reaches (its postings by
/// record, with its weight and idf), or the records dated as it names.
#[derive(Clone)]
pub(super) enum From<'a> {
    Postings {
        pieces: Pieces<'a>,
        weight: f64,
        idf: f64,
    },
    /// A run of the records dated so, ascending.
    Dated { docs: Numbers<'a>, idf: f64 },
}

/// One source of matches and the sweep's place in it.
#[derive(Clone)]
pub(super) struct Source<'a> {
    pub(super) from: From<'a>,
    pub(super) at: usize,
}

impl Source<'_> {
    pub(super) fn len(&self) -> usize {
        match &self.from {
            From::Postings { pieces, .. } => pieces.len,
            From::Dated { docs, .. } => docs.len,
        }
    }

    /// The record of match `i` (which is below `len`).
    #[inline]
    pub(super) fn doc(&self, i: usize) -> u32 {
        match &self.from {
            From::Postings { pieces, .. } => {
                let p = &pieces.pieces[pieces.piece_of(i)];
                let b = p.postings.bytes(i - p.start);
                u32::from_le_bytes([b[0], b[1], b[2], b[3]]).wrapping_add(p.shift)
            }
            From::Dated { docs, .. } => docs.get(i),
        }
    }

    /// Calls `f` with the record of each match, in order.
    pub(super) fn each_doc(&self, mut f: impl FnMut(u32)) {
        match &self.from {
            From::Postings { pieces, .. } => {
                for p in &pieces.pieces {
                    for c in p.postings.checked_bytes().chunks_exact(8) {
                        f(u32::from_le_bytes([c[0], c[1], c[2], c[3]]).wrapping_add(p.shift));
                    }
                }
            }
            From::Dated { docs, .. } => {
                for (run, shift, _) in &docs.pieces {
                    numbers(run).for_each(|d| f(d.wrapping_add(*shift)));
                }
            }
        }
    }

    /// Pushes onto `out` the records of `lo..hi` that matches `i..j` (all of whose records
    /// are in `lo..hi`) miss, ascending: halving the matches, and passing over any part
    /// whose records follow each other without a gap.
    pub(super) fn missed(&self, i: usize, j: usize, lo: u32, hi: u32, out: &mut Vec<u32>) {
        if (hi - lo) as usize == j - i {
            return;
        }
        if i == j {
            out.extend(lo..hi);
            return;
        }
        let mid = (i + j) / 2;
        let d = self.doc(mid);
        if d < lo || d >= hi {
            // Not ascending: only a damaged file reads so (and has noted it).
            return;
        }
        self.missed(i, mid, lo, d, out);
        self.missed(mid + 1, j, d + 1, hi, out);
    }

    /// Moves to the first match of a record at or after `d` (matches hold ascending
    /// records): forward from where it is by [`first_from`], or back by halves.
    pub(super) fn seek(&mut self, d: u32) {
        self.at = match self.at > 0 && self.doc(self.at - 1) >= d {
            true => first_not_below(self.at, |i| self.doc(i) < d),
            false => first_from(self.at, self.len(), d, |i| self.doc(i)),
        };
    }
}

/// The first of items `lo..hi` (ascending numbers: item `i` is `num(i)`) at or after `d`
/// (`hi` when none is). It starts where the items would put `d` if they were spread evenly
/// (nearly where it is, for a term most records hold) and steps out from there by doubling
/// steps, then halves: so a seek past records passed over reads the postings around where
/// it lands, not a trail of probes between (each probe would map pages of the file).
pub(super) fn first_from(lo: usize, hi: usize, d: u32, num: impl Fn(usize) -> u32) -> usize {
    if lo >= hi || num(lo) >= d {
        return lo;
    }
    if num(hi - 1) < d {
        return hi;
    }
    // num(lo) < d <= num(hi - 1): the first at or after `d` is in lo + 1..hi.
    let (first, last) = (num(lo), num(hi - 1));
    let spread = u64::from(d - first) * (hi - 1 - lo) as u64;
    let guess = lo + (spread / u64::from(last - first).max(1)) as usize;
    let guess = guess.clamp(lo + 1, hi - 1);
    let mut step = 1;
    let (a, b) = if num(guess) < d {
        let mut a = guess + 1;
        loop {
            let probe = a + step - 1;
            if probe >= hi || num(probe) >= d {
                break (a, probe.min(hi));
            }
            a = probe + 1;
            step *= 2;
        }
    } else {
        let mut b = guess;
        loop {
            let probe = b.saturating_sub(step).max(lo);
            if probe == lo || num(probe) < d {
                break (probe + 1, b);
            }
            b = probe;
            step *= 2;
        }
    };
    a + first_not_below(b - a, |i| num(a + i) < d)
}

/// A term's postings by record, ascending: pieces of postings as the file holds them (8
/// bytes each, checked as they are read), each with what turns its documents into records
/// (added; nothing when records are documents, see `key_order`).
#[derive(Clone, Default)]
pub(super) struct Pieces<'a> {
    pieces: Vec<Piece<'a>>,
    /// Postings in all.
    len: usize,
}

#[derive(Clone, Copy)]
struct Piece<'a> {
    postings: Postings<'a>,
    shift: u32,
    /// Postings before it.
    start: usize,
}

impl<'a> Pieces<'a> {
    /// Postings whose documents are their records.
    pub(super) fn whole(postings: Postings<'a>) -> Self {
        let mut p = Pieces::default();
        p.push(postings, 0);
        p
    }

    /// Adds postings after those held, their documents' records `shift` past them.
    pub(super) fn push(&mut self, postings: Postings<'a>, shift: u32) {
        if postings.len() > 0 {
            self.pieces.push(Piece {
                postings,
                shift,
                start: self.len,
            });
            self.len += postings.len();
        }
    }

    /// The piece holding posting `i` (the number of pieces when `i` is past the last).
    #[inline]
    fn piece_of(&self, i: usize) -> usize {
        match self.pieces.len() {
            1 if i < self.len => 0,
            _ => (self.pieces).partition_point(|p| p.start + p.postings.len() <= i),
        }
    }
}

/// Records by number, ascending: pieces of ascending numbers (4 little-endian bytes each,
/// a run of the file's date-ordered table where they lie, or worked out), each with what
/// turns its numbers into records (added; nothing when records are documents, see
/// `key_order`).
#[derive(Clone, Default)]
pub(super) struct Numbers<'a> {
    /// Per piece its numbers, its shift and the numbers before it.
    pieces: Vec<(std::borrow::Cow<'a, [u8]>, u32, usize)>,
    /// Numbers in all.
    len: usize,
}

impl<'a> Numbers<'a> {
    /// Numbers held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Numbers that are their records.
    pub(super) fn whole(run: &'a [u8]) -> Self {
        let mut n = Numbers::default();
        n.push(std::borrow::Cow::Borrowed(run), 0);
        n
    }

    /// Adds numbers after those held, their records `shift` past them.
    pub(super) fn push(&mut self, run: std::borrow::Cow<'a, [u8]>, shift: u32) {
        let count = run.len() / 4;
        if count > 0 {
            self.pieces.push((run, shift, self.len));
            self.len += count;
        }
    }

    /// The piece holding number `i` (the number of pieces when `i` is past the last).
    #[inline]
    fn piece_of(&self, i: usize) -> usize {
        match self.pieces.len() {
            1 if i < self.len => 0,
            _ => (self.pieces).partition_point(|p| p.2 + p.0.len() / 4 <= i),
        }
    }

    /// Record `i` (which is below `len`).
    #[inline]
    fn get(&self, i: usize) -> u32 {
        let (run, shift, start) = &self.pieces[self.piece_of(i)];
        number(run, i - start).wrapping_add(*shift)
    }
}

/// One query term: its sources (`sources[range]`), in the order the other plans read them
/// (the indexed terms it reaches, then the date field), and whether it is reached one way
/// only (its score then goes straight into the own score).
#[derive(Clone)]
pub(super) struct Term {
    pub(super) range: std::ops::Range<usize>,
    pub(super) direct: bool,
}

/// Records read at a time (fewer in tests, so that their indexes span several blocks).
pub(super) const BLOCK: u32 = if cfg!(test) { 32 } else { 4096 };

/// Most records held at once while the sweep waits for a parent's last record (its best
/// own score is then known): past it, own scores are summed in a sweep of their own first.
pub(super) const HOLD_MOST: u32 = if cfg!(test) { 48 } else { 1 << 16 };

/// The records `lo..hi` read from the query terms' matches and not yet let go: whether each
/// holds a query term, its own score (the sum, term by term, of each term's score, the best
/// of its ways when it is reached several) and its row (each term's weighted frequency in
/// it), by record less `lo`.
pub(super) struct Held {
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) hit: Vec<bool>,
    pub(super) own: Vec<f64>,
    pub(super) rows: Vec<f64>,
    /// Each record's parent number.
    pub(super) parent: Vec<u32>,
    /// Each record's length.
    pub(super) len: Vec<f64>,
    pub(super) terms: usize,
}

impl Held {
    pub(super) fn new(terms: usize) -> Self {
        Held {
            lo: 0,
            hi: 0,
            hit: Vec::new(),
            own: Vec::new(),
            rows: Vec::new(),
            parent: Vec::new(),
            len: Vec::new(),
            terms,
        }
    }

    /// Holds nothing, the next record read being `at`.
    pub(super) fn reset(&mut self, at: u32) {
        self.lo = at;
        self.hi = at;
        self.hit.clear();
        self.own.clear();
        self.rows.clear();
        self.parent.clear();
        self.len.clear();
    }

    /// Lets go of the records before `d` (a block at a time).
    #[inline]
    pub(super) fn forget_before(&mut self, d: u32) {
        if d >= self.lo.saturating_add(2 * BLOCK) && d <= self.hi {
            self.drop_before(d);
        }
    }

    /// [`Held::forget_before`]'s work, out of line: it is tested for every record and done
    /// once a block.
    #[inline(never)]
    fn drop_before(&mut self, d: u32) {
        let k = (d - self.lo) as usize;
        self.hit.drain(..k);
        self.own.drain(..k);
        self.rows.drain(..k * self.terms);
        self.parent.drain(..k);
        self.len.drain(..k);
        self.lo = d;
    }

    /// Whether held record `d` holds a query term.
    #[inline]
    pub(super) fn hit(&self, d: u32) -> bool {
        self.hit[(d - self.lo) as usize]
    }

    /// The own score of held record `d` (zero when it holds no query term).
    #[inline]
    pub(super) fn own_of(&self, d: u32) -> f64 {
        let i = (d - self.lo) as usize;
        if self.hit[i] {
            self.own[i]
        } else {
            0.0
        }
    }

    /// The length of held record `d`.
    #[inline]
    pub(super) fn len(&self, d: u32) -> f64 {
        self.len[(d - self.lo) as usize]
    }

    /// The parent number of held record `d`.
    #[inline]
    pub(super) fn parent(&self, d: u32) -> u32 {
        self.parent[(d - self.lo) as usize]
    }

    #[inline]
    pub(super) fn row(&self, d: u32) -> &[f64] {
        let i = (d - self.lo) as usize * self.terms;
        &self.rows[i..i + self.terms]
    }
}

/// Per record of the block being read: whether the term being read matches it, its best
/// score for the term so far, and its BM25 length norm.
#[derive(Default, Clone)]
pub(super) struct Scratch {
    pub(super) term_hit: Vec<bool>,
    pub(super) term_best: Vec<f64>,
    pub(super) norm: Vec<f64>,
}

/// The query terms' matches, read a block of records at a time.
#[derive(Clone)]
pub(super) struct Reader<'a> {
    pub(super) sources: Vec<Source<'a>>,
    pub(super) terms: Vec<Term>,
    /// Records' lengths and parents.
    pub(super) cols: Columns<'a>,
    /// Documents of the file part.
    pub(super) n: u32,
    pub(super) avg: f64,
    pub(super) pr: Params,
    pub(super) scratch: Scratch,
}

impl Reader<'_> {
    /// The first record at or after `d` a query term matches (the sources moved there).
    pub(super) fn next_match(&mut self, d: u32) -> Option<u32> {
        self.sources
            .iter_mut()
            .filter_map(|s| {
                s.seek(d);
                (s.at < s.len()).then(|| s.doc(s.at))
            })
            .min()
    }

    /// Reads the records `held.hi..hi` into `held`.
    pub(super) fn read(&mut self, hi: u32, held: &mut Held) {
        let lo = held.hi;
        let (len, nt) = ((hi - lo) as usize, self.terms.len());
        let base = (lo - held.lo) as usize;
        let pr = self.pr;
        held.hit.resize(base + len, false);
        held.own.resize(base + len, 0.0);
        held.rows.resize((base + len) * nt, 0.0);
        held.parent.reserve(len);
        held.len.reserve(len);
        self.cols.for_each(lo, hi, |_, p, l| {
            held.parent.push(p);
            held.len.push(l);
        });
        held.hi = hi;
        let Scratch {
            term_hit,
            term_best,
            norm,
        } = &mut self.scratch;
        let avg = self.avg;
        norm.clear();
        norm.extend(held.len[base..].iter().map(|&l| length_norm(l, avg, &pr)));
        term_hit.resize(len, false);
        term_best.resize(len, 0.0);
        for (ti, t) in self.terms.iter().enumerate() {
            // A term reached one way scores each record once: straight into its own score.
            // Reached several ways, a record keeps its best (in `term_best` first).
            let direct = t.direct;
            if !direct {
                term_hit[..len].iter_mut().for_each(|h| *h = false);
                term_best[..len].iter_mut().for_each(|x| *x = 0.0);
            }
            let rows = &mut held.rows[base * nt..(base + len) * nt];
            let own = &mut held.own[base..base + len];
            let hit = &mut held.hit[base..base + len];
            // Each match of the term in the block: its record's score for the term and
            // weighted frequency.
            let mut add = |i: usize, score: f64, tf: f64| {
                if direct {
                    // What keeping the best of one score and adding it gives, to the bit.
                    own[i] += if score > 0.0 { score } else { 0.0 };
                    hit[i] = true;
                } else {
                    if score > term_best[i] {
                        term_best[i] = score;
                    }
                    term_hit[i] = true;
                }
                rows[i * nt + ti] += tf;
            };
            for s in &mut self.sources[t.range.clone()] {
                s.seek(lo);
                let Source { from, at } = s;
                match from {
                    From::Postings {
                        pieces,
                        weight,
                        idf,
                    } => {
                        let (weight, idf) = (*weight, *idf);
                        let mut k = pieces.piece_of(*at);
                        'pieces: while let Some(p) = pieces.pieces.get(k) {
                            // A file block of postings at a time, each checked as it is
                            // first read.
                            let run = p.postings.run_from(*at - p.start);
                            if run.is_empty() {
                                if *at - p.start < p.postings.len() {
                                    // Damaged (the index is marked so).
                                    break;
                                }
                                k += 1;
                                continue;
                            }
                            for c in run.chunks_exact(8) {
                                let d = u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                                    .wrapping_add(p.shift);
                                if d >= hi {
                                    break 'pieces;
                                }
                                let i = (d - lo) as usize;
                                let key_tf = u16::from_le_bytes([c[4], c[5]]);
                                let content_tf = u16::from_le_bytes([c[6], c[7]]);
                                let tf = pr.key_weight * key_tf as f64 + content_tf as f64;
                                add(i, weight * bm25_normed(idf, tf, norm[i], &pr), weight * tf);
                                *at += 1;
                            }
                        }
                    }
                    From::Dated { docs, idf } => {
                        let tf = pr.date_weight;
                        let k = docs.piece_of(*at);
                        'runs: for (run, shift, start) in docs.pieces.iter().skip(k) {
                            for d in numbers(&run[4 * (*at - start)..]) {
                                let d = d.wrapping_add(*shift);
                                if d >= hi {
                                    break 'runs;
                                }
                                let i = (d - lo) as usize;
                                add(i, bm25_normed(*idf, tf, norm[i], &pr), tf);
                                *at += 1;
                            }
                        }
                    }
                }
            }
            if !direct {
                for i in 0..len {
                    if term_hit[i] {
                        own[i] += term_best[i];
                        hit[i] = true;
                    }
                }
            }
        }
    }
}

/// Each record's length and parent number: the file part's columns, read by document where
/// records are its documents; for an index changed since its file part, read through each
/// record's document (the file's columns for its documents, the overlay's own lengths and
/// parents for the overlay's), so that no column is copied per record.
#[derive(Clone, Copy)]
pub(super) struct Columns<'a> {
    /// The file part's lengths (8 bytes a document) and parents (4 bytes).
    lens: &'a [u8],
    parents: &'a [u8],
    /// Per record its document, when records are not documents.
    docs: Option<&'a Spans>,
    /// Documents of the file part; the overlay's documents follow, their lengths and parents
    /// by slot.
    n_base: u32,
    over_lens: &'a [f64],
    over_parents: &'a [u32],
}

impl<'a> Columns<'a> {
    /// The file part's columns, records being its documents.
    pub(super) fn of_file(lens: &'a [u8], parents: &'a [u8]) -> Self {
        Columns {
            lens,
            parents,
            docs: None,
            n_base: 0,
            over_lens: &[],
            over_parents: &[],
        }
    }

    /// Columns read through `docs` (per record its document): documents below `n_base` from
    /// the file part's columns, the others from the overlay's lengths and parents by slot.
    pub(super) fn through(
        file: Columns<'a>,
        docs: &'a Spans,
        n_base: u32,
        over_lens: &'a [f64],
        over_parents: &'a [u32],
    ) -> Self {
        Columns {
            docs: Some(docs),
            n_base,
            over_lens,
            over_parents,
            ..file
        }
    }

    /// The document number of record `r`.
    #[inline]
    pub(super) fn doc(&self, r: u32) -> u32 {
        self.docs.map_or(r, |docs| docs.doc(r))
    }

    /// Where record `r`'s length and parent are: its document in the file's columns
    /// (`Ok`), or an overlay slot (`Err`).
    #[inline]
    fn place(&self, r: u32) -> Result<u32, usize> {
        match self.doc(r) {
            d if d < self.n_base || self.docs.is_none() => Ok(d),
            d => Err((d - self.n_base) as usize),
        }
    }

    /// Calls `f` with each record of `lo..hi`, its parent and its length, in order (0 past
    /// the end: only a damaged file is read so): a span of the file's columns at a time.
    pub(super) fn for_each(&self, lo: u32, hi: u32, mut f: impl FnMut(u32, u32, f64)) {
        let mut part = |a: u32, b: u32, doc: u32| match self.docs.is_some() && doc >= self.n_base {
            true => {
                for r in a..b {
                    let slot = (doc - self.n_base + (r - a)) as usize;
                    let len = self.over_lens.get(slot).map_or(0.0, |l| *l);
                    f(r, self.over_parents.get(slot).map_or(0, |p| *p), len);
                }
            }
            false => {
                let (x, y) = (doc as usize, (doc + (b - a)) as usize);
                match (self.parents.get(4 * x..4 * y), self.lens.get(8 * x..8 * y)) {
                    (Some(ps), Some(ls)) => {
                        for (r, (p, l)) in (a..b).zip(ps.chunks_exact(4).zip(ls.chunks_exact(8))) {
                            let p = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
                            let l = f64::from_le_bytes([
                                l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7],
                            ]);
                            f(r, p, l);
                        }
                    }
                    _ => (a..b).for_each(|r| f(r, self.parent(r), self.len(r))),
                }
            }
        };
        match self.docs {
            None => part(lo, hi, lo),
            Some(spans) => {
                let mut end = lo;
                for (a, b, doc) in spans.segments(lo, hi) {
                    part(a, b, doc);
                    end = b;
                }
                (end.max(lo)..hi).for_each(|r| f(r, 0, 0.0));
            }
        }
    }

    /// The length of record `r` (0 past the end: only a damaged file is read so).
    #[inline]
    pub(super) fn len(&self, r: u32) -> f64 {
        match self.place(r) {
            Ok(d) => len_in(self.lens, d),
            Err(slot) => self.over_lens.get(slot).map_or(0.0, |l| *l),
        }
    }

    /// The parent number of record `r` (0 past the end: only a damaged file is read so).
    #[inline]
    pub(super) fn parent(&self, r: u32) -> u32 {
        match self.place(r) {
            Ok(d) => parent_in(self.parents, d),
            Err(slot) => self.over_parents.get(slot).map_or(0, |p| *p),
        }
    }
}

/// The parent number of document `d` in the parents' column (0 past its end: only a
/// damaged file, which the file part has noted, is read so).
#[inline]
pub(super) fn parent_in(parents: &[u8], d: u32) -> u32 {
    let i = d as usize * 4;
    match parents.get(i..i + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

/// The length of document `d` in the lengths' column (0 past its end: only a damaged file,
/// which the file part has noted, is read so).
#[inline]
pub(super) fn len_in(lens: &[u8], d: u32) -> f64 {
    let i = d as usize * 8;
    match lens.get(i..i + 8) {
        Some(b) => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// From any place, a seek lands on the first match at or after the record sought,
        /// whether the matches are spread evenly or bunched (where a guess by their spread
        /// is far off).
        #[test]
        fn seek_finds_the_first_match_at_or_after(
            gaps in prop::collection::vec(prop_oneof![4 => 1u32..3, 1 => 1u32..5000], 0..300),
            at in 0usize..310,
            d in 0u32..400_000,
        ) {
            let docs: Vec<u32> = gaps.iter().scan(0u32, |x, g| { *x += g; Some(*x) }).collect();
            let bytes: Vec<u8> = docs
                .iter()
                .flat_map(|&x| [x.to_le_bytes(), [1, 0, 1, 0]].concat())
                .collect();
            let want = docs.partition_point(|&x| x < d);
            let at = at.min(docs.len());
            let dated_bytes: Vec<u8> = docs.iter().flat_map(|d| d.to_le_bytes()).collect();
            let dated = From::Dated { docs: Numbers::whole(&dated_bytes), idf: 1.0 };
            let postings = From::Postings {
                pieces: Pieces::whole(Postings::in_memory(&bytes)),
                weight: 1.0,
                idf: 1.0,
            };
            for from in [dated, postings] {
                let mut s = Source { from, at };
                s.seek(d);
                prop_assert_eq!(s.at, want);
            }
        }
    }
}
