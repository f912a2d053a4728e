//! `watch list`, `watch status`, `watch formats` and `watch remove`: reading the watch list,
//! comparing it with the files on disk, and taking files off it (with `purge`, out of the
//! whole history).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::ingest::{Format, FormatInfo};
use crate::object::ObjectId;
use crate::prolly::Edit;
use crate::repo::Repo;

use super::forget::PurgeCounts;
use super::transaction::CreatedBranch;
use super::watch::{find, read_list, read_recorded, FileError, WatchRemoveRequest, WatchedFile};
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs};
use crate::repo::revision::validate_branch_name;

/// One file of [`WatchListOutcome`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WatchListItem {
    /// Absolute path of the file.
    pub path: String,
    /// Namespace of its chunks.
    pub namespace: String,
    /// Its slug.
    pub slug: String,
    /// `ns:raw.<slug>`, the prefix of its keys.
    pub prefix: String,
    /// Its format.
    pub format: Format,
    /// Its size in bytes when last read.
    pub bytes: u64,
    /// BLAKE3 hash (hex) of its bytes when last read.
    pub hash: String,
    /// Its number of chunks.
    pub chunks: usize,
}

impl From<&WatchedFile> for WatchListItem {
    fn from(f: &WatchedFile) -> Self {
        WatchListItem {
            path: f.path.clone(),
            namespace: f.namespace.clone(),
            slug: f.slug.clone(),
            prefix: f.prefix(),
            format: f.format,
            bytes: f.bytes,
            hash: f.hash.clone(),
            chunks: f.chunks.len(),
        }
    }
}

/// What `watch list` read.
#[derive(Debug, Clone, Serialize)]
pub struct WatchListOutcome {
    /// Always true.
    pub success: bool,
    /// The watched files, by slug.
    pub files: Vec<WatchListItem>,
    /// How many.
    pub count: usize,
}

impl Outcome for WatchListOutcome {
    crate::outcome_json!();
}

/// One file of [`WatchStatusOutcome`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WatchStatusItem {
    /// Absolute path of the file.
    pub path: String,
    /// Namespace of its chunks.
    pub namespace: String,
    /// Its slug.
    pub slug: String,
    /// `unchanged` (same bytes as last scanned), `changed` (a scan would update it),
    /// `missing` (gone from disk) or `unreadable` (see `error`).
    pub state: &'static str,
    /// Its number of chunks as last scanned.
    pub chunks: usize,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `watch status` found.
#[derive(Debug, Clone, Serialize)]
pub struct WatchStatusOutcome {
    /// Always true.
    pub success: bool,
    /// The watched files, by slug.
    pub files: Vec<WatchStatusItem>,
    /// How many files are watched.
    pub count: usize,
    /// How many a scan would update.
    pub changed: usize,
    /// How many are gone from disk.
    pub missing: usize,
}

impl Outcome for WatchStatusOutcome {
    crate::outcome_json!();
}

/// What `watch formats` lists.
#[derive(Debug, Clone, Serialize)]
pub struct WatchFormatsOutcome {
    /// Always true.
    pub success: bool,
    /// Every format read, with the name endings that select it.
    pub formats: Vec<FormatInfo>,
}

impl Outcome for WatchFormatsOutcome {
    crate::outcome_json!();
}

/// What `watch remove` did.
#[derive(Debug, Clone, Serialize)]
pub struct WatchRemoveOutcome {
    /// Always true (a file that is not watched is exit 2).
    pub success: bool,
    /// Absolute path of the file.
    pub path: String,
    /// Namespace of its chunks.
    pub namespace: String,
    /// Its slug.
    pub slug: String,
    /// Keys deleted: its chunks at the tip (without purge), plus its watch list record.
    pub removed: usize,
    /// The new commit, or after a purge the branch's (rewritten) tip.
    pub commit_hash: String,
    /// The branch this write created (`--branch` naming a missing one): JSON
    /// `branch_created: true`, absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::transaction::created_as_true"
    )]
    pub branch_created: Option<CreatedBranch>,
    /// What was done, in one line.
    pub message: String,
    /// With `purge`: what was rewritten and removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purged: Option<PurgeCounts>,
    /// What a purge did to the derived caches (diagnostics).
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl Outcome for WatchRemoveOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }
}

impl Memoir {
    /// The watch list at a read point.
    pub fn watch_list(&self, at: &ReadPoint) -> MemoirResult<WatchListOutcome> {
        let (repo, _, root) = self.open_read(at)?;
        let list = read_list(&repo, &root)?;
        drop(repo);
        let files: Vec<WatchListItem> = list.iter().map(WatchListItem::from).collect();
        Ok(WatchListOutcome {
            success: true,
            count: files.len(),
            files,
        })
    }

    /// The watch list at a read point, each file compared with what is on disk now (read
    /// with the store closed, so writers need not wait for the files; nothing is written).
    pub fn watch_status(&self, at: &ReadPoint) -> MemoirResult<WatchStatusOutcome> {
        let list = {
            let (repo, _, root) = self.open_read(at)?;
            read_list(&repo, &root)?
        };
        // With no file to read, a store kept open stays open for the next operation.
        if !list.is_empty() {
            self.release();
        }
        let mut files = Vec::with_capacity(list.len());
        for f in &list {
            let (state, error) = match read_recorded(&f.path) {
                Ok(bytes) if blake3::hash(&bytes).to_hex().as_str() == f.hash => {
                    ("unchanged", None)
                }
                Ok(_) => ("changed", None),
                Err(FileError::Missing(_)) => ("missing", None),
                Err(e) => ("unreadable", Some(e.to_string())),
            };
            files.push(WatchStatusItem {
                path: f.path.clone(),
                namespace: f.namespace.clone(),
                slug: f.slug.clone(),
                state,
                chunks: f.chunks.len(),
                error,
            });
        }
        Ok(WatchStatusOutcome {
            success: true,
            count: files.len(),
            changed: files.iter().filter(|f| f.state == "changed").count(),
            missing: files.iter().filter(|f| f.state == "missing").count(),
            files,
        })
    }

