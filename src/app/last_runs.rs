//! The record of a store's last `gc` and last `fsck`: `<store>/maintenance`, one JSON
//! object, replaced atomically and durably by the run that holds the LOCK (store-format.md,
//! section 1). It is not history and nothing depends on it: a missing, unreadable or
//! damaged file reads as "never run".

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::repo::revision::format_iso8601;

/// The record's file name in a store directory.
pub const MAINTENANCE_FILE: &str = "maintenance";

/// The last run of `gc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcRun {
    /// When it finished, unix seconds.
    pub time: i64,
    /// The same, ISO 8601.
    pub date: String,
    /// Unreachable objects it deleted.
    pub objects_removed: u64,
    /// Their bytes.
    pub bytes_removed: u64,
}

/// The last run of `fsck` (or `fsck --repair`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsckRun {
    /// When it finished, unix seconds.
    pub time: i64,
    /// The same, ISO 8601.
    pub date: String,
    /// Whether it found nothing wrong.
    pub clean: bool,
    /// How many problems it found.
    pub findings: u64,
    /// Distinct reachable objects it checked.
    pub objects_checked: u64,
    /// Whether it rebuilt the database first (`fsck --repair`).
    pub repaired: bool,
}

/// The file's content: the last run of each, when there was one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRuns {
    /// The last `gc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcRun>,
    /// The last `fsck`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsck: Option<FsckRun>,
}

impl GcRun {
    /// A run that finished at `time`.
    pub fn new(time: i64, objects_removed: u64, bytes_removed: u64) -> GcRun {
        GcRun {
            time,
            date: format_iso8601(time),
            objects_removed,
            bytes_removed,
        }
    }
}

impl FsckRun {
    /// A run that finished at `time`.
    pub fn new(time: i64, findings: u64, objects_checked: u64, repaired: bool) -> FsckRun {
        FsckRun {
            time,
            date: format_iso8601(time),
            clean: findings == 0,
            findings,
            objects_checked,
            repaired,
        }
    }
}

impl LastRuns {
    /// The record of the store in `dir` (empty when there is none or it cannot be read).
    pub fn read(dir: &Path) -> LastRuns {
        fs::read(dir.join(MAINTENANCE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Changes the record of the store in `dir` with `edit`, replacing the file atomically
    /// and durably (a synced temporary file renamed over it, then the directory synced).
    /// The caller holds the store's LOCK.
    pub fn update(dir: &Path, edit: impl FnOnce(&mut LastRuns)) -> io::Result<()> {
        let mut runs = LastRuns::read(dir);
        edit(&mut runs);
        let mut bytes = serde_json::to_vec(&runs).map_err(io::Error::other)?;
        bytes.push(b'\n');
        let path = dir.join(MAINTENANCE_FILE);
        let tmp = dir.join(format!("{MAINTENANCE_FILE}.tmp.{}", std::process::id()));
        let written = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            File::open(dir)?.sync_all()
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}
