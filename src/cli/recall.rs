//! `memoir recall QUERY`: the memories that answer a question, picked by an LLM (`single`,
//! `tiered`) or ranked lexically (`lexical`, the default when no LLM is configured). Whatever
//! ran is stamped on the result; when the LLM fails, recall falls back to lexical and says so.

use std::collections::BTreeMap;

use clap::ValueEnum;
use serde_json::{json, Map, Value};

use memoir::glob::KeyGlobs;
use memoir::key::validate_namespace;
use memoir::llm::{provider, Llm};
use memoir::recall::picker::{self, Inventory, Mode};
use memoir::recall::{Sort, TreeInventory};

use super::context::{llm_config_from_env, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};
use super::search::{index_for_read, lexical, round_score, Scope};

const HELP: &str = "\
Examples:
  memoir recall 'what database do we use?'
  memoir --json recall 'testing preferences' -l 5 --mode lexical
  MEMOIR_LLM_BASE_URL=http://127.0.0.1:8080/v1 memoir recall 'deploy steps' --mode tiered

Modes: lexical (no model), single (one LLM call over the keys), tiered (prefixes, then keys).
Default: single when an LLM is configured, else lexical. LLM configuration:
  MEMOIR_LLM_PROVIDER=openai|anthropic|command (else inferred from what is set)
  MEMOIR_LLM_COMMAND='claude -p'   prompt on stdin, answer on stdout
  MEMOIR_LLM_BASE_URL, OPENAI_API_KEY   OpenAI-compatible chat completions
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   Anthropic messages
  --model / MEMOIR_LLM_MODEL, MEMOIR_LLM_TIMEOUT (seconds, default 30)
If the model fails, recall answers lexically and the result names `fellback_from` and why.";

/// How recall chooses memories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Ranked lexical search, no model
    Lexical,
    /// One LLM call over the keys
    Single,
    /// LLM picks prefixes, then keys
    Tiered,
}

/// Find the memories that answer a question
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The question
    pub query: String,
    /// Only this namespace
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// Most memories returned
    #[arg(short = 'l', long = "limit", default_value_t = 10)]
    pub limit: usize,
    /// How to choose
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// LLM model name
    #[arg(long)]
    pub model: Option<String>,
    /// Drop memories scoring below this
    #[arg(long)]
    pub threshold: Option<f64>,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// The LLM configured by the environment, if any.
pub fn configured_llm(model_flag: Option<&str>) -> Result<Option<Box<dyn Llm>>, CliError> {
    Ok(llm_config_from_env()?.map(|mut cfg| {
        if let Some(m) = model_flag {
            cfg.model = m.to_string();
        }
        provider(cfg)
    }))
}

/// Runs `recall`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let timer = ctx.clock.timer();
    if let Some(ns) = &args.namespace {
        validate_namespace(ns)?;
    }
    let llm = configured_llm(args.model.as_deref())?;
    let mode = args.mode.unwrap_or(if llm.is_some() {
        ModeArg::Single
    } else {
        ModeArg::Lexical
    });
    let index = index_for_read(ctx, &args.at, &args.branch)?;
    let scope = Scope {
        namespace: args.namespace.clone(),
        globs: KeyGlobs::all(),
        since: None,
        until: None,
        sort: Sort::Relevance,
    };
    let mut meta = Map::new();
    // (ns, path, content, score)
    let mut picked: Vec<(String, String, String, f64)> = Vec::new();
    let mut ran_mode = "lexical";
    let llm_mode = match mode {
        ModeArg::Lexical => None,
        ModeArg::Single => Some(Mode::Single),
        ModeArg::Tiered => Some(Mode::Tiered),
    };
    let mut fell_back = false;
    if let Some(m) = llm_mode {
        match &llm {
            None => {
                meta.insert("fellback_from".into(), json!(m.name()));
                meta.insert("fallback_reason".into(), json!("no LLM is configured"));
                fell_back = true;
            }
            Some(model) => {
                // Every key with its content, from the index; single mode shows the
                // lexically closest keys first.
                let ns = args.namespace.as_deref();
                let inv = match m {
                    Mode::Single => TreeInventory::for_single(&index, ns, &args.query),
                    Mode::Tiered => TreeInventory::from_index(&index, ns),
                };
                meta.insert("model".into(), json!(model.describe()));
                match picker::pick(model.as_ref(), m, &args.query, &inv, args.limit) {
                    Ok(p) => {
                        ran_mode = m.name();
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
                        meta.insert("step_timings".into(), timings_json(ctx, &p.step_timings));
                        meta.insert("llm_prompts".into(), prompts_json(&p.prompts));
                        if !p.fallbacks.is_empty() {
                            meta.insert("step_fallbacks".into(), json!(p.fallbacks));
                        }
                    }
                    Err(e) => {
                        meta.insert("fellback_from".into(), json!(m.name()));
                        meta.insert("fallback_reason".into(), json!(e.to_string()));
                        meta.insert("llm_prompts".into(), prompts_json(&e.partial.prompts));
                        fell_back = true;
                    }
                }
            }
        }
    }
    if ran_mode == "lexical" {
        let t = ctx.clock.timer();
        for h in lexical(&index, &args.query, &scope, args.limit) {
            picked.push((h.namespace, h.path, h.content, h.score));
        }
        let mut st = BTreeMap::new();
        st.insert("lexical".to_string(), t.ms());
        meta.insert("step_timings".into(), timings_json(ctx, &st));
        meta.entry("llm_prompts").or_insert(json!([]));
    }
    meta.insert("mode".into(), json!(ran_mode));
    if let Some(th) = args.threshold {
        picked.retain(|p| p.3 >= th);
    }
    let mut memories = Vec::new();
    let mut lines = Vec::new();
    if fell_back {
        lines.push(ctx.style.warn(&format!(
            "LLM recall unavailable ({}); answered lexically",
            esc(meta["fallback_reason"].as_str().unwrap_or(""))
        )));
    }
    for (ns, path, content, score) in &picked {
        lines.push(
            ctx.style
                .info(&format!("{}:{} ({:.3})", esc(ns), esc(path), score)),
        );
        for l in content.lines().take(3) {
            lines.push(format!("  {}", esc(l)));
        }
        let m = meta.clone();
        memories.push(json!({
            "path": path,
            "namespace": ns,
            "content": content,
            "relevance_score": round_score(*score),
            "metadata": Value::Object(m),
        }));
    }
    if picked.is_empty() {
        lines.push(
            ctx.style
                .warn(&format!("no memories found ({ran_mode} recall)")),
        );
    }
    let json = json!({
        "success": true,
        "query": args.query,
        "count": memories.len(),
        "timing_ms": timer.ms(),
        "memories": memories,
        "metadata": Value::Object(meta),
        "error": Value::Null,
    });
    let mut r = Report::new(json);
    r.lines = lines;
    r.data = true;
    Ok(r)
}

fn timings_json(ctx: &Ctx, t: &BTreeMap<String, f64>) -> Value {
    let fixed = ctx.clock.is_fixed();
    Value::Object(
        t.iter()
            .map(|(k, v)| {
                let ms = if fixed { 0.0 } else { (v * 1e3).round() / 1e3 };
                (k.clone(), json!(ms))
            })
            .collect(),
    )
}

fn prompts_json(p: &[picker::PromptLog]) -> Value {
    Value::Array(
        p.iter()
            .map(|l| json!({"step": l.step, "prompt": l.prompt, "reply": l.reply}))
            .collect(),
    )
}
