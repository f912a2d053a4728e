//! Branch names: which names a branch may have.

use super::RevParseError;

/// The longest accepted branch name, in bytes.
pub const MAX_BRANCH_NAME_LEN: usize = 100;

/// Checks a branch name (git check-ref-format in spirit, simplified).
///
/// 1..=100 bytes; no whitespace or control characters; none of `~ ^ : ? * [ \`, `@{`,
/// `..` or `//`; no leading `-` or `/`; no path component starting with `.` or ending in
/// `.lock`; no trailing `.` or `/`; not `HEAD` or `@`. `/` and non-ASCII letters are fine.
pub fn validate_branch_name(name: &str) -> Result<(), RevParseError> {
    let fail = |why: &'static str| {
        Err(RevParseError::BadBranchName {
            name: name.to_owned(),
            why,
        })
    };
    if name.is_empty() {
        return fail("empty");
    }
    if name.len() > MAX_BRANCH_NAME_LEN {
        return fail("longer than 100 bytes");
    }
    if name == "HEAD" || name == "@" {
        return fail("reserved name");
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return fail("contains whitespace or a control character");
    }
    if name.chars().any(|c| "~^:?*[\\".contains(c)) {
        return fail("contains one of `~ ^ : ? * [ \\`");
    }
    if name.contains("@{") {
        return fail("contains `@{`");
    }
    if name.contains("..") {
        return fail("contains `..`");
    }
    if name.contains("//") {
        return fail("contains `//`");
    }
    if name.starts_with('-') {
        return fail("starts with `-`");
    }
    if name.starts_with('/') {
        return fail("starts with `/`");
    }
    if name.ends_with('/') {
        return fail("ends with `/`");
    }
    if name.ends_with('.') {
        return fail("ends with `.`");
    }
    if name.split('/').any(|c| c.starts_with('.')) {
        return fail("starts with `.` (or has a component that does)");
    }
    if name.split('/').any(|c| c.ends_with(".lock")) {
        return fail("ends with `.lock` (or has a component that does)");
    }
    Ok(())
}

/// Checks the name of a branch about to be created: a valid name
/// ([`validate_branch_name`]) that does not read as a commit id prefix. A name of only hex
/// digits, as long as the shortest prefix a revision may abbreviate a commit to, would make
/// that commit unreachable by its id (the branch wins), so it is refused, as git warns.
pub fn validate_new_branch_name(name: &str) -> Result<(), RevParseError> {
    validate_branch_name(name)?;
    let min = crate::repo::resolve::MIN_PREFIX_DIGITS;
    if name.len() >= min && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RevParseError::BadBranchName {
            name: name.to_owned(),
            why: "reads as a commit id (only hex digits, 4 or more); add another letter or a `/`",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_branches_cannot_read_as_commit_ids() {
        for bad in ["cafe", "DEADBEEF", &"a".repeat(64)] {
            assert!(validate_new_branch_name(bad).is_err(), "{bad}");
            assert!(
                validate_branch_name(bad).is_ok(),
                "{bad} still reads as a name"
            );
        }
        for ok in ["abc", "cafe-2", "feature/cafe", "exp"] {
            assert!(validate_new_branch_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn invalid_branch_names() {
        let long = "a".repeat(101);
        let bad = [
            "",
            "-x",
            "a..b",
            "a b",
            "x.lock",
            "a/x.lock/b",
            "HEAD",
            "@",
            "a//b",
            "a/",
            "/a",
            ".a",
            "a/.b",
            "a.",
            "a\u{1}b",
            "a\u{7f}b",
            "a\tb",
            "a\nb",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a@{b",
            &long,
        ];
        for name in bad {
            assert!(
                matches!(
                    validate_branch_name(name),
                    Err(RevParseError::BadBranchName { .. })
                ),
                "{name:?}"
            );
        }
        let good = [
            "main",
            "agent/alice",
            "feature/x-1_2",
            "v1.2",
            "héllo/wörld",
            "a@b",
            "HEADS",
            "a.lockx",
            &"a".repeat(100),
        ];
        for name in good {
            assert_eq!(validate_branch_name(name), Ok(()), "{name:?}");
        }
    }
}
