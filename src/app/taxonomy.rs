//! `taxonomy`: the categories a store files memories under. The store keeps its taxonomy as
//! ordinary records in the namespace [`NAMESPACE`] (see [`crate::memory::taxonomy`]), so it
//! is versioned like every memory: `--at`, `log`, `diff` and `blame` work on it.
//!
//! A new store has none: `taxonomy init` writes the built-in general one, `taxonomy load`
//! any other. Until then the classifier's prompt is what it always was, and `capture`
//! (which cannot work without categories) uses the built-in one without storing it.

use serde::Serialize;

use crate::key::{namespace_prefix, nfc, Key};
use crate::memory::taxonomy::{Category, Taxonomy, META_PATH, NAMESPACE};
use crate::memory::{read_record, related, write, MergePolicy, Outcome as Decision};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit};
use crate::recall::LexicalIndex;
use crate::repo::Repo;

use super::transaction::CreatedBranch;
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs};

/// What `taxonomy init` or `taxonomy load` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct TaxonomyWriteOutcome {
    /// Always true.
    pub success: bool,
    /// The taxonomy's name.
    pub name: String,
    /// The namespace it is stored in.
    pub namespace: &'static str,
    /// Its category ids.
    pub categories: Vec<String>,
    /// Records written (new or changed), by path in the namespace.
    pub written: Vec<String>,
    /// Records removed (categories the new taxonomy does not have).
    pub removed: Vec<String>,
    /// The commit (null when the store already held exactly this taxonomy).
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
    /// One line saying what happened.
    pub message: String,
}

impl Outcome for TaxonomyWriteOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }
}

/// One category as `taxonomy list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CategorySummary {
    /// The category id.
    pub id: String,
    /// What belongs there.
    pub description: String,
    /// Its suggested topics.
    pub topics: Vec<String>,
}

/// The taxonomy in effect at a read point.
#[derive(Debug, Clone, Serialize)]
pub struct TaxonomyListOutcome {
    /// Always true.
    pub success: bool,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Whether the store holds it (false: the built-in one, which the store does not hold).
    pub stored: bool,
    /// Its categories.
    pub categories: Vec<CategorySummary>,
}

impl Outcome for TaxonomyListOutcome {
    crate::outcome_json!();
}

/// One category in full.
#[derive(Debug, Clone, Serialize)]
pub struct TaxonomyShowOutcome {
    /// Always true.
    pub success: bool,
    /// The taxonomy's name.
    pub taxonomy: String,
    /// Whether the store holds the taxonomy.
    pub stored: bool,
    /// The category.
    pub category: Category,
}

impl Outcome for TaxonomyShowOutcome {
    crate::outcome_json!();
}

/// The prompt block of the taxonomy in effect.
#[derive(Debug, Clone, Serialize)]
pub struct TaxonomySnippetOutcome {
    /// Always true.
    pub success: bool,
    /// The taxonomy's name.
    pub name: String,
    /// Whether the store holds it.
    pub stored: bool,
    /// The block the classifier and `capture` show a model.
    pub snippet: String,
}

impl Outcome for TaxonomySnippetOutcome {
    crate::outcome_json!();
}

/// Refuses a write of memories into a namespace memoir writes itself (exit 1): [`NAMESPACE`],
/// which holds the taxonomy (`taxonomy load` writes there), and the relation sets'
/// ([`related::NAMESPACE`]), which records name by id.
pub(crate) fn refuse_reserved_namespace(ns: &str) -> MemoirResult<()> {
    let ns = nfc(ns);
    if ns == NAMESPACE {
        return Err(MemoirError::invalid(format!(
            "the namespace {NAMESPACE} holds the store's taxonomy; write memories to another \
             (memoir taxonomy load FILE changes the taxonomy)"
        )));
    }
    if ns == related::NAMESPACE {
        return Err(MemoirError::invalid(format!(
            "the namespace {} holds the sets of keys written together, which memoir keeps \
             itself; write memories to another",
            related::NAMESPACE
        )));
    }
    Ok(())
}

