//! A conservative detector of credentials in text a caller is about to store.
//!
//! Memories are versioned forever (a `forget` keeps history), so a writer that serves agents
//! refuses content that looks like a secret rather than storing it. The detector looks for
//! well-known token shapes (provider API keys, cloud access key ids, personal access tokens,
//! Stripe keys, JSON Web Tokens, private key blocks with or without their PEM header, bearer
//! tokens), for passwords inside URLs (`scheme://user:password@host`), and for
//! `password=...`-style assignments with a value (AWS secret access keys named apart). It
//! never returns the secret itself, only what kind of thing it saw, so the refusal message can
//! be shown and logged safely. Values that are placeholders (`${VAR}`, `<password>`, `****`)
//! are not secrets.

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
    /// `aws_secret_access_key = ...` (and `SecretAccessKey` in JSON), with a value.
    AwsSecretKey,
    /// A password inside a URL: `postgres://user:password@host`.
    UrlPassword,
    /// A JSON Web Token: `eyJ...` header, `.`, `eyJ...` payload, `.`, signature.
    Jwt,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`).
    StripeKey,
    /// The base64 body of a private key without its `-----BEGIN` header.
    PrivateKeyBody,
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
            SecretKind::AwsSecretKey => "aws_secret_key",
            SecretKind::UrlPassword => "url_password",
            SecretKind::Jwt => "jwt",
            SecretKind::StripeKey => "stripe_key",
            SecretKind::PrivateKeyBody => "private_key_body",
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
            SecretKind::AwsSecretKey => "an AWS secret access key (aws_secret_access_key=...)",
            SecretKind::UrlPassword => "a password in a URL (scheme://user:password@host)",
            SecretKind::Jwt => "a JSON Web Token (eyJ...)",
            SecretKind::StripeKey => "a Stripe key (sk_live_...)",
            SecretKind::PrivateKeyBody => "the body of a private key (base64, without its header)",
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

/// The run of characters accepted by `ok` at the start of `s`, at most `cap` of them (every
/// scan is bounded, so the detector stays linear in the text whatever it holds).
fn run_of(s: &str, cap: usize, ok: impl Fn(char) -> bool) -> &str {
    let end = s
        .char_indices()
        .take(cap)
        .take_while(|&(_, c)| ok(c))
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    &s[..end]
}

/// Whether a token of at least `min` characters (accepted by `ok`) follows one of
/// `prefixes` at a word start.
fn prefixed(text: &str, prefixes: &[&str], min: usize, ok: impl Fn(char) -> bool + Copy) -> bool {
    prefixes.iter().any(|p| {
        text.match_indices(p).any(|(at, _)| {
            starts_word(text, at) && run_of(&text[at + p.len()..], min, ok).chars().count() >= min
        })
    })
}

/// Whether `text[at..]` starts a name: at a word start, or after an identifier's `_`, `-` or
/// `.` (`DB_PASSWORD`, `db.password`).
fn starts_name(text: &str, at: usize) -> bool {
    starts_word(text, at)
        || text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| matches!(c, '_' | '-' | '.'))
}

/// Whether a value is a placeholder rather than a secret: `${VAR}`, `$VAR`, `<password>`,
/// `{{var}}`, `%s`, `****`, `xxxx`.
fn placeholder(value: &str) -> bool {
    value.starts_with(['$', '<', '{', '%'])
        || value.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.'))
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

const AWS_SECRET: [&str; 4] = [
    "aws_secret_access_key",
    "aws_secret_key",
    "secret_access_key",
    "secretaccesskey",
];

/// The values assigned to one of `names` in `lower` (lower-cased text): a name at a name
/// start (possibly closing a quote), `=` or `:`, and the value up to whitespace or a quote,
/// with the separator.
fn assigned_values<'a>(lower: &'a str, names: &'a [&str]) -> impl Iterator<Item = (char, &'a str)> {
    names.iter().flat_map(move |name| {
        lower.match_indices(name).filter_map(move |(at, _)| {
            if !starts_name(lower, at) {
                return None;
            }
            let rest = lower[at + name.len()..]
                .trim_start_matches(['"', '\''])
                .trim_start_matches([' ', '\t']);
            let sep = rest.chars().next().filter(|c| matches!(c, '=' | ':'))?;
            let rest = rest[1..]
                .trim_start_matches([' ', '\t'])
                .trim_start_matches(['"', '\'']);
            let value = run_of(rest, 64, |c| !c.is_whitespace() && c != '"' && c != '\'');
            (!placeholder(value)).then_some((sep, value))
        })
    })
}

/// `password=value`, `api_key: "value"`: a credential name, `=` or `:`, and a value that
/// looks like one (with `=`, four or more characters; with `:`, eight or more with a digit or
/// a symbol, so prose such as "password: rotate monthly" passes).
fn assignment(lower: &str) -> bool {
    assigned_values(lower, &ASSIGNED).any(|(sep, value)| {
        let n = value.chars().count();
        if sep == '=' {
            n >= 4
        } else {
            n >= 8 && value.chars().any(|c| !c.is_ascii_alphabetic())
        }
    })
}

/// `aws_secret_access_key = value` with a value of 16 or more characters.
fn aws_secret(lower: &str) -> bool {
    assigned_values(lower, &AWS_SECRET).any(|(_, value)| value.chars().count() >= 16)
}

/// A URL whose user information holds a password: `scheme://user:password@host`, the
/// password not empty and not a placeholder.
fn url_password(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let scheme = text[..at]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .next()
            .unwrap_or("");
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return false;
        }
        let authority = run_of(&text[at + 3..], 1024, |c| {
            !c.is_whitespace() && !matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>')
        });
        let Some((userinfo, _host)) = authority.rsplit_once('@') else {
            return false;
        };
        match userinfo.split_once(':') {
            Some((_, password)) => !password.is_empty() && !placeholder(password),
            None => false,
        }
    })
}

