//! `capture`: the durable facts of one conversation turn, picked out by the model in one
//! call and stored as one commit.
//!
//! The turn ([`crate::memory::turn`]) is checked for credentials first (refused like
//! `remember`: nothing stored, the model not asked). The store's taxonomy (else the built-in
//! one) and the namespace's existing paths are read, the store is closed, and the model is
//! asked once ([`crate::memory::capture`]): a reply not in the asked form fails the command
//! (exit 1, nothing stored); lines with a path outside the taxonomy or a fragment of a fact
//! are dropped. The store is then opened again to write: a fact that says what a stored
//! memory (or an earlier fact of the turn) already says is skipped
//! ([`crate::recall::duplicate`]), the others are written in one commit with source
//! `capture`. A fact joins an existing record at its key as a new entry (`append`), or
//! replaces it where the key's type replaces by default (`context.current`, `metrics.turn`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::key::namespace_prefix;
use crate::key::{nfc, validate_namespace, Key, DEFAULT_NAMESPACE};
use crate::memory::capture::{
    check_lines, parse_reply, prompt, Dropped, Profile, SYSTEM, TURN_CHARS,
};
use crate::memory::taxonomy::Taxonomy;
use crate::memory::turn::Turn;
use crate::memory::{
    default_policy, existing_prefixes, read_record, write, MergePolicy, Outcome as Decision, Record,
};
use crate::object::ObjectId;
use crate::prolly::prefix_range;
use crate::prolly::Edit;
use crate::recall::duplicate::{find_duplicate, near_duplicate, term_set};
use crate::recall::{sync_loaded, LexicalIndex, Tokenizer};

use super::input::{refuse_secrets, refuse_secrets_in_key};
use super::taxonomy::{indexed_taxonomy, refuse_reserved_namespace, stored_taxonomy};
use super::transaction::CreatedBranch;
use super::{round_ms, LlmPrompt, Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs};

/// The confidence recorded on a captured fact: a model's reading of a conversation, below
/// what a memory stored with an explicit path gets (1.0).
pub const CAPTURE_CONFIDENCE: f64 = 0.8;
/// The source recorded on capture commits and entries.
pub const CAPTURE_SOURCE: &str = "capture";

/// What to capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureRequest {
    /// The turn, as text or JSON ([`Turn::parse`]).
    pub turn: String,
    /// What kind of agent the turn comes from.
    pub profile: Profile,
    /// Namespace the facts go to (default `default`).
    pub namespace: Option<String>,
    /// Report what would be stored, store nothing.
    pub dry_run: bool,
    /// Model name overriding the configured one.
    pub model: Option<String>,
    /// Capture a turn that looks like it holds a credential anyway (refused by default).
    pub allow_secrets: bool,
}

/// A fact stored (or, in a dry run, to be stored).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapturedFact {
    /// The key's path.
    pub key: String,
    /// The fact.
    pub content: String,
}

/// A fact left out because it is already known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedFact {
    /// The key's path it would have gone to.
    pub key: String,
    /// The fact.
    pub content: String,
    /// The path of the memory (or earlier fact of the turn) that already says it.
    pub duplicate_of: String,
    /// Why, in words.
    pub reason: String,
}

/// Where the time of a capture went, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CaptureTimings {
    /// Reading the turn, the taxonomy and the existing paths.
    pub read_ms: f64,
    /// The model call.
    pub model_ms: f64,
    /// Checking the reply and looking for duplicates.
    pub check_ms: f64,
    /// Writing the commit.
    pub commit_ms: f64,
    /// All of it.
    pub total_ms: f64,
    /// All of it but the model call.
    pub overhead_ms: f64,
}

/// What `capture` did.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureOutcome {
    /// Always true (a failure is an error).
    pub success: bool,
    /// The namespace written to.
    pub namespace: String,
    /// The profile used.
    pub profile: &'static str,
    /// Whether nothing was stored on purpose.
    pub dry_run: bool,
    /// The facts stored (would be stored, in a dry run), in reply order.
    pub captured: Vec<CapturedFact>,
    /// Facts already known.
    pub skipped: Vec<SkippedFact>,
    /// Lines of the reply that were not usable facts.
    pub dropped: Vec<Dropped>,
    /// The commit (null when nothing was stored).
    pub commit_hash: Option<String>,
    /// Its date, ISO 8601.
    pub commit_date: Option<String>,
    /// The taxonomy's name.
    pub taxonomy: String,
    /// Whether the store holds that taxonomy (false: the built-in one was used).
    pub taxonomy_stored: bool,
    /// The model asked.
    pub model: String,
    /// Where the time went.
    pub timings: CaptureTimings,
    /// The exchange with the model.
    pub llm_prompts: Vec<LlmPrompt>,
    /// The branch written to.
    #[serde(skip)]
    pub branch: String,
    /// The branch this write created (`--branch` naming a missing one): JSON
    /// `branch_created: true`, absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::transaction::created_as_true"
    )]
    pub branch_created: Option<CreatedBranch>,
}

