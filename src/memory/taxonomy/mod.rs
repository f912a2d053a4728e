//! The taxonomy: the categories a store files memories under, with their descriptions,
//! suggested second-level topics and examples. It grounds the classifier (`remember` without
//! `-p`) and `capture`, which see it as a prompt block ([`Taxonomy::snippet`]).
//!
//! A taxonomy is written as a markdown document with front matter (the built-in one is
//! [`BUILTIN_GENERAL`]):
//!
//! ```text
//! ---
//! name: general
//! description: One line about the taxonomy.
//! ---
//!
//! ## debugging
//! Failures and how they were diagnosed.
//!
//! Topics:
//! - errors: error messages and what they meant
//!
//! Examples:
//! - debugging.errors.store_busy: "store busy" meant another process held the LOCK
//! ```
//!
//! Rules ([`Taxonomy::parse`]): the document starts with a `---` line; the front matter is
//! `key: value` lines up to the next `---` (`name` required, `description` optional, nothing
//! else); each `## id` heading starts a category whose id is a plain segment (`a-z`, `0-9`,
//! `_`, `-`, starting with a letter or digit); the text under it up to `Topics:` or
//! `Examples:` is its description (required); `Topics:` lists `- topic: description` items,
//! `Examples:` lists `- category.topic.detail: text` items whose path is three plain
//! segments beginning with the category. Lines before the first category (a `# Title`, an
//! introduction) are ignored. Limits: [`MAX_DOCUMENT_BYTES`], [`MAX_CATEGORIES`],
//! [`MAX_TOPICS`] and [`MAX_EXAMPLES`] per category, [`MAX_TEXT_CHARS`] per text.
//!
//! A store holds its taxonomy as ordinary records in the namespace [`NAMESPACE`]: one record
//! per category at the category's id (its content is the category's section without the
//! heading, [`Category::body`]) and one at [`META_PATH`] holding the front matter. So the
//! taxonomy is versioned like every memory: `--at`, `log`, `diff` and `blame` work on it.

use super::classify::plain_segment;
use super::MemoryError;

/// The namespace a store keeps its taxonomy in.
pub const NAMESPACE: &str = "memoir:taxonomy";
/// The path, in [`NAMESPACE`], of the record holding the taxonomy's name and description.
/// Its leading `_` keeps it apart from category ids.
pub const META_PATH: &str = "_taxonomy";
/// The built-in general taxonomy, as a document.
pub const BUILTIN_GENERAL: &str = include_str!("general.md");
/// Longest taxonomy document read.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 10;
/// Most categories of a taxonomy.
pub const MAX_CATEGORIES: usize = 32;
/// Most topics of a category.
pub const MAX_TOPICS: usize = 16;
/// Most examples of a category.
pub const MAX_EXAMPLES: usize = 8;
/// Longest description, topic description or example text, in characters.
pub const MAX_TEXT_CHARS: usize = 300;

/// A taxonomy: its name, description and categories (sorted by id).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Taxonomy {
    /// Its name (`general`).
    pub name: String,
    /// One line about it (may be empty).
    pub description: String,
    /// The first-level categories, sorted by id.
    pub categories: Vec<Category>,
}

/// One first-level category.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Category {
    /// The first path segment.
    pub id: String,
    /// What belongs here.
    pub description: String,
    /// Suggested second-level segments.
    pub topics: Vec<Topic>,
    /// Example memories.
    pub examples: Vec<Example>,
}

/// A suggested second-level segment of a category.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Topic {
    /// The segment.
    pub name: String,
    /// What belongs under it.
    pub description: String,
}

/// An example memory of a category.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Example {
    /// Its three-level path.
    pub path: String,
    /// Its content.
    pub text: String,
}

fn fail(line: usize, why: impl std::fmt::Display) -> MemoryError {
    if line == 0 {
        MemoryError::Taxonomy(why.to_string())
    } else {
        MemoryError::Taxonomy(format!("line {line}: {why}"))
    }
}

fn check_text(line: usize, what: &str, text: &str) -> Result<(), MemoryError> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(fail(
            line,
            format!("{what} is longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(fail(line, format!("{what} holds a control character")));
    }
    Ok(())
}

/// Where the lines of a category go.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    Description,
    Topics,
    Examples,
}

impl Taxonomy {
    /// The built-in general taxonomy.
    pub fn builtin() -> Taxonomy {
        Taxonomy::parse(BUILTIN_GENERAL).expect("the built-in taxonomy follows its format")
    }

