//! Reading model replies that list names (keys, prefixes, paths): tolerant of the shapes
//! models answer in (lines with bullets or numbering, JSON arrays or objects, code fences).
//! The names are returned unvalidated; the picker and the classifier each decide which
//! names they accept.

use serde_json::Value;

/// A model reply without its code-fence lines (` ``` `, ` ```json `).
pub fn strip_code_fences(reply: &str) -> String {
    reply
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names a reply lists, unvalidated and in reply order: the strings of a JSON reply
/// ([`json_names`]), else the first token of each line ([`line_name`]). Code fences are
/// ignored. Callers decide which names are acceptable.
pub fn reply_names(reply: &str) -> Vec<String> {
    let body = strip_code_fences(reply);
    let mut names: Vec<String> = Vec::new();
    let trimmed = body.trim();
    if trimmed.starts_with('[') || trimmed.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            json_names(&v, &mut names);
        }
    }
    if names.is_empty() {
        names.extend(body.lines().filter_map(line_name));
    }
    names
}

/// The entry a line of a list names: its first token once bullets (`-`, `*`, `•`, `>`),
/// numbering (`1.`, `2)`), quotes, backticks and brackets are stripped, without a trailing
/// `.` or `:`. `None` for a line with no token.
pub fn line_name(line: &str) -> Option<String> {
    let l = line
        .trim()
        .trim_start_matches(|c: char| {
            c == '-' || c == '*' || c == '•' || c == '>' || c.is_whitespace()
        })
        .trim_start_matches(|c: char| c.is_ascii_digit());
    let l = l
        .strip_prefix('.')
        .or_else(|| l.strip_prefix(')'))
        .unwrap_or(l)
        .trim();
    l.split(|c: char| c.is_whitespace() || c == ',')
        .map(|token| {
            token
                .trim_matches(|c: char| "\"'`*[](){};".contains(c))
                .trim_end_matches(['.', ':'])
        })
        .find(|t| !t.is_empty())
        .map(str::to_string)
}

/// Collects the names a JSON reply holds: strings, arrays of them, objects naming one
/// (`key`, `path`, `prefix`, `topic`, `full_key`, `name`) or holding lists (`keys`, `paths`,
/// `prefixes`, `topics`, `selected`, `picks`, `result`); an object with none of these gives
/// its field names.
pub fn json_names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.trim().to_string()),
        Value::Array(items) => items.iter().for_each(|i| json_names(i, out)),
        Value::Object(m) => {
            let fields = ["key", "path", "prefix", "topic", "full_key", "name"];
            if let Some(s) = fields
                .iter()
                .find_map(|f| m.get(*f).and_then(Value::as_str))
            {
                out.push(s.trim().to_string());
                return;
            }
            let lists = [
                "keys", "paths", "prefixes", "topics", "selected", "picks", "result",
            ];
            let mut found = false;
            for f in lists {
                if let Some(x) = m.get(f) {
                    json_names(x, out);
                    found = true;
                }
            }
            if !found {
                out.extend(m.keys().cloned());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lines_give_their_first_token() {
        assert_eq!(line_name("- `a.b.c` is it"), Some("a.b.c".into()));
        assert_eq!(line_name("2) \"work:x.y\","), Some("work:x.y".into()));
        assert_eq!(line_name("  * a.b."), Some("a.b".into()));
        assert_eq!(line_name(" - "), None);
    }

    #[test]
    fn json_and_fenced_replies_give_their_strings() {
        let names = reply_names("```json\n{\"keys\": [\"a.b\", {\"path\": \"c.d\"}]}\n```");
        assert_eq!(names, ["a.b", "c.d"]);
        assert_eq!(reply_names("{\"x\": 1, \"y\": 2}"), ["x", "y"]);
        assert_eq!(reply_names("a.b\n\nc.d"), ["a.b", "c.d"]);
        assert_eq!(strip_code_fences("```\nx\n```"), "x");
    }
}
