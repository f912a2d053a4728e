//! Capture: a model picks out the durable facts of one conversation turn, each with a path in
//! the taxonomy.
//!
//! The model is asked once ([`prompt`]) and must answer in one form: lines `path<TAB>fact`,
//! at most [`MAX_FACTS`], or the single word `NONE` (nothing worth keeping, which is
//! normal). An empty reply is the same as `NONE`; a code fence around the whole reply is
//! allowed. Any other reply is refused ([`parse_reply`]) and the call counts as failed: a
//! line without a tab, prose, numbering, the prompt repeated back (what an echo server
//! answers). Every line of an accepted reply is then checked on its own ([`check_lines`]):
//! its path must be acceptable to the classifier's rules ([`super::classify()`]: three plain
//! segments, the target namespace) and begin with a category of the taxonomy, and its fact
//! must be a complete statement, not a fragment; a line that fails is dropped with the
//! reason, the others are kept.

use std::collections::BTreeSet;

use super::classify::{check_path, existing_lines};
use super::taxonomy::Taxonomy;
use crate::llm::reply::{excerpt, unfenced};
use crate::llm::LlmError;

/// Most facts kept from one turn.
pub const MAX_FACTS: usize = 6;
/// Characters of the turn shown to the model (a longer one keeps its start and end).
pub const TURN_CHARS: usize = 12_000;
/// Most existing paths shown to the model (the largest by count).
pub const MAX_PATHS_SHOWN: usize = 100;
/// Shortest fact kept, in characters.
pub const MIN_FACT_CHARS: usize = 12;
/// Fewest words of a fact kept.
pub const MIN_FACT_WORDS: usize = 3;
/// Longest fact kept, in characters.
pub const MAX_FACT_CHARS: usize = 500;

/// The system instruction of a capture call.
pub const SYSTEM: &str = "You pick out the durable memories in one turn of a conversation \
between a user and an AI agent. Answer only with lines of the form path<TAB>fact, or with the \
single word NONE.";

/// What kind of agent the turn comes from: it decides what the prompt counts as worth
/// remembering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// A coding agent (the default).
    #[default]
    Coding,
    /// A general assistant.
    Assistant,
}

impl Profile {
    /// `coding` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Coding => "coding",
            Profile::Assistant => "assistant",
        }
    }

    fn guidance(self) -> &'static str {
        match self {
            Profile::Coding => {
                "The agent is a coding agent. Worth remembering: the user's preferences and \
                 corrections, standing instructions, decisions and why they were made, facts \
                 about the project (layout, commands, conventions, dependencies, \
                 infrastructure), what a failure turned out to be and what fixed it, lessons \
                 learned. Not worth remembering: step-by-step progress of the task, what is \
                 only true during this turn, code that is in the repository anyway, \
                 pleasantries, guesses, and anything secret (keys, tokens, passwords)."
            }
            Profile::Assistant => {
                "The agent is a personal assistant. Worth remembering: who the user is, their \
                 preferences and habits, people and relationships, plans and commitments with \
                 their dates, routines, corrections of the assistant. Not worth remembering: \
                 small talk, what is only true during this turn, general knowledge anyone can \
                 look up, guesses, and anything secret (keys, tokens, passwords)."
            }
        }
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Profile, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "coding" => Ok(Profile::Coding),
            "assistant" => Ok(Profile::Assistant),
            other => Err(format!(
                "unknown profile {other:?}: expected coding or assistant"
            )),
        }
    }
}

/// The prompt of a capture call: the profile's guidance, the taxonomy's block, the
/// `existing` paths of `namespace` (at most [`MAX_PATHS_SHOWN`]) and the turn's
/// `transcript`.
pub fn prompt(
    profile: Profile,
    taxonomy: &Taxonomy,
    namespace: &str,
    existing: &[(String, u64)],
    transcript: &str,
) -> String {
    format!(
        "{}\n\n{}\nExisting paths in namespace {namespace} (path: number of memories):\n{}\n\
         Turn:\n<<<\n{transcript}\n>>>\n\n\
         Write each durable fact of this turn on a line of its own: its path, one tab \
         character, then the fact as one complete sentence that makes sense without the \
         conversation. A path is exactly 3 lower-case segments (letters, digits, '_' or '-') \
         joined by dots and begins with a category of the taxonomy; reuse an existing path \
         when the fact belongs there. At most {MAX_FACTS} lines, and no numbering, bullets, \
         headings or other text. If nothing is worth remembering, which is common, reply \
         with the single word NONE.",
        profile.guidance(),
        taxonomy.snippet(),
        existing_lines(existing, MAX_PATHS_SHOWN),
    )
}

