//! `recall`: the memories that answer a question, picked by a model (`single`, `tiered`),
//! ranked by meaning (`semantic`, `hybrid`: an embedding model) or ranked lexically
//! (`lexical`, the default when no model is configured). Whatever ran is stamped on the
//! result; when a model fails or is missing, recall falls back to lexical and says so.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::glob::KeyGlobs;
use crate::key::validate_namespace;
use crate::recall::picker::{self, Inventory, Mode, PromptLog};
use crate::recall::{SearchMode, Sort, TreeInventory};

use super::search::require_indexed_namespace;
use super::search::{check_query, lexical, rounded, Scope};
use super::{round_ms, Memoir, MemoirResult, Outcome, ReadPoint};

/// How recall chooses memories (serde and JSON Schema use the lowercase names).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RecallMode {
    /// Ranked lexical search, no model.
    Lexical,
    /// One model call over the keys.
    Single,
    /// The model picks prefixes, then keys.
    Tiered,
    /// Ranked by the cosine of embeddings (an embedding model).
    Semantic,
    /// Ranked by words and meaning, fused (an embedding model).
    Hybrid,
}

impl RecallMode {
    /// The mode's name as results carry it.
    pub fn name(self) -> &'static str {
        match self {
            RecallMode::Lexical => "lexical",
            RecallMode::Single => "single",
            RecallMode::Tiered => "tiered",
            RecallMode::Semantic => "semantic",
            RecallMode::Hybrid => "hybrid",
        }
    }
}

/// What `recall` looks for, and how.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallRequest {
    /// The question.
    pub query: String,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Most memories returned.
    pub limit: usize,
    /// How to choose (none: `single` when an LLM is configured, else `hybrid` when an
    /// embedding model is, else `lexical`).
    pub mode: Option<RecallMode>,
    /// The model name, overriding the configured one's.
    pub model: Option<String>,
    /// Drop memories scoring below this.
    pub threshold: Option<f64>,
}

/// One model call, for the record (recall's and remember's `llm_prompts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LlmPrompt {
    /// Which step: recall's `single`, `l1`, `l2:<prefix>`, `keys`; remember's `classify`,
    /// `merge:<key>`.
    pub step: String,
    /// The prompt sent.
    pub prompt: String,
    /// The reply received (empty when the call failed).
    pub reply: String,
}

impl From<&PromptLog> for LlmPrompt {
    fn from(l: &PromptLog) -> Self {
        LlmPrompt {
            step: l.step.clone(),
            prompt: l.prompt.clone(),
            reply: l.reply.clone(),
        }
    }
}

/// How a recall ran: stamped on the result and on every memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallMetadata {
    /// The mode that produced the memories.
    pub mode: RecallMode,
    /// Milliseconds per step (0 with a fixed clock).
    pub step_timings: BTreeMap<String, f64>,
    /// Every model call made.
    pub llm_prompts: Vec<LlmPrompt>,
    /// The model asked, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The mode asked for, when recall fell back to lexical.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fellback_from: Option<RecallMode>,
    /// Why it fell back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// Steps whose reply was unusable and that used their fallback.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub step_fallbacks: Vec<String>,
}

/// One memory of a [`RecallOutcome`].
#[derive(Debug, Clone, Serialize)]
pub struct RecalledMemory {
    /// The key's path.
    pub path: String,
    /// Its namespace.
    pub namespace: String,
    /// The record's content.
    pub content: String,
    /// Higher is better (JSON: rounded to 6 decimals).
    #[serde(serialize_with = "rounded")]
    pub relevance_score: f64,
    /// How the recall ran.
    pub metadata: RecallMetadata,
}

