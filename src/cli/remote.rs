//! `memoir remote`, `push`, `fetch`, `pull` and `clone`: sharing memory through object
//! storage.

use std::path::PathBuf;

use clap::Subcommand;

use memoir::app::TransferProgress as Progress;
use memoir::app::{MergeRequest, MergeStrategy};
use memoir::Memoir;

use super::context::{expand_home, BranchArg, Ctx, WriteArgs};
use super::merge::{render as render_merge, StrategyArg};
use super::output::{esc, CliError, Report};

const REMOTE_HELP: &str = "\
Examples:
  memoir remote add origin s3://team-bucket/memory
  memoir remote add backup /mnt/shared/memoir-remote
  memoir remote list

A remote is object storage laid out as a memoir remote: an S3-compatible bucket (AWS S3, R2,
MinIO, Ceph, GCS's S3 API) or a local directory; or another store on this machine, whose
branches are read and moved directly. Credentials are never stored: they come from
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or the AWS_PROFILE profile of
~/.aws/credentials; AWS_REGION and AWS_ENDPOINT_URL (e.g. http://127.0.0.1:9000 for MinIO) say
where the bucket is.";

/// Manage the store's remotes
#[derive(Debug, clap::Args)]
#[command(after_help = REMOTE_HELP)]
pub struct RemoteArgs {
    #[command(subcommand)]
    pub cmd: Option<RemoteCmd>,
}

/// The `remote` subcommands.
#[derive(Debug, Subcommand)]
pub enum RemoteCmd {
    /// Add a remote: NAME and URL (s3://BUCKET/PREFIX, file:///PATH, a path, or another store)
    Add {
        /// Its name (`origin` is the default of push, fetch and pull)
        name: String,
        /// Where it is
        url: String,
    },
    /// List the remotes and their remote-tracking branches
    List,
    /// Remove a remote and its remote-tracking branches (the remote is not touched)
    #[command(alias = "rm")]
    Remove {
        /// Its name
        name: String,
    },
}

/// Upload a branch to a remote
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir push\n  memoir push origin agent-1\n  memoir push --force   \
# replace the remote branch (after forget --purge)\n\nOnly what the remote lacks is sent. A push \
that is not a fast-forward of the remote branch, or loses a race with another push, changes \
nothing (exit 6): pull, then push again."
)]
pub struct PushArgs {
    /// The remote [default: origin, or the only one]
    pub remote: Option<String>,
    /// The branch [default: the current branch]
    pub branch: Option<String>,
    /// Replace the remote branch even if it is not an ancestor
    #[arg(long, short = 'f')]
    pub force: bool,
}

/// Download a remote's branches as REMOTE/BRANCH
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir fetch\n  memoir diff main origin/main\n  memoir merge origin/main\n\n\
Every object received is checked against its id before any ref names it; a damaged remote \
changes nothing here (exit 5)."
)]
pub struct FetchArgs {
    /// The remote [default: origin, or the only one]
    pub remote: Option<String>,
}

/// Fetch, then merge the remote branch into the current branch
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir pull\n  memoir pull origin main --ff-only\n  memoir pull -S union"
)]
pub struct PullArgs {
    /// The remote [default: origin, or the only one]
    pub remote: Option<String>,
    /// The remote branch [default: the current branch's name]
    pub branch: Option<String>,
    /// Refuse anything but a fast-forward (exit 6)
    #[arg(long)]
    pub ff_only: bool,
    /// Conflict strategy (as merge)
    #[arg(short = 'S', long = "strategy", value_enum)]
    pub strategy: Option<StrategyArg>,
    #[command(flatten)]
    pub write: WriteArgs,
}

/// Make a new store from a remote
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir clone s3://team-bucket/memory ./memory")]
pub struct CloneArgs {
    /// The remote's URL (s3://BUCKET/PREFIX, file:///PATH or a path)
    pub url: String,
    /// The directory of the new store (created; must be empty)
    #[arg(value_parser = |s: &str| Ok::<_, String>(expand_home(s)))]
    pub dir: PathBuf,
}

