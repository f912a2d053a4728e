//! Rebuilding a store's database from what it is derived from: the object index from the
//! packs (each record names its object and length), the refs from the ref log. For a store
//! whose `db/` is lost or damaged; `fsck --repair` runs it, then checks the result.

use std::fs::{self, File};
use std::path::Path;

use serde::Serialize;

use super::files::{io_err, sync_dir};
use super::format_file::read_format;
use super::handle::Engine;
use super::lifecycle::DB_DIR;
use super::lock;
use super::pack_index::scan;
use super::packs::{pack_files, Location, PACKS_DIR};
use super::{reflog, BackendKind, SledBackend, Store, StoreError, StoreResult};

/// What a repair did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// Where the old database was moved (relative to the store), if there was one.
    pub old_database: Option<String>,
    /// Pack records indexed.
    pub objects_indexed: u64,
    /// The refs restored from the ref log.
    pub refs_restored: Vec<String>,
    /// Packs whose records end before the file does (a tail torn by a crash): the records
    /// after the tear are not indexed.
    pub torn_packs: Vec<String>,
}

impl Store {
    /// Rebuilds the database of the store in `path` (holding its LOCK): the old `db/`, if
    /// any, is moved aside to `db.damaged-N`, a new one is made, every whole record of every
    /// pack is indexed, and every ref is set to the value its last ref-log entry gave it.
    /// Returns the store, open, and what was done. Refuses, changing nothing, a store without
    /// a ref log (the refs could not be restored).
    pub fn repair(path: &Path, opts: &super::OpenOptions) -> StoreResult<(Store, RepairReport)> {
        read_format(path)?;
        let lock = lock::lock_existing(path, opts.lock_timeout)?;
        if !reflog::exists(path) {
            return Err(StoreError::CannotRepair {
                path: path.to_path_buf(),
                reason: "it has no ref log to restore the refs from".into(),
            });
        }
        let refs = reflog::final_refs(path)?;
        let mut report = RepairReport::default();
        let db = path.join(DB_DIR);
        if fs::symlink_metadata(&db).is_ok() {
            let aside = (1..)
                .map(|n| format!("db.damaged-{n}"))
                .find(|n| fs::symlink_metadata(path.join(n)).is_err())
                .expect("a free name");
            fs::rename(&db, path.join(&aside)).map_err(io_err(&db))?;
            report.old_database = Some(aside);
        }
        fs::create_dir(&db).map_err(io_err(&db))?;
        sync_dir(path)?;
        let backend = SledBackend::try_open(
            &db,
            &path.join(PACKS_DIR),
            opts.cache_bytes,
            opts.pack_bytes,
        )?
        .ok_or_else(|| StoreError::CannotRepair {
            path: path.to_path_buf(),
            reason: "its new database is held by another handle".into(),
        })?;
        let mut entries = Vec::new();
        for (no, pack, len) in pack_files(&path.join(PACKS_DIR))? {
            let file = File::open(&pack).map_err(io_err(&pack))?;
            let records = scan(&file, 0, len).map_err(io_err(&pack))?;
            let end = records
                .last()
                .map_or(8, |(_, off, n)| off + 36 + u64::from(*n));
            if end < len {
                report.torn_packs.push(format!(
                    "{PACKS_DIR}/{}",
                    pack.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
            entries.extend(records.into_iter().map(|(id, offset, n)| {
                (
                    id,
                    Location {
                        pack: no,
                        offset,
                        len: n,
                    },
                )
            }));
        }
        backend.fill(&entries, &refs)?;
        report.objects_indexed = entries.len() as u64;
        report.refs_restored = refs.into_iter().map(|(name, _)| name).collect();
        let store = Store::from_parts(
            Engine::Sled(backend),
            Some(lock),
            Some(path.to_path_buf()),
            BackendKind::Sled,
        );
        Ok((store, report))
    }
}
