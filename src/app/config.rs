//! Settings files, so a setting need not come from an environment variable that an agent host
//! does not pass: the user's (`~/.config/memoir/config.toml`) and the store's
//! (`<store>/config.toml`). Each setting of a file stands for one environment variable, and the
//! variable wins over the store's file, which wins over the user's: [`Layers::lookup`] is an
//! environment lookup with the files behind it. A face finds the user's file (the library reads
//! no environment) and passes both paths.
//!
//! A secret (an API key) is never kept in a store's file, which travels with the store; in the
//! user's file it is accepted only when no one else can read the file (mode 0600), as ssh
//! treats its keys.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, Value};

use super::env::{parse_seconds, Env};
use crate::memory::{parse_facet_cap, MergePolicy};

/// The store's settings file, in the store directory.
pub const STORE_CONFIG_FILE: &str = "config.toml";

/// A settings file is a few lines; more than this is refused rather than read.
const MAX_CONFIG_BYTES: u64 = 64 << 10;

/// One setting a file may hold, and the environment variable it stands for.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// Its name in a file: `section.name` (a table and a key) or `name`.
    pub key: &'static str,
    /// The environment variable it stands for (which wins over any file).
    pub var: &'static str,
    /// A credential: never in a store's file, and in the user's only at mode 0600.
    pub secret: bool,
    /// What it sets, for `config list` and errors.
    pub about: &'static str,
}

const fn setting(key: &'static str, var: &'static str, about: &'static str) -> Setting {
    Setting {
        key,
        var,
        secret: false,
        about,
    }
}

/// Every setting a file may hold.
pub const SETTINGS: &[Setting] = &[
    setting("author", "MEMOIR_AUTHOR", "commit author"),
    setting(
        "lock_timeout",
        "MEMOIR_LOCK_TIMEOUT",
        "seconds to wait for a busy store",
    ),
    setting(
        "merge_policy",
        "MEMOIR_MERGE_POLICY",
        "write policy at an occupied key",
    ),
    setting(
        "facet_max_entries",
        "MEMOIR_FACET_MAX_ENTRIES",
        "entries kept by append",
    ),
    setting(
        "llm.provider",
        "MEMOIR_LLM_PROVIDER",
        "openai, anthropic or command",
    ),
    setting("llm.model", "MEMOIR_LLM_MODEL", "model name"),
    setting(
        "llm.command",
        "MEMOIR_LLM_COMMAND",
        "model program (prompt on stdin)",
    ),
    setting(
        "llm.base_url",
        "MEMOIR_LLM_BASE_URL",
        "model server base URL",
    ),
    setting(
        "llm.timeout",
        "MEMOIR_LLM_TIMEOUT",
        "seconds per model call",
    ),
    setting(
        "embed.model",
        "MEMOIR_EMBED_MODEL",
        "embedding model: a directory, or openai:NAME",
    ),
    setting(
        "embed.base_url",
        "MEMOIR_EMBED_BASE_URL",
        "embedding endpoint base URL",
    ),
    setting(
        "openai.base_url",
        "OPENAI_BASE_URL",
        "OpenAI-compatible endpoint",
    ),
    Setting {
        key: "openai.api_key",
        var: "OPENAI_API_KEY",
        secret: true,
        about: "OpenAI API key",
    },
    setting(
        "anthropic.base_url",
        "ANTHROPIC_BASE_URL",
        "Anthropic endpoint",
    ),
    Setting {
        key: "anthropic.api_key",
        var: "ANTHROPIC_API_KEY",
        secret: true,
        about: "Anthropic API key",
    },
];

/// The setting named `key`, if there is one.
pub fn setting_named(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// Which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The store's `config.toml`.
    Store,
    /// The user's `config.toml`.
    User,
}

impl Scope {
    /// `store` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Store => "store",
            Scope::User => "user",
        }
    }
}

