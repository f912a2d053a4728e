//! `memoir proof KEY` and `memoir verify KEY -p PROOF`: Merkle proofs that a key has a value
//! (or is absent) under a tree root, checked without trusting the store.

use serde_json::json;

use memoir::object::{from_hex, to_hex, ObjectId};
use memoir::prolly::Proof;

use super::context::{open_read, parse_key, read_at, AtArg, BranchArg, Ctx};
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
    after_help = "Examples:\n  memoir verify preferences.coding.testing -p 8301...\n  memoir verify a.b -p @proof.hex --root 71c9b062...   # no store needed\n\nWithout --root the root of --at REV (default HEAD) is used. A proof that does not check is\nexit 1."
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
    let key = parse_key(&args.key, args.namespace.as_deref())?;
    let (repo, commit, root) = open_read(ctx, &args.at, &args.branch)?;
    let proof = repo.tree().prove(&root, &key.encode())?;
    let value = proof
        .verify(&root, &key.encode())
        .map_err(|e| CliError::new(super::output::exit::CORRUPT, e.to_string()))?;
    drop(repo);
    let bytes = proof.to_bytes();
    let message = match &value {
        Some(v) => format!(
            "{} has value {} under root {}",
            key,
            v.short(8),
            root.short(8)
        ),
        None => format!("{} is absent under root {}", key, root.short(8)),
    };
    let mut r = Report::new(json!({
        "success": true,
        "key": key.path(),
        "namespace": key.namespace(),
        "commit": commit.to_hex(),
        "root": root.to_hex(),
        "found": value.is_some(),
        "value": value.map(|v| v.to_hex()),
        "proof": to_hex(&bytes),
        "proof_bytes": bytes.len(),
    }));
    r.data = true;
    r.lines.push(ctx.style.ok(&esc(&message)));
    r.lines.push(to_hex(&bytes));
    Ok(r)
}

/// Runs `verify`.
pub fn verify(ctx: &Ctx, args: VerifyArgs) -> Result<Report, CliError> {
    let key = parse_key(&args.key, args.namespace.as_deref())?;
    let text = match args.proof.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|e| CliError::invalid(format!("cannot read proof file {file}: {e}")))?,
        None => args.proof.clone(),
    };
    let bytes = from_hex(text.trim()).ok_or_else(|| CliError::invalid("the proof is not hex"))?;
    let proof = Proof::from_bytes(&bytes)
        .map_err(|e| CliError::invalid(format!("the proof does not decode: {e}")))?;
    let root = match &args.root {
        Some(r) => r
            .trim()
            .parse::<ObjectId>()
            .map_err(|_| CliError::invalid(format!("--root {r:?} is not a full object id")))?,
        None => {
            let repo = ctx.open_repo()?;
            let commit = read_at(ctx, &repo, args.at.at.as_deref(), None)?;
            repo.root_of(&commit)?
        }
    };
    let value = proof
        .verify(&root, &key.encode())
        .map_err(|e| CliError::invalid(format!("the proof does not check: {e}")))?;
    let message = match &value {
        Some(v) => format!(
            "valid: {} has value {} under root {}",
            key,
            v.short(8),
            root.short(8)
        ),
        None => format!("valid: {} is absent under root {}", key, root.short(8)),
    };
    Ok(Report::new(json!({
        "success": true,
        "valid": true,
        "key": key.path(),
        "namespace": key.namespace(),
        "root": root.to_hex(),
        "found": value.is_some(),
        "value": value.map(|v| v.to_hex()),
    }))
    .line(ctx.style.ok(&esc(&message))))
}
