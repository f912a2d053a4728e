//! The LLM picker: a model chooses which keys answer a question.
//!
//! - single: one call over the candidate keys, each with a content sample;
//! - tiered: the model first picks up to [`L1_PICKS`] top-level prefixes from the depth-1
//!   histogram (fallback: the [`L1_FALLBACK`] largest); a picked prefix with more than
//!   [`L2_THRESHOLD`] keys gets a second pick of up to [`L2_PICKS`] depth-2 prefixes under it
//!   (fallback: the [`L2_FALLBACK`] largest); then one call picks keys among the descended
//!   keys, with samples.
//!
//! Each prompt asks for one JSON object (`{"topics": [...]}`, `{"keys": [...]}`) and a reply
//! is accepted only in that form, naming only what was offered ([`parse_reply`]); anything
//! else counts as a failed call (a prefix step then takes its fallback, the key step fails).
//! So a reply cannot inject a key, and text that is not an answer (an echo of the prompt,
//! prose) is never read as one. Every call's prompt, reply and time are recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::llm::{Llm, LlmError};

use crate::llm::reply::{excerpt, json_object, string_list};

/// Most prefixes a tiered first step keeps.
pub const L1_PICKS: usize = 4;
/// Prefixes taken by count when the first step's reply is unusable.
pub const L1_FALLBACK: usize = 3;
/// A picked prefix with more keys than this gets a second, narrower pick.
pub const L2_THRESHOLD: usize = 40;
/// Most prefixes a second step keeps.
pub const L2_PICKS: usize = 3;
/// Prefixes taken by count when a second step's reply is unusable.
pub const L2_FALLBACK: usize = 2;
/// Most keys shown to the model in one key pick.
pub const MAX_KEY_CANDIDATES: usize = 400;
/// Characters of content shown per key.
pub const SAMPLE_CHARS: usize = 160;

const SYSTEM: &str = "You select entries from an agent's memory store. Answer with one JSON \
object and nothing else, naming only entries copied exactly from the list you are given.";

/// How the picker works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One call over the keys.
    Single,
    /// Prefix histogram first, then keys.
    Tiered,
}

impl Mode {
    /// The name results carry.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Tiered => "tiered",
        }
    }
}

/// One model call, for the record.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptLog {
    /// Which step (`single`, `l1`, `l2:<prefix>`, `keys`).
    pub step: String,
    /// The prompt sent.
    pub prompt: String,
    /// The reply received (empty when the call failed).
    pub reply: String,
}

/// What the picker chose and how.
#[derive(Debug, Clone, Default)]
pub struct Pick {
    /// Chosen keys (`ns:path`), best first.
    pub keys: Vec<String>,
    /// Milliseconds per step.
    pub step_timings: BTreeMap<String, f64>,
    /// Every call made.
    pub prompts: Vec<PromptLog>,
    /// Steps whose reply was unusable and that used their fallback.
    pub fallbacks: Vec<String>,
}

/// The picker could not finish: the model failed or its final answer was unusable.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {reason}")]
pub struct PickError {
    /// The step that failed.
    pub step: String,
    /// Why.
    pub reason: String,
    /// The model error, when the call itself failed.
    #[source]
    pub llm: Option<LlmError>,
    /// What was done before the failure.
    pub partial: Box<Pick>,
}

/// The names a reply picks: the reply must be the JSON object `{"<field>": [...]}` (see
/// [`crate::llm::reply`]) whose list holds only names of `candidates`, copied exactly; they
/// are returned in reply order without repeats (an empty list: none fits). Anything else is
/// [`LlmError::BadReply`]: prose, a list of lines, the prompt repeated, a missing field or
/// one of another type, a name that was not offered.
pub fn parse_reply(
    reply: &str,
    field: &str,
    candidates: &BTreeSet<String>,
) -> Result<Vec<String>, LlmError> {
    let obj = json_object(reply)?;
    let mut out: Vec<String> = Vec::new();
    for name in string_list(&obj, field)? {
        if !candidates.contains(&name) {
            return Err(LlmError::BadReply(format!(
                "{} was not offered",
                excerpt(&name)
            )));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// Why an inventory gave no sample of a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    /// The key is not one of the inventory's (the printed key).
    #[error("unknown key {0}")]
    UnknownKey(String),
}

/// The store as the picker sees it.
pub trait Inventory {
    /// Every candidate key (`ns:path`), in tree order.
    fn keys(&self) -> &[String];
    /// A content sample of `key` (callers cut it to [`SAMPLE_CHARS`]).
    fn sample(&self, key: &str) -> Result<String, SampleError>;
}

/// The prefix of `key` (`ns:path`) at `depth` segments (the key itself when shorter).
fn prefix_at(key: &str, depth: usize) -> &str {
    let Some(colon) = key.rfind(':') else {
        return key;
    };
    let path = &key[colon + 1..];
    match path.match_indices('.').nth(depth.saturating_sub(1)) {
        Some((i, _)) => &key[..colon + 1 + i],
        None => key,
    }
}

/// Appends `text` on one line: its words joined by single spaces, cut to `most` characters
/// (what `split_whitespace`, `join(" ")` and `take(most)` give, without the copies).
fn push_one_line(out: &mut String, text: &str, most: usize) {
    let mut left = most;
    for (i, word) in text.split_whitespace().enumerate() {
        if left == 0 {
            return;
        }
        if i > 0 {
            out.push(' ');
            left -= 1;
        }
        for (n, (at, _)) in word.char_indices().enumerate() {
            if n == left {
                out.push_str(&word[..at]);
                return;
            }
        }
        out.push_str(word);
        left -= word.chars().count();
    }
}

/// Whether `key` is `prefix` or below it.
fn under(key: &str, prefix: &str) -> bool {
    key == prefix || (key.starts_with(prefix) && key.as_bytes().get(prefix.len()) == Some(&b'.'))
}

fn histogram<'a>(keys: impl Iterator<Item = &'a String>, depth: usize) -> Vec<(String, usize)> {
    let mut h: BTreeMap<&str, usize> = BTreeMap::new();
    for k in keys {
        *h.entry(prefix_at(k, depth)).or_default() += 1;
    }
    h.into_iter().map(|(k, n)| (k.to_string(), n)).collect()
}

fn largest(h: &[(String, usize)], n: usize) -> Vec<String> {
    let mut v: Vec<&(String, usize)> = h.iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter().take(n).map(|(k, _)| k.clone()).collect()
}

struct Run<'a> {
    llm: &'a dyn Llm,
    pick: Pick,
}

