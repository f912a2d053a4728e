//! The context every command runs in: store path, output settings, clock, environment; and
//! the helpers commands share (opening the store, choosing the branch to read or write,
//! resolving revisions, signatures).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use memoir::app::{Clock, Memoir, Options, Outcome, ReadPoint, WriteAs};
use memoir::llm::{ProviderConfig, ProviderKind, ANTHROPIC_BASE_URL, OPENAI_BASE_URL};
use memoir::memory::{parse_facet_cap, FacetCap, MergePolicy};

use super::output::{esc, CliError, Printer, Report, Style};

/// Reads an environment variable; empty counts as unset.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether an environment flag is on (`1`, `true`, `yes`, `on`).
pub fn env_flag(name: &str) -> bool {
    env_var(name).is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// The clock of `MEMOIR_NOW` (unix seconds, for reproducible ids and output in tests), else
/// the system clock.
/// The latest `MEMOIR_NOW`: 9999-12-31T23:59:59Z, the last second ISO 8601 dates can show.
const MAX_NOW: f64 = 253_402_300_799.0;

pub fn clock_from_env() -> Result<Clock, CliError> {
    match env_var("MEMOIR_NOW") {
        None => Ok(Clock::system()),
        Some(t) => t
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && (0.0..=MAX_NOW).contains(x))
            .map(Clock::fixed)
            .ok_or_else(|| {
                CliError::invalid(format!(
                    "MEMOIR_NOW={t:?} is not unix seconds between 0 and {MAX_NOW} (year 9999)"
                ))
            }),
    }
}

