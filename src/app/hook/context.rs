//! The context the hooks inject: the store's state at session start, the memories a prompt
//! may need, and the byte budget both are cut to.

use crate::app::code_repo::CodeRepo;
use crate::app::follow::{FollowOutcome, MemoryBranch, MAIN_BRANCH};
use crate::app::sync_branch::SyncBranchRequest;
use crate::app::{Memoir, MemoirResult, ReadPoint, SearchRequest, SummarizeRequest, SummaryKind};
use crate::recall::{SearchMode, Sort};

use super::HookSettings;

/// Unmerged commits (over all memory branches) from which the session-start context asks
/// the agent to offer a promotion once.
pub const OFFER_AT_COMMITS: u64 = 5;
/// Most key prefixes listed at session start.
const MAX_PREFIXES: usize = 60;
/// Most memories a prompt gets.
const PROMPT_HITS: usize = 5;
/// Most characters of each memory shown with a prompt.
const HIT_CHARS: usize = 300;
/// Prompts shorter than this (in characters, trimmed) get no memories.
const MIN_PROMPT_CHARS: usize = 10;
/// Characters of the prompt searched for.
const QUERY_CHARS: usize = 500;

/// What `session-start` says: a status line for the user, the context for the model.
pub(super) struct SessionContext {
    pub status: String,
    pub context: String,
    pub notes: Vec<String>,
}

/// `text` cut to at most `budget` bytes at a line's end, saying so on a last line.
pub fn fit(text: &str, budget: usize) -> String {
    if text.len() <= budget {
        return text.to_string();
    }
    let note = format!("\n[memoir: cut to {budget} bytes]");
    let fits_note = note.len() < budget;
    let mut end = if fits_note {
        budget - note.len()
    } else {
        budget
    };
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if !fits_note {
        return text[..end].to_string();
    }
    let cut = text[..end].rfind('\n').unwrap_or(end);
    format!("{}{note}", &text[..cut])
}

/// Whether a prompt only acknowledges (`ok`, `thanks`, `sounds good.`): no memories for it.
pub fn is_acknowledgement(prompt: &str) -> bool {
    const ACKS: [&str; 16] = [
        "ok",
        "okay",
        "sure",
        "yes",
        "no",
        "thanks",
        "thank you",
        "got it",
        "sounds good",
        "nice",
        "cool",
        "great",
        "awesome",
        "perfect",
        "thx",
        "ty",
    ];
    let p = prompt
        .trim()
        .trim_end_matches(['.', '!'])
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    ACKS.contains(&p.as_str())
}

