//! Anthropic's memory tool (`memory_20250818`) over a store: the model sees a directory
//! `/memories` of text files; here directories are key prefixes and files are memories of one
//! namespace ([`paths`] maps one to the other). `view`, `create`, `str_replace`, `insert`,
//! `delete` and `rename` answer with the texts the tool's reference implementation (the
//! `anthropic` SDK's local file system memory tool) answers with, and fail with its error
//! texts, so a model sees the same tool. Every change is one commit with the writer's
//! provenance, so the model's memory has blame, diff and time travel like any other.
//!
//! A file's text is the memory's content. A change writes the memory anew with one entry
//! holding the whole text (the old text lives on in history), keeping its related keys.
//! Content is checked like `remember`'s: its size, and credentials are refused.

mod paths;
mod text;

use serde::{Deserialize, Serialize};

use crate::key::{encoded_path, is_internal_namespace, nfc, validate_namespace, Key};
use crate::key::{DEFAULT_NAMESPACE, SEG_SEP};
use crate::memory::{read_record, Entry, Record};
use crate::object::ObjectId;
use crate::prolly::{prefix_range, Edit};
use crate::repo::Repo;

use super::input::{check_content, refuse_secrets};
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint, WriteAs};
pub use paths::ROOT as MEMORY_ROOT;
use paths::{unescape, MemoryPath};

/// One command of the memory tool, as the model sends it (`{"command": "view", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum MemoryCommand {
    /// A directory's listing (two levels deep) or a file's numbered lines.
    View {
        /// The path.
        path: String,
        /// For a file: the first and last line shown (from 1; -1 for the end).
        #[serde(default)]
        view_range: Option<Vec<i64>>,
    },
    /// A new file (an existing one is an error).
    Create {
        /// The path.
        path: String,
        /// Its text.
        file_text: String,
    },
    /// Replaces the one occurrence of `old_str` in a file.
    StrReplace {
        /// The file.
        path: String,
        /// Text that occurs exactly once.
        old_str: String,
        /// Its replacement.
        new_str: String,
    },
    /// Inserts a line after line `insert_line` (0: at the top).
    Insert {
        /// The file.
        path: String,
        /// Lines kept above the new text.
        insert_line: i64,
        /// The text inserted.
        insert_text: String,
    },
    /// Deletes a file, or a directory and everything in it.
    Delete {
        /// The path.
        path: String,
    },
    /// Moves a file or a directory.
    Rename {
        /// Where it is.
        old_path: String,
        /// Where it goes (must not exist).
        new_path: String,
    },
}

impl MemoryCommand {
    /// The command's name.
    pub fn name(&self) -> &'static str {
        match self {
            MemoryCommand::View { .. } => "view",
            MemoryCommand::Create { .. } => "create",
            MemoryCommand::StrReplace { .. } => "str_replace",
            MemoryCommand::Insert { .. } => "insert",
            MemoryCommand::Delete { .. } => "delete",
            MemoryCommand::Rename { .. } => "rename",
        }
    }
}

/// Why a memory tool command was refused; the message is the text the model is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryFileError {
    /// The path is not under `/memories`.
    #[error("Path must start with /memories, got: {path}")]
    OutsideRoot {
        /// The path.
        path: String,
    },
    /// `..` leads above `/memories`.
    #[error("Path {path} would escape /memories directory")]
    Escapes {
        /// The path.
        path: String,
    },
    /// A name that no key may have (see `paths`).
    #[error("Path {path} is not a valid memory path: {why}")]
    InvalidName {
        /// The path.
        path: String,
        /// The key rule it breaks.
        why: String,
    },
    /// Nothing at the path (view, str_replace, insert).
    #[error("The path {path} does not exist. Please provide a valid path.")]
    NoSuchPath {
        /// The path.
        path: String,
    },
    /// Nothing at the path (delete, rename).
    #[error("The path {path} does not exist")]
    NothingThere {
        /// The path.
        path: String,
    },
    /// A directory where a file is needed.
    #[error("The path {path} is not a file.")]
    NotAFile {
        /// The path.
        path: String,
    },
    /// `create` of a file that exists.
    #[error("File {path} already exists")]
    FileExists {
        /// The path.
        path: String,
    },
    /// `rename` onto something that exists.
    #[error("The destination {path} already exists")]
    DestinationExists {
        /// The destination.
        path: String,
    },
    /// `old_str` is not in the file.
    #[error("No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")]
    NoMatch {
        /// The file.
        path: String,
        /// The text looked for.
        old: String,
    },
    /// `old_str` is in the file more than once.
    #[error("No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {lines}. Please ensure it is unique")]
    NotUnique {
        /// The text looked for.
        old: String,
        /// The lines it starts on, comma-separated.
        lines: String,
    },
    /// `insert_line` outside the file.
    #[error(
        "Invalid `insert_line` parameter: {line}. It should be within the range [0, {count}]."
    )]
    BadInsertLine {
        /// The line asked for.
        line: i64,
        /// The file's line count.
        count: usize,
    },
    /// A file over the tool's line limit.
    #[error("File {path} exceeds maximum line limit of 999,999 lines.")]
    TooManyLines {
        /// The file.
        path: String,
    },
    /// `delete` or `rename` of `/memories` itself.
    #[error("Cannot {verb} the /memories directory itself")]
    Root {
        /// `delete` or `rename`.
        verb: &'static str,
    },
}

