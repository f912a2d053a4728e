//! `memoir remember CONTENT [-p PATH ...]`: store a memory under one or more keys, in one
//! commit, combining with existing records by merge policy. Without `-p` a configured LLM
//! chooses the keys (the classifier); `llm_merge` asks the same LLM to merge.
//!
//! Model calls are made while the store is closed (its LOCK released), so a slow model does
//! not make other commands wait: the taxonomy and the records to merge are read first, the
//! model is asked, then the store is opened again to write. A record that changed in between
//! is not merged over; the new entry is appended to it instead, and the output says so.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::{json, Value};

use memoir::key::{validate_namespace, Key, DEFAULT_NAMESPACE};
use memoir::llm::{provider, Llm};
use memoir::memory::{
    classify, default_policy, existing_prefixes, merge_contents, parse_facet_cap, read_record,
    write, write_merged, Classification, Incoming, MergePolicy, ModelError, Outcome, Record,
};
use memoir::object::ObjectId;
use memoir::prolly::Edit;
use memoir::repo::Repo;

use super::context::{
    commit_to, env_var, llm_config_from_env, write_target, BranchArg, Ctx, WriteArgs,
};
use super::output::{esc, esc_line, exit, CliError, Report};

const HELP: &str = "\
Examples:
  memoir remember \"prefers pytest over unittest\" -p preferences.coding.testing
  memoir remember \"uses tabs\" -p style.indent -p codebase:onboard:style.indent
  memoir remember \"deploy on fridays\" -p workflow.deploy --merge-policy append
  memoir --json remember \"x\" -p a.b --merge-policy reject   # exit 4 if a.b exists
  MEMOIR_LLM_BASE_URL=http://127.0.0.1:8080/v1 memoir remember \"prefers dark mode\"

Without -p, the configured LLM chooses 1 or 2 three-level paths (it is shown the store's
existing depth-3 paths so it reuses them); the record's confidence and the output's
`confidence` and `reasoning` are the model's (-c overrides the confidence). Its paths are
validated: exactly three lower-case segments of a-z, 0-9, '_', '-' (or an existing path as
it is), in the target namespace. With no LLM configured, or when the model fails or names
no valid path, nothing is stored and the exit code is 1. LLM configuration: as for recall
(see `memoir recall --help`).

Merge policy: --merge-policy, else MEMOIR_MERGE_POLICY, else by key prefix (context.current and
metrics.turn replace; metrics.code and experience append; workflow and behavior llm_merge;
others confidence_gated). llm_merge asks the LLM to merge the existing and new contents: the
merged text becomes the one active entry, earlier entries are kept as superseded. Without an
LLM, or if the model fails, llm_merge appends instead and says so (a warning, and the reason
in `reasoning`); the memory is always stored. Appends keep at most
MEMOIR_FACET_MAX_ENTRIES (default 50; 0 or none = no cap) newest entries.";

/// Longest content one `remember` stores.
pub const MAX_CONTENT_BYTES: usize = 16 << 20;

/// Store CONTENT under the keys given with -p, or chosen by the LLM (one commit)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The memory's text (`-` reads it from stdin)
    pub content: String,
    /// Key path (`a.b.c` or `ns:a.b.c`); repeat for several keys; omit to let the LLM choose
    #[arg(short = 'p', long = "path", value_name = "PATH")]
    pub paths: Vec<String>,
    /// Namespace [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// How to combine with an existing memory at the key
    #[arg(long, value_name = "POLICY", value_parser = parse_policy)]
    pub merge_policy: Option<MergePolicy>,
    /// Same as --merge-policy replace
    #[arg(long)]
    pub replace: bool,
    /// Confidence of this memory, 0.0 to 1.0 [default: 1.0 with -p, else the LLM's]
    #[arg(short = 'c', long, value_name = "X")]
    pub confidence: Option<f64>,
    /// LLM model name (for choosing keys and llm_merge)
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

fn parse_policy(s: &str) -> Result<MergePolicy, memoir::memory::UnknownPolicy> {
    s.parse()
}