    /// Reads a taxonomy document (the rules of the module documentation); a broken rule is
    /// [`MemoryError::Taxonomy`] naming the line.
    pub fn parse(text: &str) -> Result<Taxonomy, MemoryError> {
        if text.len() > MAX_DOCUMENT_BYTES {
            return Err(fail(
                0,
                format!(
                    "the document is longer than {} KiB",
                    MAX_DOCUMENT_BYTES >> 10
                ),
            ));
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, l)) if l.trim_end() == "---" => {}
            _ => {
                return Err(fail(
                    1,
                    "a taxonomy starts with front matter: a line '---', then 'name: ...'",
                ))
            }
        }
        let mut name = None;
        let mut description = String::new();
        let mut closed = false;
        for (n, line) in lines.by_ref() {
            let t = line.trim();
            if t == "---" {
                closed = true;
                break;
            }
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let Some((k, v)) = t.split_once(':') else {
                return Err(fail(n, "front matter lines are 'key: value'"));
            };
            let v = unquote(v.trim());
            match k.trim() {
                "name" => {
                    if !plain_segment(v) {
                        return Err(fail(
                            n,
                            format!("name {v:?} is not 1..=64 of a-z, 0-9, '_', '-'"),
                        ));
                    }
                    name = Some(v.to_string());
                }
                "description" => {
                    check_text(n, "the description", v)?;
                    description = v.to_string();
                }
                other => {
                    return Err(fail(
                        n,
                        format!("unknown front matter key {other:?} (name, description)"),
                    ))
                }
            }
        }
        if !closed {
            return Err(fail(0, "the front matter has no closing '---' line"));
        }
        let name = name.ok_or_else(|| fail(0, "the front matter has no 'name'"))?;
        let categories = parse_categories(lines)?;
        if categories.is_empty() {
            return Err(fail(0, "the taxonomy has no category ('## id' heading)"));
        }
        Ok(Taxonomy {
            name,
            description,
            categories,
        })
    }

    /// The category `id`, if there is one.
    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }

    /// The document of this taxonomy (read back by [`Taxonomy::parse`] as it is).
    pub fn to_markdown(&self) -> String {
        let mut out = format!("---\n{}---\n", self.meta());
        for c in &self.categories {
            out.push_str(&format!("\n## {}\n{}", c.id, c.body()));
        }
        out
    }

    /// The front matter lines (the content of the [`META_PATH`] record).
    pub fn meta(&self) -> String {
        let mut out = format!("name: {}\n", self.name);
        if !self.description.is_empty() {
            out.push_str(&format!("description: {}\n", self.description));
        }
        out
    }

    /// The records a store keeps this taxonomy as (path in [`NAMESPACE`], content): the
    /// [`META_PATH`] record first, then one per category.
    pub fn records(&self) -> Vec<(String, String)> {
        let mut out = vec![(META_PATH.to_string(), self.meta())];
        out.extend(self.categories.iter().map(|c| (c.id.clone(), c.body())));
        out
    }

    /// Reads a taxonomy back from its records in a store: the [`META_PATH`] record's content
    /// and the `(path, content)` of every other record of [`NAMESPACE`].
    pub fn from_records(
        meta: &str,
        categories: &[(String, String)],
    ) -> Result<Taxonomy, MemoryError> {
        let mut doc = format!("---\n{}\n---\n", meta.trim_end());
        for (id, body) in categories {
            if !plain_segment(id) {
                return Err(fail(
                    0,
                    format!(
                        "the store's taxonomy holds a record at {id:?}, which is not a category id"
                    ),
                ));
            }
            doc.push_str(&format!("## {id}\n{body}\n"));
        }
        let damaged =
            |m: String| MemoryError::Taxonomy(format!("the store's taxonomy is damaged: {m}"));
        let t = Taxonomy::parse(&doc).map_err(|e| match e {
            MemoryError::Taxonomy(m) => damaged(m),
            other => other,
        })?;
        if t.categories.len() != categories.len() {
            return Err(damaged("a category's record holds a '## ' heading".into()));
        }
        Ok(t)
    }

    /// The prompt block the classifier and `capture` show a model: the name, the rule that a
    /// path is `category.topic.detail` with a category of the list, and one line per
    /// category with its description, topics and first example.
    pub fn snippet(&self) -> String {
        let mut out = format!("Taxonomy \"{}\"", self.name);
        if !self.description.is_empty() {
            out.push_str(&format!(": {}", self.description));
        }
        out.push_str(
            "\nPaths are category.topic.detail; the category is one of these (topics are suggestions):\n",
        );
        for c in &self.categories {
            out.push_str(&format!("- {}: {}", c.id, c.description));
            if !c.topics.is_empty() {
                let names: Vec<&str> = c.topics.iter().map(|t| t.name.as_str()).collect();
                out.push_str(&format!(" Topics: {}.", names.join(", ")));
            }
            if let Some(e) = c.examples.first() {
                out.push_str(&format!(" Example: {} = {}", e.path, e.text));
            }
            out.push('\n');
        }
        out
    }
}

