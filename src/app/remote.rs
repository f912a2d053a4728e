//! Remotes of a store: the list of them (`remote add|list|remove`) and how a URL becomes a
//! transport. Transfers are in [`super::remote_sync`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::object::ObjectId;
use crate::repo::remote::{Directory, RemoteError, S3Bucket, Transport, TRACKING_PREFIX};
use crate::repo::{RefUpdate, Repo};
use crate::store::{read_remotes, ObjectStore, RefStore, CACHE_DIR, FORMAT_FILE};

use super::ids::hex;
use super::{Memoir, MemoirError, MemoirResult, Outcome};

/// The name a clone gives its remote, and the remote commands use when there is one.
pub const DEFAULT_REMOTE: &str = "origin";

/// Checks a remote name: 1 to 64 ASCII letters, digits, `.`, `_` or `-`, not starting with
/// `.` or `-`.
pub fn validate_remote_name(name: &str) -> MemoirResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-']);
    if ok {
        Ok(())
    } else {
        Err(MemoirError::invalid(format!(
            "invalid remote name '{name}': use 1 to 64 letters, digits, '.', '_' or '-', not \
             starting with '.' or '-'"
        )))
    }
}

/// Where a remote URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A local directory laid out as a remote.
    Directory(PathBuf),
    /// Another store on this machine.
    Store(PathBuf),
    /// A bucket and a prefix in it.
    S3 { bucket: String, prefix: String },
}

/// Reads a remote URL: `s3://BUCKET[/PREFIX]`, `file:///PATH`, or a local path (made
/// absolute against the current directory, and normalised), which is another store when it
/// holds one. Credentials in a URL are refused, so they are never written to the store.
pub(crate) fn parse_url(url: &str) -> MemoirResult<(Location, String)> {
    let bad = |why: &str| MemoirError::invalid(format!("remote URL '{url}': {why}"));
    if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.contains('@') || bucket.contains(':') {
            return Err(bad(
                "credentials do not belong in a URL; set AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY (or a profile) instead",
            ));
        }
        if bucket.is_empty() {
            return Err(bad("no bucket name"));
        }
        let prefix = prefix.trim_matches('/').to_string();
        if prefix.split('/').any(|p| p == "." || p == "..") {
            return Err(bad("a prefix has no '.' or '..' segments"));
        }
        let canonical = if prefix.is_empty() {
            format!("s3://{bucket}")
        } else {
            format!("s3://{bucket}/{prefix}")
        };
        return Ok((
            Location::S3 {
                bucket: bucket.to_string(),
                prefix,
            },
            canonical,
        ));
    }
    let path = match url.strip_prefix("file://") {
        Some(p) if p.starts_with('/') => normalise(Path::new(p)),
        Some(_) => return Err(bad("a file URL needs an absolute path (file:///…)")),
        None if url.contains("://") => {
            return Err(bad(
                "unsupported scheme; use s3://BUCKET/PREFIX or a local path",
            ))
        }
        None if url.is_empty() => return Err(bad("empty")),
        None => normalise(Path::new(url)),
    };
    let canonical = path.display().to_string();
    if path.join(FORMAT_FILE).exists() {
        return Ok((Location::Store(path), canonical));
    }
    Ok((Location::Directory(path), canonical))
}

/// `path` made absolute without `.` or `..` components: each `..` leaves the directory
/// really there (a link's target, as the kernel resolves it), or the name when nothing is
/// there; the result is canonical when it exists.
fn normalise(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if let Ok(real) = out.canonicalize() {
                    out = real;
                }
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.canonicalize().unwrap_or(out)
}

/// A remote and what this store last fetched of it.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteItem {
    /// Its name.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// Its branches as last fetched or pushed (remote-tracking refs `NAME/BRANCH`).
    pub branches: Vec<TrackingBranch>,
}

/// One remote-tracking branch.
#[derive(Debug, Clone, Serialize)]
pub struct TrackingBranch {
    /// The branch on the remote.
    pub branch: String,
    /// The commit it named when last fetched or pushed.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
}

/// What `remote list` shows.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteListOutcome {
    /// Always true.
    pub success: bool,
    /// Every remote, by name.
    pub remotes: Vec<RemoteItem>,
}

impl Outcome for RemoteListOutcome {
    crate::outcome_json!();
}

/// What `remote add` or `remote remove` did.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteChangeOutcome {
    /// Always true.
    pub success: bool,
    /// The remote.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// What happened, in one line.
    pub message: String,
}

impl Outcome for RemoteChangeOutcome {
    crate::outcome_json!();
}

/// The remote-tracking branches of `remote` in `repo`, by branch name.
pub(crate) fn tracking_branches(repo: &Repo, remote: &str) -> MemoirResult<Vec<TrackingBranch>> {
    let prefix = format!("{TRACKING_PREFIX}{remote}/");
    let mut out = Vec::new();
    for (name, raw) in repo.store().list_refs(&prefix)? {
        let id = <[u8; 32]>::try_from(raw.as_slice())
            .map(ObjectId::from_bytes)
            .map_err(|_| {
                MemoirError::coded(
                    super::exit::CORRUPT,
                    format!("ref {name} is not a commit id"),
                )
            })?;
        out.push(TrackingBranch {
            branch: name[prefix.len()..].to_string(),
            commit: id,
        });
    }
    Ok(out)
}

/// The file listing the packs of `remote` whose objects this store holds.
pub(crate) fn held_packs_path(store: &Path, remote: &str) -> PathBuf {
    store.join(CACHE_DIR).join(format!("remote-{remote}.packs"))
}

