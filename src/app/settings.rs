//! `config get|set|unset|list`: the settings in effect, each with where it comes from, and
//! edits of one settings file (see [`super::config`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::config::{
    ConfigError, ConfigFile, Layers, Origin, Scope, Setting, SETTINGS, STORE_CONFIG_FILE,
};
use super::{exit, Memoir, MemoirError, MemoirResult, Outcome};
use crate::store::FORMAT_FILE;

/// What a secret's value is shown as: its presence, never its text (agents' transcripts and
/// terminals keep what is printed).
const HIDDEN: &str = "<secret>";

/// One setting in effect, or one set in a file.
#[derive(Debug, Clone, Serialize)]
pub struct SettingItem {
    /// Its name in a file (`llm.model`).
    pub key: String,
    /// Its value (a secret's is hidden).
    pub value: String,
    /// Where it comes from: `env`, `store` or `user`.
    pub scope: &'static str,
    /// The variable or the file it comes from, as `git config --show-origin` says it:
    /// `env:MEMOIR_LLM_MODEL`, `store:/path/config.toml`, `user:/path/config.toml`.
    pub origin: String,
    /// The environment variable the setting stands for (absent for a name this version does
    /// not know, which it ignores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<&'static str>,
}

/// The settings in effect, or in one file.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigListOutcome {
    /// Always true.
    pub success: bool,
    /// In the order of the table of settings; names a file holds that this version does not
    /// know come last.
    pub settings: Vec<SettingItem>,
}

impl Outcome for ConfigListOutcome {
    crate::outcome_json!();
}

/// One setting's value.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigGetOutcome {
    /// Always true (an unset setting is an error, exit 2).
    pub success: bool,
    /// The setting and where its value comes from.
    #[serde(flatten)]
    pub item: SettingItem,
}

impl Outcome for ConfigGetOutcome {
    crate::outcome_json!();
}

/// A setting written or removed.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigSetOutcome {
    /// Always true.
    pub success: bool,
    /// The setting.
    pub key: String,
    /// The new value (hidden for a secret); absent after `unset`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `store` or `user`.
    pub scope: &'static str,
    /// The file.
    pub path: PathBuf,
    /// Whether the file changed (`unset` of a setting the file does not hold changes nothing).
    pub changed: bool,
    /// The environment variable that overrides the file here, when it is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overridden_by: Option<&'static str>,
}

impl Outcome for ConfigSetOutcome {
    crate::outcome_json!();
}

/// The user's settings file, from the environment `env` gives: `memoir/config.toml` under
/// `XDG_CONFIG_HOME` (when absolute), else under `~/.config` (`HOME`, else `USERPROFILE`);
/// `None` when neither is known.
pub fn user_config_path(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let dir = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            let home = var("HOME").or_else(|| var("USERPROFILE"))?;
            Some(Path::new(&home).join(".config"))
        })?;
    Some(dir.join("memoir").join("config.toml"))
}

impl Layers {
    /// The files of the store at `store_dir` (read only when the directory is a store, so a
    /// `config.toml` of some other project is never taken for one) and of the user (when a
    /// path is known).
    pub fn read(store_dir: &Path, user: Option<&Path>) -> MemoirResult<Layers> {
        let store = if store_dir.join(FORMAT_FILE).is_file() {
            Some(ConfigFile::read(
                &store_dir.join(STORE_CONFIG_FILE),
                Scope::Store,
            )?)
        } else {
            None
        };
        let user = user.map(|p| ConfigFile::read(p, Scope::User)).transpose()?;
        Ok(Layers { store, user })
    }
}

