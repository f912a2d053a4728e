//! The settings of a Python handle: explicit arguments first, then the environment variables
//! the `memoir` command reads for the same setting, then the library's defaults. The library
//! reads no environment; this face decides, once, when a handle is opened.

use std::path::Path;
use std::time::Duration;

use memoir::app::config::Layers;
use memoir::app::{
    user_config_path, Clock, Env, MemoirError, MemoirResult, MergeStrategy, Options, ReadPoint,
    WriteAs, MAX_NOW,
};
use memoir::memory::{parse_facet_cap, MergePolicy};

/// An environment variable; empty counts as unset.
fn env_var(name: &str) -> Option<String> {
    Env::new(|name| std::env::var(name).ok()).var(name)
}

/// The settings files of the store at `store` and of the user, behind the environment (as
/// the `memoir` command reads them); read once when a handle is opened.
pub fn settings_files(store: &Path) -> MemoirResult<Layers> {
    Layers::read(
        store,
        user_config_path(|n| std::env::var(n).ok()).as_deref(),
    )
}

/// A setting: its environment variable, else the settings files.
fn setting(files: &Layers, name: &str) -> Option<String> {
    env_var(name).or_else(|| files.from_files(name).map(|(v, _)| v))
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
    /// The library options ([`Options::from_env_lookup`]) of the store at `store`, each
    /// argument given taking the place of its variable: `lock_timeout` else
    /// `MEMOIR_LOCK_TIMEOUT` else 5 s; `now` else `MEMOIR_NOW` else the system clock;
    /// `merge_policy` else `MEMOIR_MERGE_POLICY`; `facet_cap` else
    /// `MEMOIR_FACET_MAX_ENTRIES`; a variable not set is taken from the settings files (the
    /// store's `config.toml`, else the user's). The language and embedding models come from
    /// the same variables and files, as the command's do.
    /// Malformed values, and settings files that do not read, are exit 1.
    pub fn options(&self, files: &Layers) -> MemoirResult<Options> {
        let lookup = |name: &str| {
            let given = match name {
                "MEMOIR_LOCK_TIMEOUT" => self.lock_timeout.is_some(),
                "MEMOIR_NOW" => self.now.is_some(),
                "MEMOIR_MERGE_POLICY" => self.merge_policy.is_some(),
                "MEMOIR_FACET_MAX_ENTRIES" => self.facet_cap.is_some(),
                _ => false,
            };
            if given {
                None
            } else {
                setting(files, name)
            }
        };
        // Opening fails on any malformed setting, even one only some operations use.
        let env = Env::new(&lookup);
        env.merge_policy()?;
        env.facet_cap()?;
        let mut options = Options::from_env_lookup(lookup)?;
        let lock = self
            .lock_timeout
            .unwrap_or(options.lock_timeout.as_secs_f64());
        if !(lock.is_finite() && (0.0..1e6).contains(&lock)) {
            return Err(MemoirError::invalid(format!(
                "lock_timeout {lock} is not seconds between 0 and 1000000"
            )));
        }
        if self.lock_timeout.is_some() {
            options.lock_timeout = Duration::from_secs_f64(lock);
        }
        if let Some(t) = self.now {
            if !(t.is_finite() && (0.0..=MAX_NOW).contains(&t)) {
                return Err(MemoirError::invalid(format!(
                    "now={t} is not unix seconds between 0 and {MAX_NOW} (year 9999)"
                )));
            }
            options.clock = Clock::fixed(t);
        }
        if let Some(p) = &self.merge_policy {
            options.merge_policy = Some(merge_policy(p)?);
        }
        if let Some(c) = &self.facet_cap {
            options.facet_cap = parse_facet_cap(Some(c))
                .map_err(|e| MemoirError::invalid(format!("facet_cap: {e}")))?;
        }
        options.keep_open = self.keep_open;
        options.scratch_dir = Some(std::env::temp_dir());
        Ok(options)
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

/// [`choice`] of a name that may not be given (`None`: none).
pub fn optional_choice<T: Copy>(
    what: &str,
    name: Option<&str>,
    options: &[(&str, T)],
) -> MemoirResult<Option<T>> {
    name.map(|n| choice(what, n, options)).transpose()
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

/// The default author of a handle's writes, given the settings `files`: `MEMOIR_AUTHOR`, else
/// the settings files' `author`, else `GIT_AUTHOR_NAME` and `GIT_AUTHOR_EMAIL`, else
/// `USER`/`USERNAME`, else `unknown` (the command's order, without asking `git config`, which
/// would start a process).
pub fn default_author(files: &Layers) -> String {
    if let Some(a) = setting(files, "MEMOIR_AUTHOR") {
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
pub fn identity(
    author: Option<String>,
    source: Option<String>,
    actor: Option<String>,
    files: &Layers,
) -> WriteAs {
    WriteAs {
        branch: None,
        author: author.unwrap_or_else(|| default_author(files)),
        source: source.or_else(|| env_var("MEMOIR_SOURCE")),
        actor: actor.or_else(|| env_var("MEMOIR_ACTOR")),
    }
}

/// The read point of `at=` and `branch=`.
pub fn read_point(at: Option<String>, branch: Option<String>) -> ReadPoint {
    ReadPoint { at, branch }
}
