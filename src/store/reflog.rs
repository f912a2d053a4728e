//! The ref log: every ref move of a store directory, appended and synced to `<store>/reflog`
//! before the move is reported done. The database holds the refs; this file is how they come
//! back when the database is lost or damaged (`fsck --repair`), and how a person finds where
//! a branch was (`memoir reflog`). One JSON object per line; a line cut short by a crash is
//! skipped. Layout in store-format.md, section 1.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::files::io_err;
use super::{hex, locked, RefMove, StoreResult};

/// Bytes of the log read beyond a journal's length when looking for its lines.
const TAIL_SLACK: u64 = 64 << 10;

/// The ref log's file name in a store directory.
pub const REFLOG_FILE: &str = "reflog";

/// What a ref move is recorded with besides the ref and its values: when, by whom, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefNote {
    /// Unix seconds.
    pub time: i64,
    /// Who moved it (a commit's author; empty when not known).
    pub author: String,
    /// What moved it (a commit message, `branch: created`, ...).
    pub message: String,
}

/// One ref move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefLogEntry {
    /// The ref (`HEAD`, `refs/heads/main`).
    #[serde(rename = "ref")]
    pub name: String,
    /// Its value before, as hex of the raw bytes (`None`: it did not exist).
    pub old: Option<String>,
    /// Its value after, as hex of the raw bytes (`None`: deleted).
    pub new: Option<String>,
    /// Unix seconds.
    pub time: i64,
    /// Who moved it.
    pub author: String,
    /// What moved it.
    pub message: String,
}

impl RefLogEntry {
    /// The raw value after the move (`None`: deleted, or not hex).
    pub fn new_value(&self) -> Option<Vec<u8>> {
        self.new.as_deref().and_then(unhex)
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The appending side of a store's ref log. A ref move is recorded only once it is durable:
/// [`RefLog::queue`] queues the lines, and [`RefLog::write_pending`], called after the
/// database's flush, appends and syncs what is queued. The log is history, never ahead of
/// the database it records.
#[derive(Debug)]
pub(super) struct RefLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
    note: Mutex<RefNote>,
    /// Lines of moves made but not yet flushed.
    pending: Mutex<Vec<u8>>,
    /// Lines the log holds that the ref journal may still hold: the next move drops them
    /// from it.
    logged: Mutex<Vec<u8>>,
}

impl RefLog {
    /// The ref log of the store in `dir`.
    pub(super) fn new(dir: &Path) -> RefLog {
        RefLog {
            path: dir.join(REFLOG_FILE),
            file: Mutex::new(None),
            note: Mutex::new(RefNote::default()),
            pending: Mutex::new(Vec::new()),
            logged: Mutex::new(Vec::new()),
        }
    }

    /// Sets what the next ref moves are recorded with.
    pub(super) fn set_note(&self, note: RefNote) {
        *locked(&self.note) = note;
    }

    /// What the next ref moves are recorded with.
    pub(super) fn note(&self) -> RefNote {
        locked(&self.note).clone()
    }

