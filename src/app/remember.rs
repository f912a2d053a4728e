//! `remember`: store a memory under one or more keys, in one commit, combining with existing
//! records by merge policy. Without paths the configured model chooses the keys (the
//! classifier); `llm_merge` asks the same model to merge.
//!
//! Model calls are made while the store is closed (its LOCK released, a held store let go),
//! so a slow model does not make other processes wait: the taxonomy and the records to merge
//! are read first, the model is asked, then the store is opened again to write. A record that
//! changed in between is not merged over; the new entry is appended to it instead, and the
//! outcome says so.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::key::{nfc, validate_namespace, Key, DEFAULT_NAMESPACE};
use crate::llm::Llm;
use crate::memory::{
    classify, default_policy, existing_prefixes, merge_contents, read_record, related, write,
    write_merged, Classification, Conflict, Incoming, MergePolicy, ModelError, Outcome as Decision,
    Record,
};
use crate::object::{Object, ObjectId};
use crate::prolly::Edit;
use crate::repo::revision::parse_date;
use crate::repo::Repo;

use super::input::{
    check_confidence, check_content, refuse_secrets, refuse_secrets_in_key, refuse_secrets_in_names,
};
use super::taxonomy::{refuse_reserved_namespace, stored_taxonomy};
use super::transaction::CreatedBranch;
use super::LlmPrompt;
use super::{exit, round_ms, Memoir, MemoirError, MemoirResult, Outcome, WriteAs};

/// What to remember, and how.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RememberRequest {
    /// The memory's text (not blank, at most [`super::MAX_CONTENT_BYTES`]).
    pub content: String,
    /// Key paths (`a.b.c` or `ns:a.b.c`, one namespace for all); empty: the model chooses.
    pub paths: Vec<String>,
    /// Namespace of bare paths (default `default`).
    pub namespace: Option<String>,
    /// How to combine with an existing memory (else [`super::Options::merge_policy`], else
    /// the default of the key's prefix).
    pub merge_policy: Option<MergePolicy>,
    /// Same as `merge_policy: Some(Replace)`; giving both is an error.
    pub replace: bool,
    /// Confidence, 0.0..=1.0 (default 1.0 with paths, else the model's).
    pub confidence: Option<f64>,
    /// Model name overriding the configured one (classifier and `llm_merge`).
    pub model: Option<String>,
    /// Store content that looks like a credential anyway (refused by default).
    pub allow_secrets: bool,
    /// When what the memory says happened (ISO date, `yesterday`, `2.days.ago`, ...): the
    /// new entry's timestamp, which search reads as the record's event time; default now.
    /// The commit keeps the time of the write.
    pub event_time: Option<String>,
}

/// Most bytes one `remember` stores as content: each key holds the content, so a write of
/// k paths stores k copies. The bound is the largest write of a single key times
/// [`related::INLINE_MAX`] (16 MiB x 16), so no write of many keys costs more than that.
pub const MAX_WRITE_BYTES: usize = 256 << 20;

impl RememberRequest {
    /// A request to remember `content` under `paths`, with every other setting default.
    pub fn new(content: impl Into<String>, paths: &[&str]) -> Self {
        RememberRequest {
            content: content.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..RememberRequest::default()
        }
    }

    /// Checks the request's own rules without touching the store or scanning for secrets:
    /// content not blank nor too long, at most [`MAX_WRITE_BYTES`] of content over all
    /// paths, `replace` not combined
    /// with a merge policy, confidence within range (exit 1).
    pub fn validate(&self) -> MemoirResult<()> {
        check_content(&self.content)?;
        let total = self.paths.len().saturating_mul(self.content.len());
        if total > MAX_WRITE_BYTES {
            return Err(MemoirError::invalid(format!(
                "{} paths x {} bytes of content is more than {} in one remember (each key holds \
                 the content): split it into several; nothing was stored",
                self.paths.len(),
                self.content.len(),
                super::input::size(MAX_WRITE_BYTES)
            )));
        }
        if self.replace && self.merge_policy.is_some() {
            return Err(MemoirError::invalid(
                "--replace and --merge-policy cannot be combined (--replace means --merge-policy replace)",
            ));
        }
        check_confidence(self.confidence)
    }

