//! `memoir remember CONTENT -p PATH ...`: store a memory under one or more keys, in one
//! commit, combining with existing records by merge policy.

use std::io::Read;

use serde_json::{json, Value};

use memoir::key::{Key, DEFAULT_NAMESPACE};
use memoir::memory::{default_policy, parse_facet_cap, write, Incoming, MergePolicy, Outcome};
use memoir::prolly::Edit;

use super::context::{commit_to, env_var, load_record, write_target, BranchArg, Ctx, WriteArgs};
use super::output::{esc, esc_line, exit, CliError, Report};

const HELP: &str = "\
Examples:
  memoir remember \"prefers pytest over unittest\" -p preferences.coding.testing
  memoir remember \"uses tabs\" -p style.indent -p codebase:onboard:style.indent
  memoir remember \"deploy on fridays\" -p workflow.deploy --merge-policy append
  memoir --json remember \"x\" -p a.b --merge-policy reject   # exit 4 if a.b exists

Merge policy: --merge-policy, else MEMOIR_MERGE_POLICY, else by key prefix (context.current and
metrics.turn replace; metrics.code and experience append; workflow and behavior llm_merge;
others confidence_gated). Without an LLM, llm_merge appends. Appends keep at most
MEMOIR_FACET_MAX_ENTRIES (default 50; 0 or none = no cap) newest entries.";

/// Longest content one `remember` stores.
pub const MAX_CONTENT_BYTES: usize = 16 << 20;

/// Store CONTENT under the keys given with -p (one commit)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The memory's text (`-` reads it from stdin)
    pub content: String,
    /// Key path (`a.b.c` or `ns:a.b.c`); repeat for several keys
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
    /// Confidence of this memory, 0.0 to 1.0
    #[arg(short = 'c', long, default_value_t = 1.0, value_name = "X")]
    pub confidence: f64,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub write: WriteArgs,
}

fn parse_policy(s: &str) -> Result<MergePolicy, String> {
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
    if args.paths.is_empty() {
        return Err(CliError::invalid(
            "no key given: choosing a key for a memory needs an LLM, and none is configured; pass -p PATH",
        ));
    }
    if !(args.confidence.is_finite() && (0.0..=1.0).contains(&args.confidence)) {
        return Err(CliError::invalid(format!(
            "confidence {} is not within 0.0..=1.0",
            args.confidence
        )));
    }
    let keys = keys_of(&args.paths, args.namespace.as_deref())?;
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

    let repo = ctx.open_repo()?;
    let target = write_target(&repo, args.branch.branch.as_deref())?;
    let root = repo.root_of(&target.base)?;
    let t_read = timer.ms();

    let paths: Vec<String> = keys.iter().map(|k| k.path().to_string()).collect();
    let mut edits = Vec::new();
    let mut written: Vec<&Key> = Vec::new();
    let mut conflicts = Vec::new();
    let mut reasons = Vec::new();
    let s = &ctx.style;
    let mut lines = Vec::new();
    for key in &keys {
        let existing = load_record(&repo, &root, key)?;
        let incoming = Incoming {
            content: args.content.clone(),
            confidence: args.confidence,
            timestamp: now,
            source: args.write.source.clone().filter(|x| !x.is_empty()),
            actor: args.write.actor.clone().filter(|x| !x.is_empty()),
            related_keys: paths.iter().filter(|p| *p != key.path()).cloned().collect(),
        };
        let policy = flag_policy
            .or(env_policy)
            .unwrap_or_else(|| default_policy(key.path()));
        let (outcome, why) = write(key, existing.as_ref(), &incoming, policy, cap)?;
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
    let reasoning = format!("Paths given with -p. {}", reasons.join("; "));
    let json = json!({
        "success": conflicts.is_empty(),
        "key": paths[0],
        "keys": paths,
        "full_key": full_keys[0],
        "full_keys": full_keys,
        "namespace": ns,
        "content": args.content,
        "confidence": args.confidence,
        "reasoning": reasoning,
        "commit_hash": commit_hash,
        "commit_date": commit_date,
        "conflicts": conflicts.iter().map(|c| c.to_json()).collect::<Vec<Value>>(),
        "timings": {
            "read_ms": t_read,
            "merge_ms": round_ms(t_merge - t_read),
            "commit_ms": round_ms(t_total - t_merge),
            "total_ms": t_total,
        },
    });
    let mut r = Report::new(json);
    r.lines = lines;
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
