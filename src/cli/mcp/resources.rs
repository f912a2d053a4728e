//! Memories as MCP resources. Each memory is `memoir://NAMESPACE/PATH` (both parts
//! percent-encoded: every byte but `A-Z a-z 0-9 - . _ ~`, so `memoir://default/a.b` and
//! `memoir://codebase%3Aonboard/a.b`); `?at=REV` (percent-encoded too) reads it at a revision
//! (`memoir://default/a.b?at=HEAD~2`). `resources/list` pages through every memory in key
//! order ([`PAGE`] a page; the cursor is the last URI of the page before), leaving out
//! memoir's own namespaces; `resources/read` answers the memory's content as text.

use memoir::app::ReadPoint;

use super::super::output::{exit, CliError};
use super::tools::Tools;

/// Resources per page of `resources/list`.
pub const PAGE: usize = 100;

/// The URI scheme and separator.
const SCHEME: &str = "memoir://";

/// The URI template of a memory.
pub const TEMPLATE: &str = "memoir://{namespace}/{path}";

fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The URI of the memory at `namespace`:`path`, read at `at` when given.
pub fn uri_of(namespace: &str, path: &str, at: Option<&str>) -> String {
    let mut uri = format!("{SCHEME}{}/{}", encode(namespace), encode(path));
    if let Some(rev) = at {
        uri.push_str("?at=");
        uri.push_str(&encode(rev));
    }
    uri
}

/// A memory URI taken apart: namespace, path and revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryUri {
    /// The namespace.
    pub namespace: String,
    /// The key's path.
    pub path: String,
    /// The revision to read at, if any.
    pub at: Option<String>,
}

/// Parses a memory URI (see the module documentation); a malformed one is a usage error.
pub fn parse_uri(uri: &str) -> Result<MemoryUri, CliError> {
    let bad = |why: &str| {
        CliError::new(
            exit::USAGE,
            format!("not a memory URI ({why}): {uri}; expected {TEMPLATE}[?at=REV]"),
        )
    };
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| bad("it must start with memoir://"))?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (ns, path) = rest
        .split_once('/')
        .ok_or_else(|| bad("no path after the namespace"))?;
    let decoded = |s: &str| decode(s).ok_or_else(|| bad("a bad percent escape"));
    let (namespace, path) = (decoded(ns)?, decoded(path)?);
    if namespace.is_empty() || path.is_empty() {
        return Err(bad("an empty namespace or path"));
    }
    let at = match query {
        None => None,
        Some(q) => match q.strip_prefix("at=") {
            Some(rev) if !rev.is_empty() && !rev.contains('&') => Some(decoded(rev)?),
            _ => return Err(bad("the only query is at=REV")),
        },
    };
    Ok(MemoryUri {
        namespace,
        path,
        at,
    })
}

/// One listed resource: URI, name (the full key) and title (the path).
pub struct Listed {
    /// `memoir://NS/PATH`.
    pub uri: String,
    /// `ns:path`.
    pub name: String,
    /// The path.
    pub title: String,
}

impl Tools {
    /// One page of `resources/list` after `cursor` (a URI the previous page ended with),
    /// and the cursor of the next page when there is one.
    pub fn list_resources(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<Listed>, Option<String>), CliError> {
        let after = cursor.map(parse_uri).transpose()?;
        self.run(|ctx| {
            let page = ctx.app.list_keys(
                after
                    .as_ref()
                    .map(|u| (u.namespace.as_str(), u.path.as_str())),
                PAGE,
                &ReadPoint::head(),
            )?;
            let listed = page
                .keys
                .iter()
                .map(|(ns, path)| Listed {
                    uri: uri_of(ns, path, None),
                    name: format!("{ns}:{path}"),
                    title: path.clone(),
                })
                .collect();
            let next = page.next_after.map(|(ns, path)| uri_of(&ns, &path, None));
            Ok((listed, next))
        })
    }

    /// The content of the memory a URI names (not found: exit 2).
    pub fn read_resource(&self, uri: &str) -> Result<String, CliError> {
        let u = parse_uri(uri)?;
        self.run(|ctx| {
            let at = ReadPoint {
                at: u.at.clone(),
                branch: None,
            };
            let full = format!("{}:{}", u.namespace, u.path);
            let out = ctx.app.get(&[full], None, &at)?;
            match out.items.into_iter().next().and_then(|i| i.record) {
                Some(record) => Ok(record.content()),
                None => Err(CliError::new(
                    exit::NOT_FOUND,
                    format!("no memory at {uri}"),
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_with_and_without_a_revision() {
        let uri = uri_of("codebase:onboard", "a.b-c", Some("main@{yesterday}"));
        assert_eq!(
            uri,
            "memoir://codebase%3Aonboard/a.b-c?at=main%40%7Byesterday%7D"
        );
        let u = parse_uri(&uri).unwrap();
        assert_eq!(u.namespace, "codebase:onboard");
        assert_eq!(u.path, "a.b-c");
        assert_eq!(u.at.as_deref(), Some("main@{yesterday}"));
        let u = parse_uri("memoir://default/préférences.thé").unwrap();
        assert_eq!(u.path, "préférences.thé");
        assert_eq!(u.at, None);
        let u = parse_uri(&uri_of("default", "préférences.thé", None)).unwrap();
        assert_eq!(u.path, "préférences.thé");
    }

    #[test]
    fn malformed_uris_are_usage_errors() {
        for bad in [
            "file:///x",
            "memoir://default",
            "memoir://default/",
            "memoir://default/a?rev=1",
            "memoir://default/a%zz",
        ] {
            assert_eq!(parse_uri(bad).unwrap_err().code, exit::USAGE, "{bad}");
        }
    }
}
