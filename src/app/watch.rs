//! `watch`: documents on disk (Markdown, text, HTML, PDF) kept as memories, one record per
//! chunk, and brought up to date by scanning.
//!
//! A watched file's chunks live at `raw.<slug>.<chunk>` in its namespace ([`WATCH_NAMESPACE`]
//! unless another is given): the slug comes from the file name, the chunk name from the
//! chunk's first words and the hash of its text ([`crate::ingest::chunk`]). The prefix
//! `raw.<slug>` belongs to the file: a scan makes the keys under it exactly the file's
//! current chunks, and `remove` deletes every key under it.
//!
//! The watch list is stored in the store itself, as ordinary records in the namespace
//! [`WATCH_LIST_NAMESPACE`] at `file.<slug>`, whose content is a JSON object
//! ([`WatchedFile`]): the file's absolute path, namespace, slug, format, size, BLAKE3 hash of
//! its bytes, and its chunk names in document order. It is versioned like every memory and
//! branches and merges with the chunks it describes.
//!
//! Files are read here, bounded by [`crate::ingest::MAX_DOCUMENT_BYTES`], and extracted with
//! the store closed: regular files only, a link resolved once at `add` and never followed
//! after (`watch_read.rs`). A chunk whose text looks like a credential is skipped (not
//! stored) and the outcome names the chunk's position and the rule that matched, unless
//! secrets are allowed; a credential that only shows in the whole text (split across
//! chunks) refuses the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ingest::{chunks, extract, slug, Chunk, Format};
use crate::key::{group_range, namespace_prefix, nfc, validate_namespace, Key};
use crate::memory::{read_record, secrets, Entry, Record};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit, KeyRange};
use crate::repo::Repo;

use super::input::{check_content, refuse_secrets_in_key};
use super::transaction::CreatedBranch;
use super::transaction::Transaction;
use super::{exit, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

#[path = "watch_read.rs"]
mod read;
pub(crate) use read::{read_for_add, read_recorded, FileError};

/// Namespace of watched files' chunks when none is given.
pub const WATCH_NAMESPACE: &str = "watch";
/// Namespace of the watch list's records (`file.<slug>`).
pub const WATCH_LIST_NAMESPACE: &str = "memoir:watch";
/// Most bytes of a file's slug.
const SLUG_BYTES: usize = 48;

/// One watched file, as its watch list record holds it (the record's content is this, as
/// JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedFile {
    /// Absolute path of the file.
    pub path: String,
    /// Namespace of its chunks.
    pub namespace: String,
    /// Its key segment: chunks are at `raw.<slug>.<chunk>`.
    pub slug: String,
    /// Its format.
    pub format: Format,
    /// Its size in bytes when last read.
    pub bytes: u64,
    /// BLAKE3 hash (hex) of its bytes when last read.
    pub hash: String,
    /// Its chunks' names, in document order (a name repeats when a chunk does).
    pub chunks: Vec<String>,
}

impl WatchedFile {
    /// The key of this file's watch list record.
    pub fn list_key(&self) -> MemoirResult<Key> {
        list_key(&self.slug)
    }

    /// `ns:raw.<slug>`: the prefix of every key of this file.
    pub fn prefix(&self) -> String {
        format!("{}:raw.{}", self.namespace, self.slug)
    }

    /// The key of chunk `name`.
    fn chunk_key(&self, name: &str) -> MemoirResult<Key> {
        Ok(Key::new(
            &self.namespace,
            &format!("raw.{}.{name}", self.slug),
        )?)
    }

    /// The encoded range of every key under `raw.<slug>`.
    pub(crate) fn range(&self) -> MemoirResult<KeyRange> {
        let group = Key::new(&self.namespace, &format!("raw.{}", self.slug))?.encode();
        let (lo, hi) = group_range(&group);
        Ok(KeyRange::new(lo, hi))
    }

