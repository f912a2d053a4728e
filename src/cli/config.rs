//! `memoir config get|set|unset|list [--store|--user]`: settings files, so a setting need not
//! come from an environment variable an agent host does not pass.

use memoir::app::config::Scope;
use memoir::app::{ConfigSetOutcome, SettingItem};

use super::context::{process_env, user_config_path, Ctx};
use super::output::{esc, CliError, Report};

/// Read and change settings: the store's config.toml and yours
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Settings: author, lock_timeout, merge_policy, facet_max_entries, \
llm.provider, llm.model, llm.command, llm.base_url, llm.timeout, openai.base_url, \
openai.api_key, anthropic.base_url, anthropic.api_key. A flag wins over the environment \
variable, which wins over the store's file, which wins over yours \
($XDG_CONFIG_HOME/memoir/config.toml, else ~/.config/memoir/config.toml). API keys are \
never kept in a store's file.\n\nExamples:\n  memoir config set llm.model qwen2.5-7b --user\n  \
memoir config set merge_policy append        # this store\n  memoir config list                           # each with where it comes from\n  \
memoir config get llm.model"
)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Print a setting's value (JSON adds where it comes from)
    Get {
        /// The setting, e.g. llm.model
        key: String,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Set a setting in the store's file (or yours, with --user)
    Set {
        /// The setting, e.g. llm.model
        key: String,
        /// Its value
        value: String,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// Remove a setting from the store's file (or yours, with --user)
    Unset {
        /// The setting, e.g. llm.model
        key: String,
        #[command(flatten)]
        scope: ScopeArgs,
    },
    /// The settings in effect, each with where it comes from
    List {
        #[command(flatten)]
        scope: ScopeArgs,
    },
}

#[derive(Debug, clap::Args)]
struct ScopeArgs {
    /// The store's settings file only (<store>/config.toml; `--store` names the store)
    #[arg(long, conflicts_with = "user")]
    local: bool,
    /// Your settings file only
    #[arg(long, visible_alias = "global")]
    user: bool,
}

impl ScopeArgs {
    fn scope(&self) -> Option<Scope> {
        match (self.local, self.user) {
            (true, _) => Some(Scope::Store),
            (_, true) => Some(Scope::User),
            _ => None,
        }
    }
}

/// Runs `config`.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let user = user_config_path();
    let user = user.as_deref();
    let env = |name: &str| process_env().var(name);
    match args.action {
        Action::Get { key, scope } => {
            let out = ctx.app.config_get(&key, scope.scope(), user, env)?;
            Ok(ctx.report(&out).line(esc(&out.item.value)))
        }
        Action::List { scope } => {
            let out = ctx.app.config_list(scope.scope(), user, env)?;
            let mut r = ctx.report(&out);
            for s in &out.settings {
                r = r.line(list_line(s));
            }
            Ok(r)
        }
        Action::Set { key, value, scope } => {
            let out = ctx.app.config_set(&key, &value, scope.scope(), user, env)?;
            Ok(set_report(ctx, &out))
        }
        Action::Unset { key, scope } => {
            let out = ctx.app.config_unset(&key, scope.scope(), user, env)?;
            Ok(set_report(ctx, &out))
        }
    }
}

/// `origin<TAB>key=value`, as `git config --list --show-origin` prints; a name this version
/// does not know says it is ignored.
fn list_line(s: &SettingItem) -> String {
    let ignored = if s.variable.is_none() {
        "\t(unknown, ignored)"
    } else {
        ""
    };
    esc(&format!("{}\t{}={}{ignored}", s.origin, s.key, s.value))
}

fn set_report(ctx: &Ctx, out: &ConfigSetOutcome) -> Report {
    let file = format!("the {} settings ({})", out.scope, out.path.display());
    let line = match (&out.value, out.changed) {
        (Some(v), true) => format!("Set {}={v} in {file}", out.key),
        (Some(v), false) => format!("{}={v} already in {file}", out.key),
        (None, true) => format!("Unset {} in {file}", out.key),
        (None, false) => format!("{} was not set in {file}", out.key),
    };
    let mut r = ctx.report(out).line(ctx.style.ok(&esc(&line)));
    if let Some(var) = out.overridden_by {
        r.warnings.push(
            ctx.printer
                .err
                .info(&format!("{var} is set in the environment and wins here")),
        );
    }
    r
}
