//! The context every command runs in: store path, output settings, clock, environment; and
//! the helpers commands share (opening the store, choosing the branch to read or write,
//! resolving revisions, signatures).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use clap::Args;

use memoir::app::config::Layers;
use memoir::app::{Env, Memoir, Options, Outcome, ReadPoint, WriteAs};
use memoir::llm::ProviderConfig;
use memoir::memory::{FacetCap, MergePolicy};

use super::output::{esc, CliError, Printer, Report, Style};

/// The settings files behind the environment ([`load_settings`] reads them once, at start).
static SETTINGS_FILES: OnceLock<Layers> = OnceLock::new();

/// The settings: each variable from the process's environment, else the store's settings
/// file, else the user's (flags, which win over both, are applied by each command).
pub fn env() -> Env<fn(&str) -> Option<String>> {
    Env::new(|name| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| SETTINGS_FILES.get()?.from_files(name).map(|(v, _)| v))
    })
}

/// The process's environment alone, without the settings files.
pub fn process_env() -> Env<fn(&str) -> Option<String>> {
    Env::new(|name| std::env::var(name).ok())
}

/// The user's settings file ([`memoir::app::user_config_path`] of the process's environment).
pub fn user_config_path() -> Option<PathBuf> {
    memoir::app::user_config_path(|name| std::env::var(name).ok())
}

/// Reads the settings files of the store at `store` and of the user, once, for [`env`].
pub fn load_settings(store: &Path) -> Result<(), CliError> {
    let layers = Layers::read(store, user_config_path().as_deref())?;
    let _ = SETTINGS_FILES.set(layers);
    Ok(())
}

/// Reads an environment variable; empty counts as unset.
pub fn env_var(name: &str) -> Option<String> {
    env().var(name)
}

/// Whether an environment flag is on (`1`, `true`, `yes`, `on`).
pub fn env_flag(name: &str) -> bool {
    env().flag(name)
}

/// The model the environment configures, if any (see [`Env::llm`]); a malformed or
/// incomplete setting is an error (exit 1).
pub fn llm_config_from_env() -> Result<Option<ProviderConfig>, CliError> {
    Ok(env().llm()?)
}

/// The embedding model the environment configures, if any (see [`Env::embed`]); a malformed
/// setting is an error (exit 1).
pub fn embed_config_from_env() -> Result<Option<memoir::embed::EmbedConfig>, CliError> {
    Ok(env().embed()?)
}

/// `path` with a leading `~` (alone or before `/`) replaced by the home directory (`HOME`,
/// else `USERPROFILE`); any other path, or one when no home is known, unchanged.
pub fn expand_home(path: &str) -> PathBuf {
    let rest = match path.strip_prefix('~') {
        Some("") => "",
        Some(r) if r.starts_with('/') || r.starts_with(std::path::MAIN_SEPARATOR) => &r[1..],
        _ => return PathBuf::from(path),
    };
    match env_var("HOME").or_else(|| env_var("USERPROFILE")) {
        Some(home) if rest.is_empty() => PathBuf::from(home),
        Some(home) => Path::new(&home).join(rest),
        None => PathBuf::from(path),
    }
}

/// The merge policy of `MEMOIR_MERGE_POLICY`, if set (malformed: exit 1).
pub fn merge_policy_from_env() -> Result<Option<MergePolicy>, CliError> {
    Ok(env().merge_policy()?)
}

/// The facet cap of `MEMOIR_FACET_MAX_ENTRIES` (malformed: exit 1).
pub fn facet_cap_from_env() -> Result<FacetCap, CliError> {
    Ok(env().facet_cap()?)
}

/// Decoded tree nodes a read that visits each node once keeps (see [`Options::node_cache`]):
/// enough for the upper levels a command's lookups share.
pub(super) const ONE_SHOT_NODE_CACHE: usize = 64;