    /// The file's name (last path component) for messages.
    fn name(&self) -> &str {
        Path::new(&self.path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(&self.path)
    }
}

fn list_key(slug: &str) -> MemoirResult<Key> {
    Ok(Key::new(WATCH_LIST_NAMESPACE, &format!("file.{slug}"))?)
}

/// What to add to the watch list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchAddRequest {
    /// The file (relative paths are taken from the current directory).
    pub file: PathBuf,
    /// Namespace of its chunks (default [`WATCH_NAMESPACE`]).
    pub namespace: Option<String>,
    /// Store chunks that look like credentials anyway (skipped by default).
    pub allow_secrets: bool,
}

/// What to scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchScanRequest {
    /// One watched file (its path, or its slug); none: every watched file.
    pub file: Option<String>,
    /// Store chunks that look like credentials anyway (skipped by default).
    pub allow_secrets: bool,
}

/// What to remove from the watch list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchRemoveRequest {
    /// The watched file (its path, or its slug).
    pub file: String,
    /// Erase its keys from the whole history of every branch (rewrites commit ids).
    pub purge: bool,
}

/// A chunk left out because its text looks like a credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedChunk {
    /// Its position in the document, from 1.
    pub chunk: usize,
    /// The rule that matched (the text is never repeated).
    pub rule: String,
}

/// What an add or a scan did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WatchFileReport {
    /// Absolute path of the file.
    pub path: String,
    /// Namespace of its chunks.
    pub namespace: String,
    /// Its slug.
    pub slug: String,
    /// `ns:raw.<slug>`, the prefix of its keys.
    pub prefix: String,
    /// Its format (none when it could not be read).
    pub format: Option<Format>,
    /// `added` (new to the list), `changed`, `unchanged`, `missing` (the file is gone; its
    /// keys are kept) or `error` (it could not be read; see `error`).
    pub state: &'static str,
    /// Chunks the file has now.
    pub chunks: usize,
    /// Keys written.
    pub added: usize,
    /// Keys deleted.
    pub removed: usize,
    /// Chunks left out because they look like credentials.
    pub skipped: Vec<SkippedChunk>,
    /// Why the file could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The link `watch add` was given, resolved to `path` (for the human warning).
    #[serde(skip)]
    pub link: Option<String>,
}

/// What `watch add` or `watch scan` did.
#[derive(Debug, Clone, Serialize)]
pub struct WatchOutcome {
    /// False when a file could not be read (exit 1); the others were still brought up to
    /// date.
    pub success: bool,
    /// One report per file, in watch list order (by slug).
    pub files: Vec<WatchFileReport>,
    /// Keys written in all.
    pub added: usize,
    /// Keys deleted in all.
    pub removed: usize,
    /// The commit written (none when nothing changed).
    pub commit_hash: Option<String>,
    /// Its date, ISO 8601.
    pub commit_date: Option<String>,
    /// The branch this write created (`--branch` naming a missing one): JSON
    /// `branch_created: true`, absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::transaction::created_as_true"
    )]
    pub branch_created: Option<CreatedBranch>,
    /// The commit message, or `Nothing changed`.
    pub message: String,
    /// The branch written to.
    #[serde(skip)]
    pub branch: String,
    /// The commit of `commit_hash`.
    #[serde(skip)]
    pub commit: Option<ObjectId>,
}

impl Outcome for WatchOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }

    fn exit_code(&self) -> u8 {
        if self.files.iter().any(|f| f.state == "error") {
            exit::ERROR
        } else {
            exit::OK
        }
    }

    fn error_message(&self) -> Option<String> {
        let bad: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| f.error.as_ref().map(|e| format!("{}: {e}", f.slug)))
            .collect();
        (!bad.is_empty()).then(|| bad.join("; "))
    }
}

/// A file read and cut into chunks, ready to be written.
struct Prepared {
    format: Format,
    bytes: u64,
    hash: String,
    chunks: Vec<Chunk>,
    skipped: Vec<SkippedChunk>,
}