impl MemoryFileError {
    /// Whether the error says nothing is at a path (exit 2).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            MemoryFileError::NoSuchPath { .. } | MemoryFileError::NothingThere { .. }
        )
    }
}

/// What a memory tool command did.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryFileOutcome {
    /// Always true (a refusal is an error).
    pub success: bool,
    /// The command run.
    pub command: &'static str,
    /// The namespace the files live in.
    pub namespace: String,
    /// The answer the model is shown.
    pub text: String,
    /// The commit a change made (null for `view`).
    pub commit_hash: Option<String>,
    /// The keys (paths) the change wrote or removed, sorted.
    pub changed_keys: Vec<String>,
}

impl Outcome for MemoryFileOutcome {
    crate::outcome_json!();
}

/// The files and directories at and below a path, as stored.
struct Found {
    /// The memory at the path itself.
    file: Option<(ObjectId, Record)>,
    /// The keys strictly below it (a directory's contents), with their values.
    below: Vec<(Vec<u8>, ObjectId)>,
}

impl Memoir {
    /// Runs one memory tool command on the files of `namespace` (default `default`; memoir's
    /// own `memoir:*` namespaces are refused) at the tip of `who`'s branch (else HEAD's),
    /// writing as `who`. A refusal is [`MemoirError::MemoryFile`], whose message is the text
    /// the model is shown.
    pub fn memory_files(
        &self,
        command: &MemoryCommand,
        namespace: Option<&str>,
        who: &WriteAs,
    ) -> MemoirResult<MemoryFileOutcome> {
        let ns = nfc(namespace.unwrap_or(DEFAULT_NAMESPACE)).into_owned();
        validate_namespace(&ns)?;
        if is_internal_namespace(&ns) {
            return Err(MemoirError::invalid(format!(
                "namespace '{ns}' is memoir's own; memory files live in another"
            )));
        }
        let outcome =
            |text: String, commit: Option<ObjectId>, changed: Vec<String>| MemoryFileOutcome {
                success: true,
                command: command.name(),
                namespace: ns.clone(),
                text,
                commit_hash: commit.map(|c| c.to_hex()),
                changed_keys: changed,
            };
        if let MemoryCommand::View { path, view_range } = command {
            let path = MemoryPath::parse(path, &ns)?;
            let at = ReadPoint {
                at: None,
                branch: who.branch.clone(),
            };
            let text = self.reading(|repo| {
                let (_, commit) = self.read_commit(repo, &at)?;
                let root = repo.root_of(&commit)?;
                view(repo, &root, &ns, &path, view_range.as_deref())
            })?;
            return Ok(outcome(text, None, Vec::new()));
        }
        who.check()?;
        let tx = self.start_transaction(who)?;
        let (repo, root) = (tx.repo(), tx.root());
        let now = self.clock().now();
        let rewrite = |key: &Key, old: Option<&Record>, text: String| -> MemoirResult<Edit> {
            check_content(&text)?;
            refuse_secrets(&text, false)?;
            let mut entry = Entry::new(&text, 1.0, now);
            entry.source = who.source.clone().filter(|s| !s.is_empty());
            entry.actor = who.actor.clone().filter(|s| !s.is_empty());
            let related = old.map(|r| r.related_keys.clone()).unwrap_or_default();
            let mut record = Record::new(key, entry, related);
            record.related_sets = old.map(|r| r.related_sets.clone()).unwrap_or_default();
            let id = repo.objects().write(&record.to_blob()?)?;
            Ok(Edit::Put(key.encode(), id))
        };
        let (text, edits, message, changed) = match command {
            MemoryCommand::View { .. } => unreachable!("answered above"),
            MemoryCommand::Create { path, file_text } => {
                let p = MemoryPath::parse(path, &ns)?;
                let key = file_key(&p, &ns)?;
                if find(repo, &root, &ns, &p)?.file.is_some() {
                    return Err(MemoryFileError::FileExists { path: p.shown }.into());
                }
                let edit = rewrite(&key, None, file_text.clone())?;
                let text = format!("File created successfully at: {path}");
                (
                    text,
                    vec![edit],
                    store_message(&key),
                    vec![key.path().into()],
                )
            }
            MemoryCommand::StrReplace {
                path,
                old_str,
                new_str,
            } => {
                let p = MemoryPath::parse(path, &ns)?;
                let (key, record) = existing_file(repo, &root, &ns, &p)?;
                let (content, text) = text::replace(&record.content(), old_str, new_str, path)?;
                let edit = rewrite(&key, Some(&record), content)?;
                (
                    text,
                    vec![edit],
                    store_message(&key),
                    vec![key.path().into()],
                )
            }
            MemoryCommand::Insert {
                path,
                insert_line,
                insert_text,
            } => {
                let p = MemoryPath::parse(path, &ns)?;
                let (key, record) = existing_file(repo, &root, &ns, &p)?;
                let content = text::insert(&record.content(), *insert_line, insert_text)?;
                let edit = rewrite(&key, Some(&record), content)?;
                let text = format!("The file {path} has been edited.");
                (
                    text,
                    vec![edit],
                    store_message(&key),
                    vec![key.path().into()],
                )
            }
            MemoryCommand::Delete { path } => {
                let p = MemoryPath::parse(path, &ns)?;
                if p.is_root() {
                    return Err(MemoryFileError::Root { verb: "delete" }.into());
                }
                let found = find(repo, &root, &ns, &p)?;
                let gone: Vec<Vec<u8>> = match (&found.file, found.below.is_empty()) {
                    (Some(_), _) => vec![file_key(&p, &ns)?.encode()],
                    (None, false) => found.below.into_iter().map(|(k, _)| k).collect(),
                    (None, true) => {
                        return Err(MemoryFileError::NothingThere { path: p.shown }.into())
                    }
                };
                let changed: Vec<String> = gone.iter().map(|k| encoded_path(k)).collect();
                let message = match changed.as_slice() {
                    [one] => format!("Delete {one} from {ns}"),
                    many => format!("Delete {} from {ns}", many.join(", ")),
                };
                let edits = gone.into_iter().map(Edit::Delete).collect();
                (
                    format!("Successfully deleted {path}"),
                    edits,
                    message,
                    changed,
                )
            }
            MemoryCommand::Rename { old_path, new_path } => {
                let from = MemoryPath::parse(old_path, &ns)?;
                let to = MemoryPath::parse(new_path, &ns)?;
                if from.is_root() {
                    return Err(MemoryFileError::Root { verb: "rename" }.into());
                }
                let target = find(repo, &root, &ns, &to)?;
                if to.is_root() || target.file.is_some() || !target.below.is_empty() {
                    return Err(MemoryFileError::DestinationExists { path: to.shown }.into());
                }
                let found = find(repo, &root, &ns, &from)?;
                let moves = moves(repo, &ns, &from, &to, found)?;
                let mut edits = Vec::with_capacity(moves.len() * 2);
                let mut changed = Vec::with_capacity(moves.len() * 2);
                for (old, new, mut record) in moves {
                    record.key = new.path().to_string();
                    record.namespace = new.namespace().to_string();
                    let id = repo.objects().write(&record.to_blob()?)?;
                    changed.push(old.path().to_string());
                    changed.push(new.path().to_string());
                    edits.push(Edit::Delete(old.encode()));
                    edits.push(Edit::Put(new.encode(), id));
                }
                changed.sort();
                let message = format!(
                    "Rename {} to {} in {ns}",
                    from.segments.join("."),
                    to.segments.join(".")
                );
                let text = format!("Successfully renamed {old_path} to {new_path}");
                (text, edits, message, changed)
            }
        };
        let committed = tx.finish(edits, &message)?;
        Ok(outcome(text, Some(committed.id), changed))
    }
}