/// What `recall` found.
#[derive(Debug, Clone, Serialize)]
pub struct RecallOutcome {
    /// Always true (a failing model falls back to lexical).
    pub success: bool,
    /// The question.
    pub query: String,
    /// Number of memories.
    pub count: usize,
    /// Time taken.
    pub timing_ms: f64,
    /// The memories, best first.
    pub memories: Vec<RecalledMemory>,
    /// How the recall ran.
    pub metadata: RecallMetadata,
    /// Always null.
    pub error: Option<String>,
    /// Diagnostics (where the index came from, a cache that could not be saved).
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl Outcome for RecallOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// The memories at a read point that answer `req.query`: picked by the configured model
    /// ([`super::Options::llm`], its model name overridden by `req.model`) in `single` or
    /// `tiered` mode, else ranked lexically. With no model, or when it fails, the answer is
    /// lexical and the metadata names `fellback_from` and why.
    pub fn recall(&self, req: &RecallRequest, at: &ReadPoint) -> MemoirResult<RecallOutcome> {
        let timer = self.clock().timer();
        if let Some(ns) = &req.namespace {
            validate_namespace(ns)?;
        }
        let llm = self.llm(req.model.as_deref());
        let embeds = self.has_embedder();
        let mode = req.mode.unwrap_or(match (llm.is_some(), embeds) {
            (true, _) => RecallMode::Single,
            (false, true) => RecallMode::Hybrid,
            (false, false) => RecallMode::Lexical,
        });
        let (index, notes) = self.index_for_read(at)?;
        if let Some(ns) = &req.namespace {
            require_indexed_namespace(&index, ns)?;
        }
        let mut meta = RecallMetadata {
            mode: RecallMode::Lexical,
            step_timings: BTreeMap::new(),
            llm_prompts: Vec::new(),
            model: None,
            fellback_from: None,
            fallback_reason: None,
            step_fallbacks: Vec::new(),
        };
        // (namespace, path, content, score)
        let mut picked: Vec<(String, String, String, f64)> = Vec::new();
        let llm_mode = match mode {
            RecallMode::Lexical | RecallMode::Semantic | RecallMode::Hybrid => None,
            RecallMode::Single => Some(Mode::Single),
            RecallMode::Tiered => Some(Mode::Tiered),
        };
        let scope = Scope {
            namespace: req.namespace.clone(),
            globs: KeyGlobs::all(),
            since: None,
            until: None,
            sort: Sort::Relevance,
            actor: None,
            explain: false,
        };
        let mut notes = notes;
        let by_meaning = match mode {
            RecallMode::Semantic => Some(SearchMode::Semantic),
            RecallMode::Hybrid => Some(SearchMode::Hybrid),
            _ => None,
        };
        if let Some(m) = by_meaning {
            if !embeds {
                meta.fellback_from = Some(mode);
                meta.fallback_reason =
                    Some("no embedding model is configured (MEMOIR_EMBED_MODEL)".into());
            } else if check_query(&req.query, m).is_err() {
                meta.fellback_from = Some(mode);
                meta.fallback_reason = Some("the question has no word to rank by".into());
            } else {
                let t = self.clock().timer();
                let choice = self.choose_mode(Some(m))?;
                for h in self.ranked(&index, &req.query, &scope, req.limit, &choice, &mut notes)? {
                    picked.push((h.namespace, h.path, h.content, h.score));
                }
                meta.mode = mode;
                let st = BTreeMap::from([(m.as_str().to_string(), t.ms())]);
                meta.step_timings = self.step_timings(&st);
            }
        }
        if let Some(m) = llm_mode {
            match &llm {
                None => {
                    meta.fellback_from = Some(mode);
                    meta.fallback_reason = Some("no LLM is configured".into());
                }
                Some(model) => {
                    // Every key with its content, from the index; single mode shows the
                    // lexically closest keys first.
                    let ns = req.namespace.as_deref();
                    let inv = match m {
                        Mode::Single => TreeInventory::for_single(&index, ns, &req.query),
                        Mode::Tiered => TreeInventory::from_index(&index, ns),
                    };
                    meta.model = Some(model.describe());
                    // Everything the model is shown and the answer is built from is in the
                    // index, in memory: a server's held store is let go while the model
                    // thinks, so other processes can write meanwhile.
                    self.release();
                    match picker::pick(model.as_ref(), m, &req.query, &inv, req.limit) {
                        Ok(p) => {
                            meta.mode = mode;
                            let n = p.keys.len().max(1) as f64;
                            for (i, k) in p.keys.iter().enumerate() {
                                // Picked keys are candidates, so both always succeed.
                                let (Some((ns, path)), Ok(content)) =
                                    (k.rsplit_once(':'), inv.sample(k))
                                else {
                                    continue;
                                };
                                picked.push((
                                    ns.to_string(),
                                    path.to_string(),
                                    content,
                                    (n - i as f64) / n,
                                ));
                            }
                            meta.step_timings = self.step_timings(&p.step_timings);
                            meta.llm_prompts = p.prompts.iter().map(LlmPrompt::from).collect();
                            meta.step_fallbacks = p.fallbacks;
                        }
                        Err(e) => {
                            meta.fellback_from = Some(mode);
                            meta.fallback_reason = Some(e.to_string());
                            meta.llm_prompts =
                                e.partial.prompts.iter().map(LlmPrompt::from).collect();
                        }
                    }
                }
            }
        }
        if meta.mode == RecallMode::Lexical {
            let t = self.clock().timer();
            for h in lexical(&index, &req.query, &scope, req.limit) {
                picked.push((h.namespace, h.path, h.content, h.score));
            }
            let st = BTreeMap::from([("lexical".to_string(), t.ms())]);
            meta.step_timings = self.step_timings(&st);
        }
        if let Some(th) = req.threshold {
            picked.retain(|p| p.3 >= th);
        }
        let memories: Vec<RecalledMemory> = picked
            .into_iter()
            .map(|(namespace, path, content, score)| RecalledMemory {
                path,
                namespace,
                content,
                relevance_score: score,
                metadata: meta.clone(),
            })
            .collect();
        if index.damaged() {
            // A block of the cached index read above was not what was written: the answer
            // is discarded and given again from an index rebuilt from the store.
            drop(index);
            self.rebuild_index(at)?;
            return self.recall(req, at);
        }
        Ok(RecallOutcome {
            success: true,
            query: req.query.clone(),
            count: memories.len(),
            timing_ms: timer.ms(),
            memories,
            metadata: meta,
            error: None,
            notes,
        })
    }

    /// Step timings as results show them: rounded to microseconds, 0 with a fixed clock.
    fn step_timings(&self, t: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
        let fixed = self.clock().is_fixed();
        t.iter()
            .map(|(k, v)| (k.clone(), if fixed { 0.0 } else { round_ms(*v) }))
            .collect()
    }
}