    /// The formats `watch add` reads.
    pub fn watch_formats(&self) -> WatchFormatsOutcome {
        WatchFormatsOutcome {
            success: true,
            formats: Format::all().to_vec(),
        }
    }

    /// Takes `req.file` off the watch list of the branch of `who` and deletes every key
    /// under its prefix `raw.<slug>` with its watch list record, in one commit; the old
    /// values stay in history. With `req.purge`, erases those keys (every key under the
    /// prefix, in any commit) and the record from every commit of every branch instead,
    /// removes what became unreachable and prunes the caches; this rewrites commit ids. A
    /// purge finds the file in history too, so it works after a plain remove, as `forget
    /// --purge` does after `forget`. A file that is not watched (nor ever was, for a purge)
    /// is exit 2.
    pub fn watch_remove(
        &self,
        req: &WatchRemoveRequest,
        who: &WriteAs,
    ) -> MemoirResult<WatchRemoveOutcome> {
        who.check()?;
        let tx = self.start_transaction(who)?;
        let root = tx.root();
        let list = read_list(tx.repo(), &root)?;
        if req.purge {
            return self.watch_purge(tx.into_repo(), &list, &req.file, who);
        }
        let file = find(&list, &req.file)?.clone();
        let list_key = file.list_key()?.encode();
        let range = file.range()?;
        let mut edits: Vec<Edit> = tx
            .repo()
            .tree()
            .collect(&root, &range)?
            .into_iter()
            .map(|(k, _)| Edit::Delete(k))
            .collect();
        edits.push(Edit::Delete(list_key));
        let removed = edits.len() - 1;
        let message = format!(
            "Unwatch {} from {}: {removed} keys",
            file.slug, file.namespace
        );
        let committed = tx.finish(edits, &message)?;
        let id = committed.id;
        Ok(WatchRemoveOutcome {
            success: true,
            path: file.path,
            namespace: file.namespace,
            slug: file.slug,
            removed,
            commit_hash: id.to_hex(),
            branch_created: committed.created.clone(),
            message,
            purged: None,
            notes: Vec::new(),
        })
    }

    /// `watch remove --purge`: see [`Memoir::watch_remove`]. Every watch list record of the
    /// file in any commit gives a prefix to erase (a file removed and added again in
    /// another namespace has two) and a record key.
    fn watch_purge(
        &self,
        repo: Repo,
        list: &[WatchedFile],
        text: &str,
        who: &WriteAs,
    ) -> MemoirResult<WatchRemoveOutcome> {
        if let Some(b) = &who.branch {
            validate_branch_name(b)?;
        }
        let current = find(list, text).ok();
        let files = in_history(&repo, text, current)?;
        let Some(file) = current.or(files.first()).cloned() else {
            return Err(MemoirError::not_found(format!(
                "{text} is not watched, and no commit of any branch watched it (memoir watch \
                 list shows what is)"
            )));
        };
        let mut keys = Vec::new();
        let mut ranges = Vec::new();
        for f in &files {
            let key = f.list_key()?.encode();
            if !keys.contains(&key) {
                keys.push(key);
            }
            ranges.push(f.range()?);
        }
        let report = repo.purge_all(&keys, &ranges)?;
        let (notes, tip) = self.after_purge(repo, who)?;
        let removed = report.gc.objects_removed;
        Ok(WatchRemoveOutcome {
            success: true,
            branch_created: None,
            message: format!(
                "Purged {} ({}) from history: {} commits rewritten, {} refs moved, \
                 {removed} objects removed",
                file.path,
                file.prefix(),
                report.commits_rewritten,
                report.refs_moved
            ),
            path: file.path,
            namespace: file.namespace,
            slug: file.slug,
            removed: 0,
            commit_hash: tip.to_hex(),
            purged: Some(PurgeCounts::of(&report)),
            notes,
        })
    }
}

/// The watch list records, in any commit reachable from any ref, of the file `text` names:
/// those of `current`'s path when it is watched now, else of the path `text` names, else
/// of the slug `text`; one per path, namespace and slug.
fn in_history(
    repo: &Repo,
    text: &str,
    current: Option<&WatchedFile>,
) -> MemoirResult<Vec<WatchedFile>> {
    let tips: Vec<ObjectId> = repo.commit_refs()?.into_iter().map(|(_, id)| id).collect();
    let mut roots = HashSet::new();
    for id in repo.reachable(&tips)? {
        roots.insert(repo.read_commit(&id)?.root);
    }
    let mut all: BTreeMap<(String, String, String), WatchedFile> = BTreeMap::new();
    for root in roots {
        for f in read_list(repo, &root)? {
            all.entry((f.path.clone(), f.namespace.clone(), f.slug.clone()))
                .or_insert(f);
        }
    }
    let all: Vec<WatchedFile> = all.into_values().collect();
    let of = |keep: &dyn Fn(&WatchedFile) -> bool| -> Vec<WatchedFile> {
        all.iter().filter(|f| keep(f)).cloned().collect()
    };
    if let Some(c) = current {
        return Ok(of(&|f| f.path == c.path));
    }
    let p = Path::new(text);
    let abs = p
        .canonicalize()
        .ok()
        .or_else(|| std::path::absolute(p).ok());
    let by_path = of(&|f| f.path == text || abs.as_deref() == Some(Path::new(&f.path)));
    if !by_path.is_empty() {
        return Ok(by_path);
    }
    Ok(of(&|f| f.slug == text))
}