impl Memoir {
    /// The settings in effect here (`scope` `None`: each from the environment `env` gives,
    /// else the store's file, else the user's `user`), or those one file holds.
    pub fn config_list(
        &self,
        scope: Option<Scope>,
        user: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> MemoirResult<ConfigListOutcome> {
        let mut settings = Vec::new();
        match scope {
            None => {
                let layers = Layers::read(self.path(), user)?;
                for s in SETTINGS {
                    if let Some((value, origin)) = layers.resolve(s, &env) {
                        settings.push(item(s, value, origin));
                    }
                }
                for f in [&layers.store, &layers.user].into_iter().flatten() {
                    settings.extend(unknown_items(f));
                }
            }
            Some(scope) => {
                let f = self.config_file(scope, user)?;
                for s in SETTINGS {
                    if let Some(value) = f.get(s.key)? {
                        settings.push(item(s, value, Origin::File(scope, f.path.clone())));
                    }
                }
                settings.extend(unknown_items(&f));
            }
        }
        Ok(ConfigListOutcome {
            success: true,
            settings,
        })
    }

    /// One setting's value in effect (or in one file), and where it comes from; unset is
    /// exit 2.
    pub fn config_get(
        &self,
        key: &str,
        scope: Option<Scope>,
        user: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> MemoirResult<ConfigGetOutcome> {
        let s = known(key)?;
        let found = match scope {
            None => Layers::read(self.path(), user)?.resolve(s, env),
            Some(scope) => {
                let f = self.config_file(scope, user)?;
                f.get(s.key)?
                    .map(|v| (v, Origin::File(scope, f.path.clone())))
            }
        };
        let (value, origin) = found.ok_or_else(|| {
            MemoirError::not_found(match scope {
                None => format!("{key} is not set (neither {} nor a settings file)", s.var),
                Some(scope) => format!("{key} is not set in the {} settings", scope.as_str()),
            })
        })?;
        Ok(ConfigGetOutcome {
            success: true,
            item: item(s, value, origin),
        })
    }

    /// Sets `key` to `value` in one file (`scope`; the store's when `None`), written whole
    /// and durably.
    pub fn config_set(
        &self,
        key: &str,
        value: &str,
        scope: Option<Scope>,
        user: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> MemoirResult<ConfigSetOutcome> {
        let shown_value = shown(known(key)?, value.into());
        self.config_edit(key, Some(shown_value), scope, user, env, |f| {
            let changed = f.get(key)?.as_deref() != Some(value);
            f.set(key, value)?;
            Ok(changed)
        })
    }

    /// Removes `key` from one file (`scope`; the store's when `None`).
    pub fn config_unset(
        &self,
        key: &str,
        scope: Option<Scope>,
        user: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> MemoirResult<ConfigSetOutcome> {
        self.config_edit(key, None, scope, user, env, |f| f.unset(key))
    }

    /// Applies `edit` to one file, saving it when `edit` says it changed; the outcome shows
    /// `value` (the new value, or none after a removal).
    fn config_edit(
        &self,
        key: &str,
        value: Option<String>,
        scope: Option<Scope>,
        user: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
        edit: impl FnOnce(&mut ConfigFile) -> Result<bool, ConfigError>,
    ) -> MemoirResult<ConfigSetOutcome> {
        let s = known(key)?;
        let scope = scope.unwrap_or(Scope::Store);
        let mut f = self.config_file(scope, user)?;
        let changed = edit(&mut f)?;
        if changed {
            f.save()?;
        }
        Ok(ConfigSetOutcome {
            success: true,
            key: key.into(),
            value,
            scope: scope.as_str(),
            path: f.path,
            changed,
            overridden_by: env(s.var).filter(|v| !v.is_empty()).map(|_| s.var),
        })
    }

    /// One settings file: the store's (the directory must be a store) or the user's (a path
    /// must be known).
    fn config_file(&self, scope: Scope, user: Option<&Path>) -> MemoirResult<ConfigFile> {
        let path = match scope {
            Scope::Store => {
                if !self.path().join(FORMAT_FILE).is_file() {
                    return Err(MemoirError::coded(
                        exit::NOT_A_STORE,
                        format!(
                            "{} is not a store, so it has no settings of its own; use --user \
                             for yours, or -s to name a store",
                            self.path().display()
                        ),
                    ));
                }
                self.path().join(STORE_CONFIG_FILE)
            }
            Scope::User => user.map(Path::to_path_buf).ok_or_else(|| {
                MemoirError::invalid(
                    "no user settings file: neither XDG_CONFIG_HOME nor HOME is set",
                )
            })?,
        };
        Ok(ConfigFile::read(&path, scope)?)
    }
}

fn known(key: &str) -> MemoirResult<&'static Setting> {
    Ok(super::config::known(key)?)
}

fn shown(s: &Setting, value: String) -> String {
    if s.secret {
        HIDDEN.into()
    } else {
        value
    }
}

fn item(s: &'static Setting, value: String, origin: Origin) -> SettingItem {
    let (scope, origin) = origin_text(&origin);
    SettingItem {
        key: s.key.into(),
        value: shown(s, value),
        scope,
        origin,
        variable: Some(s.var),
    }
}

fn origin_text(origin: &Origin) -> (&'static str, String) {
    match origin {
        Origin::Env(var) => ("env", format!("env:{var}")),
        Origin::File(scope, path) => (
            scope.as_str(),
            format!("{}:{}", scope.as_str(), path.display()),
        ),
    }
}

/// The names a file holds that this version does not know (it ignores them).
fn unknown_items(f: &ConfigFile) -> Vec<SettingItem> {
    let (scope, origin) = origin_text(&Origin::File(f.scope, f.path.clone()));
    f.unknown()
        .into_iter()
        .map(|key| SettingItem {
            // A newer version's credential is hidden as a known one is.
            value: if ["key", "token", "secret", "password"]
                .iter()
                .any(|w| key.ends_with(w))
            {
                HIDDEN.into()
            } else {
                f.get(&key).ok().flatten().unwrap_or_default()
            },
            key,
            scope,
            origin: origin.clone(),
            variable: None,
        })
        .collect()
}