impl Outcome for CaptureOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }
}

/// The existing paths of `namespace` a lexical index reflects, grouped by their first three
/// segments (a shorter key is its own group), with counts, in key order: what
/// [`existing_prefixes`] reads from the tree.
fn indexed_prefixes(index: &LexicalIndex, namespace: &str) -> Vec<(String, u64)> {
    let mut groups: BTreeMap<String, u64> = BTreeMap::new();
    for d in index.docs_in(&prefix_range(&namespace_prefix(namespace))) {
        let group: Vec<&str> = d.path.splitn(4, '.').take(3).collect();
        *groups.entry(group.join(".")).or_default() += 1;
    }
    groups.into_iter().collect()
}

impl Memoir {
    /// Captures the facts of one turn (see the module documentation) in one commit on the
    /// branch of `who`, with source [`CAPTURE_SOURCE`]. No model configured, a failed call or
    /// a reply not in the asked form is an error (exit 1) and nothing is stored; no fact
    /// worth keeping is an outcome with nothing captured and no commit.
    pub fn capture(&self, req: &CaptureRequest, who: &WriteAs) -> MemoirResult<CaptureOutcome> {
        let timer = self.clock().timer();
        who.check()?;
        let turn = Turn::parse(&req.turn)?;
        refuse_secrets(&req.turn, req.allow_secrets)?;
        let ns = nfc(req.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)).into_owned();
        validate_namespace(&ns)?;
        refuse_reserved_namespace(&ns)?;

        // The taxonomy and the existing paths, read before the model call: from the cached
        // lexical index when it reflects the write target as of the store's last close (no store opened, no lock
        // taken), else from the store, which is closed again before the call.
        let at = ReadPoint {
            at: None,
            branch: who.branch.clone(),
        };
        let (index, at_closed_head) = self.cached_index(&at);
        let from_index = if at_closed_head {
            let read = (indexed_taxonomy(&index)?, indexed_prefixes(&index, &ns));
            // A damaged block of the cache file: the store answers instead.
            (!index.damaged()).then_some(read)
        } else {
            None
        };
        let (stored_one, existing) = if let Some(read) = from_index {
            read
        } else {
            let tx = self.start_transaction(who)?;
            let (repo, root) = (tx.repo(), tx.root());
            let t = stored_taxonomy(repo, &root)?;
            (t, existing_prefixes(repo.tree(), &root, &ns)?)
        };
        self.release();
        let (taxonomy, stored) = match stored_one {
            Some(t) => (t, true),
            None => (Taxonomy::builtin(), false),
        };
        let t_read = timer.ms();

        let Some(llm) = self.llm(req.model.as_deref()) else {
            return Err(MemoirError::invalid(
                "capture needs a model to read the turn and none is configured; nothing was \
                 stored. Configure one: MEMOIR_LLM_COMMAND, MEMOIR_LLM_BASE_URL, OPENAI_BASE_URL \
                 or OPENAI_API_KEY, or ANTHROPIC_API_KEY (see memoir recall --help)",
            ));
        };
        let model = llm.describe();
        let prompt = prompt(
            req.profile,
            &taxonomy,
            &ns,
            &existing,
            &turn.transcript(TURN_CHARS),
        );
        let reply = llm.complete(SYSTEM, &prompt).map_err(|e| {
            MemoirError::invalid(format!(
                "could not capture with {model}: {e}; nothing was stored"
            ))
        })?;
        let t_model = timer.ms();
        let lines = parse_reply(&reply).map_err(|e| {
            MemoirError::invalid(format!(
                "could not capture with {model}: {e}; nothing was stored"
            ))
        })?;
        let (facts, dropped) = check_lines(&lines, &ns, &taxonomy, &existing);
        for f in &facts {
            refuse_secrets(&f.content, req.allow_secrets)?;
            refuse_secrets_in_key(&Key::new(&ns, &f.path)?, req.allow_secrets)?;
        }
        let mut out = CaptureOutcome {
            success: true,
            namespace: ns.clone(),
            profile: req.profile.as_str(),
            dry_run: req.dry_run,
            captured: Vec::new(),
            skipped: Vec::new(),
            dropped,
            commit_hash: None,
            commit_date: None,
            taxonomy: taxonomy.name.clone(),
            taxonomy_stored: stored,
            model,
            timings: CaptureTimings {
                read_ms: t_read,
                model_ms: round_ms(t_model - t_read),
                check_ms: 0.0,
                commit_ms: 0.0,
                total_ms: 0.0,
                overhead_ms: 0.0,
            },
            llm_prompts: vec![LlmPrompt {
                step: "capture".into(),
                prompt,
                reply,
            }],
            branch: String::new(),
            branch_created: None,
        };
        if facts.is_empty() {
            return Ok(self.finish(out, &timer, t_model, t_model));
        }