/// The records of [`NAMESPACE`] in the tree `root`: (path, value id, content).
fn taxonomy_records(repo: &Repo, root: &ObjectId) -> MemoirResult<Vec<(String, ObjectId, String)>> {
    let mut ids = Vec::new();
    repo.tree().scan(
        root,
        &prefix_range(&namespace_prefix(NAMESPACE)),
        &mut |k, id| {
            ids.push((k.to_vec(), *id));
            true
        },
    )?;
    let mut out = Vec::with_capacity(ids.len());
    for (k, id) in ids {
        let key = Key::decode(&k)?;
        let content = read_record(repo.objects(), &id)?.content();
        out.push((key.path().to_string(), id, content));
    }
    Ok(out)
}

/// The taxonomy the tree `root` holds, if any (a store holds one when its [`META_PATH`]
/// record exists); stored records that do not read as a taxonomy are an error (exit 1).
pub(crate) fn stored_taxonomy(repo: &Repo, root: &ObjectId) -> MemoirResult<Option<Taxonomy>> {
    let records = taxonomy_records(repo, root)?;
    let Some(meta) = records.iter().find(|(p, _, _)| p == META_PATH) else {
        return Ok(None);
    };
    let categories: Vec<(String, String)> = records
        .iter()
        .filter(|(p, _, _)| p != META_PATH)
        .map(|(p, _, c)| (p.clone(), c.clone()))
        .collect();
    Ok(Some(Taxonomy::from_records(&meta.2, &categories)?))
}

/// The taxonomy a lexical index reflects, read from its documents of [`NAMESPACE`] (their
/// contents are the records' contents) the way [`stored_taxonomy`] reads the tree.
pub(crate) fn indexed_taxonomy(index: &LexicalIndex) -> MemoirResult<Option<Taxonomy>> {
    let docs = index.docs_in(&prefix_range(&namespace_prefix(NAMESPACE)));
    let Some(meta) = docs.iter().find(|d| d.path == META_PATH) else {
        return Ok(None);
    };
    let categories: Vec<(String, String)> = docs
        .iter()
        .filter(|d| d.path != META_PATH)
        .map(|d| (d.path.to_string(), d.content.to_string()))
        .collect();
    Ok(Some(Taxonomy::from_records(meta.content, &categories)?))
}

impl Memoir {
    /// The taxonomy in effect at a read point, and whether the store holds it: the stored
    /// one, else the built-in one.
    fn taxonomy_at(&self, at: &ReadPoint) -> MemoirResult<(Taxonomy, bool)> {
        let (repo, _, root) = self.open_read(at)?;
        Ok(match stored_taxonomy(&repo, &root)? {
            Some(t) => (t, true),
            None => (Taxonomy::builtin(), false),
        })
    }

    /// The categories of the taxonomy in effect at a read point (the stored one, else the
    /// built-in one, with `stored: false`).
    pub fn taxonomy_list(&self, at: &ReadPoint) -> MemoirResult<TaxonomyListOutcome> {
        let (t, stored) = self.taxonomy_at(at)?;
        Ok(TaxonomyListOutcome {
            success: true,
            stored,
            categories: t
                .categories
                .iter()
                .map(|c| CategorySummary {
                    id: c.id.clone(),
                    description: c.description.clone(),
                    topics: c.topics.iter().map(|t| t.name.clone()).collect(),
                })
                .collect(),
            name: t.name,
            description: t.description,
        })
    }

    /// One category of the taxonomy in effect, in full (unknown: exit 2, naming the
    /// categories).
    pub fn taxonomy_show(&self, id: &str, at: &ReadPoint) -> MemoirResult<TaxonomyShowOutcome> {
        let (t, stored) = self.taxonomy_at(at)?;
        let Some(c) = t.category(id).cloned() else {
            let ids: Vec<&str> = t.categories.iter().map(|c| c.id.as_str()).collect();
            return Err(MemoirError::not_found(format!(
                "no category {id:?} in taxonomy '{}' (categories: {})",
                t.name,
                ids.join(", ")
            )));
        };
        Ok(TaxonomyShowOutcome {
            success: true,
            taxonomy: t.name,
            stored,
            category: c,
        })
    }

    /// The prompt block of the taxonomy in effect at a read point.
    pub fn taxonomy_snippet(&self, at: &ReadPoint) -> MemoirResult<TaxonomySnippetOutcome> {
        let (t, stored) = self.taxonomy_at(at)?;
        Ok(TaxonomySnippetOutcome {
            success: true,
            snippet: t.snippet(),
            name: t.name,
            stored,
        })
    }