    /// The policy the request names, if any.
    fn policy(&self) -> Option<MergePolicy> {
        if self.replace {
            Some(MergePolicy::Replace)
        } else {
            self.merge_policy
        }
    }
}

/// What `remember` did at one key.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyAction {
    /// A new or updated record was written.
    Stored,
    /// The existing record was kept as it is (confidence gate, a merge equal to it).
    Kept,
    /// `reject` at an occupied key: nothing written there.
    Conflict(Conflict),
}

/// One key of a [`RememberOutcome`].
#[derive(Debug, Clone, PartialEq)]
pub struct KeyResult {
    /// The key.
    pub key: Key,
    /// The policy applied.
    pub policy: MergePolicy,
    /// What happened.
    pub action: KeyAction,
    /// Why, in one line.
    pub reason: String,
}

/// The classifier's choice, as the outcome reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassificationReport {
    /// The model that chose.
    pub model: String,
    /// The chosen paths, best first.
    pub paths: Vec<String>,
    /// The model's confidence.
    pub confidence: f64,
    /// The model's one-line reasoning.
    pub reasoning: String,
}

/// Where the time of a `remember` went, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RememberTimings {
    /// Choosing the keys (and the policies).
    pub classify_ms: f64,
    /// Model merges and opening the store to write.
    pub read_ms: f64,
    /// Combining with the existing records.
    pub merge_ms: f64,
    /// Writing the commit.
    pub commit_ms: f64,
    /// All of it.
    pub total_ms: f64,
}

/// What `remember` did.
#[derive(Debug, Clone, Serialize)]
pub struct RememberOutcome {
    /// False when a key was left unchanged by `reject` (exit 4).
    pub success: bool,
    /// The first key's path.
    pub key: String,
    /// Every key's path, in order.
    pub keys: Vec<String>,
    /// The first key as `ns:path`.
    pub full_key: String,
    /// Every key as `ns:path`.
    pub full_keys: Vec<String>,
    /// The keys' namespace.
    pub namespace: String,
    /// The content remembered.
    pub content: String,
    /// The confidence recorded.
    pub confidence: f64,
    /// How the keys were chosen, and what happened at each.
    pub reasoning: String,
    /// The commit written (none when nothing changed).
    pub commit_hash: Option<String>,
    /// Its date, ISO 8601.
    pub commit_date: Option<String>,
    /// Keys refused by `reject`.
    #[serde(serialize_with = "conflicts_json")]
    pub conflicts: Vec<Conflict>,
    /// Where the time went.
    pub timings: RememberTimings,
    /// The classifier's choice, when the model chose the keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<ClassificationReport>,
    /// The exchanges with the model, when there were any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub llm_prompts: Vec<LlmPrompt>,
    /// What happened at each key, in order.
    #[serde(skip)]
    pub results: Vec<KeyResult>,
    /// Merges by model that fell back to appending, and why.
    #[serde(skip)]
    pub warnings: Vec<String>,
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
    /// The commit written.
    #[serde(skip)]
    pub commit: Option<ObjectId>,
}

fn conflicts_json<S: Serializer>(c: &[Conflict], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(c.iter().map(Conflict::to_json))
}

impl Outcome for RememberOutcome {
    crate::outcome_json!();

    fn created_branch(&self) -> Option<&CreatedBranch> {
        self.branch_created.as_ref()
    }

    fn exit_code(&self) -> u8 {
        if self.conflicts.is_empty() {
            exit::OK
        } else {
            exit::CONFLICT
        }
    }

    fn error_message(&self) -> Option<String> {
        (!self.conflicts.is_empty()).then(|| {
            format!(
                "{} key(s) left unchanged by merge policy reject",
                self.conflicts.len()
            )
        })
    }
}

/// A model merge asked for before the write: the value it merged against, and the result.
struct Planned {
    base: ObjectId,
    result: Result<String, ModelError>,
}

/// The model, built once when first needed.
struct LazyLlm<'a> {
    app: &'a Memoir,
    model: Option<&'a str>,
    got: Option<Option<Box<dyn Llm>>>,
}