/// The context of `session-start`.
pub(super) fn session_start(
    app: &Memoir,
    code: Option<&CodeRepo>,
    followed: Option<FollowOutcome>,
    settings: &HookSettings,
    now: i64,
) -> MemoirResult<SessionContext> {
    let mut notes = Vec::new();
    let code_branch = code.and_then(CodeRepo::current_branch);
    // Other branches' work is a matter for `main`: on a feature branch it is noise.
    let mut promoted = Vec::new();
    let mut branches: Vec<MemoryBranch> = Vec::new();
    if code_branch.as_deref() == Some(MAIN_BRANCH) {
        branches = app.memory_branches(code, now, true)?;
        for b in branches.iter().filter(|b| b.code_merged == Some(true)) {
            if !settings.auto_promote || b.current {
                continue;
            }
            let req = SyncBranchRequest {
                source: b.name.clone(),
                into: MAIN_BRANCH.to_string(),
                dry_run: false,
            };
            match app.sync_branch(&req, &settings.who) {
                Ok(out) => {
                    notes.push(out.message.clone());
                    promoted.push((
                        b.name.clone(),
                        out.added_keys.len() + out.updated_keys.len(),
                    ));
                }
                Err(e) => notes.push(format!("cannot promote '{}': {e}", b.name)),
            }
        }
    }
    let status = app.status()?;
    let branch = status.branch.clone().unwrap_or_else(|| "(detached)".into());
    let unmerged: Vec<&MemoryBranch> = branches
        .iter()
        .filter(|b| b.unmerged && !promoted.iter().any(|(n, _)| *n == b.name))
        .collect();
    let stale: Vec<&MemoryBranch> = branches.iter().filter(|b| b.stale).collect();

    let mut line = format!("[memoir] {branch} · {} memories", status.memory_count);
    if !unmerged.is_empty() {
        line.push_str(&format!(" · {} unmerged", plural(unmerged.len(), "branch")));
    }
    if !promoted.is_empty() {
        let n = promoted.len();
        let noun = if n == 1 { "branch" } else { "branches" };
        line.push_str(&format!(" · promoted {n} merged {noun}"));
    }

    let mut c = String::new();
    c.push_str("# memoir: this project's memory\n");
    c.push_str(&format!("Store: {}\n", app.path().display()));
    match (&code_branch, app.branch_match_enabled()) {
        (Some(cb), true) if *cb == branch => c.push_str(&format!(
            "Memory branch: {branch} (follows the code branch)\n"
        )),
        (Some(cb), _) => c.push_str(&format!(
            "Memory branch: {branch}; code branch: {cb} (following is off: `memoir branch-match on`)\n"
        )),
        (None, _) => c.push_str(&format!("Memory branch: {branch}\n")),
    }
    if let Some(f) = followed.filter(|f| f.switched) {
        c.push_str(&format!("{}\n", f.message));
    }
    c.push_str(&format!(
        "{} memories{}\n",
        status.memory_count,
        if status.namespaces.is_empty() {
            String::new()
        } else {
            format!(" in namespaces {}", status.namespaces.join(", "))
        }
    ));
    if status.memory_count > 0 {
        let req = SummarizeRequest {
            kind: SummaryKind::Taxonomy,
            namespace: None,
            keys: Vec::new(),
            depth: Some(2),
        };
        let sum = app.summarize(&req, &ReadPoint::head())?;
        let mut listed = 0;
        c.push_str("\nWhat is stored (key prefix: count):\n");
        for (ns, counts) in sum.prefix_counts.iter().flatten() {
            let items: Vec<String> = counts
                .iter()
                .take(MAX_PREFIXES.saturating_sub(listed))
                .map(|(p, n)| format!("{p} ({n})"))
                .collect();
            listed += items.len();
            if !items.is_empty() {
                c.push_str(&format!("- {ns}: {}\n", items.join(", ")));
            }
        }
    }
    c.push_str(
        "\nBefore work that past preferences or decisions may shape, look them up: \
         `memoir recall \"QUESTION\"` or `memoir get KEY`. Store a durable fact with \
         `memoir remember \"FACT\" -p PATH` (a path such as preferences.coding.testing). \
         Turns are captured after each answer.\n",
    );
    if !promoted.is_empty() {
        c.push_str("\n## Promoted into main (their code branches were merged)\n");
        for (name, keys) in &promoted {
            c.push_str(&format!("- {name}: {} promoted\n", plural(*keys, "key")));
        }
        c.push_str("Mention this briefly to the user.\n");
    }
    if !unmerged.is_empty() {
        c.push_str("\n## Memory branches not yet in main\n");
        let mut total = 0;
        for b in &unmerged {
            total += b.ahead;
            c.push_str(&format!(
                "- {}: {} ahead, {} to promote\n",
                b.name,
                plural(b.ahead as usize, "commit"),
                plural(b.pending_keys, "key")
            ));
        }
        c.push_str("Promote one with `memoir sync-branch NAME --yes` (inserts and updates; nothing is deleted).\n");
        if total >= OFFER_AT_COMMITS {
            c.push_str(&format!(
                "There are {total} unmerged commits: offer the user, once this session, to \
                 promote these branches into main (`memoir sync-branch NAME --dry-run` shows \
                 what would change).\n"
            ));
        }
    }
    if !stale.is_empty() {
        c.push_str("\n## Stale memory branches\n");
        for b in &stale {
            let why = if b.code_branch_exists == Some(false) {
                "its code branch is gone"
            } else {
                "already promoted"
            };
            c.push_str(&format!(
                "- {}: no commit for {} days, {why}; delete with `memoir branch -D {}`\n",
                b.name, b.age_days, b.name
            ));
        }
    }
    Ok(SessionContext {
        status: line,
        context: c,
        notes,
    })
}

/// The memories a lexical search for `prompt` finds, as context; empty for a short prompt,
/// an acknowledgement, or no hit.
pub(super) fn prompt_memories(app: &Memoir, prompt: &str) -> MemoirResult<String> {
    let p = prompt.trim();
    if p.chars().count() < MIN_PROMPT_CHARS || is_acknowledgement(p) {
        return Ok(String::new());
    }
    let req = SearchRequest {
        query: p.chars().take(QUERY_CHARS).collect(),
        namespace: None,
        keys: Vec::new(),
        limit: PROMPT_HITS,
        since: None,
        until: None,
        sort: Sort::default(),
        explain: false,
    };
    // By words: a prompt's hook must answer fast, without loading a model.
    let out = app.search_in(Some(SearchMode::Lexical), &req, &ReadPoint::head())?;
    if out.hits.is_empty() {
        return Ok(String::new());
    }
    let mut c = String::from("# memoir: stored memories that may bear on this prompt\n");
    for h in &out.hits {
        let one_line: String = h.content.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut shown: String = one_line.chars().take(HIT_CHARS).collect();
        if shown.len() < one_line.len() {
            shown.push('…');
        }
        c.push_str(&format!("- {}:{}: {shown}\n", h.namespace, h.key));
    }
    c.push_str("Apply those that bear on the task; `memoir get KEY` reads one whole.\n");
    Ok(c)
}

fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (1, _) => format!("1 {word}"),
        (_, "branch") => format!("{n} branches"),
        _ => format!("{n} {word}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_at_a_line_and_says_so() {
        let text = "line one\nline two\nline three\nline four\nline five\nline six\n";
        assert_eq!(fit(text, 100), text);
        let cut = fit(text, 45);
        assert!(cut.len() <= 45, "{cut:?}");
        assert!(cut.starts_with("line one") && cut.ends_with("[memoir: cut to 45 bytes]"));
        assert!(fit("ééééé", 3).len() <= 3);
    }

    #[test]
    fn acknowledgements_are_recognised() {
        assert!(is_acknowledgement("ok"));
        assert!(is_acknowledgement("  Sounds   good. "));
        assert!(!is_acknowledgement("ok, now add tests for the parser"));
    }
}
