//! S3 credentials and endpoint the way S3 users already have them: the standard `AWS_*`
//! variables first, then the profile (`AWS_PROFILE`, else `default`) in the shared
//! credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) and config
//! file (`AWS_CONFIG_FILE`, else `~/.aws/config`). Nothing read here is written anywhere.

use std::collections::BTreeMap;
use std::path::PathBuf;

use memoir::app::S3Settings;

use super::context::{env_flag, env_var, expand_home};

/// The keys of one section of an INI-style AWS file, lower-cased.
fn section(text: &str, wanted: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = wanted.iter().any(|w| w == name.trim());
            continue;
        }
        if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.entry(k.trim().to_ascii_lowercase())
                    .or_insert_with(|| v.trim().to_string());
            }
        }
    }
    out
}

fn file(var: &str, default: &str) -> Option<String> {
    let path: PathBuf = env_var(var)
        .map(|p| expand_home(&p))
        .unwrap_or_else(|| expand_home(default));
    std::fs::read_to_string(path).ok()
}

/// The S3 settings of this process's environment and AWS profile files.
pub fn s3_settings_from_env() -> S3Settings {
    let profile = env_var("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let creds = file("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials")
        .map(|t| section(&t, std::slice::from_ref(&profile)))
        .unwrap_or_default();
    let config_names = if profile == "default" {
        vec!["default".to_string(), "profile default".to_string()]
    } else {
        vec![format!("profile {profile}")]
    };
    let config = file("AWS_CONFIG_FILE", "~/.aws/config")
        .map(|t| section(&t, &config_names))
        .unwrap_or_default();
    let from_files = |key: &str| creds.get(key).or_else(|| config.get(key)).cloned();
    // Keys come as a pair: from the variables when the id is set there, else the profile.
    let (access_key_id, secret_access_key, session_token) = match env_var("AWS_ACCESS_KEY_ID") {
        Some(id) => (
            Some(id),
            env_var("AWS_SECRET_ACCESS_KEY"),
            env_var("AWS_SESSION_TOKEN"),
        ),
        None => (
            from_files("aws_access_key_id"),
            from_files("aws_secret_access_key"),
            from_files("aws_session_token"),
        ),
    };
    S3Settings {
        access_key_id,
        secret_access_key,
        session_token,
        region: env_var("AWS_REGION")
            .or_else(|| env_var("AWS_DEFAULT_REGION"))
            .or_else(|| from_files("region")),
        endpoint: env_var("AWS_ENDPOINT_URL_S3")
            .or_else(|| env_var("AWS_ENDPOINT_URL"))
            .or_else(|| from_files("endpoint_url")),
        allow_http: env_flag("AWS_ALLOW_HTTP"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_sections_are_read_by_name() {
        let text = "[default]\naws_access_key_id = A\n\n[work]\nAWS_ACCESS_KEY_ID=B\nregion = eu-west-1\n# x = y\n[other]\nregion=us\n";
        let work = section(text, &["work".into()]);
        assert_eq!(work.get("aws_access_key_id").map(String::as_str), Some("B"));
        assert_eq!(work.get("region").map(String::as_str), Some("eu-west-1"));
        assert_eq!(work.len(), 2);
        let d = section(text, &["default".into()]);
        assert_eq!(d.get("aws_access_key_id").map(String::as_str), Some("A"));
    }
}