/// The application's options from the global flags and the environment
/// ([`Options::from_env_lookup`]; `--lock-timeout`, which also reads `MEMOIR_LOCK_TIMEOUT`,
/// wins). A malformed `MEMOIR_NOW` is an error (exit 1); the settings only some commands use
/// are checked by those commands with the `*_from_env` functions, so a malformed one fails
/// those commands only. The S3 settings (from the AWS profile files) are read only for a
/// command that talks to remotes, and a read that visits each node once keeps few nodes.
pub(super) fn options_from_env(
    lock_timeout: Duration,
    command: &super::commands::Command,
) -> Result<Options, CliError> {
    let settings = env();
    let options = Options::from_env_lookup(|name| match name {
        "MEMOIR_LOCK_TIMEOUT" => None,
        _ => settings.var(name),
    })?;
    Ok(Options {
        lock_timeout,
        node_cache: if command.reads_once() {
            ONE_SHOT_NODE_CACHE
        } else {
            memoir::prolly::DEFAULT_CACHE_NODES
        },
        scratch_dir: Some(std::env::temp_dir()),
        s3: if command.uses_remotes() {
            super::aws::s3_settings_from_env()
        } else {
            Default::default()
        },
        ..options
    })
}

/// Options of every writing command: provenance.
#[derive(Debug, Clone, Default, Args)]
pub struct WriteArgs {
    /// Commit author [default: MEMOIR_AUTHOR, GIT_AUTHOR_NAME/EMAIL, git config, USER]
    #[arg(long, value_name = "NAME")]
    pub author: Option<String>,
    /// Where the memory comes from (recorded in the commit and the entry)
    #[arg(long, env = "MEMOIR_SOURCE", value_name = "SOURCE")]
    pub source: Option<String>,
    /// Who writes it, e.g. an agent id (recorded in the commit and the entry)
    #[arg(long, env = "MEMOIR_ACTOR", value_name = "ACTOR")]
    pub actor: Option<String>,
}

/// `--branch`: act on a branch without moving HEAD.
#[derive(Debug, Clone, Default, Args)]
pub struct BranchArg {
    /// Act on this branch without moving HEAD (writes create it from HEAD)
    #[arg(long, env = "MEMOIR_BRANCH", value_name = "BRANCH")]
    pub branch: Option<String>,
}

/// What a command runs with.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The store directory (`-s`, `MEMOIR_STORE`, else repo mode's, else the current
    /// directory).
    pub store_path: PathBuf,
    /// Whether the store was named (`-s` or `MEMOIR_STORE`) rather than found.
    pub store_named: bool,
    /// `--json` / `MEMOIR_JSON=1` (printing is done by [`Ctx::printer`]; a command whose
    /// output is large may hand back only its JSON).
    pub json: bool,
    /// Whether reports are only ever printed as human lines: the one-shot command line
    /// without `--json`. A server's answers carry both lines and JSON.
    pub lines_only: bool,
    /// `-q` / `MEMOIR_QUIET=1`.
    pub quiet: bool,
    /// `-v`.
    pub verbose: bool,
    /// Styling of stdout lines.
    pub style: Style,
    /// Styling and printing.
    pub printer: Printer,
    /// The application handle on the store (a server's keeps the store open between
    /// calls).
    pub app: Arc<Memoir>,
}

impl Ctx {
    /// A report of `outcome`: its exit code, and its JSON unless nothing will read it
    /// ([`Ctx::lines_only`]).
    /// A write that created its branch says so on stderr in human mode.
    pub fn report<O: Outcome>(&self, outcome: &O) -> Report {
        let mut r = if self.lines_only {
            Report::code_of(outcome)
        } else {
            Report::of(outcome)
        };
        if let Some(c) = outcome.created_branch().filter(|_| !self.json) {
            r.warnings.push(self.printer.err.info(&esc(&c.message())));
        }
        r
    }