impl LazyLlm<'_> {
    fn get(&mut self) -> Option<&dyn Llm> {
        let (app, model) = (self.app, self.model);
        self.got.get_or_insert_with(|| app.llm(model)).as_deref()
    }
}

impl Memoir {
    /// Whether `remember` would ask the model for this request: to choose the keys (no
    /// paths), or to merge under `llm_merge`. Faces that configure the model lazily check it
    /// first. A request whose paths do not parse needs none (`remember` reports them).
    pub fn remember_needs_model(&self, req: &RememberRequest) -> bool {
        if req.paths.is_empty() {
            return true;
        }
        keys_of(&req.paths, req.namespace.as_deref()).is_ok_and(|keys| {
            keys.iter()
                .any(|k| self.policy_for(req, k) == MergePolicy::LlmMerge)
        })
    }

    /// Stores `req.content` under the keys it names (or the model chooses), in one commit on
    /// the branch of `who`, combining with existing records by merge policy. Content or a
    /// key (namespace or path) that looks like a credential is refused unless
    /// `req.allow_secrets` (exit 1, nothing stored, the model not asked). A key refused by `reject` is reported in the outcome (exit 4) while the other
    /// keys are written.
    pub fn remember(&self, req: &RememberRequest, who: &WriteAs) -> MemoirResult<RememberOutcome> {
        let timer = self.clock().timer();
        req.validate()?;
        who.check()?;
        refuse_secrets(&req.content, req.allow_secrets)?;
        if let Some(ns) = &req.namespace {
            refuse_secrets_in_names(ns, [], req.allow_secrets, None)?;
        }
        if let Some(ns) = &req.namespace {
            refuse_reserved_namespace(ns)?;
        }
        if !req.paths.is_empty() {
            for key in keys_of(&req.paths, req.namespace.as_deref())? {
                refuse_reserved_namespace(key.namespace())?;
                refuse_secrets_in_key(&key, req.allow_secrets)?;
            }
        }
        let cap = self.options().facet_cap;
        let now = self.clock().now();
        let stamp = match &req.event_time {
            Some(d) => parse_date(d, now as i64)? as f64,
            None => now,
        };
        let mut llm = LazyLlm {
            app: self,
            model: req.model.as_deref(),
            got: None,
        };
        let mut prompts: Vec<LlmPrompt> = Vec::new();

        // The keys: given, or chosen by the classifier.
        let (keys, classified) = if req.paths.is_empty() {
            let (keys, c, model) = self.classify_keys(req, who, llm.get())?;
            for key in &keys {
                refuse_secrets_in_key(key, req.allow_secrets)?;
            }
            prompts.push(LlmPrompt {
                step: "classify".into(),
                prompt: c.prompt.clone(),
                reply: c.reply.clone(),
            });
            (keys, Some((c, model)))
        } else {
            (keys_of(&req.paths, req.namespace.as_deref())?, None)
        };
        let confidence = req.confidence.unwrap_or(match &classified {
            Some((c, _)) => c.confidence,
            None => 1.0,
        });
        let policies: Vec<MergePolicy> = keys.iter().map(|k| self.policy_for(req, k)).collect();
        let t_classify = timer.ms();

        // Model merges, asked for with the store closed.
        let mut planned: BTreeMap<usize, Planned> = BTreeMap::new();
        if policies.contains(&MergePolicy::LlmMerge) {
            if let Some(model) = llm.get() {
                let mut todo = Vec::new();
                {
                    let tx = self.start_transaction(who)?;
                    for (i, key) in keys.iter().enumerate() {
                        if policies[i] == MergePolicy::LlmMerge {
                            if let Some((id, rec)) = load_with_id(tx.repo(), &tx.root(), key)? {
                                todo.push((i, id, rec.content()));
                            }
                        }
                    }
                }
                self.release();
                for (i, base, existing) in todo {
                    let result =
                        merge_contents(model, &keys[i], &existing, &req.content).map(|m| {
                            prompts.push(LlmPrompt {
                                step: format!("merge:{}", keys[i]),
                                prompt: m.prompt,
                                reply: m.reply,
                            });
                            m.content
                        });
                    // The credential rules hold for what the model writes too.
                    let result =
                        result.and_then(|merged| match crate::memory::secrets::detect(&merged) {
                            Some(kind) if !req.allow_secrets => Err(ModelError::BadMerge(format!(
                                "the merged text looks like it holds a credential (rule {}: {})",
                                kind.rule(),
                                kind.describe()
                            ))),
                            _ => Ok(merged),
                        });
                    planned.insert(i, Planned { base, result });
                }
            }
        }
        let llm_configured = self.options().llm.is_some();

        let tx = self.start_transaction(who)?;
        let (repo, root) = (tx.repo(), tx.root());
        let t_read = timer.ms();

        let paths: Vec<String> = keys.iter().map(|k| k.path().to_string()).collect();
        // A write of many keys names them once, in a relation set that each record names
        // (see `related`); a few keys name each other in each record.
        let set = match paths.len() > related::INLINE_MAX + 1 {
            true => {
                let (set_key, set_record) = related::set_record(&paths)?;
                let blob = set_record.to_blob()?;
                Some((set_key, blob.to_bytes_and_id().0, blob))
            }
            false => None,
        };
        let mut edits = Vec::new();
        let mut written: Vec<&Key> = Vec::new();
        let mut results = Vec::with_capacity(keys.len());
        let mut conflicts = Vec::new();
        let mut warnings: Vec<String> = borrowed_namespace(&req.paths, req.namespace.as_deref())
            .into_iter()
            .collect();
        for (i, key) in keys.iter().enumerate() {
            let existing = load_with_id(repo, &root, key)?;
            let incoming = Incoming {
                related_keys: match set {
                    Some(_) => Vec::new(),
                    None => paths.iter().filter(|p| *p != key.path()).cloned().collect(),
                },
                related_sets: set.iter().map(|s| s.1).collect(),
                ..who.incoming(req.content.clone(), confidence, stamp)
            };
            let policy = policies[i];
            let (decision, why) = match &existing {
                Some((id, rec)) if policy == MergePolicy::LlmMerge && llm_configured => {
                    let fallback = |why: String| -> MemoirResult<(Decision, String)> {
                        let (o, _) = write(key, Some(rec), &incoming, MergePolicy::Append, cap)?;
                        Ok((
                            o,
                            format!("{key}: llm_merge: {why}, so the entry was appended"),
                        ))
                    };
                    match planned.get(&i) {
                        Some(Planned { base, result }) if base == id => match result {
                            Ok(merged) => write_merged(key, rec, &incoming, merged, cap)?,
                            Err(e) => {
                                warnings.push(format!(
                                    "llm_merge at {key} failed ({e}); the new entry was appended"
                                ));
                                fallback(format!("the model's merge failed ({e})"))?
                            }
                        },
                        _ => {
                            warnings.push(format!(
                                "{key} changed while the model was merging; the new entry was appended"
                            ));
                            fallback("the memory changed while the model was merging".into())?
                        }
                    }
                }
                _ => write(
                    key,
                    existing.as_ref().map(|(_, r)| r),
                    &incoming,
                    policy,
                    cap,
                )?,
            };
            let action = match decision {
                Decision::Write(record) => {
                    let id = repo.objects().write(&record.to_blob()?)?;
                    edits.push(Edit::Put(key.encode(), id));
                    written.push(key);
                    KeyAction::Stored
                }
                Decision::Keep => KeyAction::Kept,
                Decision::Conflict(c) => {
                    conflicts.push(c.clone());
                    KeyAction::Conflict(c)
                }
            };
            results.push(KeyResult {
                key: key.clone(),
                policy,
                action,
                reason: why,
            });
        }
        if let Some((set_key, set_id, blob)) = set.filter(|_| !edits.is_empty()) {
            if repo.tree().get(&root, &set_key.encode())? != Some(set_id) {
                repo.objects().write(&blob)?;
                edits.push(Edit::Put(set_key.encode(), set_id));
            }
        }
        let t_merge = timer.ms();

        let ns = keys[0].namespace().to_string();
        let branch = tx.branch().to_string();
        let committed = if edits.is_empty() {
            None
        } else {
            let names: Vec<&str> = written.iter().map(|k| k.path()).collect();
            let message = match names.len() > related::INLINE_MAX + 1 {
                true => format!(
                    "Store {} and {} more in {ns}",
                    names[..related::INLINE_MAX].join(", "),
                    names.len() - related::INLINE_MAX
                ),
                false => format!("Store {} in {ns}", names.join(", ")),
            };
            Some(tx.finish(edits, &message)?)
        };
        let t_total = timer.ms();

        let reasons: Vec<&str> = results.iter().map(|r| r.reason.as_str()).collect();
        let reasoning = match &classified {
            Some((c, model)) => format!(
                "{} (classified by {model}). {}",
                c.reasoning.trim_end_matches('.'),
                reasons.join("; ")
            ),
            None => format!("Paths given with -p. {}", reasons.join("; ")),
        };
        let full_keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        Ok(RememberOutcome {
            success: conflicts.is_empty(),
            key: paths[0].clone(),
            full_key: full_keys[0].clone(),
            keys: paths,
            full_keys,
            namespace: ns,
            content: req.content.clone(),
            confidence,
            reasoning,
            commit_hash: committed.as_ref().map(|c| c.id.to_hex()),
            commit_date: committed.as_ref().map(|c| c.date.clone()),
            conflicts,
            timings: RememberTimings {
                classify_ms: t_classify,
                read_ms: round_ms(t_read - t_classify),
                merge_ms: round_ms(t_merge - t_read),
                commit_ms: round_ms(t_total - t_merge),
                total_ms: t_total,
            },
            classification: classified.map(|(c, model)| ClassificationReport {
                model,
                paths: c.paths,
                confidence: c.confidence,
                reasoning: c.reasoning,
            }),
            llm_prompts: prompts,
            results,
            warnings,
            branch,
            branch_created: committed.as_ref().and_then(|c| c.created.clone()),
            commit: committed.map(|c| c.id),
        })
    }