    /// Writes the built-in general taxonomy into the store, in one commit on the branch of
    /// `who`. A store holding another taxonomy is left alone unless `force` (exit 1); one
    /// holding exactly the built-in one changes nothing (no commit).
    pub fn taxonomy_init(&self, force: bool, who: &WriteAs) -> MemoirResult<TaxonomyWriteOutcome> {
        let builtin = Taxonomy::builtin();
        self.write_taxonomy(&builtin, who, "Initialise", |current| match current {
            _ if force => Ok(()),
            Ok(Some(t)) if t != builtin => Err(MemoirError::invalid(format!(
                "the store already has taxonomy '{}'; `memoir taxonomy load FILE` replaces it, \
                 `memoir taxonomy init --force` puts the built-in one in its place",
                t.name
            ))),
            Ok(_) => Ok(()),
            Err(e) => Err(MemoirError::invalid(format!(
                "{e}; `memoir taxonomy init --force` or `memoir taxonomy load FILE` replaces it"
            ))),
        })
    }

    /// Reads a taxonomy document (markdown with front matter, see
    /// [`crate::memory::taxonomy`]) and makes it the store's taxonomy, replacing any other,
    /// in one commit on the branch of `who` (none when nothing changes). A document that
    /// breaks the format is refused naming the line (exit 1).
    pub fn taxonomy_load(
        &self,
        document: &str,
        who: &WriteAs,
    ) -> MemoirResult<TaxonomyWriteOutcome> {
        let t = Taxonomy::parse(document)?;
        self.write_taxonomy(&t, who, "Load", |_| Ok(()))
    }

    fn write_taxonomy(
        &self,
        t: &Taxonomy,
        who: &WriteAs,
        verb: &str,
        allow: impl Fn(MemoirResult<Option<Taxonomy>>) -> MemoirResult<()>,
    ) -> MemoirResult<TaxonomyWriteOutcome> {
        who.check()?;
        let tx = self.start_transaction(who)?;
        let (repo, root) = (tx.repo(), tx.root());
        allow(stored_taxonomy(repo, &root))?;
        let existing = taxonomy_records(repo, &root)?;
        let wanted = t.records();
        let now = self.clock().now();
        let mut edits = Vec::new();
        let mut written = Vec::new();
        for (path, content) in &wanted {
            if existing.iter().any(|(p, _, c)| p == path && c == content) {
                continue;
            }
            let key = Key::new(NAMESPACE, path)?;
            let old = match existing.iter().find(|(p, _, _)| p == path) {
                Some((_, id, _)) => Some(read_record(repo.objects(), id)?),
                None => None,
            };
            let incoming = who.incoming(content.clone(), 1.0, now);
            let (decision, _) = write(
                &key,
                old.as_ref(),
                &incoming,
                MergePolicy::Replace,
                self.options().facet_cap,
            )?;
            if let Decision::Write(record) = decision {
                let id = repo.objects().write(&record.to_blob()?)?;
                edits.push(Edit::Put(key.encode(), id));
                written.push(path.clone());
            }
        }
        let mut removed = Vec::new();
        for (path, _, _) in &existing {
            if !wanted.iter().any(|(p, _)| p == path) {
                edits.push(Edit::Delete(Key::existing(NAMESPACE, path)?.encode()));
                removed.push(path.clone());
            }
        }
        let categories: Vec<String> = t.categories.iter().map(|c| c.id.clone()).collect();
        let (committed, message) = if edits.is_empty() {
            let m = format!(
                "The store already holds taxonomy '{}'; nothing changed",
                t.name
            );
            (None, m)
        } else {
            let m = format!(
                "{verb} taxonomy {} ({} categories) in {NAMESPACE}",
                t.name,
                categories.len()
            );
            (Some(tx.finish(edits, &m)?), m)
        };
        Ok(TaxonomyWriteOutcome {
            success: true,
            name: t.name.clone(),
            namespace: NAMESPACE,
            categories,
            written,
            removed,
            commit_hash: committed.as_ref().map(|c| c.id.to_hex()),
            branch_created: committed.as_ref().and_then(|c| c.created.clone()),
            commit_date: committed.map(|c| c.date),
            message,
        })
    }
}
