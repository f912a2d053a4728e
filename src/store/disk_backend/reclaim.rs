//! Giving back the space of dead bytes in packs (see [`ObjectStore::reclaim`]).

use std::collections::{HashMap, HashSet};

use super::DiskBackend;
use crate::store::packs::{Location, HEADER, RECORD_HEAD};
use crate::store::{ObjectStore, RawId, Reclaim, ReclaimReport, StoreResult};

/// Records copied per pack write while reclaiming space.
const MOVE_BATCH: usize = 4096;

/// What [`DiskBackend::must_rewrite`] decided for one pack.
enum Verdict {
    /// No dead bytes.
    Clean,
    /// Rewritten.
    Rewrite,
    /// Kept with its dead bytes; the pack's length.
    KeepDead(u64),
}

impl DiskBackend {
    /// Whether [`ObjectStore::reclaim`] under `rule` rewrites pack `no`, into which the
    /// index points at `live`. A pack whose records are all live is clean. One with dead
    /// bytes is rewritten when `rule` says so by their share, when it does not begin with
    /// the magic, or when its records, read in order from its start, do not end exactly at
    /// its end and pass through every live record (a record torn by a crash, after which
    /// a reader of the pack alone would lose its way); otherwise it is kept, with its length.
    fn must_rewrite(
        &self,
        no: u32,
        live: &[(RawId, Location)],
        rule: Reclaim,
    ) -> StoreResult<Verdict> {
        if !self.packs.has_magic(no)? {
            return Ok(Verdict::Rewrite);
        }
        let records = self.packs.size(no)?.saturating_sub(HEADER);
        let live_bytes: u64 = live.iter().map(|(_, loc)| loc.record_bytes()).sum();
        let dead = records.saturating_sub(live_bytes);
        if dead == 0 {
            return Ok(Verdict::Clean);
        }
        let share = match rule {
            Reclaim::Everything => return Ok(Verdict::Rewrite),
            Reclaim::DeadShare(percent) => u64::from(percent),
        };
        if dead.saturating_mul(100) >= records.saturating_mul(share) {
            return Ok(Verdict::Rewrite);
        }
        let Some((len, scanned)) = self.packs.scan(no)? else {
            return Ok(Verdict::Rewrite);
        };
        let ends = scanned
            .last()
            .map_or(HEADER, |(_, off, n)| off + RECORD_HEAD + u64::from(*n));
        let found: HashSet<(RawId, u64, u32)> = scanned.into_iter().collect();
        let all_live = live
            .iter()
            .all(|(id, loc)| loc.pack == no && found.contains(&(*id, loc.offset, loc.len)));
        Ok(if ends == len && all_live {
            Verdict::KeepDead(len)
        } else {
            Verdict::Rewrite
        })
    }

    /// [`ObjectStore::reclaim`]: the records the index finds in the packs
    /// `DiskBackend::must_rewrite` picks (the active one included) are copied to a new
    /// pack and synced (being newer, they are what the index finds); only then are the old
    /// packs and their index files deleted, so a crash part way leaves every object readable
    /// from one copy or the other. The copy list comes from the index, never from parsing
    /// the old packs, so a torn record cannot hide the live records after it. A pack kept
    /// with dead bytes gets its index file rewritten from its live records, so that no read
    /// finds the objects it no longer has.
    pub(super) fn reclaim_packs(&self, rule: Reclaim) -> StoreResult<ReclaimReport> {
        self.flush()?;
        // Every index entry, grouped by the pack it points into.
        let mut by_pack: HashMap<u32, Vec<(RawId, Location)>> = HashMap::new();
        for (id, loc) in self.index.entries()? {
            by_pack.entry(loc.pack).or_default().push((id, loc));
        }
        let mut report = ReclaimReport::default();
        let mut victims = Vec::new();
        let mut kept = Vec::new();
        for no in self.packs.numbers()? {
            let live = by_pack.get(&no).map_or(&[][..], Vec::as_slice);
            match self.must_rewrite(no, live, rule)? {
                Verdict::Clean => {}
                Verdict::Rewrite => victims.push(no),
                Verdict::KeepDead(len) => kept.push((no, len)),
            }
        }
        report.packs_kept_with_dead_bytes = kept.len() as u64;
        for (no, len) in kept {
            let live = by_pack.remove(&no).unwrap_or_default();
            self.index.rewrite(no, len, &live)?;
        }
        if victims.is_empty() {
            return Ok(report);
        }
        if victims.contains(&self.packs.active_no()) {
            self.packs.roll()?;
        }
        let mut entries: Vec<(RawId, Location)> = Vec::new();
        for no in &victims {
            entries.extend(by_pack.remove(no).unwrap_or_default());
        }
        for chunk in entries.chunks(MOVE_BATCH) {
            let mut bytes = Vec::with_capacity(chunk.len());
            for (id, loc) in chunk {
                bytes.push(self.read_indexed(id, *loc)?);
            }
            let refs: Vec<(&RawId, &[u8])> = chunk
                .iter()
                .zip(&bytes)
                .map(|((id, _), b)| (id, &b[..]))
                .collect();
            let new = self.packs.append(&refs)?;
            report.bytes_rewritten += new.iter().map(Location::record_bytes).sum::<u64>();
            let places: Vec<(RawId, Location)> = chunk
                .iter()
                .zip(new)
                .map(|((id, _), loc)| (*id, loc))
                .collect();
            self.index.add(&places);
        }
        self.flush()?;
        report.packs_rewritten = victims.len() as u64;
        for no in victims {
            // The index file first: a pack left without one is read whole at the next
            // open; an index file left without its pack would name objects as damaged.
            self.index.drop_pack(no)?;
            self.packs.remove(no)?;
        }
        self.packs.sync()?;
        Ok(report)
    }
}