/// The model the environment configures, if any; a malformed or incomplete setting is an
/// error (exit 1).
///
/// The provider: `MEMOIR_LLM_PROVIDER` if set; else `command` when `MEMOIR_LLM_COMMAND` is
/// set; else OpenAI-compatible when `MEMOIR_LLM_BASE_URL`, `OPENAI_BASE_URL` or
/// `OPENAI_API_KEY` is set; else Anthropic when `ANTHROPIC_API_KEY` or `ANTHROPIC_BASE_URL`
/// is set. The base URL: `MEMOIR_LLM_BASE_URL` (memoir's own wins), else the provider's
/// (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), else the provider's public API; with or
/// without `/v1`. The key: `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`; without one no
/// authorisation header is sent (local servers need none), and the provider's public API
/// without a key is refused here. How the choice was made, and which other provider's
/// variables are set but unused, is the configuration's `origin` (`status` and `-v` show
/// it).
pub fn llm_config_from_env() -> Result<Option<ProviderConfig>, CliError> {
    let timeout = match env_var("MEMOIR_LLM_TIMEOUT") {
        Some(t) => t
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0 && *x < 1e6)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| CliError::invalid(format!("MEMOIR_LLM_TIMEOUT={t:?} is not seconds")))?,
        None => Duration::from_secs(30),
    };
    let set = |names: &[&'static str]| -> Vec<&'static str> {
        names
            .iter()
            .copied()
            .filter(|n| env_var(n).is_some())
            .collect()
    };
    let command = env_var("MEMOIR_LLM_COMMAND");
    let openai = set(&["MEMOIR_LLM_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"]);
    let anthropic = set(&["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]);
    let (kind, mut origin) = match env_var("MEMOIR_LLM_PROVIDER")
        .map(|p| p.to_ascii_lowercase())
        .as_deref()
    {
        Some(p @ ("command" | "openai" | "anthropic")) => {
            (kind_of(p), format!("MEMOIR_LLM_PROVIDER={p}"))
        }
        Some(other) => {
            return Err(CliError::invalid(format!(
                "MEMOIR_LLM_PROVIDER={other:?}: expected openai, anthropic or command"
            )))
        }
        None if command.is_some() => ("command", "MEMOIR_LLM_COMMAND is set".to_string()),
        None if !openai.is_empty() => ("openai", format!("{} set", are(&openai))),
        None if !anthropic.is_empty() => ("anthropic", format!("{} set", are(&anthropic))),
        None => return Ok(None),
    };
    // Say what else is set and unused, and how to choose it instead.
    let mut unused = Vec::new();
    if kind != "command" && command.is_some() {
        unused.push("MEMOIR_LLM_COMMAND (MEMOIR_LLM_PROVIDER=command uses it)".to_string());
    }
    // MEMOIR_LLM_BASE_URL is every HTTP provider's base URL.
    let openai_only: Vec<&str> = openai
        .iter()
        .copied()
        .filter(|n| kind == "command" || *n != "MEMOIR_LLM_BASE_URL")
        .collect();
    if kind != "openai" && !openai_only.is_empty() {
        unused.push(format!(
            "{} (MEMOIR_LLM_PROVIDER=openai uses it)",
            openai_only.join(", ")
        ));
    }
    if kind != "anthropic" && !anthropic.is_empty() {
        unused.push(format!(
            "{} (MEMOIR_LLM_PROVIDER=anthropic uses it)",
            anthropic.join(", ")
        ));
    }
    let memoir_base = env_var("MEMOIR_LLM_BASE_URL");
    let (own_base, own_base_name, own_key, default_base) = match kind {
        "openai" => (
            "OPENAI_BASE_URL",
            "OpenAI",
            "OPENAI_API_KEY",
            OPENAI_BASE_URL,
        ),
        _ => (
            "ANTHROPIC_BASE_URL",
            "Anthropic",
            "ANTHROPIC_API_KEY",
            ANTHROPIC_BASE_URL,
        ),
    };
    if kind != "command" && memoir_base.is_some() && env_var(own_base).is_some() {
        unused.push(format!("{own_base} (MEMOIR_LLM_BASE_URL wins)"));
    }
    if !unused.is_empty() {
        origin.push_str(&format!("; also set but unused: {}", unused.join("; ")));
    }
    let model = env_var("MEMOIR_LLM_MODEL");
    let cfg = if kind == "command" {
        let line = command.ok_or_else(|| {
            CliError::invalid("MEMOIR_LLM_PROVIDER=command needs MEMOIR_LLM_COMMAND")
        })?;
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        ProviderConfig {
            kind: ProviderKind::Command(argv),
            base_url: String::new(),
            api_key: None,
            model: model.unwrap_or_default(),
            timeout,
            max_tokens: 512,
            origin,
        }
    } else {
        let base_url = memoir_base.or_else(|| env_var(own_base));
        let api_key = env_var(own_key);
        if base_url.is_none() && api_key.is_none() {
            return Err(CliError::invalid(format!(
                "MEMOIR_LLM_PROVIDER={kind} needs {own_key} for the {own_base_name} API, or a \
                 base URL (MEMOIR_LLM_BASE_URL or {own_base}) of a server that needs no key"
            )));
        }
        let (kind, default_model) = match kind {
            "openai" => (ProviderKind::OpenAi, "gpt-4o-mini"),
            _ => (ProviderKind::Anthropic, "claude-haiku-4-5"),
        };
        ProviderConfig {
            kind,
            base_url: base_url.unwrap_or_else(|| default_base.into()),
            api_key,
            model: model.unwrap_or_else(|| default_model.into()),
            timeout,
            max_tokens: 512,
            origin,
        }
    };
    Ok(Some(cfg))
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

/// The provider a `MEMOIR_LLM_PROVIDER` value names (already checked).
fn kind_of(p: &str) -> &'static str {
    match p {
        "command" => "command",
        "openai" => "openai",
        _ => "anthropic",
    }
}

/// `A is` / `A, B are`: the variables of a list, for a sentence.
fn are(names: &[&str]) -> String {
    match names {
        [one] => format!("{one} is"),
        many => format!("{} are", many.join(", ")),
    }
}

/// The merge policy of `MEMOIR_MERGE_POLICY`, if set (malformed: exit 1).
pub fn merge_policy_from_env() -> Result<Option<MergePolicy>, CliError> {
    match env_var("MEMOIR_MERGE_POLICY") {
        Some(p) => Ok(Some(p.parse::<MergePolicy>().map_err(|e| {
            CliError::invalid(format!("MEMOIR_MERGE_POLICY: {e}"))
        })?)),
        None => Ok(None),
    }
}

/// The facet cap of `MEMOIR_FACET_MAX_ENTRIES` (malformed: exit 1).
pub fn facet_cap_from_env() -> Result<FacetCap, CliError> {
    parse_facet_cap(env_var("MEMOIR_FACET_MAX_ENTRIES").as_deref())
        .map_err(|e| CliError::invalid(format!("MEMOIR_FACET_MAX_ENTRIES: {e}")))
}

/// Decoded tree nodes a read that visits each node once keeps (see [`Options::node_cache`]):
/// enough for the upper levels a command's lookups share.
pub(super) const ONE_SHOT_NODE_CACHE: usize = 64;

/// The application's options from the global flags and the environment. Settings only some
/// commands use (the model, the merge policy, the facet cap) are taken as they parse; the
/// commands that use them check them first with the `*_from_env` functions, so a malformed
/// one fails those commands only. The S3 settings (from the AWS profile files) are read only
/// for a command that talks to remotes, and a read that visits each node once keeps few.
pub(super) fn options_from_env(
    lock_timeout: Duration,
    clock: Clock,
    command: &super::commands::Command,
) -> Options {
    Options {
        lock_timeout,
        clock,
        keep_open: false,
        llm: llm_config_from_env().ok().flatten(),
        merge_policy: merge_policy_from_env().ok().flatten(),
        facet_cap: facet_cap_from_env().unwrap_or_default(),
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
    }
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
    /// The store directory (`-s`, `MEMOIR_STORE`, else the current directory).
    pub store_path: PathBuf,
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