fn is_base64url(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A JSON Web Token: two base64url parts of 10 to 64 Ki characters that begin with `eyJ`
/// (the encoding of `{"`), each followed by a `.` (the signature may be empty).
fn jwt(text: &str) -> bool {
    const CAP: usize = 64 << 10;
    // A match inside a run already scanned ends where that run ends: it is judged already.
    let mut scanned_to = 0;
    text.match_indices("eyJ").any(|(at, _)| {
        if at < scanned_to || !starts_word(text, at) {
            return false;
        }
        let header = run_of(&text[at..], CAP + 1, is_base64url);
        scanned_to = at + header.len();
        let Some(rest) = text[at + header.len()..].strip_prefix('.') else {
            return false;
        };
        let payload = run_of(rest, CAP + 1, is_base64url);
        (10..=CAP).contains(&header.len())
            && (10..=CAP).contains(&payload.len())
            && payload.starts_with("eyJ")
            && rest[payload.len()..].starts_with('.')
    })
}

/// The value of one base64 digit.
fn base64_digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes the first `4 * (n / 4)` base64 digits of `digits` (stopping at the first that is
/// not one).
fn base64_prefix(digits: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(digits.len() / 4 * 3);
    for quad in digits.chunks_exact(4) {
        let Some(v) = quad
            .iter()
            .try_fold(0u32, |acc, &c| Some(acc << 6 | u32::from(base64_digit(c)?)))
        else {
            break;
        };
        out.extend_from_slice(&v.to_be_bytes()[1..]);
    }
    out
}

/// Whether DER bytes begin like a private key: a SEQUENCE whose first element is the
/// INTEGER version 0 (PKCS#1 RSA, PKCS#8) or 1 (SEC 1 EC) followed by what such a key holds
/// next; certificates and public keys begin with a SEQUENCE or a longer INTEGER instead.
fn der_private_key(der: &[u8]) -> bool {
    let body = match der {
        [0x30, 0x81, _, rest @ ..] => rest,
        [0x30, 0x82, _, _, rest @ ..] => rest,
        [0x30, n, rest @ ..] if *n < 0x80 => rest,
        _ => return false,
    };
    matches!(
        body,
        [0x02, 0x01, 0x00, 0x02 | 0x30, ..] | [0x02, 0x01, 0x01, 0x04, ..]
    )
}

/// A private key's base64 body without its PEM header: at a word start, 64 or more base64
/// characters (line breaks allowed) that decode to the start of a private key (DER: every
/// such body begins with `M`, the encoding of a SEQUENCE), or the body of an OpenSSH private
/// key (`openssh-key-v1`).
fn private_key_body(text: &str) -> bool {
    const OPENSSH: &str = "b3BlbnNzaC1rZXktdjE";
    let starts = text.match_indices('M').chain(text.match_indices(OPENSSH));
    starts.into_iter().any(|(at, _)| {
        if !starts_word(text, at) {
            return false;
        }
        // The first 64 digits, within the first 96 bytes (PEM lines are 64 wide).
        let digits: Vec<u8> = text.as_bytes()[at..]
            .iter()
            .take(96)
            .take_while(|&&b| base64_digit(b).is_some() || matches!(b, b'\n' | b'\r'))
            .filter(|&&b| base64_digit(b).is_some())
            .take(64)
            .copied()
            .collect();
        digits.len() == 64
            && (digits.starts_with(OPENSSH.as_bytes())
                || der_private_key(&base64_prefix(&digits[..24])))
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
    let stripe = ["sk_live_", "rk_live_", "sk_test_", "rk_test_"];
    if prefixed(text, &stripe, 16, |c| c.is_ascii_alphanumeric()) {
        return Some(SecretKind::StripeKey);
    }
    let bearer = |c: char| is_token_char(c) || matches!(c, '.' | '~' | '+' | '/' | '=');
    if prefixed(text, &["Bearer ", "bearer "], 20, bearer) {
        return Some(SecretKind::BearerToken);
    }
    if jwt(text) {
        return Some(SecretKind::Jwt);
    }
    if url_password(text) {
        return Some(SecretKind::UrlPassword);
    }
    if private_key_body(text) {
        return Some(SecretKind::PrivateKeyBody);
    }
    let lower = text.to_ascii_lowercase();
    if aws_secret(&lower) {
        return Some(SecretKind::AwsSecretKey);
    }
    if assignment(&lower) {
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

    /// A PEM-style body: `prefix` then filler base64 up to `len` characters, wrapped at 64.
    fn body(prefix: &str, len: usize) -> String {
        let mut b = prefix.to_string();
        let filler = "Q2hhbmdlTWVQbGVhc2U0MiE";
        while b.len() < len {
            b.push_str(filler);
        }
        b.truncate(len);
        b.as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn new_rules_name_themselves() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.\
                   SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        let cases: Vec<(String, SecretKind)> = vec![
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                SecretKind::AwsSecretKey,
            ),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                SecretKind::AwsSecretKey,
            ),
            (
                "{\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"}".into(),
                SecretKind::AwsSecretKey,
            ),
            (
                "db at postgres://user:pass@host/db".into(),
                SecretKind::UrlPassword,
            ),
            (
                "redis://:s3cr3t@cache:6379/0".into(),
                SecretKind::UrlPassword,
            ),
            (
                "clone https://bob:hunter22@git.example.org/x.git".into(),
                SecretKind::UrlPassword,
            ),
            (format!("token {jwt}"), SecretKind::Jwt),
            (format!("session={jwt}"), SecretKind::Jwt),
            (
                format!("stripe sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc"),
                SecretKind::StripeKey,
            ),
            (
                format!("rk_test_{}", "51HxYzAbCdEfGhIjKlMn"),
                SecretKind::StripeKey,
            ),
            (
                body("MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQ", 1600),
                SecretKind::PrivateKeyBody,
            ),
            (
                body(
                    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt",
                    1600,
                ),
                SecretKind::PrivateKeyBody,
            ),
            (
                body(
                    "MHcCAQEEIDLvnVIrHwTnjMJrcUqxFuxpfbvDSrWo6AOjsnMqjG3aoAoGCCqGSM49",
                    121,
                ),
                SecretKind::PrivateKeyBody,
            ),
            // RFC 8410's example Ed25519 private key, exactly 64 digits.
            (
                "key:\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n".into(),
                SecretKind::PrivateKeyBody,
            ),
            (
                body(
                    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
                    400,
                ),
                SecretKind::PrivateKeyBody,
            ),
            ("DB_PASSWORD=hunter22".into(), SecretKind::Assignment),
            (
                "{\"password\": \"c0rrect-horse\"}".into(),
                SecretKind::Assignment,
            ),
        ];
        for (text, kind) in &cases {
            assert_eq!(detect(text), Some(*kind), "{text}");
            assert!(!kind.rule().is_empty() && !kind.describe().is_empty());
        }
    }

    #[test]
    fn near_misses_of_the_new_rules_pass() {
        for ok in [
            "connect to postgres://host/db",
            "postgres://user@host:5432/db",
            "postgres://user:@host/db",
            "https://user:${DB_PASSWORD}@host/db",
            "https://user:<password>@host/db",
            "https://user:****@host/db",
            "https://example.org:8443/a:b@c",
            "git@github.com:org/repo.git",
            "mailto:someone@example.org",
            "the password is in the vault",
            "reset the password: rotate monthly",
            "password=${DB_PASSWORD}",
            "fixed in commit 3f2a9c1, see 3f2a9c1e8b7d",
            "sk_live_ keys are never stored",
            "a JWT starts with eyJ and has three parts",
            "eyJhbGciOiJIUzI1NiJ9 alone is only a header",
            "aws_secret_access_key = ${AWS_SECRET}",
            "the aws_secret_access_key setting",
            "top-secret plans",
            "Monday Meeting Minutes",
        ] {
            assert_eq!(detect(ok), None, "{ok}");
        }
        // Public material that looks like a key body: a certificate, public keys.
        for public in [
            body(
                "MIIBLDCB36ADAgECAhQQTyvfWGjVrzAFBgMrZXAwDDEKMAgGA1UEAwwBeDAeFw0y",
                400,
            ),
            body(
                "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo",
                400,
            ),
            body(
                "MIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw",
                360,
            ),
            "MCowBQYDK2VwAyEACbNBGnGKbmAv60Qnc09lD/c5ZQSEvSLgo7LDGsh1EB4=".to_string(),
        ] {
            assert_eq!(detect(&public), None, "{public}");
        }
    }

    #[test]
    fn hostile_text_is_scanned_in_linear_time() {
        let start = std::time::Instant::now();
        for unit in ["sk-", "eyJ-", "+M", "password=", "a://", "MI"] {
            let text = unit.repeat((4 << 20) / unit.len());
            let _ = detect(&text);
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }
}
