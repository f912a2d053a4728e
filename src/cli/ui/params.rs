//! Reading a request's parameters: the query string of a GET (form encoding, repeated names
//! for lists) and the JSON object of a POST, with a clear error (exit 1) for a value of the
//! wrong form.

use serde_json::{Map, Value};

use crate::cli::output::CliError;

/// The decoded `name=value` pairs of a query string, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses `a=1&b=x+y&b=%2A` (no leading `?`); a malformed escape is an error.
    pub fn parse(text: &str) -> Result<Query, CliError> {
        let mut pairs = Vec::new();
        for part in text.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            pairs.push((decode(k)?, decode(v)?));
        }
        Ok(Query(pairs))
    }

    /// The first value of `name`; an empty value counts as absent.
    pub fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.clone())
    }

    /// Every non-empty value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// A value that must be present.
    pub fn required(&self, name: &str) -> Result<String, CliError> {
        self.get(name)
            .ok_or_else(|| CliError::invalid(format!("the parameter '{name}' is required")))
    }

    /// A whole number, if given.
    pub fn number(&self, name: &str) -> Result<Option<usize>, CliError> {
        self.get(name)
            .map(|v| {
                v.parse::<usize>().map_err(|_| {
                    CliError::invalid(format!("the parameter '{name}' must be a whole number"))
                })
            })
            .transpose()
    }

    /// A flag: `1`, `true` or `yes` (anything else given is false).
    pub fn flag(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
    }
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Form decoding: `+` is a space, `%XX` a byte; the bytes must be UTF-8.
fn decode(text: &str) -> Result<String, CliError> {
    let bad = || CliError::invalid(format!("malformed query text {text:?}"));
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = bytes
                    .get(i + 1)
                    .copied()
                    .and_then(hex_digit)
                    .ok_or_else(bad)?;
                let lo = bytes
                    .get(i + 2)
                    .copied()
                    .and_then(hex_digit)
                    .ok_or_else(bad)?;
                out.push(hi << 4 | lo);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// A POST body: one JSON object.
#[derive(Debug, Clone, Default)]
pub struct Body(Map<String, Value>);

impl Body {
    /// Parses the body (empty: no members); anything but a JSON object is an error.
    pub fn parse(bytes: &[u8]) -> Result<Body, CliError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body::default());
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => Ok(Body(m)),
            Ok(_) => Err(CliError::invalid("the request body must be a JSON object")),
            Err(e) => Err(CliError::invalid(format!(
                "the request body is not JSON: {e}"
            ))),
        }
    }

    /// A text member, if given and not empty.
    pub fn text(&self, name: &str) -> Result<Option<String>, CliError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(CliError::invalid(format!("'{name}' must be a string"))),
        }
    }

    /// A text member that must be present.
    pub fn required(&self, name: &str) -> Result<String, CliError> {
        self.text(name)?
            .ok_or_else(|| CliError::invalid(format!("'{name}' is required")))
    }

    /// A list of strings (a single string is a list of one).
    pub fn list(&self, name: &str) -> Result<Vec<String>, CliError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        CliError::invalid(format!("'{name}' must be a list of strings"))
                    })
                })
                .collect(),
            Some(_) => Err(CliError::invalid(format!(
                "'{name}' must be a list of strings"
            ))),
        }
    }

    /// A boolean member (absent: false).
    pub fn flag(&self, name: &str) -> Result<bool, CliError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(CliError::invalid(format!("'{name}' must be true or false"))),
        }
    }

    /// A number member, if given.
    pub fn number(&self, name: &str) -> Result<Option<f64>, CliError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(_) => Err(CliError::invalid(format!("'{name}' must be a number"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = Query::parse("q=a+b&keys=pref%2A&keys=x.%5By%5D&empty=&n=3").unwrap();
        assert_eq!(q.get("q").as_deref(), Some("a b"));
        assert_eq!(q.all("keys"), vec!["pref*", "x.[y]"]);
        assert_eq!(q.get("empty"), None);
        assert_eq!(q.number("n").unwrap(), Some(3));
        assert!(Query::parse("q=%zz").is_err());
        assert!(Query::parse("q=%ff").is_err());
        assert!(Query::parse("n=x").unwrap().number("n").is_err());
    }

    #[test]
    fn bodies() {
        let b = Body::parse(br#"{"paths": ["a.b", "c"], "purge": true, "c": 0.5}"#).unwrap();
        assert_eq!(b.list("paths").unwrap(), vec!["a.b", "c"]);
        assert!(b.flag("purge").unwrap());
        assert_eq!(b.number("c").unwrap(), Some(0.5));
        assert!(b.required("content").is_err());
        assert!(Body::parse(b"[1]").is_err());
        assert!(Body::parse(b"{").is_err());
        assert!(Body::parse(b"").is_ok());
    }
}