        let who = WriteAs {
            source: Some(CAPTURE_SOURCE.to_string()),
            ..who.clone()
        };
        let tx = self.start_transaction(&who)?;
        let (repo, root) = (tx.repo(), tx.root());
        out.branch = tx.branch().to_string();
        let (mut index, _, _) =
            sync_loaded(index, self.path(), repo.tree(), repo.objects(), &root)?;
        let tok = Tokenizer::default();
        let mut kept: Vec<(Key, String, BTreeSet<String>)> = Vec::new();
        for f in facts {
            let terms = term_set(&tok, &f.content);
            let earlier = kept.iter().find(|(_, _, t)| near_duplicate(&terms, t));
            let (duplicate_of, reason) = match earlier {
                Some((k, _, _)) => (k.path().to_string(), "repeats an earlier fact of this turn"),
                None => match find_duplicate(&mut index, &tok, &ns, &f.content) {
                    Some(hit) => (hit.path, "a stored memory already says it"),
                    None => {
                        kept.push((Key::new(&ns, &f.path)?, f.content, terms));
                        continue;
                    }
                },
            };
            out.skipped.push(SkippedFact {
                key: f.path,
                content: f.content,
                duplicate_of,
                reason: reason.to_string(),
            });
        }
        let t_check = timer.ms();

        // The records as they will be: facts at one key go in as entries in reply order.
        let now = self.clock().now();
        let mut records: BTreeMap<Key, Record> = BTreeMap::new();
        for (key, content, _) in &kept {
            let existing = match records.get(key) {
                Some(r) => Some(r.clone()),
                None => match repo.tree().get(&root, &key.encode())? {
                    Some(id) => Some(read_record(repo.objects(), &id)?),
                    None => None,
                },
            };
            let policy = match default_policy(key.path()) {
                MergePolicy::Replace => MergePolicy::Replace,
                _ => MergePolicy::Append,
            };
            let incoming = who.incoming(content.clone(), CAPTURE_CONFIDENCE, now);
            let cap = self.options().facet_cap;
            if let (Decision::Write(r), _) = write(key, existing.as_ref(), &incoming, policy, cap)?
            {
                records.insert(key.clone(), r);
            }
            out.captured.push(CapturedFact {
                key: key.path().to_string(),
                content: content.clone(),
            });
        }
        if !req.dry_run && !records.is_empty() {
            let mut edits = Vec::with_capacity(records.len());
            for (key, record) in &records {
                let id: ObjectId = repo.objects().write(&record.to_blob()?)?;
                edits.push(Edit::Put(key.encode(), id));
            }
            let paths: Vec<&str> = kept.iter().map(|(k, _, _)| k.path()).collect();
            let message = format!("Capture {} in {ns}", paths.join(", "));
            let (committed, repo) = tx.finish_keeping_repo(edits, &message)?;
            let id = committed.id;
            out.commit_hash = Some(id.to_hex());
            out.commit_date = Some(committed.date);
            out.branch_created = committed.created.clone();
            // The index follows the commit, so the next capture (or search) finds the store at
            // rest; a cache that cannot be brought along is rebuilt when next needed.
            if let Ok(new_root) = repo.root_of(&id) {
                let _ = sync_loaded(index, self.path(), repo.tree(), repo.objects(), &new_root);
            }
        }
        Ok(self.finish(out, &timer, t_model, t_check))
    }

    /// Fills in the timings of a capture.
    fn finish(
        &self,
        mut out: CaptureOutcome,
        timer: &super::Timer,
        t_model: f64,
        t_check: f64,
    ) -> CaptureOutcome {
        let total = timer.ms();
        let t = &mut out.timings;
        t.check_ms = round_ms(t_check - t_model);
        t.commit_ms = round_ms(total - t_check);
        t.total_ms = total;
        t.overhead_ms = round_ms(total - t.model_ms);
        out
    }
}