fn store_message(key: &Key) -> String {
    format!("Store {} in {}", key.path(), key.namespace())
}

/// The key of the file at `p` (the root is a directory).
fn file_key(p: &MemoryPath, ns: &str) -> Result<Key, MemoryFileError> {
    p.key(ns).ok_or_else(|| MemoryFileError::NotAFile {
        path: p.shown.clone(),
    })
}

/// What is at and below `p`.
fn find(repo: &Repo, root: &ObjectId, ns: &str, p: &MemoryPath) -> MemoirResult<Found> {
    let file = match p.key(ns) {
        Some(key) => match repo.tree().get(root, &key.encode())? {
            Some(id) => Some((id, read_record(repo.objects(), &id)?)),
            None => None,
        },
        None => None,
    };
    let below = repo.tree().collect(root, &prefix_range(&p.below(ns)))?;
    Ok(Found { file, below })
}

/// The file at `p` and its record; a directory or nothing there is the tool's error.
fn existing_file(
    repo: &Repo,
    root: &ObjectId,
    ns: &str,
    p: &MemoryPath,
) -> MemoirResult<(Key, Record)> {
    let found = find(repo, root, ns, p)?;
    match found.file {
        Some((_, record)) => Ok((file_key(p, ns)?, record)),
        None if p.is_root() || !found.below.is_empty() => Err(MemoryFileError::NotAFile {
            path: p.shown.clone(),
        }
        .into()),
        None => Err(MemoryFileError::NoSuchPath {
            path: p.shown.clone(),
        }
        .into()),
    }
}