impl Category {
    /// The category's section without its heading: the description, then its `Topics:` and
    /// `Examples:` lists (the content of its record in a store).
    pub fn body(&self) -> String {
        let mut out = format!("{}\n", self.description);
        if !self.topics.is_empty() {
            out.push_str("\nTopics:\n");
            for t in &self.topics {
                out.push_str(&format!("- {}: {}\n", t.name, t.description));
            }
        }
        if !self.examples.is_empty() {
            out.push_str("\nExamples:\n");
            for e in &self.examples {
                out.push_str(&format!("- {}: {}\n", e.path, e.text));
            }
        }
        out
    }
}

/// `"text"` or `'text'` without its quotes.
fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// The categories of a document's body, sorted by id. Lines before the first category are
/// ignored (a title, an introduction).
fn parse_categories<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
) -> Result<Vec<Category>, MemoryError> {
    let mut out: Vec<Category> = Vec::new();
    let mut block = Block::Description;
    let mut started = false;
    for (n, line) in lines {
        let t = line.trim();
        if let Some(id) = t.strip_prefix("## ") {
            let id = id.trim();
            if !plain_segment(id) {
                return Err(fail(
                    n,
                    format!("category id {id:?} is not 1..=64 of a-z, 0-9, '_', '-' starting with a letter or digit"),
                ));
            }
            if out.iter().any(|c| c.id == id) {
                return Err(fail(n, format!("category {id:?} appears twice")));
            }
            if out.len() == MAX_CATEGORIES {
                return Err(fail(n, format!("more than {MAX_CATEGORIES} categories")));
            }
            out.push(Category {
                id: id.to_string(),
                description: String::new(),
                topics: Vec::new(),
                examples: Vec::new(),
            });
            block = Block::Description;
            started = true;
            continue;
        }
        if !started {
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if t.starts_with('#') {
            return Err(fail(
                n,
                "only '## id' headings are allowed after the first category",
            ));
        }
        let cat = out.last_mut().expect("a category was started");
        match t.to_ascii_lowercase().as_str() {
            "topics:" => {
                block = Block::Topics;
                continue;
            }
            "examples:" => {
                block = Block::Examples;
                continue;
            }
            _ => {}
        }
        let item = t.strip_prefix("- ").or_else(|| t.strip_prefix("* "));
        match (block, item) {
            (Block::Description, None) => {
                if !cat.description.is_empty() {
                    cat.description.push(' ');
                }
                cat.description.push_str(t);
                check_text(n, "the description", &cat.description)?;
            }
            (Block::Description, Some(_)) => {
                return Err(fail(n, "a list item before 'Topics:' or 'Examples:'"));
            }
            (_, None) => {
                return Err(fail(
                    n,
                    "under 'Topics:' and 'Examples:' every line is a list item '- name: text'",
                ));
            }
            (Block::Topics, Some(item)) => {
                let (name, text) = split_item(n, item)?;
                if !plain_segment(name) {
                    return Err(fail(n, format!("topic {name:?} is not a plain segment")));
                }
                check_text(n, "the topic's description", text)?;
                if cat.topics.len() == MAX_TOPICS {
                    return Err(fail(n, format!("more than {MAX_TOPICS} topics")));
                }
                cat.topics.push(Topic {
                    name: name.to_string(),
                    description: text.to_string(),
                });
            }
            (Block::Examples, Some(item)) => {
                let (path, text) = split_item(n, item)?;
                let segs: Vec<&str> = path.split('.').collect();
                if segs.len() != 3 || !segs.iter().all(|s| plain_segment(s)) {
                    return Err(fail(
                        n,
                        format!("example path {path:?} is not three plain segments"),
                    ));
                }
                if segs[0] != cat.id {
                    return Err(fail(
                        n,
                        format!("example path {path:?} is not in category {:?}", cat.id),
                    ));
                }
                check_text(n, "the example", text)?;
                if cat.examples.len() == MAX_EXAMPLES {
                    return Err(fail(n, format!("more than {MAX_EXAMPLES} examples")));
                }
                cat.examples.push(Example {
                    path: path.to_string(),
                    text: text.to_string(),
                });
            }
        }
    }
    if let Some(c) = out.iter().find(|c| c.description.is_empty()) {
        return Err(fail(0, format!("category {:?} has no description", c.id)));
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// `name: text` of a list item, both sides non-empty.
fn split_item(line: usize, item: &str) -> Result<(&str, &str), MemoryError> {
    match item.split_once(':') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => Ok((a.trim(), b.trim())),
        _ => Err(fail(line, "a list item is '- name: text'")),
    }
}

#[cfg(test)]
mod tests;
