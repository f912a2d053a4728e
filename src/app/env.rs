//! Options from environment variables. The library reads no environment: a face passes a
//! lookup (its process's environment, usually) and decides what a malformed setting costs.

use std::time::Duration;

use super::{Clock, MemoirError, MemoirResult, Options};
use crate::llm::{ProviderConfig, ProviderKind, ANTHROPIC_BASE_URL, OPENAI_BASE_URL};
use crate::memory::{parse_facet_cap, FacetCap, MergePolicy};

/// The latest `MEMOIR_NOW`: 9999-12-31T23:59:59Z, the last second ISO 8601 dates can show.
pub const MAX_NOW: f64 = 253_402_300_799.0;

/// Environment variables read through a lookup; an empty value counts as unset.
pub struct Env<F>(F);

impl<F: Fn(&str) -> Option<String>> Env<F> {
    /// The variables `lookup` gives (`std::env::var(name).ok()`, typically).
    pub fn new(lookup: F) -> Self {
        Env(lookup)
    }

    /// A variable's value; empty counts as unset.
    pub fn var(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.is_empty())
    }

    /// Whether a flag is on (`1`, `true`, `yes`, `on`).
    pub fn flag(&self, name: &str) -> bool {
        self.var(name).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }

    /// The clock of `MEMOIR_NOW` (unix seconds, for reproducible ids and output), else the
    /// system clock.
    pub fn clock(&self) -> MemoirResult<Clock> {
        match self.var("MEMOIR_NOW") {
            None => Ok(Clock::system()),
            Some(t) => t
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && (0.0..=MAX_NOW).contains(x))
                .map(Clock::fixed)
                .ok_or_else(|| {
                    MemoirError::invalid(format!(
                        "MEMOIR_NOW={t:?} is not unix seconds between 0 and {MAX_NOW} (year 9999)"
                    ))
                }),
        }
    }

    /// The lock wait of `MEMOIR_LOCK_TIMEOUT` (seconds, at least 0, under 10⁹), if set.
    pub fn lock_timeout(&self) -> MemoirResult<Option<Duration>> {
        self.var("MEMOIR_LOCK_TIMEOUT")
            .map(|t| {
                parse_seconds(&t).ok_or_else(|| {
                    MemoirError::invalid(format!("MEMOIR_LOCK_TIMEOUT={t:?} is not seconds"))
                })
            })
            .transpose()
    }

    /// The embedding model the environment configures, if any: `MEMOIR_EMBED_MODEL` names a
    /// model directory, or `openai:NAME` for a model behind an OpenAI-compatible
    /// `/v1/embeddings` endpoint at `MEMOIR_EMBED_BASE_URL` (else `OPENAI_BASE_URL`, else
    /// OpenAI's), with `OPENAI_API_KEY` as its key when set and `MEMOIR_LLM_TIMEOUT` (30 s
    /// by default) per request. A base URL without a model, or `openai:` without a name, is
    /// an error (exit 1).
    pub fn embed(&self) -> MemoirResult<Option<crate::embed::EmbedConfig>> {
        use crate::embed::EmbedConfig;
        let Some(model) = self.var("MEMOIR_EMBED_MODEL") else {
            return match self.var("MEMOIR_EMBED_BASE_URL") {
                Some(_) => Err(MemoirError::invalid(
                    "MEMOIR_EMBED_BASE_URL is set but MEMOIR_EMBED_MODEL is not: set it to \
                     openai:NAME to use the endpoint",
                )),
                None => Ok(None),
            };
        };
        let model = model.trim();
        let Some(name) = model.strip_prefix("openai:") else {
            return Ok(Some(EmbedConfig::Local {
                dir: std::path::PathBuf::from(model),
            }));
        };
        if name.trim().is_empty() {
            return Err(MemoirError::invalid(
                "MEMOIR_EMBED_MODEL=openai: needs a model name (openai:NAME)",
            ));
        }
        let timeout = self
            .var("MEMOIR_LLM_TIMEOUT")
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x > 0.0 && *x < 1e6)
            .map_or(Duration::from_secs(30), Duration::from_secs_f64);
        Ok(Some(EmbedConfig::OpenAi {
            model: name.trim().to_string(),
            base_url: self
                .var("MEMOIR_EMBED_BASE_URL")
                .or_else(|| self.var("OPENAI_BASE_URL"))
                .unwrap_or_else(|| OPENAI_BASE_URL.to_string()),
            api_key: self.var("OPENAI_API_KEY"),
            timeout,
        }))
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
    ///
    /// `MEMOIR_LLM_BACKEND=claude-cli` (also `claude_cli`, `cli`) sends prompts through the
    /// `claude` command instead ([`Env::claude_cli`]); `direct` (also `litellm`, `api`)
    /// keeps to the HTTP providers. Without either, a Claude model (`MEMOIR_LLM_MODEL`, or
    /// `MEMOIR_LLM_PROVIDER=anthropic`) with no `ANTHROPIC_API_KEY` and no base URL falls
    /// back to the `claude` command when one is on `PATH`.
    pub fn llm(&self) -> MemoirResult<Option<ProviderConfig>> {
        let timeout_set = match self.var("MEMOIR_LLM_TIMEOUT") {
            Some(t) => Some(
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x < 1e6)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| {
                        MemoirError::invalid(format!("MEMOIR_LLM_TIMEOUT={t:?} is not seconds"))
                    })?,
            ),
            None => None,
        };
        let timeout = timeout_set.unwrap_or(Duration::from_secs(30));
        let backend = self
            .var("MEMOIR_LLM_BACKEND")
            .map(|b| b.trim().to_ascii_lowercase());
        let direct = match backend.as_deref() {
            None => false,
            Some("claude-cli" | "claude_cli" | "cli") => {
                let origin = "MEMOIR_LLM_BACKEND=claude-cli".to_string();
                return self.claude_cli(timeout_set, origin).map(Some);
            }
            Some("direct" | "litellm" | "api") => true,
            Some(other) => {
                return Err(MemoirError::invalid(format!(
                    "MEMOIR_LLM_BACKEND={other:?}: expected claude-cli (the `claude` command) \
                     or direct (the HTTP providers)"
                )))
            }
        };
        // A Claude model without a key, and the `claude` command at hand.
        let claude_fallback = |why: &str| -> MemoirResult<Option<ProviderConfig>> {
            if direct || self.var("ANTHROPIC_API_KEY").is_some() || !self.claude_on_path() {
                return Ok(None);
            }
            let origin = format!("{why}; the claude command on PATH answers");
            self.claude_cli(timeout_set, origin).map(Some)
        };
        let set = |names: &[&'static str]| -> Vec<&'static str> {
            names
                .iter()
                .copied()
                .filter(|n| self.var(n).is_some())
                .collect()
        };
        let command = self.var("MEMOIR_LLM_COMMAND");
        let openai = set(&["MEMOIR_LLM_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"]);
        let anthropic = set(&["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]);
        let (kind, mut origin) = match self
            .var("MEMOIR_LLM_PROVIDER")
            .map(|p| p.to_ascii_lowercase())
            .as_deref()
        {
            Some(p @ ("command" | "openai" | "anthropic")) => {
                (kind_of(p), format!("MEMOIR_LLM_PROVIDER={p}"))
            }
            Some(other) => {
                return Err(MemoirError::invalid(format!(
                    "MEMOIR_LLM_PROVIDER={other:?}: expected openai, anthropic or command"
                )))
            }
            None if command.is_some() => ("command", "MEMOIR_LLM_COMMAND is set".to_string()),
            None if !openai.is_empty() => ("openai", format!("{} set", are(&openai))),
            None if !anthropic.is_empty() => ("anthropic", format!("{} set", are(&anthropic))),
            None => {
                return match self.var("MEMOIR_LLM_MODEL") {
                    Some(m) if is_claude_model(&m) => claude_fallback(&format!(
                        "MEMOIR_LLM_MODEL={m} names a Claude model and no ANTHROPIC_API_KEY is set"
                    )),
                    _ => Ok(None),
                }
            }
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
        let memoir_base = self.var("MEMOIR_LLM_BASE_URL");
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
        if kind != "command" && memoir_base.is_some() && self.var(own_base).is_some() {
            unused.push(format!("{own_base} (MEMOIR_LLM_BASE_URL wins)"));
        }
        if !unused.is_empty() {
            origin.push_str(&format!("; also set but unused: {}", unused.join("; ")));
        }
        let model = self.var("MEMOIR_LLM_MODEL");
        let cfg = if kind == "command" {
            let line = command.ok_or_else(|| {
                MemoirError::invalid("MEMOIR_LLM_PROVIDER=command needs MEMOIR_LLM_COMMAND")
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
            let base_url = memoir_base.or_else(|| self.var(own_base));
            let api_key = self.var(own_key);
            if base_url.is_none() && api_key.is_none() {
                if kind == "anthropic" {
                    if let Some(cfg) =
                        claude_fallback("MEMOIR_LLM_PROVIDER=anthropic and no ANTHROPIC_API_KEY")?
                    {
                        return Ok(Some(cfg));
                    }
                }
                return Err(MemoirError::invalid(format!(
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

    /// The `claude-cli` provider: `claude -p --model M` with the options that keep a
    /// model call plain (no session saved, no MCP servers, slash commands or settings files
    /// of the user; `--bare` when `ANTHROPIC_API_KEY` is set), the prompt on stdin, run from
    /// the temporary directory. The model is `MEMOIR_LLM_MODEL` (default
    /// `claude-haiku-4-5`; an `anthropic/` prefix is dropped), which must be a Claude model;
    /// the timeout `MEMOIR_LLM_TIMEOUT`, else 180 s (a `claude` process starts slowly).
    pub fn claude_cli(
        &self,
        timeout: Option<Duration>,
        origin: String,
    ) -> MemoirResult<ProviderConfig> {
        let model = self
            .var("MEMOIR_LLM_MODEL")
            .unwrap_or_else(|| CLAUDE_CLI_MODEL.to_string());
        let model = model
            .strip_prefix("anthropic/")
            .unwrap_or(&model)
            .to_string();
        if !is_claude_model(&model) {
            return Err(MemoirError::invalid(format!(
                "MEMOIR_LLM_MODEL={model:?} is not a Claude model; the claude-cli backend runs \
                 Claude models only (haiku, sonnet, opus, claude-...)"
            )));
        }
        let mut argv: Vec<String> = [
            "claude",
            "-p",
            "--model",
            &model,
            "--no-session-persistence",
            "--strict-mcp-config",
            "--mcp-config",
            r#"{"mcpServers":{}}"#,
            "--disable-slash-commands",
            "--setting-sources",
            "",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        if self.var("ANTHROPIC_API_KEY").is_some() {
            argv.push("--bare".into());
        }
        let dir = self.var("TMPDIR").map_or_else(
            || std::path::PathBuf::from("/tmp"),
            std::path::PathBuf::from,
        );
        Ok(ProviderConfig {
            kind: ProviderKind::ClaudeCli { argv, dir },
            base_url: String::new(),
            api_key: None,
            model,
            timeout: timeout.unwrap_or(Duration::from_secs(180)),
            max_tokens: 512,
            origin,
        })
    }

    /// Whether a `claude` program is in one of `PATH`'s directories.
    fn claude_on_path(&self) -> bool {
        self.var("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("claude").is_file()))
    }

    /// The merge policy of `MEMOIR_MERGE_POLICY`, if set.
    pub fn merge_policy(&self) -> MemoirResult<Option<MergePolicy>> {
        self.var("MEMOIR_MERGE_POLICY")
            .map(|p| {
                p.parse::<MergePolicy>()
                    .map_err(|e| MemoirError::invalid(format!("MEMOIR_MERGE_POLICY: {e}")))
            })
            .transpose()
    }

    /// The facet cap of `MEMOIR_FACET_MAX_ENTRIES`.
    pub fn facet_cap(&self) -> MemoirResult<FacetCap> {
        parse_facet_cap(self.var("MEMOIR_FACET_MAX_ENTRIES").as_deref())
            .map_err(|e| MemoirError::invalid(format!("MEMOIR_FACET_MAX_ENTRIES: {e}")))
    }
}

/// Seconds as a duration: finite, at least 0, under 10⁹.
pub fn parse_seconds(s: &str) -> Option<Duration> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0 && *x < 1e9)
        .map(Duration::from_secs_f64)
}

impl Options {
    /// Options from the environment variables `lookup` gives (empty counts as unset):
    /// `MEMOIR_NOW` and `MEMOIR_LOCK_TIMEOUT`, which must parse; the model
    /// ([`Env::llm`]), `MEMOIR_MERGE_POLICY` and `MEMOIR_FACET_MAX_ENTRIES`, which only some
    /// operations use, taken when they parse and left unset otherwise (a face checks them
    /// with [`Env`] before such an operation). A face that takes a setting elsewhere (a
    /// flag, an argument) hides its variable from `lookup`. The scratch directory, node
    /// cache and S3 settings are the defaults.
    pub fn from_env_lookup(lookup: impl Fn(&str) -> Option<String>) -> MemoirResult<Options> {
        let env = Env::new(lookup);
        let defaults = Options::default();
        Ok(Options {
            lock_timeout: env.lock_timeout()?.unwrap_or(defaults.lock_timeout),
            clock: env.clock()?,
            llm: env.llm().ok().flatten(),
            embed: env.embed().ok().flatten(),
            merge_policy: env.merge_policy().ok().flatten(),
            facet_cap: env.facet_cap().unwrap_or_default(),
            ..defaults
        })
    }
}

/// The model the `claude-cli` backend uses unless `MEMOIR_LLM_MODEL` names another.
pub const CLAUDE_CLI_MODEL: &str = "claude-haiku-4-5";

/// Whether a model name is a Claude model's (`claude-...`, or a `haiku`, `sonnet` or `opus`
/// alias).
pub fn is_claude_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    ["claude", "haiku", "sonnet", "opus"]
        .iter()
        .any(|k| m.contains(k))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn embedding_models_are_a_directory_or_an_endpoint() {
        use crate::embed::EmbedConfig;
        let env = Env::new(lookup(&[]));
        assert_eq!(env.embed().unwrap(), None);
        let env = Env::new(lookup(&[("MEMOIR_EMBED_MODEL", "models/minilm")]));
        assert_eq!(
            env.embed().unwrap(),
            Some(EmbedConfig::Local {
                dir: "models/minilm".into()
            })
        );
        let env = Env::new(lookup(&[
            ("MEMOIR_EMBED_MODEL", "openai:nomic"),
            ("MEMOIR_EMBED_BASE_URL", "http://127.0.0.1:11434"),
            ("OPENAI_BASE_URL", "http://elsewhere"),
            ("OPENAI_API_KEY", "k"),
        ]));
        let Some(EmbedConfig::OpenAi {
            model,
            base_url,
            api_key,
            ..
        }) = env.embed().unwrap()
        else {
            panic!("an endpoint")
        };
        assert_eq!(
            (model.as_str(), base_url.as_str(), api_key.as_deref()),
            ("nomic", "http://127.0.0.1:11434", Some("k"))
        );
        for bad in [
            &[("MEMOIR_EMBED_MODEL", "openai: ")][..],
            &[("MEMOIR_EMBED_BASE_URL", "http://127.0.0.1:1")][..],
        ] {
            let e = Env::new(lookup(bad)).embed().unwrap_err();
            assert_eq!(e.code(), crate::app::exit::ERROR, "{e}");
        }
    }

    #[test]
    fn settings_some_operations_use_are_left_unset_when_malformed() {
        let vars = &[
            ("MEMOIR_NOW", "1767323045"),
            ("MEMOIR_LOCK_TIMEOUT", "0.5"),
            ("MEMOIR_MERGE_POLICY", "bogus"),
            ("MEMOIR_LLM_PROVIDER", "nobody"),
            ("MEMOIR_FACET_MAX_ENTRIES", "-3"),
        ];
        let o = Options::from_env_lookup(lookup(vars)).unwrap();
        assert_eq!(o.lock_timeout, Duration::from_millis(500));
        assert!(o.llm.is_none() && o.merge_policy.is_none());
        let env = Env::new(lookup(vars));
        assert!(env.merge_policy().is_err() && env.llm().is_err() && env.facet_cap().is_err());
    }

    fn owned(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_claude_cli_backend_and_its_fallback() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().to_str().unwrap();
        let forced = Env::new(owned(&[("MEMOIR_LLM_BACKEND", "claude-cli")]));
        let cfg = forced.llm().unwrap().unwrap();
        assert_eq!(cfg.provider_name(), "claude-cli");
        assert_eq!(cfg.model, "claude-haiku-4-5");
        assert_eq!(cfg.timeout, Duration::from_secs(180));
        assert!(cfg
            .endpoint()
            .starts_with("claude -p --model claude-haiku-4-5"));
        let gpt = [
            ("MEMOIR_LLM_BACKEND", "cli"),
            ("MEMOIR_LLM_MODEL", "gpt-4o"),
        ];
        assert!(Env::new(owned(&gpt)).llm().is_err());
        // A Claude model and no key: the `claude` command, once one is on PATH.
        let vars = [("MEMOIR_LLM_MODEL", "claude-sonnet-4-5"), ("PATH", path)];
        assert!(Env::new(owned(&vars)).llm().unwrap().is_none());
        std::fs::write(d.path().join("claude"), "").unwrap();
        let cfg = Env::new(owned(&vars)).llm().unwrap().unwrap();
        assert_eq!(
            (cfg.provider_name(), cfg.model.as_str()),
            ("claude-cli", "claude-sonnet-4-5")
        );
        let direct = [
            ("MEMOIR_LLM_MODEL", "claude-sonnet-4-5"),
            ("PATH", path),
            ("MEMOIR_LLM_BACKEND", "direct"),
        ];
        assert!(Env::new(owned(&direct)).llm().unwrap().is_none());
        let keyed = [("MEMOIR_LLM_PROVIDER", "anthropic"), ("PATH", path)];
        assert_eq!(
            Env::new(owned(&keyed))
                .llm()
                .unwrap()
                .unwrap()
                .provider_name(),
            "claude-cli"
        );
        assert!(Env::new(owned(&[("MEMOIR_LLM_BACKEND", "bogus")]))
            .llm()
            .is_err());
    }

    #[test]
    fn a_malformed_clock_or_lock_wait_is_an_error_and_empty_is_unset() {
        for vars in [
            &[("MEMOIR_NOW", "soon")][..],
            &[("MEMOIR_NOW", "1e20")],
            &[("MEMOIR_LOCK_TIMEOUT", "-1")],
        ] {
            let vars: &'static [(&str, &str)] = vars;
            assert!(Options::from_env_lookup(lookup(vars)).is_err(), "{vars:?}");
        }
        let o = Options::from_env_lookup(lookup(&[("MEMOIR_NOW", ""), ("OPENAI_API_KEY", "k")]));
        let o = o.unwrap();
        assert_eq!(o.llm.map(|c| c.provider_name()), Some("openai"));
    }
}