/// Why a settings file cannot be read, or a setting not set.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The file is not TOML, is too large, or holds a non-table where a table belongs.
    #[error("{}: line {line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No such setting.
    #[error("unknown setting {key:?}{}; settings: {}", hint.as_ref().map(|h| format!(" (did you mean {h:?}?)")).unwrap_or_default(), SETTINGS.iter().map(|s| s.key).collect::<Vec<_>>().join(", "))]
    UnknownKey {
        /// What was asked for.
        key: String,
        /// The nearest setting, if one is near.
        hint: Option<String>,
    },
    /// A value the setting does not accept.
    #[error("{key} = {value:?}: {reason}{}", path.as_ref().map(|p| format!(" (in {})", p.display())).unwrap_or_default())]
    BadValue {
        /// The setting.
        key: String,
        /// The value.
        value: String,
        /// Why it is refused.
        reason: String,
        /// The file it came from, if it came from one.
        path: Option<PathBuf>,
    },
    /// A credential in a store's file, which is shared with the store.
    #[error("{key} is a secret and is never kept in a store's settings ({}); set {var} in the environment or in the user's file", path.display())]
    SecretInStore {
        /// The setting.
        key: String,
        /// Its variable.
        var: String,
        /// The store's file.
        path: PathBuf,
    },
    /// A credential in a user's file that others may read.
    #[error("{} holds {key} but others may read it (mode {mode:o}); run: chmod 600 {}", path.display(), path.display())]
    SecretReadable {
        /// The setting.
        key: String,
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// One settings file as read: missing is empty.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// Where it is (whether or not it exists).
    pub path: PathBuf,
    /// Which file it is.
    pub scope: Scope,
    doc: DocumentMut,
}

impl ConfigFile {
    /// Reads the file at `path` (empty when missing), checking every known setting's value
    /// and where secrets are. Settings it does not know are kept and ignored (a newer memoir
    /// may have written them); [`ConfigFile::unknown`] lists them.
    pub fn read(path: &Path, scope: Scope) -> Result<ConfigFile, ConfigError> {
        let io = |source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        };
        let text = match fs::File::open(path) {
            Ok(f) => {
                let mode = file_mode(&f).map_err(io)?;
                let mut text = String::new();
                f.take(MAX_CONFIG_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(io)?;
                if text.len() as u64 > MAX_CONFIG_BYTES {
                    return Err(ConfigError::Parse {
                        path: path.to_path_buf(),
                        line: 1,
                        message: format!("larger than {} KiB", MAX_CONFIG_BYTES >> 10),
                    });
                }
                Some((text, mode))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let Some((text, mode)) = text else {
            return Ok(ConfigFile {
                path: path.to_path_buf(),
                scope,
                doc: DocumentMut::new(),
            });
        };
        let doc = text
            .parse::<DocumentMut>()
            .map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                line: e
                    .span()
                    .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                    .unwrap_or(1),
                message: e.message().to_string(),
            })?;
        let file = ConfigFile {
            path: path.to_path_buf(),
            scope,
            doc,
        };
        for s in SETTINGS {
            let Some(value) = file.get(s.key)? else {
                continue;
            };
            if s.secret {
                file.check_secret_allowed(s, mode)?;
            }
            check_value(s, &value).map_err(|reason| ConfigError::BadValue {
                key: s.key.into(),
                value,
                reason,
                path: Some(path.to_path_buf()),
            })?;
        }
        Ok(file)
    }

    /// The value of `key` as text (a number or boolean as TOML writes it), if set.
    pub fn get(&self, key: &str) -> Result<Option<String>, ConfigError> {
        let item = match key.split_once('.') {
            Some((table, name)) => match self.doc.get(table) {
                None => return Ok(None),
                Some(t) => match t.as_table_like() {
                    Some(t) => t.get(name),
                    None => return Err(self.not_a_table(table)),
                },
            },
            None => self.doc.get(key),
        };
        Ok(item.and_then(Item::as_value).map(value_text))
    }