    /// The policy at `key`: the request's, else the options', else the key prefix's default.
    fn policy_for(&self, req: &RememberRequest, key: &Key) -> MergePolicy {
        req.policy()
            .or(self.options().merge_policy)
            .unwrap_or_else(|| default_policy(key.path()))
    }

    /// Asks the model for the keys of a memory: reads the write target's existing paths and
    /// its stored taxonomy, if any (then closes the store; store errors come first, as for
    /// every operation), and classifies.
    /// Without a model, an error.
    fn classify_keys(
        &self,
        req: &RememberRequest,
        who: &WriteAs,
        llm: Option<&dyn Llm>,
    ) -> MemoirResult<(Vec<Key>, Classification, String)> {
        let ns = nfc(req.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)).into_owned();
        validate_namespace(&ns)?;
        let (existing, taxonomy) = {
            let tx = self.start_transaction(who)?;
            let (repo, root) = (tx.repo(), tx.root());
            let taxonomy = stored_taxonomy(repo, &root)?.map(|t| t.snippet());
            (existing_prefixes(repo.tree(), &root, &ns)?, taxonomy)
        };
        self.release();
        let Some(llm) = llm else {
            return Err(MemoirError::invalid(
                "no key given (-p PATH) and no LLM is configured to choose one; nothing was stored. \
                 Pass -p PATH, or configure a model: MEMOIR_LLM_COMMAND, MEMOIR_LLM_BASE_URL, \
                 OPENAI_BASE_URL or OPENAI_API_KEY, or ANTHROPIC_API_KEY (see memoir recall --help)",
            ));
        };
        let c = classify(llm, &ns, &req.content, &existing, taxonomy.as_deref()).map_err(|e| {
            MemoirError::invalid(format!(
                "could not choose a key with {}: {e}; nothing was stored (pass -p PATH to choose one)",
                llm.describe()
            ))
        })?;
        let keys = c
            .paths
            .iter()
            .map(|p| Key::new(&ns, p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((keys, c, llm.describe()))
    }
}

/// The keys of the given paths: one namespace for all (from `ns:` prefixes or `namespace`),
/// duplicates dropped, order kept.
fn keys_of(paths: &[String], namespace: Option<&str>) -> MemoirResult<Vec<Key>> {
    let mut ns: Option<String> = namespace.map(|n| nfc(n).into_owned());
    let mut bare = Vec::with_capacity(paths.len());
    for p in paths {
        let path = match p.rsplit_once(':') {
            Some((prefix, path)) => {
                if prefix.is_empty() || path.is_empty() {
                    return Err(MemoirError::invalid(format!(
                        "invalid path {p:?}: empty namespace or path around ':'"
                    )));
                }
                let prefix = nfc(prefix);
                match &ns {
                    Some(n) if *n != prefix => {
                        let from = if namespace.is_some_and(|f| nfc(f) == n.as_str()) {
                            "-n"
                        } else {
                            "another -p"
                        };
                        return Err(MemoirError::invalid(format!(
                            "path {p:?} names namespace '{prefix}' but {from} says '{n}'"
                        )));
                    }
                    _ => ns = Some(prefix.into_owned()),
                }
                path
            }
            None => p.as_str(),
        };
        bare.push(path);
    }
    let ns = ns.unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
    let mut keys: Vec<Key> = Vec::with_capacity(bare.len());
    let mut seen = std::collections::HashSet::with_capacity(bare.len());
    for p in bare {
        let k = Key::new(&ns, p)?;
        if seen.insert(k.clone()) {
            keys.push(k);
        }
    }
    Ok(keys)
}

/// When bare paths take the namespace another `-p` names (all keys of one write share one
/// namespace), a warning that says so; `None` when `-n` gives it or no path names one.
fn borrowed_namespace(paths: &[String], namespace: Option<&str>) -> Option<String> {
    if namespace.is_some() {
        return None;
    }
    let ns = paths
        .iter()
        .find_map(|p| p.rsplit_once(':').map(|(n, _)| n))?;
    let bare: Vec<&str> = paths
        .iter()
        .filter(|p| !p.contains(':'))
        .map(String::as_str)
        .collect();
    (!bare.is_empty()).then(|| {
        format!(
            "{} stored in namespace '{ns}', named by another -p (one write uses one namespace; \
             use -n or a separate remember for another)",
            bare.join(", ")
        )
    })
}

/// The record at `key` in `root` and its value id, if any (a value that is not a record:
/// exit 5).
fn load_with_id(
    repo: &Repo,
    root: &ObjectId,
    key: &Key,
) -> MemoirResult<Option<(ObjectId, Record)>> {
    match repo.tree().get(root, &key.encode())? {
        Some(id) => Ok(Some((id, read_record(repo.objects(), &id)?))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ps(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn namespace_prefixes_must_agree() {
        let k = keys_of(&ps(&["a.b", "ns:c", "a.b"]), None).unwrap();
        let shown: Vec<String> = k.iter().map(|k| k.to_string()).collect();
        assert_eq!(shown, ["ns:a.b", "ns:c"]);
        assert!(keys_of(&ps(&["x:a", "y:b"]), None).is_err());
        assert!(keys_of(&ps(&["x:a"]), Some("y")).is_err());
        assert!(keys_of(&ps(&[":a"]), None).is_err());
        assert!(keys_of(&ps(&["x:"]), None).is_err());
        assert!(keys_of(&ps(&["a b"]), None).is_err());
        let k = keys_of(&ps(&["codebase:onboard:a"]), Some("codebase:onboard")).unwrap();
        assert_eq!(k[0].namespace(), "codebase:onboard");
    }

    #[test]
    fn request_rules() {
        let mut r = RememberRequest::new("x", &["a.b"]);
        assert!(r.validate().is_ok());
        r.replace = true;
        r.merge_policy = Some(MergePolicy::Append);
        assert!(r.validate().is_err());
        let mut r = RememberRequest::new("x", &["a.b"]);
        r.confidence = Some(-0.1);
        assert!(r.validate().is_err());
        assert!(RememberRequest::new("  ", &["a.b"]).validate().is_err());
    }
}
