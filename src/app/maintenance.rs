//! `fsck` (check every reachable object, tree invariant and ref) and `gc` (remove the
//! objects no ref reaches).

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::repo::Finding;
use crate::repo::Repo;
use crate::store::{CacheFinding, RepairReport, Store};

use super::last_runs::{FsckRun, GcRun, LastRuns};
use super::{exit, Memoir, MemoirResult, Outcome};

/// What `fsck` found. Findings make the outcome fail with exit 5.
#[derive(Debug, Clone, Serialize)]
pub struct FsckOutcome {
    /// Whether nothing is wrong.
    pub success: bool,
    /// Whether nothing is wrong.
    pub clean: bool,
    /// Distinct reachable objects checked.
    pub objects_checked: u64,
    /// Commits among them.
    pub commits_checked: u64,
    /// Refs examined.
    pub refs_checked: u64,
    /// Stored objects no ref reaches (not a problem: gc removes them).
    pub unreachable_objects: u64,
    /// Every problem (JSON: `subject`, lower-case `kind`, `detail`).
    #[serde(serialize_with = "findings_json")]
    pub findings: Vec<Finding>,
    /// Problems of the derived caches under `cache/` (JSON: `file`, `kind` = `stale` or
    /// `unusable`, `detail`). Caches are never needed to read the store, so these do not
    /// make the outcome fail: a stale cache is dropped by `gc` (and rebuilt by its next
    /// reader), an unusable path is skipped.
    pub caches: Vec<CacheFinding>,
    /// What `fsck --repair` rebuilt before checking (absent for a plain fsck).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairReport>,
}

impl Outcome for FsckOutcome {
    crate::outcome_json!();

    fn exit_code(&self) -> u8 {
        if self.clean {
            exit::OK
        } else {
            exit::CORRUPT
        }
    }

    fn error_message(&self) -> Option<String> {
        Some(format!(
            "the store is damaged: {} finding(s)",
            self.findings.len()
        ))
    }
}

fn findings_json<S: Serializer>(findings: &[Finding], s: S) -> Result<S::Ok, S::Error> {
    struct Item<'a>(&'a Finding);
    impl Serialize for Item<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("Finding", 3)?;
            st.serialize_field("subject", &self.0.subject.to_string())?;
            st.serialize_field("kind", &format!("{:?}", self.0.kind).to_lowercase())?;
            st.serialize_field("detail", &self.0.detail)?;
            st.end()
        }
    }
    s.collect_seq(findings.iter().map(Item))
}

/// What `gc` removed.
#[derive(Debug, Clone, Serialize)]
pub struct GcOutcome {
    /// Always true.
    pub success: bool,
    /// Reachable objects, all kept.
    pub objects_kept: u64,
    /// Unreachable objects deleted.
    pub objects_removed: u64,
    /// Their bytes.
    pub bytes_removed: u64,
    /// What was done to the derived caches (diagnostics).
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl Outcome for GcOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// Checks the whole store: every reachable object re-hashed, decoded, re-encoded and
    /// compared; trees for order, counts, bounds and chunk boundaries; refs and parents must
    /// name commits; pack files must begin with their magic. Every problem is listed; any
    /// makes the outcome exit 5. The derived caches are checked too, and what is wrong with
    /// them is listed apart ([`FsckOutcome::caches`]) without failing the outcome. The run is
    /// recorded in the store's maintenance record ([`LastRuns`]).
    pub fn fsck(&self) -> MemoirResult<FsckOutcome> {
        self.fsck_of(self.open_repo()?, false)
    }

    /// Rebuilds the store's database from the packs and the ref log (see
    /// [`Store::repair`]), for a store whose `db/` is lost or damaged, then checks the
    /// result as [`Memoir::fsck`] does; the outcome says what was rebuilt.
    pub fn repair(&self) -> MemoirResult<FsckOutcome> {
        self.release();
        let (store, report) = Store::repair(self.path(), &self.open_options())?;
        let mut out = self.fsck_of(self.repo_of(store)?, true)?;
        out.repair = Some(report);
        Ok(out)
    }

    fn fsck_of(&self, repo: Repo, repaired: bool) -> MemoirResult<FsckOutcome> {
        let report = repo.fsck();
        let caches = self.check_caches(repo.store());
        // Recorded while the LOCK is held; a record that cannot be written loses nothing.
        let run = FsckRun::new(
            self.clock().now_secs(),
            report.findings.len() as u64,
            report.objects_checked,
            repaired,
        );
        let _ = LastRuns::update(self.path(), |r| r.fsck = Some(run));
        drop(repo);
        let clean = report.is_clean();
        Ok(FsckOutcome {
            success: clean,
            clean,
            objects_checked: report.objects_checked,
            commits_checked: report.commits_checked,
            refs_checked: report.refs_checked,
            unreachable_objects: report.unreachable_objects,
            findings: report.findings,
            caches,
            repair: None,
        })
    }

    /// Removes every object no branch or HEAD reaches, erases their bytes, and prunes every
    /// derived cache of them, so no file of the store holds a removed object's content.
    /// Refuses (and deletes nothing) when a reachable object is missing or corrupt. A gc that
    /// was interrupted is finished by the next one. The run is recorded in the store's
    /// maintenance record ([`LastRuns`]).
    pub fn gc(&self) -> MemoirResult<GcOutcome> {
        let repo = self.open_repo()?;
        let report = repo.gc()?;
        let mut notes = self.prune_caches(repo.store())?;
        let run = GcRun::new(
            self.clock().now_secs(),
            report.objects_removed,
            report.bytes_removed,
        );
        if let Err(e) = LastRuns::update(self.path(), |r| r.gc = Some(run)) {
            notes.push(format!("the record of this gc was not written: {e}"));
        }
        drop(repo);
        Ok(GcOutcome {
            success: true,
            objects_kept: report.objects_kept,
            objects_removed: report.objects_removed,
            bytes_removed: report.bytes_removed,
            notes,
        })
    }
}
