//! A conservative detector of credentials in text a caller is about to store.
//!
//! Memories are versioned forever (a `forget` keeps history), so a writer that serves agents
//! refuses content that looks like a secret rather than storing it. The detector looks for
//! well-known token shapes (provider API keys, cloud access key ids, personal access tokens,
//! private key blocks, bearer tokens) and for `password=...`-style assignments with a value.
//! It never returns the secret itself, only what kind of thing it saw, so the refusal message
//! can be shown and logged safely.

/// What kind of credential the text seems to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    /// An API key with an `sk-` prefix (OpenAI, Anthropic and others).
    SkApiKey,
    /// An AWS access key id (`AKIA...` / `ASIA...`).
    AwsAccessKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GitHubToken,
    /// A Slack token (`xoxb-`, `xoxp-`, ...).
    SlackToken,
    /// A Google API key (`AIza...`).
    GoogleApiKey,
    /// A PEM private key block.
    PrivateKey,
    /// An `Authorization: Bearer ...` token.
    BearerToken,
    /// `password=...`, `api_key: ...` and the like, with a value.
    Assignment,
}

impl SecretKind {
    /// The rule's name, stable for messages and scripts (`aws_access_key`, ...).
    pub fn rule(self) -> &'static str {
        match self {
            SecretKind::SkApiKey => "sk_api_key",
            SecretKind::AwsAccessKey => "aws_access_key",
            SecretKind::GitHubToken => "github_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::GoogleApiKey => "google_api_key",
            SecretKind::PrivateKey => "private_key",
            SecretKind::BearerToken => "bearer_token",
            SecretKind::Assignment => "secret_assignment",
        }
    }

    /// A short description for messages.
    pub fn describe(self) -> &'static str {
        match self {
            SecretKind::SkApiKey => "an API key (sk-...)",
            SecretKind::AwsAccessKey => "an AWS access key id (AKIA...)",
            SecretKind::GitHubToken => "a GitHub token (ghp_...)",
            SecretKind::SlackToken => "a Slack token (xox...)",
            SecretKind::GoogleApiKey => "a Google API key (AIza...)",
            SecretKind::PrivateKey => "a private key block",
            SecretKind::BearerToken => "a bearer token",
            SecretKind::Assignment => "a password or secret assignment (password=...)",
        }
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `text[at..]` is preceded by a character that cannot be part of a token.
fn starts_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
}

/// The run of characters accepted by `ok` at the start of `s`.
fn run_of(s: &str, ok: impl Fn(char) -> bool) -> &str {
    let end = s.find(|c: char| !ok(c)).unwrap_or(s.len());
    &s[..end]
}

/// Whether a token of at least `min` characters (accepted by `ok`) follows one of
/// `prefixes` at a word start.
fn prefixed(text: &str, prefixes: &[&str], min: usize, ok: impl Fn(char) -> bool + Copy) -> bool {
    prefixes.iter().any(|p| {
        text.match_indices(p).any(|(at, _)| {
            starts_word(text, at) && run_of(&text[at + p.len()..], ok).chars().count() >= min
        })
    })
}

const ASSIGNED: [&str; 12] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "api_key",
    "apikey",
    "api-key",
    "access_token",
    "auth_token",
    "secret_key",
    "private_key",
];

/// `password=value`, `api_key: "value"`: a credential name, `=` or `:`, and a value that
/// looks like one (with `=`, four or more characters; with `:`, eight or more with a digit or
/// a symbol, so prose such as "password: rotate monthly" passes).
fn assignment(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ASSIGNED.iter().any(|name| {
        lower.match_indices(name).any(|(at, _)| {
            if !starts_word(&lower, at) {
                return false;
            }
            let rest = lower[at + name.len()..].trim_start_matches([' ', '\t']);
            let (sep, rest) = match rest.chars().next() {
                Some(c @ ('=' | ':')) => (c, &rest[1..]),
                _ => return false,
            };
            let rest = rest
                .trim_start_matches([' ', '\t'])
                .trim_start_matches(['"', '\'']);
            let value = run_of(rest, |c| !c.is_whitespace() && c != '"' && c != '\'');
            let n = value.chars().count();
            if sep == '=' {
                n >= 4
            } else {
                n >= 8 && value.chars().any(|c| !c.is_ascii_alphabetic())
            }
        })
    })
}