/// One line of an accepted reply: the path as the model wrote it, and the fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Line number in the reply (1-based).
    pub number: usize,
    /// The path, as written.
    pub path: String,
    /// The fact, trimmed.
    pub fact: String,
}

/// Reads a capture reply: `NONE` or empty is no line; otherwise every non-blank line must be
/// `path<TAB>fact` with a path of no spaces and a fact that is not blank. Anything else is
/// [`LlmError::BadReply`] quoting the first line that is not in that form.
pub fn parse_reply(reply: &str) -> Result<Vec<Line>, LlmError> {
    let body = unfenced(reply);
    if body.is_empty() || body.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (i, line) in body.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = line.split_once('\t').and_then(|(p, f)| {
            let (p, f) = (p.trim(), f.trim());
            (!p.is_empty() && !p.contains(char::is_whitespace) && !f.is_empty()).then(|| Line {
                number: i + 1,
                path: p.to_string(),
                fact: f.to_string(),
            })
        });
        match parsed {
            Some(l) => out.push(l),
            None => {
                return Err(LlmError::BadReply(format!(
                    "line {} of the reply is not 'path<TAB>fact' (nor is the reply NONE): {}",
                    i + 1,
                    excerpt(line)
                )))
            }
        }
    }
    Ok(out)
}

/// A fact that passed the checks: the bare path to store it under, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// Bare path (three segments, the first a category).
    pub path: String,
    /// The fact.
    pub content: String,
}

/// A line that was dropped, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dropped {
    /// The path as the model wrote it.
    pub path: String,
    /// The fact as the model wrote it.
    pub content: String,
    /// Why it was dropped.
    pub reason: String,
}

/// Checks every line of a reply for `namespace` against `taxonomy`, given the `existing`
/// three-level paths (taken as they are, like the classifier does): returns the facts kept,
/// in reply order and at most [`MAX_FACTS`], and the lines dropped with their reasons.
pub fn check_lines(
    lines: &[Line],
    namespace: &str,
    taxonomy: &Taxonomy,
    existing: &[(String, u64)],
) -> (Vec<Fact>, Vec<Dropped>) {
    let known: BTreeSet<&str> = existing
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| p.split('.').count() == 3)
        .collect();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for l in lines {
        let verdict = check_path(&l.path, namespace, &known)
            .map_err(|why| format!("path {why}"))
            .and_then(|path| {
                let top = path.split('.').next().unwrap_or_default();
                if taxonomy.category(top).is_none() {
                    return Err(format!(
                        "path begins with {top:?}, not a category of the taxonomy"
                    ));
                }
                fragment(&l.fact).map_or(Ok(path), Err)
            })
            .and_then(|path| {
                if kept.len() == MAX_FACTS {
                    Err(format!("more than {MAX_FACTS} facts in one turn"))
                } else {
                    Ok(path)
                }
            });
        match verdict {
            Ok(path) => kept.push(Fact {
                path,
                content: l.fact.clone(),
            }),
            Err(reason) => dropped.push(Dropped {
                path: l.path.clone(),
                content: l.fact.clone(),
                reason,
            }),
        }
    }
    (kept, dropped)
}