/// A file's current state on disk, against its watch list record.
enum Disk {
    /// Same bytes as recorded.
    Same,
    /// Read, extracted, cut.
    Read(Prepared),
    /// Not there any more.
    Missing,
    /// Could not be read or extracted.
    Failed(String),
}

impl Memoir {
    /// Adds `req.file` to the watch list and stores its chunks in one commit on the branch of
    /// `who`. A link is resolved here, once, and its target recorded. A file already watched
    /// is scanned instead, in the namespace it has (naming another with `req.namespace` is an
    /// error). A missing file is exit 2; a directory, a FIFO, socket or device, a file that
    /// cannot be read or is longer than [`crate::ingest::MAX_DOCUMENT_BYTES`], binary data
    /// under a name that is not `.pdf`, text that is not UTF-8, an unreadable PDF or a
    /// document without text is exit 1, and nothing is stored.
    pub fn watch_add(&self, req: &WatchAddRequest, who: &WriteAs) -> MemoirResult<WatchOutcome> {
        who.check()?;
        let ns = nfc(req.namespace.as_deref().unwrap_or(WATCH_NAMESPACE)).into_owned();
        validate_namespace(&ns)?;
        if ns == WATCH_LIST_NAMESPACE {
            return Err(MemoirError::invalid(format!(
                "namespace '{WATCH_LIST_NAMESPACE}' holds the watch list; choose another with -n"
            )));
        }
        let link = std::fs::symlink_metadata(&req.file).is_ok_and(|m| m.file_type().is_symlink());
        let (path, bytes) = read_for_add(&req.file)?;
        if !req.allow_secrets {
            if let Some(kind) = secrets::detect(&path) {
                return Err(MemoirError::invalid(format!(
                    "refused: the file's path looks like it holds a credential (rule {}: {}); \
                     the watch list records it, so nothing was stored",
                    kind.rule(),
                    kind.describe()
                )));
            }
        }
        let prepared = prepare(&path, &bytes, req.allow_secrets)?;
        drop(bytes);
        let tx = self.start_transaction(who)?;
        let list = read_list(tx.repo(), &tx.root())?;
        let existing = list.iter().find(|f| f.path == path);
        let (file, state) = match existing {
            Some(f) if req.namespace.is_some() && f.namespace != ns => {
                return Err(MemoirError::invalid(format!(
                    "{path} is already watched in namespace '{}' (as {}); remove it first to \
                     move it to '{ns}'",
                    f.namespace,
                    f.prefix()
                )))
            }
            Some(f) => (f.clone(), "changed"),
            None => {
                let slug = free_slug(&path, &list);
                let file = WatchedFile {
                    path: path.clone(),
                    namespace: ns,
                    slug,
                    format: prepared.format,
                    bytes: 0,
                    hash: String::new(),
                    chunks: Vec::new(),
                };
                refuse_secrets_in_key(&file.chunk_key("x")?, req.allow_secrets)?;
                (file, "added")
            }
        };
        let mut writer = Writer::new(self, tx, who, req.allow_secrets);
        let mut report = writer.apply(&file, Disk::Read(prepared), state)?;
        report.link = link.then(|| req.file.display().to_string());
        let message = match state {
            "added" => format!(
                "Watch {} in {}: {} chunk{}",
                file.name(),
                file.namespace,
                report.chunks,
                if report.chunks == 1 { "" } else { "s" }
            ),
            _ => format!("Scan {}: +{} -{}", file.slug, report.added, report.removed),
        };
        writer.finish(vec![report], message)
    }

