//! `memoir status`: where the store is, which branch, how many commits and memories.

use serde_json::json;

use memoir::key::{group_prefix, split_encoded};
use memoir::object::ObjectId;
use memoir::prolly::KeyRange;
use memoir::repo::{Head, Repo, HEAD};
use memoir::store::RefStore;

use super::context::Ctx;
use super::output::{esc, CliError, Report};

/// Show the store's path, branch, commit and memory counts, and namespaces
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memoir -s ./memory status\n  memoir -s ./memory --json status")]
pub struct Args {}

/// Number of commits reachable from `tip` (all parents followed).
pub fn count_commits(repo: &Repo, tip: &ObjectId) -> Result<u64, CliError> {
    // From the commit graph (cached beside the store), not by reading every commit.
    Ok(repo.reachable(&[*tip])?.len() as u64)
}

/// The namespaces of a tree, sorted, with their key counts: O(namespaces x height).
pub fn namespace_counts(repo: &Repo, root: &ObjectId) -> Result<Vec<(String, u64)>, CliError> {
    let groups = repo
        .tree()
        .histogram(root, &KeyRange::all(), &|k| group_prefix(k, 0))?;
    Ok(groups
        .into_iter()
        .map(|(g, n)| (split_encoded(&g).0, n))
        .collect())
}

/// Runs `status`.
pub fn run(ctx: &Ctx, _args: Args) -> Result<Report, CliError> {
    let path = ctx.abs_store_path().display().to_string();
    let store = ctx.open_store()?;
    if store.get_ref(HEAD)?.is_none() {
        let v = json!({
            "success": true, "path": path, "exists": true, "initialized": false,
            "branch": null, "commit_count": 0, "memory_count": 0, "namespaces": [],
        });
        return Ok(Report::new(v).line(ctx.style.info(&format!("Store at {path} has no history"))));
    }
    let repo = Repo::open(store)?;
    let branch = match repo.head()? {
        Head::Branch(b) => Some(b),
        Head::Detached(_) => None,
    };
    let head = repo.head_commit()?;
    let commits = count_commits(&repo, &head)?;
    let root = repo.root_of(&head)?;
    let memories = repo.tree().count(&root)?;
    let namespaces: Vec<String> = namespace_counts(&repo, &root)?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let v = json!({
        "success": true,
        "path": path,
        "exists": true,
        "initialized": true,
        "branch": branch,
        "commit_count": commits,
        "memory_count": memories,
        "namespaces": namespaces,
    });
    let s = &ctx.style;
    let mut r = Report::new(v);
    r.data = true;
    r.lines = vec![
        s.info(&format!("Store: {}", esc(&path))),
        format!(
            "  Branch: {}",
            branch
                .clone()
                .unwrap_or_else(|| format!("(detached at {})", head.short(8)))
        ),
        format!("  Commits: {commits}"),
        format!("  Memories: {memories}"),
        format!(
            "  Namespaces: {}",
            if namespaces.is_empty() {
                "(none)".to_string()
            } else {
                namespaces.join(", ")
            }
        ),
    ];
    Ok(r)
}