/// The (old key, new key, record) moves of a rename of `from` (a file, else a directory)
/// to `to`.
fn moves(
    repo: &Repo,
    ns: &str,
    from: &MemoryPath,
    to: &MemoryPath,
    found: Found,
) -> MemoirResult<Vec<(Key, Key, Record)>> {
    if let Some((_, record)) = found.file {
        return Ok(vec![(file_key(from, ns)?, file_key(to, ns)?, record)]);
    }
    if found.below.is_empty() {
        return Err(MemoryFileError::NothingThere {
            path: from.shown.clone(),
        }
        .into());
    }
    let skip = from.below(ns).len();
    let mut out = Vec::with_capacity(found.below.len());
    for (key, id) in found.below {
        let old = Key::decode(&key)?;
        let rest: Vec<String> = key[skip..]
            .split(|&b| b == SEG_SEP)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        let mut segments = to.segments.clone();
        segments.extend(rest);
        let new = Key::new(ns, &segments.join(".")).map_err(|e| MemoryFileError::InvalidName {
            path: to.shown.clone(),
            why: e.to_string(),
        })?;
        out.push((old, new, read_record(repo.objects(), &id)?));
    }
    Ok(out)
}

/// `view` of `p`: a file's numbered lines, else a directory's listing.
fn view(
    repo: &Repo,
    root: &ObjectId,
    ns: &str,
    p: &MemoryPath,
    range: Option<&[i64]>,
) -> MemoirResult<String> {
    let found = find(repo, root, ns, p)?;
    if let Some((_, record)) = &found.file {
        return Ok(text::numbered(&record.content(), &p.shown, range)?);
    }
    if !p.is_root() && found.below.is_empty() {
        return Err(MemoryFileError::NoSuchPath {
            path: p.shown.clone(),
        }
        .into());
    }
    let skip = p.below(ns).len();
    let mut files = Vec::with_capacity(found.below.len());
    for (key, id) in &found.below {
        let names: Vec<String> = key[skip..]
            .split(|&b| b == SEG_SEP)
            .map(|s| unescape(&String::from_utf8_lossy(s)))
            .collect();
        let size = read_record(repo.objects(), id)?.content().len() as u64;
        files.push((names, size));
    }
    Ok(text::listing(&p.shown, &files))
}