/// The keys of `-p` values: one namespace for all (from `ns:` prefixes or `-n`), duplicates
/// dropped, order kept.
fn keys_of(paths: &[String], ns_flag: Option<&str>) -> Result<Vec<Key>, CliError> {
    let mut ns: Option<String> = ns_flag.map(str::to_string);
    let mut bare = Vec::with_capacity(paths.len());
    for p in paths {
        let path = match p.rsplit_once(':') {
            Some((prefix, path)) => {
                if prefix.is_empty() || path.is_empty() {
                    return Err(CliError::invalid(format!(
                        "invalid path {p:?}: empty namespace or path around ':'"
                    )));
                }
                match &ns {
                    Some(n) if n != prefix => {
                        let from = if ns_flag == Some(n.as_str()) {
                            "-n"
                        } else {
                            "another -p"
                        };
                        return Err(CliError::invalid(format!(
                            "path {p:?} names namespace '{prefix}' but {from} says '{n}'"
                        )));
                    }
                    _ => ns = Some(prefix.to_string()),
                }
                path
            }
            None => p.as_str(),
        };
        bare.push(path);
    }
    let ns = ns.unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
    let mut keys: Vec<Key> = Vec::with_capacity(bare.len());
    for p in bare {
        let k = Key::new(&ns, p)?;
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    Ok(keys)
}

/// The LLM configured by the environment, if any, with `model_flag` overriding its model.
fn configured_llm(model_flag: Option<&str>) -> Result<Option<Box<dyn Llm>>, CliError> {
    Ok(llm_config_from_env()?.map(|mut cfg| {
        if let Some(m) = model_flag {
            cfg.model = m.to_string();
        }
        provider(cfg)
    }))
}

/// The LLM, looked up once (only when the command needs one).
struct LazyLlm<'a> {
    model: Option<&'a str>,
    got: Option<Option<Box<dyn Llm>>>,
}

impl LazyLlm<'_> {
    fn get(&mut self) -> Result<Option<&dyn Llm>, CliError> {
        if self.got.is_none() {
            self.got = Some(configured_llm(self.model)?);
        }
        Ok(self.got.as_ref().and_then(|o| o.as_deref()))
    }
}

/// The record at `key` in `root` and its value id, if any (a value that is not a record:
/// exit 5).
fn load_with_id(
    repo: &Repo,
    root: &ObjectId,
    key: &Key,
) -> Result<Option<(ObjectId, Record)>, CliError> {
    match repo.tree().get(root, &key.encode())? {
        Some(id) => Ok(Some((id, read_record(repo.objects(), &id)?))),
        None => Ok(None),
    }
}

fn prompt_json(step: &str, prompt: &str, reply: &str) -> Value {
    json!({"step": step, "prompt": prompt, "reply": reply})
}

