//! `memoir proof KEY` and `memoir verify KEY -p PROOF`: Merkle proofs that a key has a value
//! (or is absent) under a tree root, checked without trusting the store.

use memoir::app::{read_text, MAX_PROOF_TEXT_BYTES};

use super::context::{read_point, AtArg, BranchArg, Ctx};
use super::output::{esc, CliError, Report};

/// Print a proof that KEY has its value (or is absent) at a revision
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir proof preferences.coding.testing\n  memoir --json proof work:infra.database --at main~3\n\nThe proof is the encoded nodes on the key's path from the tree root, in hex. Anyone holding\nthe root id can check it with `memoir verify`, without the store."
)]
pub struct ProofArgs {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub at: AtArg,
    #[command(flatten)]
    pub branch: BranchArg,
}

/// Check a proof for KEY against a tree root
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir verify preferences.coding.testing -p 8301...\n  memoir verify a.b -p @proof.hex --root 71c9b062...   # no store needed\n\nWithout --root the root of --at REV (default HEAD) is used. A proof that does not check is\nexit 1. A proof is at most 4 MiB of text (more than any proof holds); a longer one is refused\nwith exit 1."
)]
pub struct VerifyArgs {
    /// Key (`path` or `ns:path`)
    #[arg(value_name = "KEY")]
    pub key: String,
    /// Namespace of a bare path [default: default]
    #[arg(short = 'n', long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,
    /// The proof, in hex, or @FILE holding it
    #[arg(short = 'p', long = "proof", value_name = "PROOF")]
    pub proof: String,
    /// Tree root id to check against (no store is opened)
    #[arg(long, value_name = "ROOT")]
    pub root: Option<String>,
    #[command(flatten)]
    pub at: AtArg,
}

/// Runs `proof`.
pub fn proof(ctx: &Ctx, args: ProofArgs) -> Result<Report, CliError> {
    let out = ctx.app.proof(
        &args.key,
        args.namespace.as_deref(),
        &read_point(&args.at, &args.branch),
    )?;
    let message = match &out.value {
        Some(v) => format!(
            "{} has value {} under root {}",
            out.full_key,
            v.short(8),
            out.root.short(8)
        ),
        None => format!(
            "{} is absent under root {}",
            out.full_key,
            out.root.short(8)
        ),
    };
    let mut r = ctx.report(&out);
    r.data = true;
    r.lines.push(ctx.style.ok(&esc(&message)));
    r.lines.push(out.proof.clone());
    Ok(r)
}

/// Runs `verify`.
pub fn verify(ctx: &Ctx, args: VerifyArgs) -> Result<Report, CliError> {
    let text = match args.proof.strip_prefix('@') {
        Some(file) => {
            let f = std::fs::File::open(file)
                .map_err(|e| CliError::input_file(&format!("proof file {file}"), &e))?;
            read_text(f, MAX_PROOF_TEXT_BYTES, &format!("proof file {file}"))?
        }
        None => args.proof,
    };
    let out = ctx.app.verify(
        &args.key,
        args.namespace.as_deref(),
        &text,
        args.root.as_deref(),
        &read_point(&args.at, &BranchArg::default()),
    )?;
    let message = match &out.value {
        Some(v) => format!(
            "valid: {} has value {} under root {}",
            out.full_key,
            v.short(8),
            out.root.short(8)
        ),
        None => format!(
            "valid: {} is absent under root {}",
            out.full_key,
            out.root.short(8)
        ),
    };
    Ok(ctx.report(&out).line(ctx.style.ok(&esc(&message))))
}
