//! `memoir get KEY [KEY ...]`: read memories by key, in argument order.

use memoir::app::GetOutcome;

use super::context::{read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

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
    let out = ctx.app.get(
        &args.keys,
        args.namespace.as_deref(),
        &read_point(&args.at, &args.branch),
    )?;
    Ok(render(ctx, &out))
}

/// The report of a read.
pub fn render(ctx: &Ctx, out: &GetOutcome) -> Report {
    let mut r = ctx.report(out);
    r.data = true;
    if let Some(error) = &out.error {
        r.warnings.push(ctx.printer.err.err(&esc(error)));
        return r;
    }
    let s = &ctx.style;
    for item in &out.items {
        let shown = esc(&item.full_key);
        match &item.record {
            Some(rec) => {
                r.lines
                    .push(s.info(&format!("{shown} (confidence {})", rec.confidence)));
                for l in rec.content().lines() {
                    r.lines.push(format!("  {}", esc(l)));
                }
            }
            None => r.lines.push(s.err(&format!("{shown}: not found"))),
        }
    }
    r
}