/// The first kind of credential `text` seems to contain, if any.
pub fn detect(text: &str) -> Option<SecretKind> {
    let upper_alnum = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    if text.contains("-----BEGIN") && text.contains("PRIVATE KEY") {
        return Some(SecretKind::PrivateKey);
    }
    if prefixed(text, &["sk-"], 20, is_token_char) {
        return Some(SecretKind::SkApiKey);
    }
    if prefixed(text, &["AKIA", "ASIA"], 16, upper_alnum) {
        return Some(SecretKind::AwsAccessKey);
    }
    let gh = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"];
    if prefixed(text, &gh, 20, |c| c.is_ascii_alphanumeric() || c == '_') {
        return Some(SecretKind::GitHubToken);
    }
    if prefixed(
        text,
        &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"],
        10,
        is_token_char,
    ) {
        return Some(SecretKind::SlackToken);
    }
    if prefixed(text, &["AIza"], 30, is_token_char) {
        return Some(SecretKind::GoogleApiKey);
    }
    let bearer = |c: char| is_token_char(c) || matches!(c, '.' | '~' | '+' | '/' | '=');
    if prefixed(text, &["Bearer ", "bearer "], 20, bearer) {
        return Some(SecretKind::BearerToken);
    }
    if assignment(text) {
        return Some(SecretKind::Assignment);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_provider_keys() {
        let sk = format!("my key is sk-proj-{}", "a1B2".repeat(8));
        assert_eq!(detect(&sk), Some(SecretKind::SkApiKey));
        assert_eq!(
            detect("aws AKIAIOSFODNN7EXAMPLE here"),
            Some(SecretKind::AwsAccessKey)
        );
        let gh = format!("token ghp_{}", "x9".repeat(18));
        assert_eq!(detect(&gh), Some(SecretKind::GitHubToken));
        assert_eq!(
            detect("xoxb-123456789012-abcdef"),
            Some(SecretKind::SlackToken)
        );
        let g = format!("AIza{}", "S".repeat(35));
        assert_eq!(detect(&g), Some(SecretKind::GoogleApiKey));
        let b = format!("Authorization: Bearer {}", "eyJhbGciOi.J9".repeat(3));
        assert_eq!(detect(&b), Some(SecretKind::BearerToken));
    }

    #[test]
    fn finds_private_keys_and_assignments() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----";
        assert_eq!(detect(pem), Some(SecretKind::PrivateKey));
        assert_eq!(detect("db password=hunter22"), Some(SecretKind::Assignment));
        assert_eq!(
            detect("PASSWORD = 'tr0ub4dor'"),
            Some(SecretKind::Assignment)
        );
        assert_eq!(
            detect("api_key: \"abc123def456\""),
            Some(SecretKind::Assignment)
        );
    }

    #[test]
    fn leaves_ordinary_prose_alone() {
        for ok in [
            "prefers pytest over unittest",
            "the password policy: rotate monthly",
            "password: required",
            "ask before running sk-learn jobs",
            "task-runner uses AKIA as an example prefix",
            "github_pat_ tokens expire",
            "use a bearer token from the vault",
            "the secret is patience",
            "risk-assessment and disk-usage-report",
            "passwords= are never stored here",
        ] {
            assert_eq!(detect(ok), None, "{ok}");
        }
    }

    #[test]
    fn tokens_need_a_word_start() {
        let inside = format!("mask-{}", "a".repeat(30));
        assert_eq!(detect(&inside), None);
        assert!(SecretKind::SkApiKey.describe().contains("sk-"));
        assert_eq!(SecretKind::AwsAccessKey.rule(), "aws_access_key");
    }
}