    /// Brings watched files up to date (`req.file`, else every one) in one commit on the
    /// branch of `who`: a file whose bytes are unchanged is not read further and commits
    /// nothing; a changed one is cut again, and only chunks that are new are written and
    /// only those gone are deleted. A watched file that is gone is reported `missing` and
    /// its keys kept; one that cannot be read is reported `error` (exit 1) while the others
    /// are still brought up to date. Naming a file that is not watched, or one that is
    /// missing, is exit 2.
    pub fn watch_scan(&self, req: &WatchScanRequest, who: &WriteAs) -> MemoirResult<WatchOutcome> {
        who.check()?;
        // The list first, then the files read with the store closed.
        let planned: Vec<WatchedFile> = {
            let tx = self.start_transaction(who)?;
            let list = read_list(tx.repo(), &tx.root())?;
            match &req.file {
                Some(f) => vec![find(&list, f)?.clone()],
                None => list,
            }
        };
        self.release();
        let mut disk: BTreeMap<String, (String, Disk)> = BTreeMap::new();
        for f in &planned {
            let state = look(f, req.allow_secrets);
            if req.file.is_some() {
                if let Disk::Missing = state {
                    return Err(MemoirError::not_found(format!(
                        "{} is watched but no longer exists; `memoir watch remove` it, or put \
                         it back",
                        f.path
                    )));
                }
            }
            disk.insert(f.slug.clone(), (f.path.clone(), state));
        }
        let tx = self.start_transaction(who)?;
        // A file removed from the list meanwhile (or whose slug now names another file)
        // stays as the list says.
        let list = read_list(tx.repo(), &tx.root())?;
        let mut writer = Writer::new(self, tx, who, req.allow_secrets);
        let mut reports = Vec::new();
        for f in list {
            let Some((path, state)) = disk.remove(&f.slug) else {
                continue;
            };
            if path != f.path {
                continue;
            }
            reports.push(writer.apply(&f, state, "changed")?);
        }
        let changed: Vec<String> = reports
            .iter()
            .filter(|r| r.added + r.removed > 0)
            .map(|r| format!("{} +{} -{}", r.slug, r.added, r.removed))
            .collect();
        let message = if changed.is_empty() {
            "Scan: watch list updated".to_string()
        } else {
            format!("Scan {}", changed.join(", "))
        };
        writer.finish(reports, message)
    }
}

/// Writes what adds and scans decide, in one commit.
struct Writer<'a> {
    tx: Transaction<'a>,
    who: &'a WriteAs,
    allow_secrets: bool,
    now: f64,
    edits: Vec<Edit>,
}

impl<'a> Writer<'a> {
    fn new(app: &'a Memoir, tx: Transaction<'a>, who: &'a WriteAs, allow_secrets: bool) -> Self {
        Writer {
            tx,
            who,
            allow_secrets,
            now: app.clock().now(),
            edits: Vec::new(),
        }
    }

