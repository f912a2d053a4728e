//! Upgrading an older store: its database is rebuilt in the current format.
//!
//! Versions 1 to 3 kept the object index in the database (version 1 kept the objects
//! themselves in sled; version 3 kept most of the index in run files beside it), which a
//! sled database keeps paying for at every open even once the entries are gone (it
//! rewrites every free segment of its log), so the upgrade builds a new database holding
//! only the refs instead of changing the old one in place:
//!
//! 1. the old database is opened (a version-1 store's objects are copied into packs and
//!    synced as it opens; the object index, derived from the packs, is read from them and
//!    its index files written) and its refs and ref journal are read;
//! 2. a new database is built in `db.new/` from them and synced;
//! 3. `db/` is renamed `db.old/`, then `db.new/` is renamed `db/`, and the directory synced;
//! 4. FORMAT is rewritten with the current version, and `db.old/` is removed.
//!
//! Holding the LOCK, [`settle`] finishes or undoes an upgrade a crash cut short before
//! anything else looks at the database: `db.new/` is always removed; `db.old/` is put back
//! as `db/` while FORMAT still says the old version (whatever `db/` holds then), and removed
//! once FORMAT says the current one. So after a crash a store is whole in the old format or
//! whole in the new one, and an older build never sees a database it cannot read.

use std::fs;
use std::path::Path;

use super::files::{io_err, remove_dir_if_present, sync_dir};
use super::format_file::{write_format, FORMAT_VERSION};
use super::lifecycle::DB_DIR;
use super::pack_index::index_number;
use super::packs::PACKS_DIR;
use super::{DiskBackend, OpenOptions, RefStore, StoreResult, CACHE_DIR};

/// Where an upgrade builds the new database.
const NEW_DB_DIR: &str = "db.new";
/// Where an upgrade sets the old database aside.
const OLD_DB_DIR: &str = "db.old";

/// Finishes or undoes an upgrade of the store at `path` (FORMAT version `version`) that a
/// crash cut short; a no-op when none was under way. The caller holds the LOCK.
pub(super) fn settle(path: &Path, version: u32) -> StoreResult<()> {
    let (new, old, db) = (
        path.join(NEW_DB_DIR),
        path.join(OLD_DB_DIR),
        path.join(DB_DIR),
    );
    let mut changed = false;
    if new.symlink_metadata().is_ok() {
        remove_dir_if_present(&new)?;
        changed = true;
    }
    if old.symlink_metadata().is_ok() {
        if version != FORMAT_VERSION {
            remove_dir_if_present(&db)?;
            fs::rename(&old, &db).map_err(io_err(&old))?;
        } else {
            remove_dir_if_present(&old)?;
        }
        changed = true;
    }
    if changed {
        sync_dir(path)?;
    }
    Ok(())
}

/// Rebuilds the database of the store at `path` (of an older format) in the current one
/// (steps 1 to 4 above). The pack index files that version 3 kept among the caches are
/// removed: the index files now sit beside their packs.
pub(super) fn rebuild(path: &Path, opts: &OpenOptions) -> StoreResult<()> {
    let packs = path.join(PACKS_DIR);
    let (refs, journal) = {
        let old = super::lifecycle::open_disk_backend(path, opts)?;
        (old.list_refs("")?, old.ref_journal()?)
    };
    remove_old_pack_indexes(path);
    let new = path.join(NEW_DB_DIR);
    DiskBackend::build_database(path, &new, &packs, opts, &refs, &journal)?;
    let (db, old) = (path.join(DB_DIR), path.join(OLD_DB_DIR));
    fs::rename(&db, &old).map_err(io_err(&db))?;
    fs::rename(&new, &db).map_err(io_err(&new))?;
    sync_dir(path)?;
    write_format(path)?;
    remove_dir_if_present(&old)?;
    sync_dir(path)
}

/// Removes `cache/pack-NNNNNNNN.idx`, where version 3 kept pack indexes for closed reads.
/// Best effort: they are derived, and no reader looks there any more.
fn remove_old_pack_indexes(path: &Path) {
    let Ok(dir) = fs::read_dir(path.join(CACHE_DIR)) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        if name.to_str().and_then(index_number).is_some() {
            let _ = fs::remove_file(e.path());
        }
    }
}