impl Run<'_> {
    fn call(&mut self, step: &str, prompt: String) -> Result<String, PickError> {
        let t = Instant::now();
        let result = self.llm.complete(SYSTEM, &prompt);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        *self.pick.step_timings.entry(step.to_string()).or_default() += ms;
        match result {
            Ok(reply) => {
                self.pick.prompts.push(PromptLog {
                    step: step.to_string(),
                    prompt,
                    reply: reply.clone(),
                });
                Ok(reply)
            }
            Err(e) => {
                self.pick.prompts.push(PromptLog {
                    step: step.to_string(),
                    prompt,
                    reply: String::new(),
                });
                Err(PickError {
                    step: step.to_string(),
                    reason: e.to_string(),
                    llm: Some(e),
                    partial: Box::new(std::mem::take(&mut self.pick)),
                })
            }
        }
    }

    fn pick_prefixes(
        &mut self,
        step: &str,
        question: &str,
        h: &[(String, usize)],
        most: usize,
        fallback: usize,
    ) -> Result<Vec<String>, PickError> {
        let mut prompt =
            format!("Question: {question}\n\nTopics in memory (prefix: number of memories):\n");
        for (p, n) in h {
            prompt.push_str(&format!("- {p}: {n}\n"));
        }
        prompt.push_str(&format!(
            "\nWhich topics most likely hold the answer? Reply with one JSON object and \
             nothing else: {{\"topics\": [\"<topic>\", ...]}} with at most {most} topics \
             copied exactly from the list, most relevant first, or {{\"topics\": []}} if none do."
        ));
        let reply = self.call(step, prompt)?;
        let set: BTreeSet<String> = h.iter().map(|(p, _)| p.clone()).collect();
        match parse_reply(&reply, "topics", &set) {
            Ok(mut p) if !p.is_empty() => {
                p.truncate(most);
                Ok(p)
            }
            _ => {
                self.pick.fallbacks.push(step.to_string());
                Ok(largest(h, fallback))
            }
        }
    }

    fn pick_keys(
        &mut self,
        step: &str,
        question: &str,
        keys: &[String],
        inv: &dyn Inventory,
        limit: usize,
    ) -> Result<Vec<String>, PickError> {
        let shown = &keys[..keys.len().min(MAX_KEY_CANDIDATES)];
        let mut prompt = String::with_capacity(shown.len() * (SAMPLE_CHARS + 48) + 256);
        prompt.push_str("Question: ");
        prompt.push_str(question);
        prompt.push_str("\n\nMemories (key: content sample):\n");
        for k in shown {
            let sample = inv.sample(k).map_err(|e| PickError {
                step: step.to_string(),
                reason: e.to_string(),
                llm: None,
                partial: Box::new(self.pick.clone()),
            })?;
            prompt.push_str("- ");
            prompt.push_str(k);
            prompt.push_str(": ");
            push_one_line(&mut prompt, &sample, SAMPLE_CHARS);
            prompt.push('\n');
        }
        prompt.push_str(&format!(
            "\nWhich memories help answer the question? Reply with one JSON object and \
             nothing else: {{\"keys\": [\"<key>\", ...]}} with at most {limit} keys copied \
             exactly from the list, most relevant first, or {{\"keys\": []}} if none do."
        ));
        let reply = self.call(step, prompt)?;
        let set: BTreeSet<String> = shown.iter().cloned().collect();
        match parse_reply(&reply, "keys", &set) {
            Ok(mut p) => {
                p.truncate(limit);
                Ok(p)
            }
            Err(e) => Err(PickError {
                step: step.to_string(),
                reason: e.to_string(),
                llm: Some(e),
                partial: Box::new(self.pick.clone()),
            }),
        }
    }
}