    /// Makes the keys under `file`'s prefix its chunks as `disk` says, and its watch list
    /// record agree; `state` is what to report when the file was read and changed.
    fn apply(
        &mut self,
        file: &WatchedFile,
        disk: Disk,
        state: &'static str,
    ) -> MemoirResult<WatchFileReport> {
        let mut report = WatchFileReport {
            path: file.path.clone(),
            namespace: file.namespace.clone(),
            slug: file.slug.clone(),
            prefix: file.prefix(),
            format: Some(file.format),
            state,
            chunks: file.chunks.len(),
            added: 0,
            removed: 0,
            skipped: Vec::new(),
            error: None,
            link: None,
        };
        let present: BTreeSet<Vec<u8>> = self
            .tx
            .repo()
            .tree()
            .collect(&self.tx.root(), &file.range()?)?
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let prepared = match disk {
            Disk::Missing => {
                report.state = "missing";
                return Ok(report);
            }
            Disk::Failed(why) => {
                report.state = "error";
                report.error = Some(why);
                return Ok(report);
            }
            Disk::Same => {
                let mut wanted = BTreeSet::new();
                for name in &file.chunks {
                    wanted.insert(file.chunk_key(name)?.encode());
                }
                if wanted == present {
                    report.state = "unchanged";
                    return Ok(report);
                }
                // Same bytes, but the keys were changed by hand: read the file again.
                match read_recorded(&file.path)
                    .map_err(MemoirError::from)
                    .and_then(|bytes| prepare(&file.path, &bytes, self.allow_secrets))
                {
                    Ok(p) => p,
                    Err(e) => {
                        report.state = "error";
                        report.error = Some(e.to_string());
                        return Ok(report);
                    }
                }
            }
            Disk::Read(p) => p,
        };
        let updated = WatchedFile {
            format: prepared.format,
            bytes: prepared.bytes,
            hash: prepared.hash.clone(),
            chunks: prepared.chunks.iter().map(|c| c.name.clone()).collect(),
            ..file.clone()
        };
        let mut wanted: BTreeMap<Vec<u8>, (Key, &str)> = BTreeMap::new();
        for c in &prepared.chunks {
            let key = updated.chunk_key(&c.name)?;
            wanted.insert(key.encode(), (key, c.text.as_str()));
        }
        for k in &present {
            if !wanted.contains_key(k) {
                self.edits.push(Edit::Delete(k.clone()));
                report.removed += 1;
            }
        }
        let source = self
            .who
            .source
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| Some(file.path.clone()));
        for (enc, (key, text)) in &wanted {
            if !present.contains(enc) {
                self.put(key, text, source.clone())?;
                report.added += 1;
            }
        }
        let list_key = updated.list_key()?;
        let listed = serde_json::to_string(&updated)
            .map_err(|e| MemoirError::invalid(format!("cannot record {}: {e}", file.path)))?;
        let current = match self
            .tx
            .repo()
            .tree()
            .get(&self.tx.root(), &list_key.encode())?
        {
            Some(id) => Some(read_record(self.tx.repo().objects(), &id)?.content()),
            None => None,
        };
        if current.as_deref() != Some(listed.as_str()) {
            self.put(&list_key, &listed, None)?;
        }
        if report.state == "changed" && report.added + report.removed == 0 {
            report.state = "unchanged";
        }
        report.format = Some(updated.format);
        report.chunks = updated.chunks.len();
        report.skipped = prepared.skipped;
        Ok(report)
    }

    /// Writes a record holding `text` at `key` and adds its edit.
    fn put(&mut self, key: &Key, text: &str, source: Option<String>) -> MemoirResult<()> {
        let entry = Entry {
            source,
            actor: self.who.actor.clone().filter(|a| !a.is_empty()),
            ..Entry::new(text, 1.0, self.now)
        };
        let record = Record::new(key, entry, Vec::new());
        let id = self.tx.repo().objects().write(&record.to_blob()?)?;
        self.edits.push(Edit::Put(key.encode(), id));
        Ok(())
    }

    /// Commits the edits (if any) with `message`.
    fn finish(self, files: Vec<WatchFileReport>, message: String) -> MemoirResult<WatchOutcome> {
        let added = files.iter().map(|f| f.added).sum();
        let removed = files.iter().map(|f| f.removed).sum();
        let branch = self.tx.branch().to_string();
        let (committed, message) = if self.edits.is_empty() {
            (None, "Nothing changed".to_string())
        } else {
            (Some(self.tx.finish(self.edits, &message)?), message)
        };
        let commit = committed.as_ref().map(|c| c.id);
        let success = !files.iter().any(|f| f.state == "error");
        Ok(WatchOutcome {
            success,
            files,
            added,
            removed,
            commit_hash: commit.map(|id| id.to_hex()),
            branch_created: committed.as_ref().and_then(|c| c.created.clone()),
            commit_date: committed.map(|c| c.date),
            message,
            branch,
            commit,
        })
    }
}

/// What is on disk for a watched file now.
fn look(file: &WatchedFile, allow_secrets: bool) -> Disk {
    match read_recorded(&file.path) {
        Err(FileError::Missing(_)) => Disk::Missing,
        Err(e) => Disk::Failed(e.to_string()),
        Ok(bytes) => {
            if blake3::hash(&bytes).to_hex().as_str() == file.hash {
                return Disk::Same;
            }
            match prepare(&file.path, &bytes, allow_secrets) {
                Ok(p) => Disk::Read(p),
                Err(e) => Disk::Failed(e.to_string()),
            }
        }
    }
}