    /// Sets `key` to `value` (checked as the setting requires), in memory; [`ConfigFile::save`]
    /// writes it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let s = known(key)?;
        if s.secret {
            self.check_secret_allowed(s, None)?;
        }
        check_value(s, value).map_err(|reason| ConfigError::BadValue {
            key: key.into(),
            value: value.into(),
            reason,
            path: None,
        })?;
        let typed = typed_value(s, value);
        match key.split_once('.') {
            Some((table, name)) => {
                if !self.doc.contains_key(table) {
                    self.doc.insert(table, Item::Table(Table::new()));
                }
                let not_a_table = self.not_a_table(table);
                let t = self
                    .doc
                    .get_mut(table)
                    .and_then(Item::as_table_like_mut)
                    .ok_or(not_a_table)?;
                match t.get_mut(name).and_then(Item::as_value_mut) {
                    Some(v) => replace_keeping_comments(v, typed),
                    None => {
                        t.insert(name, Item::Value(typed));
                    }
                }
            }
            None => match self.doc.get_mut(key).and_then(Item::as_value_mut) {
                Some(v) => replace_keeping_comments(v, typed),
                None => {
                    self.doc.insert(key, Item::Value(typed));
                }
            },
        }
        Ok(())
    }

    /// Removes `key`; whether it was set.
    pub fn unset(&mut self, key: &str) -> Result<bool, ConfigError> {
        known(key)?;
        let removed = match key.split_once('.') {
            Some((table, name)) => {
                let Some(t) = self.doc.get_mut(table).and_then(Item::as_table_like_mut) else {
                    return Ok(false);
                };
                let removed = t.remove(name).is_some();
                if t.is_empty() {
                    self.doc.remove(table);
                }
                removed
            }
            None => self.doc.remove(key).is_some(),
        };
        Ok(removed)
    }

    /// Writes the file whole and durably, replacing the old one in one rename; the user's
    /// file is readable by its owner only.
    pub fn save(&self) -> Result<(), ConfigError> {
        let text = self.doc.to_string();
        let written = match self.scope {
            Scope::User => crate::store::write_atomically_private(&self.path, text.as_bytes()),
            Scope::Store => crate::store::write_atomically(&self.path, text.as_bytes()),
        };
        written.map_err(|e| ConfigError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    }

    /// Names set in the file that are not settings (`table.name` or `name`).
    pub fn unknown(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, item) in self.doc.iter() {
            match item.as_table_like() {
                Some(t) => out.extend(
                    t.iter()
                        .map(|(k, _)| format!("{name}.{k}"))
                        .filter(|k| setting_named(k).is_none()),
                ),
                None if setting_named(name).is_none() => out.push(name.to_string()),
                None => {}
            }
        }
        out
    }

    fn not_a_table(&self, table: &str) -> ConfigError {
        ConfigError::Parse {
            path: self.path.clone(),
            line: 1,
            message: format!("`{table}` must be a table ([{table}])"),
        }
    }

    /// A secret may be in the user's file, when only its owner can read it (`mode`, when the
    /// file exists; a file memoir writes is made so).
    fn check_secret_allowed(&self, s: &Setting, mode: Option<u32>) -> Result<(), ConfigError> {
        match self.scope {
            Scope::Store => Err(ConfigError::SecretInStore {
                key: s.key.into(),
                var: s.var.into(),
                path: self.path.clone(),
            }),
            Scope::User => match mode {
                Some(mode) if mode & 0o077 != 0 => Err(ConfigError::SecretReadable {
                    key: s.key.into(),
                    path: self.path.clone(),
                    mode: mode & 0o777,
                }),
                _ => Ok(()),
            },
        }
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An environment variable.
    Env(&'static str),
    /// A settings file.
    File(Scope, PathBuf),
}

/// The settings files behind the environment: the store's, then the user's.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// The store's file, when the store has one to read.
    pub store: Option<ConfigFile>,
    /// The user's file.
    pub user: Option<ConfigFile>,
}