/// Asks the model for the keys of a memory: reads the write target's taxonomy (then closes
/// the store; store errors come first, as for every command), and classifies. Without a
/// model, an error.
fn classify_keys(
    ctx: &Ctx,
    args: &Args,
    llm: Option<&dyn Llm>,
) -> Result<(Vec<Key>, Classification, String), CliError> {
    let ns = args
        .namespace
        .clone()
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
    validate_namespace(&ns)?;
    let existing = {
        let repo = ctx.open_repo()?;
        let target = write_target(&repo, args.branch.branch.as_deref())?;
        let root = repo.root_of(&target.base)?;
        existing_prefixes(repo.tree(), &root, &ns)?
    };
    let Some(llm) = llm else {
        return Err(CliError::invalid(
            "no key given (-p PATH) and no LLM is configured to choose one; nothing was stored. \
             Pass -p PATH, or configure a model: MEMOIR_LLM_COMMAND, MEMOIR_LLM_BASE_URL or \
             OPENAI_API_KEY, or ANTHROPIC_API_KEY (see memoir recall --help)",
        ));
    };
    let c = classify(llm, &ns, &args.content, &existing).map_err(|e| {
        CliError::invalid(format!(
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

/// A model merge asked for before the write: the value it merged against, and the result.
struct Planned {
    base: ObjectId,
    result: Result<String, ModelError>,
}

/// Runs `remember`.
pub fn run(ctx: &Ctx, mut args: Args) -> Result<Report, CliError> {
    let timer = ctx.clock.timer();
    if args.content == "-" {
        let mut text = String::new();
        std::io::Read::take(std::io::stdin(), MAX_CONTENT_BYTES as u64 + 1)
            .read_to_string(&mut text)
            .map_err(|e| CliError::invalid(format!("cannot read the content from stdin: {e}")))?;
        args.content = text;
    }
    if args.content.trim().is_empty() {
        return Err(CliError::invalid(
            "the memory's content is empty; nothing was stored",
        ));
    }
    if args.content.len() > MAX_CONTENT_BYTES {
        return Err(CliError::invalid(format!(
            "the memory's content is longer than {} MiB; nothing was stored",
            MAX_CONTENT_BYTES >> 20
        )));
    }
    if args.replace && args.merge_policy.is_some() {
        return Err(CliError::invalid(
            "--replace and --merge-policy cannot be combined (--replace means --merge-policy replace)",
        ));
    }
    if let Some(c) = args.confidence {
        if !(c.is_finite() && (0.0..=1.0).contains(&c)) {
            return Err(CliError::invalid(format!(
                "confidence {c} is not within 0.0..=1.0"
            )));
        }
    }
    let flag_policy = if args.replace {
        Some(MergePolicy::Replace)
    } else {
        args.merge_policy
    };
    let env_policy = match env_var("MEMOIR_MERGE_POLICY") {
        Some(p) => Some(
            p.parse::<MergePolicy>()
                .map_err(|e| CliError::invalid(format!("MEMOIR_MERGE_POLICY: {e}")))?,
        ),
        None => None,
    };
    let cap = parse_facet_cap(env_var("MEMOIR_FACET_MAX_ENTRIES").as_deref())
        .map_err(|e| CliError::invalid(format!("MEMOIR_FACET_MAX_ENTRIES: {e}")))?;
    let now = ctx.clock.now();
    let mut llm = LazyLlm {
        model: args.model.as_deref(),
        got: None,
    };
    let mut prompts: Vec<Value> = Vec::new();
    let s = &ctx.style;
    let mut lines = Vec::new();

    // The keys: from -p, or from the classifier.
    let (keys, classified) = if args.paths.is_empty() {
        let (keys, c, model) = classify_keys(ctx, &args, llm.get()?)?;
        prompts.push(prompt_json("classify", &c.prompt, &c.reply));
        lines.push(s.info(&format!(
            "{} chose {} (confidence {}): {}",
            esc(&model),
            esc(&c.paths.join(", ")),
            c.confidence,
            esc_line(&c.reasoning)
        )));
        (keys, Some((c, model)))
    } else {
        (keys_of(&args.paths, args.namespace.as_deref())?, None)
    };
    let confidence = args.confidence.unwrap_or(match &classified {
        Some((c, _)) => c.confidence,
        None => 1.0,
    });
    let policies: Vec<MergePolicy> = keys
        .iter()
        .map(|k| {
            flag_policy
                .or(env_policy)
                .unwrap_or_else(|| default_policy(k.path()))
        })
        .collect();
    let t_classify = timer.ms();

    // Model merges, asked for with the store closed.
    let mut planned: BTreeMap<usize, Planned> = BTreeMap::new();
    if policies.contains(&MergePolicy::LlmMerge) {
        if let Some(model) = llm.get()? {
            let mut todo = Vec::new();
            {
                let repo = ctx.open_repo()?;
                let target = write_target(&repo, args.branch.branch.as_deref())?;
                let root = repo.root_of(&target.base)?;
                for (i, key) in keys.iter().enumerate() {
                    if policies[i] == MergePolicy::LlmMerge {
                        if let Some((id, rec)) = load_with_id(&repo, &root, key)? {
                            todo.push((i, id, rec.content()));
                        }
                    }
                }
            }
            for (i, base, existing) in todo {
                let result = merge_contents(model, &keys[i], &existing, &args.content).map(|m| {
                    prompts.push(prompt_json(
                        &format!("merge:{}", keys[i]),
                        &m.prompt,
                        &m.reply,
                    ));
                    m.content
                });
                planned.insert(i, Planned { base, result });
            }
        }
    }
    let llm_configured = llm.got.as_ref().is_some_and(|o| o.is_some());

    let repo = ctx.open_repo()?;
    let target = write_target(&repo, args.branch.branch.as_deref())?;
    let root = repo.root_of(&target.base)?;
    let t_read = timer.ms();

    let paths: Vec<String> = keys.iter().map(|k| k.path().to_string()).collect();
    let mut edits = Vec::new();
    let mut written: Vec<&Key> = Vec::new();
    let mut conflicts = Vec::new();
    let mut reasons = Vec::new();
    let mut warnings = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let existing = load_with_id(&repo, &root, key)?;
        let incoming = Incoming {
            content: args.content.clone(),
            confidence,
            timestamp: now,
            source: args.write.source.clone().filter(|x| !x.is_empty()),
            actor: args.write.actor.clone().filter(|x| !x.is_empty()),
            related_keys: paths.iter().filter(|p| *p != key.path()).cloned().collect(),
        };
        let policy = policies[i];
        let (outcome, why) = match &existing {
            Some((id, rec)) if policy == MergePolicy::LlmMerge && llm_configured => {
                let fallback = |why: String| -> Result<(Outcome, String), CliError> {
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
        match outcome {
            Outcome::Write(record) => {
                let id = repo.objects().write(&record.to_blob()?)?;
                edits.push(Edit::Put(key.encode(), id));
                written.push(key);
                lines.push(s.ok(&format!("Stored {}", esc(&key.to_string()))));
            }
            Outcome::Keep => lines.push(s.info(&esc(&why))),
            Outcome::Conflict(c) => {
                lines.push(s.warn(&format!(
                    "Conflict at {}: it holds {:?} (confidence {}); nothing written there",
                    esc(&key.to_string()),
                    esc_line(&c.existing_content),
                    c.existing_confidence
                )));
                conflicts.push(c);
            }
        }
        reasons.push(why);
    }
    let t_merge = timer.ms();

    let ns = keys[0].namespace().to_string();
    let (commit_hash, commit_date) = if edits.is_empty() {
        (None, None)
    } else {
        let names: Vec<&str> = written.iter().map(|k| k.path()).collect();
        let message = format!("Store {} in {ns}", names.join(", "));
        let sig = ctx.signature(&args.write);
        let (id, date) = commit_to(&repo, &target, edits, &sig, &message)?;
        lines.push(s.info(&format!(
            "Commit {} on {}",
            id.short(8),
            esc(&target.branch)
        )));
        (Some(id.to_hex()), Some(date))
    };
    drop(repo);
    let t_total = timer.ms();

    let full_keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let reasoning = match &classified {
        Some((c, model)) => format!(
            "{} (classified by {model}). {}",
            c.reasoning.trim_end_matches('.'),
            reasons.join("; ")
        ),
        None => format!("Paths given with -p. {}", reasons.join("; ")),
    };
    let mut json = json!({
        "success": conflicts.is_empty(),
        "key": paths[0],
        "keys": paths,
        "full_key": full_keys[0],
        "full_keys": full_keys,
        "namespace": ns,
        "content": args.content,
        "confidence": confidence,
        "reasoning": reasoning,
        "commit_hash": commit_hash,
        "commit_date": commit_date,
        "conflicts": conflicts.iter().map(|c| c.to_json()).collect::<Vec<Value>>(),
        "timings": {
            "classify_ms": t_classify,
            "read_ms": round_ms(t_read - t_classify),
            "merge_ms": round_ms(t_merge - t_read),
            "commit_ms": round_ms(t_total - t_merge),
            "total_ms": t_total,
        },
    });
    if let Some((c, model)) = &classified {
        json["classification"] = json!({
            "model": model,
            "paths": c.paths,
            "confidence": c.confidence,
            "reasoning": c.reasoning,
            "rejected": c.rejected,
        });
    }
    if !prompts.is_empty() {
        json["llm_prompts"] = Value::Array(prompts);
    }
    let mut r = Report::new(json);
    r.lines = lines;
    for w in warnings {
        r.warnings.push(ctx.printer.err.warn(&esc(&w)));
    }
    if !conflicts.is_empty() {
        r.code = exit::CONFLICT;
        r.warnings.push(ctx.printer.err.warn(&format!(
            "{} key(s) left unchanged by --merge-policy reject",
            conflicts.len()
        )));
    }
    Ok(r)
}

/// Milliseconds with microsecond precision (differences of rounded figures carry float noise).
fn round_ms(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
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
}