/// The chunks of the file at `path` holding `bytes`: its format detected, its text
/// extracted and cut; chunks that look like credentials left out (unless allowed) and a
/// credential split across chunks refused (exit 1).
fn prepare(path: &str, bytes: &[u8], allow_secrets: bool) -> MemoirResult<Prepared> {
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path);
    let format = Format::detect(name, bytes)?;
    let text = extract(format, name, bytes)?;
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for (i, mut c) in chunks(&text, format).into_iter().enumerate() {
        check_content(&c.text)?;
        if !allow_secrets {
            if let Some(kind) = secrets::detect(&c.text) {
                skipped.push(SkippedChunk {
                    chunk: i + 1,
                    rule: kind.rule().to_string(),
                });
                continue;
            }
            if secrets::detect(&c.name).is_some() {
                c.name = c.name[c.name.len() - 12..].to_string();
            }
        }
        kept.push(c);
    }
    if !allow_secrets && skipped.is_empty() {
        if let Some(kind) = secrets::detect(&text) {
            return Err(MemoirError::invalid(format!(
                "refused: {name} looks like it holds a credential split across chunks (rule {}: \
                 {}); memoir keeps every version forever, so nothing was stored. Remove it, or \
                 pass --allow-secrets",
                kind.rule(),
                kind.describe()
            )));
        }
    }
    Ok(Prepared {
        format,
        bytes: bytes.len() as u64,
        hash: blake3::hash(bytes).to_hex().to_string(),
        chunks: kept,
        skipped,
    })
}

/// The watch list at `root`, by slug. Records in [`WATCH_LIST_NAMESPACE`] that are not watch
/// entries (written there by hand) are ignored.
pub(crate) fn read_list(repo: &Repo, root: &ObjectId) -> MemoirResult<Vec<WatchedFile>> {
    let range = prefix_range(&namespace_prefix(WATCH_LIST_NAMESPACE));
    let mut out = Vec::new();
    for (k, id) in repo.tree().collect(root, &range)? {
        let rec = read_record(repo.objects(), &id)?;
        let Ok(file) = serde_json::from_str::<WatchedFile>(&rec.content()) else {
            continue;
        };
        if list_key(&file.slug).is_ok_and(|lk| lk.encode() == k) {
            out.push(file);
        }
    }
    Ok(out)
}

/// The watched file named by `text`: its path (relative to the current directory, symlinks
/// resolved), its path as recorded, or its slug. Not watched: exit 2.
pub(crate) fn find<'l>(list: &'l [WatchedFile], text: &str) -> MemoirResult<&'l WatchedFile> {
    let p = Path::new(text);
    let abs = p
        .canonicalize()
        .ok()
        .or_else(|| std::path::absolute(p).ok());
    list.iter()
        .find(|f| abs.as_deref() == Some(Path::new(&f.path)))
        .or_else(|| list.iter().find(|f| f.path == text || f.slug == text))
        .ok_or_else(|| {
            MemoirError::not_found(format!(
                "{text} is not watched (memoir watch list shows what is)"
            ))
        })
}

/// A slug for the file at `path` that no other watched file has: its name as a key
/// segment, `-2`, `-3`, ... added when taken.
fn free_slug(path: &str, list: &[WatchedFile]) -> String {
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path);
    let mut base = slug(name, SLUG_BYTES);
    if base.is_empty() {
        base = "file".to_string();
    }
    let taken: BTreeSet<&str> = list.iter().map(|f| f.slug.as_str()).collect();
    if !taken.contains(base.as_str()) {
        return base;
    }
    (2..=list.len() + 2)
        .map(|n| {
            let suffix = format!("-{n}");
            let mut stem = base.clone();
            while stem.len() + suffix.len() > SLUG_BYTES {
                stem.pop();
            }
            format!("{}{suffix}", stem.trim_end_matches('-'))
        })
        .find(|c| !taken.contains(c.as_str()))
        .unwrap_or(base)
}