/// Runs the picker. `keys` of the inventory should come in priority order when there are more
/// than [`MAX_KEY_CANDIDATES`] (only that many are shown in one key pick).
pub fn pick(
    llm: &dyn Llm,
    mode: Mode,
    question: &str,
    inv: &dyn Inventory,
    limit: usize,
) -> Result<Pick, PickError> {
    let mut run = Run {
        llm,
        pick: Pick::default(),
    };
    let all = inv.keys();
    if all.is_empty() || limit == 0 {
        return Ok(run.pick);
    }
    let keys = match mode {
        Mode::Single => run.pick_keys("single", question, all, inv, limit)?,
        Mode::Tiered => {
            let h1 = histogram(all.iter(), 1);
            let l1 = run.pick_prefixes("l1", question, &h1, L1_PICKS, L1_FALLBACK)?;
            let mut chosen: Vec<String> = Vec::new();
            for p in &l1 {
                let below: Vec<&String> = all.iter().filter(|k| under(k, p)).collect();
                if below.len() > L2_THRESHOLD {
                    let h2 = histogram(below.iter().copied(), 2);
                    let step = format!("l2:{p}");
                    let l2 = run.pick_prefixes(&step, question, &h2, L2_PICKS, L2_FALLBACK)?;
                    chosen.extend(
                        below
                            .into_iter()
                            .filter(|k| l2.iter().any(|q| under(k, q)))
                            .cloned(),
                    );
                } else {
                    chosen.extend(below.into_iter().cloned());
                }
            }
            chosen.sort();
            chosen.dedup();
            if chosen.is_empty() {
                Vec::new()
            } else {
                run.pick_keys("keys", question, &chosen, inv, limit)?
            }
        }
    };
    run.pick.keys = keys;
    Ok(run.pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn replies_are_the_object_asked_for() {
        let c = set(&["default:a.b", "default:a.c", "work:x.y"]);
        let want = vec!["default:a.b".to_string(), "work:x.y".to_string()];
        for reply in [
            r#"{"keys": ["default:a.b", "work:x.y"]}"#,
            r#"{"keys": ["default:a.b", "work:x.y", "default:a.b"], "why": "extra fields are ignored"}"#,
            "```json\n{\"keys\": [\"default:a.b\", \"work:x.y\"]}\n```",
        ] {
            assert_eq!(parse_reply(reply, "keys", &c).unwrap(), want, "{reply:?}");
        }
        assert!(parse_reply(r#"{"keys": []}"#, "keys", &c)
            .unwrap()
            .is_empty());
        for bad in [
            "default:a.b\nwork:x.y",
            "- default:a.b",
            "NONE",
            "",
            r#"["default:a.b"]"#,
            r#"{"topics": ["default:a.b"]}"#,
            r#"{"keys": "default:a.b"}"#,
            r#"{"keys": [1, 2]}"#,
            r#"{"keys": ["default:a.b", "a.c"]}"#,
            r#"{"keys": ["default:a.b", "../../etc/passwd"]}"#,
            "Sure: {\"keys\": [\"default:a.b\"]}",
        ] {
            assert!(
                matches!(parse_reply(bad, "keys", &c), Err(LlmError::BadReply(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn one_line_samples_match_split_join_take() {
        let long = "word ".repeat(60);
        let texts = [
            "",
            "   ",
            "one",
            "  several   words\n\tover  lines \r\n end ",
            "café ünïcödé • naïve — ok",
            long.as_str(),
            "x y",
        ];
        for text in texts {
            for most in [0, 1, 2, 3, 4, 5, 7, 11, SAMPLE_CHARS] {
                let want: String = text
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .chars()
                    .take(most)
                    .collect();
                let mut got = String::from("> ");
                push_one_line(&mut got, text, most);
                assert_eq!(got, format!("> {want}"), "{text:?} cut to {most}");
            }
        }
    }

    #[test]
    fn prefixes_and_histograms() {
        assert_eq!(prefix_at("default:a.b.c", 1), "default:a");
        assert_eq!(prefix_at("default:a.b.c", 2), "default:a.b");
        assert_eq!(prefix_at("default:a", 2), "default:a");
        assert_eq!(prefix_at("codebase:onboard:a.b", 1), "codebase:onboard:a");
        assert!(under("default:a.b", "default:a"));
        assert!(!under("default:ab", "default:a"));
        let keys: Vec<String> = ["d:a.x", "d:a.y", "d:b.z"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let h = histogram(keys.iter(), 1);
        assert_eq!(h, vec![("d:a".to_string(), 2), ("d:b".to_string(), 1)]);
        assert_eq!(largest(&h, 1), vec!["d:a".to_string()]);
    }
}