/// Progress lines on stderr (none with `-q` or `--json`).
fn progress(ctx: &Ctx) -> impl FnMut(&str, Progress) + '_ {
    move |phase, p| {
        if !ctx.quiet && !ctx.json {
            eprintln!(
                "{phase}: {}/{} objects, {} bytes",
                p.objects, p.objects_total, p.bytes
            );
        }
    }
}

/// Runs `remote`.
pub fn remote(ctx: &Ctx, args: RemoteArgs) -> Result<Report, CliError> {
    match args.cmd.unwrap_or(RemoteCmd::List) {
        RemoteCmd::Add { name, url } => {
            let out = ctx.app.remote_add(&name, &url)?;
            Ok(ctx.report(&out).line(ctx.style.ok(&esc(&out.message))))
        }
        RemoteCmd::Remove { name } => {
            let out = ctx.app.remote_remove(&name)?;
            Ok(ctx.report(&out).line(ctx.style.ok(&esc(&out.message))))
        }
        RemoteCmd::List => {
            let out = ctx.app.remote_list()?;
            let mut r = ctx.report(&out);
            r.data = true;
            for rem in &out.remotes {
                r.lines
                    .push(format!("{}\t{}", esc(&rem.name), esc(&rem.url)));
                for b in &rem.branches {
                    r.lines.push(format!(
                        "  {}/{}\t{}",
                        esc(&rem.name),
                        esc(&b.branch),
                        b.commit.short(12)
                    ));
                }
            }
            Ok(r)
        }
    }
}

/// Runs `push`.
pub fn push(ctx: &Ctx, args: PushArgs) -> Result<Report, CliError> {
    let mut p = progress(ctx);
    let out = ctx.app.push(
        args.remote.as_deref(),
        args.branch.as_deref(),
        args.force,
        &mut p,
    )?;
    Ok(ctx.report(&out).line(ctx.style.ok(&esc(&out.message))))
}

/// Runs `fetch`.
pub fn fetch(ctx: &Ctx, args: FetchArgs) -> Result<Report, CliError> {
    let mut p = progress(ctx);
    let out = ctx.app.fetch(args.remote.as_deref(), &mut p)?;
    let mut r = ctx.report(&out).line(ctx.style.ok(&esc(&out.message)));
    for b in out.branches.iter().filter(|b| b.status != "unchanged") {
        r.lines.push(format!(
            "  {} {}/{} -> {}",
            b.status,
            esc(&out.remote),
            esc(&b.branch),
            b.commit.short(12)
        ));
    }
    Ok(r)
}

/// Runs `pull`.
pub fn pull(ctx: &Ctx, args: PullArgs) -> Result<Report, CliError> {
    let who = ctx.write_as(&args.write, &BranchArg::default());
    let mut p = progress(ctx);
    let req = MergeRequest {
        source: String::new(),
        into: None,
        strategy: args.strategy.map(MergeStrategy::from),
        ff_only: args.ff_only,
    };
    let out = ctx.app.pull(
        args.remote.as_deref(),
        args.branch.as_deref(),
        &req,
        &who,
        &mut p,
    )?;
    let merged = render_merge(ctx, &out.merge);
    let mut r = ctx
        .report(&out)
        .line(ctx.style.ok(&esc(&out.fetch.message)));
    r.lines.extend(merged.lines);
    Ok(r)
}

/// Runs `clone`.
pub fn clone(ctx: &Ctx, args: CloneArgs) -> Result<Report, CliError> {
    let mut p = progress(ctx);
    let (_, out) = Memoir::clone_from(&args.url, &args.dir, ctx.app.options().clone(), &mut p)?;
    Ok(ctx.report(&out).line(ctx.style.ok(&esc(&out.message))))
}
