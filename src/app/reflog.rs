//! `reflog`: where each branch (and HEAD) has pointed, newest first, from the store's ref
//! log; read without opening the store.

use serde::Serialize;

use crate::repo::revision::format_iso8601;
use crate::store::{reflog, StoreError, FORMAT_FILE};

use super::{Memoir, MemoirResult, Outcome};

/// One move of a ref.
#[derive(Debug, Clone, Serialize)]
pub struct ReflogItem {
    /// The ref: a branch name, or `HEAD`.
    #[serde(rename = "ref")]
    pub name: String,
    /// The commit (or `ref: refs/heads/<branch>` for HEAD) before; `None`: it did not exist.
    pub old: Option<String>,
    /// After; `None`: deleted.
    pub new: Option<String>,
    /// Unix seconds.
    pub timestamp: i64,
    /// ISO 8601 (UTC).
    pub date: String,
    /// Who moved it (a commit's author; empty when not known).
    pub author: String,
    /// What moved it.
    pub message: String,
}

/// The ref log, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct ReflogOutcome {
    /// Always true.
    pub success: bool,
    /// Entries listed.
    pub count: usize,
    /// The moves, newest first.
    pub entries: Vec<ReflogItem>,
}

impl Outcome for ReflogOutcome {
    crate::outcome_json!();
}

/// A ref value for people: a commit id as hex, a symbolic ref as its text.
fn shown(raw: Option<String>) -> Option<String> {
    let hex = raw?;
    match crate::object::from_hex(&hex) {
        Some(b) if b.len() == 32 => Some(hex),
        Some(b) => Some(String::from_utf8(b).unwrap_or(hex)),
        None => Some(hex),
    }
}

impl Memoir {
    /// Every move of `branch` (all refs when `None`; `HEAD` names HEAD), newest first, at most
    /// `limit`. A deleted branch's last tip is here: `branch NAME <commit>` brings it back.
    pub fn reflog(
        &self,
        branch: Option<&str>,
        limit: Option<usize>,
    ) -> MemoirResult<ReflogOutcome> {
        if !self.path().join(FORMAT_FILE).is_file() {
            return Err(StoreError::NotAStore {
                path: self.path().to_path_buf(),
                reason: format!("no {FORMAT_FILE} file"),
            }
            .into());
        }
        let want = branch.map(|b| {
            if b == "HEAD" {
                b.to_string()
            } else {
                format!("refs/heads/{b}")
            }
        });
        let mut entries: Vec<ReflogItem> = reflog::read(self.path())?
            .into_iter()
            .rev()
            .filter(|e| want.as_ref().is_none_or(|w| *w == e.name))
            .take(limit.unwrap_or(usize::MAX))
            .map(|e| ReflogItem {
                name: e
                    .name
                    .strip_prefix("refs/heads/")
                    .unwrap_or(&e.name)
                    .to_string(),
                old: shown(e.old),
                new: shown(e.new),
                timestamp: e.time,
                date: format_iso8601(e.time),
                author: e.author,
                message: e.message,
            })
            .collect();
        entries.shrink_to_fit();
        Ok(ReflogOutcome {
            success: true,
            count: entries.len(),
            entries,
        })
    }
}