    /// Who writes, where: `--author`/environment, `--source`, `--actor`, `--branch`.
    pub fn write_as(&self, w: &WriteArgs, branch: &BranchArg) -> WriteAs {
        WriteAs {
            branch: branch.branch.clone(),
            author: self.author(w.author.as_deref()),
            source: w.source.clone(),
            actor: w.actor.clone(),
        }
    }

    /// The store path made absolute (for messages).
    pub fn abs_store_path(&self) -> PathBuf {
        absolute(&self.store_path)
    }

    /// The author: `--author`, `MEMOIR_AUTHOR`, `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL`,
    /// `git config user.name`/`user.email`, `USER`/`USERNAME`, else `unknown`.
    pub fn author(&self, flag: Option<&str>) -> String {
        if let Some(a) = flag.filter(|a| !a.is_empty()) {
            return a.to_string();
        }
        if let Some(a) = env_var("MEMOIR_AUTHOR") {
            return a;
        }
        if let Some(a) = name_email(env_var("GIT_AUTHOR_NAME"), env_var("GIT_AUTHOR_EMAIL")) {
            return a;
        }
        let (name, email) = git_user();
        if let Some(a) = name_email(name, email) {
            return a;
        }
        env_var("USER")
            .or_else(|| env_var("USERNAME"))
            .unwrap_or_else(|| "unknown".to_string())
    }
}

fn name_email(name: Option<String>, email: Option<String>) -> Option<String> {
    match (name, email) {
        (Some(n), Some(e)) => Some(format!("{n} <{e}>")),
        (Some(n), None) => Some(n),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    }
}

/// `user.name` and `user.email` as `git config --get` gives them (the last value of each,
/// empty ones ignored), from one `git` process: each process costs milliseconds.
fn git_user() -> (Option<String>, Option<String>) {
    let Ok(out) = Command::new("git")
        .args(["config", "-z", "--get-regexp", r"^user\.(name|email)$"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return (None, None);
    };
    if !out.status.success() {
        return (None, None);
    }
    parse_git_user(&out.stdout)
}

/// Reads `git config -z --get-regexp` output: entries `key LF value NUL`, in the order git
/// reads its files, so the last of a key wins as with `--get`.
fn parse_git_user(out: &[u8]) -> (Option<String>, Option<String>) {
    let (mut name, mut email) = (None, None);
    for entry in out.split(|&b| b == 0) {
        let text = String::from_utf8_lossy(entry);
        let Some((key, value)) = text.split_once('\n') else {
            continue;
        };
        let value = value.trim();
        let slot = match key.to_ascii_lowercase().as_str() {
            "user.name" => &mut name,
            "user.email" => &mut email,
            _ => continue,
        };
        *slot = (!value.is_empty()).then(|| value.to_string());
    }
    (name, email)
}

/// `path` made absolute (without resolving symlinks if it does not exist).
pub fn absolute(path: &Path) -> PathBuf {
    path.canonicalize()
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The read point of `--at` and `--branch`.
pub fn read_point(at: &AtArg, branch: &BranchArg) -> ReadPoint {
    ReadPoint {
        at: at.at.clone(),
        branch: branch.branch.clone(),
    }
}

/// `--at REV`: read the past without moving anything.
#[derive(Debug, Args)]
pub struct AtArg {
    /// Read at this revision (branch, commit id or prefix, HEAD~2, main@{yesterday}, ...)
    #[arg(long = "at", value_name = "REV")]
    pub at: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::parse_git_user;

    #[test]
    fn git_user_takes_the_last_non_empty_value_of_each_key() {
        let out = b"user.name\nFirst\0user.email\na@x\0user.name\nSecond\0user.name\0";
        assert_eq!(
            parse_git_user(out),
            (Some("Second".into()), Some("a@x".into())),
            "a key without a value (no LF) is passed over"
        );
        assert_eq!(
            parse_git_user(b"user.name\nN\0user.name\n\0"),
            (None, None),
            "an empty last value leaves the key unset, as `git config --get` prints nothing"
        );
        assert_eq!(parse_git_user(b""), (None, None));
    }
}