/// The packs of `remote` this store holds, as last recorded (none if unreadable).
pub(crate) fn read_held_packs(store: &Path, remote: &str) -> BTreeSet<String> {
    std::fs::read_to_string(held_packs_path(store, remote))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Records the packs of `remote` this store holds (a cache: failure to write is ignored).
pub(crate) fn write_held_packs(store: &Path, remote: &str, packs: &BTreeSet<String>) {
    let mut text = String::new();
    for p in packs {
        text.push_str(p);
        text.push('\n');
    }
    let _ = std::fs::create_dir_all(store.join(CACHE_DIR));
    let _ = crate::store::write_cache_file(&held_packs_path(store, remote), text.as_bytes());
}

impl Memoir {
    /// The store's remotes, name to URL.
    pub(crate) fn remotes(&self) -> MemoirResult<BTreeMap<String, String>> {
        Ok(read_remotes(self.path())?)
    }

    /// The remote `name`, or the default one: `origin`, else the only remote.
    pub(crate) fn pick_remote(&self, name: Option<&str>) -> MemoirResult<(String, String)> {
        let remotes = self.remotes()?;
        let chosen = match name {
            Some(n) => n.to_string(),
            None if remotes.contains_key(DEFAULT_REMOTE) => DEFAULT_REMOTE.to_string(),
            None if remotes.len() == 1 => remotes.keys().next().expect("one").clone(),
            None if remotes.is_empty() => {
                return Err(MemoirError::not_found(
                    "this store has no remote; add one with `memoir remote add NAME URL`",
                ))
            }
            None => {
                return Err(MemoirError::invalid(format!(
                    "this store has several remotes and none is named {DEFAULT_REMOTE}; name \
                     one of: {}",
                    remotes.keys().cloned().collect::<Vec<_>>().join(", ")
                )))
            }
        };
        match remotes.get(&chosen) {
            Some(url) => Ok((chosen, url.clone())),
            None => Err(MemoirError::not_found(format!(
                "no remote named '{chosen}'"
            ))),
        }
    }

    /// The other store at `dir`, opened (its LOCK held) with its history.
    pub(crate) fn other_store(&self, dir: &Path) -> MemoirResult<Repo> {
        if super::absolute(dir) == self.path() {
            return Err(MemoirError::invalid(
                "a store cannot be its own remote".to_string(),
            ));
        }
        let store = crate::store::Store::open(dir, &self.open_options())?;
        // Its ref moves (a push) are logged at this operation's time, as this store's are.
        store.set_ref_note(crate::store::RefNote {
            time: self.opts.clock.now_secs(),
            ..Default::default()
        });
        Ok(Repo::open(store)?)
    }

    /// A transport to the remote at `url`; a directory is created first when `create`.
    pub(crate) fn transport(&self, url: &str, create: bool) -> MemoirResult<Box<dyn Transport>> {
        let (loc, _) = parse_url(url)?;
        let t: Box<dyn Transport> = match loc {
            Location::Directory(dir) => {
                Box::new(Directory::open(dir, create).map_err(RemoteError::from)?)
            }
            Location::S3 { bucket, prefix } => Box::new(
                S3Bucket::open(&bucket, &prefix, &self.opts.s3).map_err(RemoteError::from)?,
            ),
            Location::Store(dir) => {
                return Err(MemoirError::invalid(format!(
                    "{} is a memoir store, not object storage: this works with buckets and \
                     directories laid out as remotes",
                    dir.display()
                )))
            }
        };
        Ok(t)
    }

    /// Adds remote `name` at `url` (a local path is stored absolute). Nothing is contacted.
    pub fn remote_add(&self, name: &str, url: &str) -> MemoirResult<RemoteChangeOutcome> {
        validate_remote_name(name)?;
        let (location, url) = parse_url(url)?;
        if location == Location::Store(self.path().to_path_buf()) {
            return Err(MemoirError::invalid("a store cannot be its own remote"));
        }
        let store = self.open_store()?;
        let mut remotes = read_remotes(self.path())?;
        if let Some(old) = remotes.get(name) {
            return Err(MemoirError::invalid(format!(
                "remote '{name}' already exists (at {old}); remove it first"
            )));
        }
        remotes.insert(name.to_string(), url.clone());
        store.write_remotes(&remotes)?;
        Ok(RemoteChangeOutcome {
            success: true,
            message: format!("Added remote {name} at {url}"),
            name: name.to_string(),
            url,
        })
    }

    /// Removes remote `name`, with its remote-tracking branches. The remote is not touched.
    pub fn remote_remove(&self, name: &str) -> MemoirResult<RemoteChangeOutcome> {
        validate_remote_name(name)?;
        let repo = self.open_repo()?;
        let mut remotes = read_remotes(self.path())?;
        let Some(url) = remotes.remove(name) else {
            return Err(MemoirError::not_found(format!("no remote named '{name}'")));
        };
        let mut update = RefUpdate::logged_as(format!("remote: removed {name}"));
        for t in tracking_branches(&repo, name)? {
            update.set_tracking(name, &t.branch, None);
        }
        repo.update_refs(&update)?;
        repo.store().write_remotes(&remotes)?;
        repo.store().flush()?;
        let _ = std::fs::remove_file(held_packs_path(self.path(), name));
        Ok(RemoteChangeOutcome {
            success: true,
            message: format!("Removed remote {name}"),
            name: name.to_string(),
            url,
        })
    }

    /// Every remote, with its remote-tracking branches.
    pub fn remote_list(&self) -> MemoirResult<RemoteListOutcome> {
        let remotes = self.remotes()?;
        self.reading(|repo| {
            let mut items = Vec::new();
            for (name, url) in &remotes {
                items.push(RemoteItem {
                    name: name.clone(),
                    url: url.clone(),
                    branches: tracking_branches(repo, name)?,
                });
            }
            Ok(RemoteListOutcome {
                success: true,
                remotes: items,
            })
        })
    }
}