    /// The log's lines for `moves`, recorded with the current note.
    pub(super) fn lines(&self, moves: &[RefMove<'_>]) -> Vec<u8> {
        let note = self.note();
        let mut out = Vec::new();
        for m in moves {
            let entry = RefLogEntry {
                name: m.name.to_string(),
                old: m.expected.map(hex),
                new: m.new.map(hex),
                time: note.time,
                author: note.author.clone(),
                message: note.message.clone(),
            };
            serde_json::to_writer(&mut out, &entry).expect("a ref log entry serialises");
            out.push(b'\n');
        }
        out
    }

    /// Queues `lines` (of moves made), to be written once they are durable.
    pub(super) fn queue(&self, lines: &[u8]) {
        locked(&self.pending).extend_from_slice(lines);
    }

    /// Whether moves are queued that the log does not hold yet.
    pub(super) fn has_pending(&self) -> bool {
        !locked(&self.pending).is_empty()
    }

    /// Appends and syncs the queued moves. Called after the flush that made them durable.
    pub(super) fn write_pending(&self) -> StoreResult<()> {
        let mut pending = locked(&self.pending);
        if pending.is_empty() {
            return Ok(());
        }
        let lines = std::mem::take(&mut *pending);
        drop(pending);
        self.write(&lines)?;
        locked(&self.logged).extend_from_slice(&lines);
        Ok(())
    }

    /// The lines the log holds that the ref journal may still hold.
    pub(super) fn logged(&self) -> Vec<u8> {
        locked(&self.logged).clone()
    }

    /// Notes that the ref journal no longer holds the first `len` bytes of [`RefLog::logged`].
    pub(super) fn forget_logged(&self, len: usize) {
        locked(&self.logged).drain(..len);
    }

    /// Appends and syncs the lines of `journal` (see `ref_journal`) that the log's tail does
    /// not hold: the moves a crash left unlogged after the flush that made them durable.
    /// The whole journal is then logged, for the next move to drop.
    pub(super) fn complete_from(&self, journal: &[u8]) -> StoreResult<()> {
        let tail = self.tail(journal.len() as u64 + TAIL_SLACK)?;
        let present: std::collections::HashSet<&[u8]> = tail.split(|b| *b == b'\n').collect();
        let mut missing = Vec::new();
        for line in journal.split_inclusive(|b| *b == b'\n') {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            if !text.is_empty() && !present.contains(text) {
                missing.extend_from_slice(text);
                missing.push(b'\n');
            }
        }
        if !missing.is_empty() {
            self.write(&missing)?;
        }
        *locked(&self.logged) = journal.to_vec();
        Ok(())
    }

    /// The log's last `len` bytes at most (none when there is no log).
    fn tail(&self, len: u64) -> StoreResult<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.path)(e)),
        };
        let size = file.metadata().map_err(io_err(&self.path))?.len();
        let from = size.saturating_sub(len);
        let mut buf = vec![0u8; (size - from) as usize];
        file.read_exact_at(&mut buf, from)
            .map_err(io_err(&self.path))?;
        Ok(buf)
    }

    /// Appends `lines` and syncs them, ending first a line a crash or a full disk cut short.
    fn write(&self, lines: &[u8]) -> StoreResult<()> {
        let mut guard = locked(&self.file);
        let mut fix = false;
        if guard.is_none() {
            let f = OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .open(&self.path)
                .map_err(io_err(&self.path))?;
            // A line a crash or a full disk cut short is ended first, so that it spoils
            // only itself, not the line written after it.
            fix = !ends_a_line(&f).map_err(io_err(&self.path))?;
            *guard = Some(f);
        }
        let f = guard.as_mut().expect("opened above");
        let written = (if fix { f.write_all(b"\n") } else { Ok(()) })
            .and_then(|()| f.write_all(lines))
            .and_then(|()| f.sync_data());
        if written.is_err() {
            // Whatever part was written is checked again by the next write.
            *guard = None;
        }
        written.map_err(io_err(&self.path))
    }
}

/// Whether `file` is empty or ends with a line feed.
fn ends_a_line(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] == b'\n')
}

/// Every whole entry of the ref log of the store in `dir`, oldest first (none when there is
/// no log). Lines that do not parse (one cut short by a crash) are skipped.
pub fn read(dir: &Path) -> StoreResult<Vec<RefLogEntry>> {
    let path = dir.join(REFLOG_FILE);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let mut out = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(io_err(&path))?;
        if let Ok(e) = serde_json::from_slice::<RefLogEntry>(&line) {
            out.push(e);
        }
    }
    Ok(out)
}

/// Whether the store in `dir` has a ref log.
pub fn exists(dir: &Path) -> bool {
    fs::metadata(dir.join(REFLOG_FILE)).is_ok_and(|m| m.is_file())
}
