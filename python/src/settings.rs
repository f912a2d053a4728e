//! The settings of a Python handle: explicit arguments first, then the environment variables
//! the `memoir` command reads for the same setting, then the library's defaults. The library
//! reads no environment; this face decides, once, when a handle is opened.

use std::time::Duration;

use memoir::app::{Clock, MemoirError, MemoirResult, MergeStrategy, Options, ReadPoint, WriteAs};
use memoir::memory::{parse_facet_cap, MergePolicy};

/// The latest fixed clock accepted: 9999-12-31T23:59:59Z, the last second ISO 8601 shows.
const MAX_NOW: f64 = 253_402_300_799.0;

/// An environment variable; empty counts as unset.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What a handle is opened with, as given from Python (`None`: not given).
#[derive(Debug, Default)]
pub struct OpenArgs {
    pub lock_timeout: Option<f64>,
    pub now: Option<f64>,
    pub keep_open: bool,
    pub merge_policy: Option<String>,
    pub facet_cap: Option<String>,
}

impl OpenArgs {
    /// The library options: `lock_timeout` else `MEMOIR_LOCK_TIMEOUT` else 5 s; `now` else
    /// `MEMOIR_NOW` else the system clock; `merge_policy` else `MEMOIR_MERGE_POLICY`;
    /// `facet_cap` else `MEMOIR_FACET_MAX_ENTRIES`. No model is configured (recall is
    /// lexical). Malformed values are exit 1.
    // The struct update below fills what the library's features add (S3 settings with
    // `remote`, which a workspace build may turn on); without them it has nothing to fill.
    #[allow(clippy::needless_update)]
    pub fn options(&self) -> MemoirResult<Options> {
        let lock = match self.lock_timeout {
            Some(s) => s,
            None => match env_var("MEMOIR_LOCK_TIMEOUT") {
                Some(t) => t.trim().parse::<f64>().map_err(|_| {
                    MemoirError::invalid(format!("MEMOIR_LOCK_TIMEOUT={t:?} is not seconds"))
                })?,
                None => 5.0,
            },
        };
        if !(lock.is_finite() && (0.0..1e6).contains(&lock)) {
            return Err(MemoirError::invalid(format!(
                "lock_timeout {lock} is not seconds between 0 and 1000000"
            )));
        }
        let now = match self.now {
            Some(t) => Some(t),
            None => match env_var("MEMOIR_NOW") {
                Some(t) => Some(t.trim().parse::<f64>().map_err(|_| {
                    MemoirError::invalid(format!("MEMOIR_NOW={t:?} is not unix seconds"))
                })?),
                None => None,
            },
        };
        let clock = match now {
            None => Clock::system(),
            Some(t) if t.is_finite() && (0.0..=MAX_NOW).contains(&t) => Clock::fixed(t),
            Some(t) => {
                return Err(MemoirError::invalid(format!(
                    "now={t} is not unix seconds between 0 and {MAX_NOW} (year 9999)"
                )))
            }
        };
        let policy = self
            .merge_policy
            .clone()
            .or_else(|| env_var("MEMOIR_MERGE_POLICY"));
        let cap = self
            .facet_cap
            .clone()
            .or_else(|| env_var("MEMOIR_FACET_MAX_ENTRIES"));
        Ok(Options {
            lock_timeout: Duration::from_secs_f64(lock),
            clock,
            keep_open: self.keep_open,
            scratch_dir: Some(std::env::temp_dir()),
            llm: None,
            merge_policy: policy.as_deref().map(merge_policy).transpose()?,
            facet_cap: parse_facet_cap(cap.as_deref())
                .map_err(|e| MemoirError::invalid(format!("facet_cap: {e}")))?,
            ..Options::default()
        })
    }
}

/// A merge policy by name (exit 1 for an unknown one).
pub fn merge_policy(name: &str) -> MemoirResult<MergePolicy> {
    name.parse::<MergePolicy>()
        .map_err(|e| MemoirError::invalid(e.to_string()))
}

/// A merge strategy by name (exit 1 for an unknown one).
pub fn merge_strategy(name: &str) -> MemoirResult<MergeStrategy> {
    choice(
        "merge strategy",
        name,
        &[
            ("ours", MergeStrategy::Ours),
            ("skip", MergeStrategy::Skip),
            ("theirs", MergeStrategy::Theirs),
            ("union", MergeStrategy::Union),
        ],
    )
}

/// The option named `name` among `options`; another name is an error (exit 1) listing them.
pub fn choice<T: Copy>(what: &str, name: &str, options: &[(&str, T)]) -> MemoirResult<T> {
    if let Some((_, v)) = options.iter().find(|(n, _)| *n == name) {
        return Ok(*v);
    }
    let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
    let listed = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(MemoirError::invalid(format!(
        "unknown {what} {name:?}: expected {listed}"
    )))
}

/// The default author of a handle's writes: `MEMOIR_AUTHOR`, else `GIT_AUTHOR_NAME` and
/// `GIT_AUTHOR_EMAIL`, else `USER`/`USERNAME`, else `unknown` (the command's order, without
/// asking `git config`, which would start a process).
pub fn default_author() -> String {
    if let Some(a) = env_var("MEMOIR_AUTHOR") {
        return a;
    }
    match (env_var("GIT_AUTHOR_NAME"), env_var("GIT_AUTHOR_EMAIL")) {
        (Some(n), Some(e)) => return format!("{n} <{e}>"),
        (Some(n), None) => return n,
        (None, Some(e)) => return e,
        (None, None) => {}
    }
    env_var("USER")
        .or_else(|| env_var("USERNAME"))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The provenance a handle writes with: given values, else `MEMOIR_SOURCE`/`MEMOIR_ACTOR`.
pub fn identity(author: Option<String>, source: Option<String>, actor: Option<String>) -> WriteAs {
    WriteAs {
        branch: None,
        author: author.unwrap_or_else(default_author),
        source: source.or_else(|| env_var("MEMOIR_SOURCE")),
        actor: actor.or_else(|| env_var("MEMOIR_ACTOR")),
    }
}

/// The read point of `at=` and `branch=`.
pub fn read_point(at: Option<String>, branch: Option<String>) -> ReadPoint {
    ReadPoint { at, branch }
}
