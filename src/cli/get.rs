//! `memoir get KEY [KEY ...]`: read memories by key, in argument order.

use serde_json::{json, Value};

use super::context::{load_record, open_read, parse_key, AtArg, BranchArg, Ctx};
use super::output::{esc, exit, CliError, Report};

/// Read the memories at one or more keys
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir get preferences.coding.testing\n  memoir --json get a.b c.d codebase:onboard:setup\n  memoir get a.b --branch experiment\n\nExit 2 only when exactly one key was asked for and it is missing."
)]
pub struct Args {
    /// Keys (`path` or `ns:path`)
    #[arg(required = true, value_name = "KEY")]
    pub keys: Vec<String>,
    /// Namespace of bare paths [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub branch: BranchArg,
    #[command(flatten)]
    pub at: AtArg,
}

/// Runs `get`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let timer = ctx.clock.timer();
    let keys = args
        .keys
        .iter()
        .map(|k| parse_key(k, args.namespace.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let (repo, _, root) = open_read(ctx, &args.at, &args.branch)?;
    let mut items = Vec::with_capacity(keys.len());
    let mut lines = Vec::new();
    let mut found_count = 0u64;
    let s = &ctx.style;
    for key in &keys {
        let rec = load_record(&repo, &root, key)?;
        let shown = esc(&key.to_string());
        match &rec {
            Some(r) => {
                found_count += 1;
                lines.push(s.info(&format!("{shown} (confidence {})", r.confidence)));
                for l in r.content().lines() {
                    lines.push(format!("  {}", esc(l)));
                }
            }
            None => lines.push(s.err(&format!("{shown}: not found"))),
        }
        items.push(json!({
            "key": key.path(),
            "namespace": key.namespace(),
            "full_key": key.to_string(),
            "found": rec.is_some(),
            "value": rec.as_ref().map_or(Value::Null, |r| r.to_json()),
        }));
    }
    drop(repo);
    let single_missing = keys.len() == 1 && found_count == 0;
    let error = single_missing.then(|| format!("memory '{}' not found", keys[0]));
    let json = json!({
        "success": !single_missing,
        "items": items,
        "count": keys.len(),
        "found_count": found_count,
        "timing_ms": timer.ms(),
        "error": error,
    });
    let mut r = Report::new(json);
    r.data = true;
    if single_missing {
        r.code = exit::NOT_FOUND;
        r.lines.clear();
        r.warnings.push(
            ctx.printer
                .err
                .err(&esc(error.as_deref().unwrap_or_default())),
        );
    } else {
        r.lines = lines;
    }
    Ok(r)
}
