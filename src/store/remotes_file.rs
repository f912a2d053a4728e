//! The store's list of remotes: `<store>/remotes.json`, names and URLs only (credentials
//! are never stored; they come from the environment of the command that uses them).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::files::{io_err, write_atomically};
use super::{Store, StoreError, StoreResult};

/// The file's name in the store directory.
pub const REMOTES_FILE: &str = "remotes.json";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RemotesFile {
    version: u32,
    remotes: BTreeMap<String, RemoteEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoteEntry {
    url: String,
}

/// Reads the remotes of the store at `dir`: name to URL (none when the file is absent).
pub fn read_remotes(dir: &Path) -> StoreResult<BTreeMap<String, String>> {
    let path = dir.join(REMOTES_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let file: RemotesFile = serde_json::from_slice(&bytes).map_err(|e| StoreError::NotAStore {
        path: path.clone(),
        reason: format!("{REMOTES_FILE} is not a list of remotes: {e}"),
    })?;
    if file.version != 1 {
        return Err(StoreError::NotAStore {
            path,
            reason: format!(
                "{REMOTES_FILE} has version {}; this memoir reads 1",
                file.version
            ),
        });
    }
    Ok(file
        .remotes
        .into_iter()
        .map(|(name, e)| (name, e.url))
        .collect())
}

impl Store {
    /// Replaces the store's list of remotes (written durably: a synced temporary file
    /// renamed over the old one). The caller holds the store open, so its LOCK orders
    /// concurrent changes.
    pub fn write_remotes(&self, remotes: &BTreeMap<String, String>) -> StoreResult<()> {
        let dir = self.path().ok_or_else(|| StoreError::NotAStore {
            path: Default::default(),
            reason: "a store in memory has no remotes".into(),
        })?;
        let file = RemotesFile {
            version: 1,
            remotes: remotes
                .iter()
                .map(|(n, u)| (n.clone(), RemoteEntry { url: u.clone() }))
                .collect(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).expect("the remotes serialize");
        bytes.push(b'\n');
        write_atomically(&dir.join(REMOTES_FILE), &bytes)
    }
}