impl Layers {
    /// The value of variable `var` from the files alone: the store's, else the user's.
    pub fn from_files(&self, var: &str) -> Option<(String, Origin)> {
        let s = SETTINGS.iter().find(|s| s.var == var)?;
        [&self.store, &self.user]
            .into_iter()
            .flatten()
            .find_map(|f| {
                let v = f.get(s.key).ok().flatten().filter(|v| !v.is_empty())?;
                Some((v, Origin::File(f.scope, f.path.clone())))
            })
    }

    /// An environment lookup with the files behind it: `env`'s value when it has a non-empty
    /// one, else the store's file, else the user's.
    pub fn lookup<'a>(
        &'a self,
        env: impl Fn(&str) -> Option<String> + 'a,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |var| {
            env(var)
                .filter(|v| !v.is_empty())
                .or_else(|| self.from_files(var).map(|(v, _)| v))
        }
    }

    /// A setting's value and where it came from, `env` first.
    pub fn resolve(
        &self,
        s: &Setting,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<(String, Origin)> {
        match env(s.var).filter(|v| !v.is_empty()) {
            Some(v) => Some((v, Origin::Env(s.var))),
            None => self.from_files(s.var),
        }
    }
}

/// The setting named `key`, or an error naming the nearest.
pub(super) fn known(key: &str) -> Result<&'static Setting, ConfigError> {
    setting_named(key).ok_or_else(|| ConfigError::UnknownKey {
        key: key.into(),
        hint: SETTINGS
            .iter()
            .map(|s| (strsim::levenshtein(key, s.key), s.key))
            .filter(|(d, k)| *d <= 3.max(k.len() / 3))
            .min()
            .map(|(_, k)| k.to_string()),
    })
}

/// Whether `value` is one the setting takes, by the parser its variable goes through.
fn check_value(s: &Setting, value: &str) -> Result<(), String> {
    let env = Env::new(|name: &str| (name == s.var).then(|| value.to_string()));
    if value.trim().is_empty() {
        return Err("empty".into());
    }
    match s.key {
        "lock_timeout" | "llm.timeout" => parse_seconds(value)
            .filter(|d| s.key == "lock_timeout" || !d.is_zero())
            .map(drop)
            .ok_or_else(|| "not a number of seconds".to_string()),
        "merge_policy" => value
            .parse::<MergePolicy>()
            .map(drop)
            .map_err(|e| e.to_string()),
        "facet_max_entries" => parse_facet_cap(Some(value))
            .map(drop)
            .map_err(|e| e.to_string()),
        "llm.provider" => match value.to_ascii_lowercase().as_str() {
            "openai" | "anthropic" | "command" => Ok(()),
            _ => Err("expected openai, anthropic or command".into()),
        },
        k if k.ends_with("base_url") => {
            if value.starts_with("http://") || value.starts_with("https://") {
                Ok(())
            } else {
                Err("not an http:// or https:// URL".into())
            }
        }
        _ => env.var(s.var).map(drop).ok_or_else(|| "empty".into()),
    }
}

/// The TOML value a setting is written as: numbers as numbers, the rest as strings.
fn typed_value(s: &Setting, value: &str) -> Value {
    let numeric = matches!(s.key, "lock_timeout" | "llm.timeout" | "facet_max_entries");
    if numeric {
        if let Ok(i) = value.trim().parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(x) = value.trim().parse::<f64>() {
            return Value::from(x);
        }
    }
    Value::from(value)
}

/// Puts `new` where `old` is, keeping the spacing and comment around it.
fn replace_keeping_comments(old: &mut Value, new: Value) {
    let decor = old.decor().clone();
    *old = new;
    *old.decor_mut() = decor;
}

/// A value as its variable would hold it.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        other => other.clone().decorated("", "").to_string(),
    }
}

/// A file's permission bits (`None` where there are none to read).
fn file_mode(f: &fs::File) -> std::io::Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(Some(f.metadata()?.permissions().mode()))
    }
    #[cfg(not(unix))]
    {
        let _ = f;
        Ok(None)
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