/// Why `fact` is not a complete statement worth storing, if it is not: too short (fewer than
/// [`MIN_FACT_CHARS`] characters or [`MIN_FACT_WORDS`] words), too long
/// ([`MAX_FACT_CHARS`]), cut off (ending in an ellipsis, `:`, `,`, `;` or a dash) or holding
/// a control character.
pub fn fragment(fact: &str) -> Option<String> {
    let chars = fact.chars().count();
    let words = fact.split_whitespace().count();
    if chars < MIN_FACT_CHARS || words < MIN_FACT_WORDS {
        return Some(format!(
            "a fragment: fewer than {MIN_FACT_WORDS} words or {MIN_FACT_CHARS} characters"
        ));
    }
    if chars > MAX_FACT_CHARS {
        return Some(format!(
            "longer than {MAX_FACT_CHARS} characters for one fact"
        ));
    }
    if ["...", "…", ":", ",", ";", "-", "–", "—"]
        .iter()
        .any(|end| fact.ends_with(end))
    {
        return Some("a fragment: it is cut off".to_string());
    }
    if fact.chars().any(char::is_control) {
        return Some("it holds a control character".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(reply: &str) -> Vec<(String, String)> {
        parse_reply(reply)
            .unwrap_or_else(|e| panic!("{reply:?}: {e}"))
            .into_iter()
            .map(|l| (l.path, l.fact))
            .collect()
    }

    fn refused(reply: &str) -> String {
        match parse_reply(reply) {
            Err(LlmError::BadReply(m)) => m,
            other => panic!("{reply:?} gave {other:?}"),
        }
    }

    #[test]
    fn replies_in_the_asked_form() {
        assert!(lines("NONE").is_empty());
        assert!(lines("  none \n").is_empty());
        assert!(lines("").is_empty());
        assert!(lines("```\nNONE\n```").is_empty());
        assert_eq!(
            lines("a.b.c\tOne fact here.\n\n  x.y.z \t Another one. \n"),
            vec![
                ("a.b.c".to_string(), "One fact here.".to_string()),
                ("x.y.z".into(), "Another one.".into())
            ]
        );
        assert_eq!(lines("```text\na.b.c\tfact\n```").len(), 1);
    }

    #[test]
    fn other_replies_fail() {
        for (r, line) in [
            ("a.b.c - fact", 1),
            ("a.b.c\tfact\nNONE", 2),
            ("1. a.b.c\tfact", 1),
            ("a.b.c\t   ", 1),
            ("\tfact", 1),
            ("Here you go:\na.b.c\tfact", 1),
            ("[echo] model=m\nUser: Turn:\n<<<\n[Human] x\n>>>", 1),
        ] {
            let m = refused(r);
            assert!(m.contains(&format!("line {line} ")), "{r:?}: {m}");
        }
    }

    fn check(reply: &str) -> (Vec<Fact>, Vec<Dropped>) {
        let t = Taxonomy::builtin();
        let existing = vec![("project.infra.database".to_string(), 2)];
        check_lines(&parse_reply(reply).unwrap(), "default", &t, &existing)
    }

    #[test]
    fn lines_are_checked_one_by_one() {
        let (kept, dropped) = check(
            "preferences.testing.framework\tThe user prefers pytest over unittest.\n\
             Project.Infra.Cache\tThe cache is Redis 7 on the same host.\n\
             tools.editor.vim\tThe user edits code in vim every day.\n\
             debugging.errors\tSomething went wrong in the build.\n\
             workflow.build.cmd\tbuild\n\
             workflow.build.steps\tFirst run the generator, then:\n\
             other:project.a.b\tA fact in another namespace here.\n\
             project.infra.database\tProduction runs PostgreSQL 16 now.",
        );
        let paths: Vec<&str> = kept.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "preferences.testing.framework",
                "project.infra.cache",
                "project.infra.database"
            ]
        );
        let reasons: Vec<&str> = dropped.iter().map(|d| d.reason.as_str()).collect();
        assert!(reasons[0].contains("not a category"), "{reasons:?}");
        assert!(reasons[1].contains("segment"), "{reasons:?}");
        assert!(reasons[2].contains("fragment"), "{reasons:?}");
        assert!(reasons[3].contains("cut off"), "{reasons:?}");
        assert!(reasons[4].contains("namespace"), "{reasons:?}");
    }

    #[test]
    fn at_most_six_facts() {
        let reply: String = (0..8)
            .map(|i| format!("knowledge.facts.f{i}\tFact number {i} is worth keeping.\n"))
            .collect();
        let (kept, dropped) = check(&reply);
        assert_eq!(kept.len(), MAX_FACTS);
        assert_eq!(dropped.len(), 2);
        assert!(dropped[0].reason.contains("more than 6"));
    }

    #[test]
    fn the_prompt_holds_the_taxonomy_and_the_turn() {
        let t = Taxonomy::builtin();
        let p = prompt(
            Profile::Coding,
            &t,
            "default",
            &[("project.infra.database".into(), 2)],
            "[Human] hi",
        );
        assert!(p.contains(&t.snippet()));
        assert!(p.contains("- project.infra.database: 2\n"));
        assert!(p.contains("<<<\n[Human] hi\n>>>"));
        assert!(p.contains("coding agent"));
        assert!(!p.contains('\t'));
        let a = prompt(Profile::Assistant, &t, "default", &[], "[Human] hi");
        assert!(a.contains("personal assistant") && a.contains("(none yet)"));
        assert_eq!("Assistant".parse::<Profile>(), Ok(Profile::Assistant));
        assert!("robot".parse::<Profile>().is_err());
    }
}
