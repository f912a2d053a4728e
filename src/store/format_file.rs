//! The FORMAT file: the metadata whose presence makes a directory a store, naming the format
//! version and the engine. It is written last by `create` and rewritten once when an older
//! version is upgraded, always whole (store-format.md, section 1).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use super::files::write_atomically;
use super::{StoreError, StoreResult};

/// Name of the metadata file inside a store directory.
pub const FORMAT_FILE: &str = "FORMAT";
/// The store format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 4;
/// The oldest format version this build opens: objects inside sled, no `packs/` directory.
/// It and the versions after it up to [`FORMAT_VERSION`] (which kept the object index in the
/// database) are upgraded when opened (see the `upgrade` module).
pub(super) const LEGACY_FORMAT_VERSION: u32 = 1;

/// First line of every FORMAT file.
const FORMAT_MAGIC: &str = "memoir-store";
/// FORMAT files are a few dozen bytes; refuse to read more than this of one.
const FORMAT_MAX_BYTES: u64 = 4096;

/// The error for a directory `path` that is not a store, and why.
pub(super) fn not_a_store(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::NotAStore {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The exact FORMAT file content this build writes (sled is the only engine a store
/// directory has).
fn format_text() -> String {
    format!("{FORMAT_MAGIC}\nformat-version: {FORMAT_VERSION}\nbackend: sled\n")
}

/// Parse a FORMAT file strictly: the magic line, then `key: value` lines among which
/// `format-version` and `backend` are required; unknown keys are ignored (forward
/// compatibility). The backend must be sled. `path` is the store directory, for errors.
fn parse_format(path: &Path, text: &str) -> StoreResult<u32> {
    let garbled = |why: String| not_a_store(path, format!("garbled {FORMAT_FILE} file: {why}"));
    // One trailing LF ends the last line; any other empty line is garbage.
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines = body.split('\n');
    if lines.next() != Some(FORMAT_MAGIC) {
        return Err(garbled(format!("first line is not `{FORMAT_MAGIC}`")));
    }
    let mut version: Option<&str> = None;
    let mut backend: Option<&str> = None;
    for line in lines {
        let Some((key, value)) = line.split_once(": ") else {
            return Err(garbled(format!("line {line:?} is not `key: value`")));
        };
        if key.is_empty() || value.is_empty() || key.contains(char::is_whitespace) {
            return Err(garbled(format!("line {line:?} is not `key: value`")));
        }
        let slot = match key {
            "format-version" => &mut version,
            "backend" => &mut backend,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(garbled(format!("`{key}` appears twice")));
        }
    }
    let version = version.ok_or_else(|| garbled("no `format-version` line".into()))?;
    let found: u32 = version
        .parse()
        .map_err(|_| garbled(format!("format-version {version:?} is not a number")))?;
    if !(LEGACY_FORMAT_VERSION..=FORMAT_VERSION).contains(&found) {
        return Err(StoreError::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
            supported: FORMAT_VERSION,
        });
    }
    match backend.ok_or_else(|| garbled("no `backend` line".into()))? {
        "sled" => Ok(found),
        other => Err(not_a_store(
            path,
            format!("unknown backend {other:?} in {FORMAT_FILE} file"),
        )),
    }
}

/// Read and parse the FORMAT file of store directory `path`: its format version.
pub(super) fn read_format(path: &Path) -> StoreResult<u32> {
    let unreadable =
        |e: io::Error| not_a_store(path, format!("cannot read {FORMAT_FILE} file: {e}"));
    let file = match File::open(path.join(FORMAT_FILE)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(not_a_store(
                path,
                format!(
                    "no {FORMAT_FILE} file (name a store with -s or MEMOIR_STORE; \
                     `memoir new PATH` makes one)"
                ),
            ))
        }
        opened => opened.map_err(unreadable)?,
    };
    let mut bytes = Vec::new();
    file.take(FORMAT_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > FORMAT_MAX_BYTES {
        return Err(not_a_store(
            path,
            format!("garbled {FORMAT_FILE} file: longer than {FORMAT_MAX_BYTES} bytes"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| not_a_store(path, format!("garbled {FORMAT_FILE} file: not UTF-8")))?;
    parse_format(path, &text)
}

/// Writes this build's FORMAT file into store directory `path`, atomically and durably
/// (so FORMAT is always whole): when a store is created, and when an older version has
/// been upgraded.
pub(super) fn write_format(path: &Path) -> StoreResult<()> {
    write_atomically(&path.join(FORMAT_FILE), format_text().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> StoreResult<u32> {
        parse_format(Path::new("/s"), text)
    }

    #[test]
    fn written_format_is_exact_and_parses() {
        let text = format_text();
        assert_eq!(text, "memoir-store\nformat-version: 4\nbackend: sled\n");
        assert_eq!(parse_format(Path::new("/s"), &text).unwrap(), 4);
        // Versions 2 and 3 still open (their database is rebuilt).
        assert_eq!(
            parse_format(
                Path::new("/s"),
                "memoir-store\nformat-version: 2\nbackend: sled\n"
            )
            .unwrap(),
            2
        );
        // Version 1 still opens (its objects are moved into packs).
        assert_eq!(
            parse_format(
                Path::new("/s"),
                "memoir-store\nformat-version: 1\nbackend: sled\n"
            )
            .unwrap(),
            1
        );
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let text = "memoir-store\ncreated-by: memoir 9\nformat-version: 1\nbackend: sled\nx: y\n";
        assert_eq!(parse(text).unwrap(), 1);
    }

    #[test]
    fn bad_formats_are_typed() {
        let not_store = |t: &str| matches!(parse(t), Err(StoreError::NotAStore { .. }));
        assert!(not_store(""));
        assert!(not_store("memoir-store\n"));
        assert!(not_store("git\nformat-version: 1\nbackend: sled\n"));
        assert!(not_store(
            "memoir-store\r\nformat-version: 1\r\nbackend: sled\r\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: one\nbackend: sled\n"
        ));
        assert!(not_store("memoir-store\nformat-version: 1\n"));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nbackend: rocks\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nbackend: memory\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\n\nbackend: sled\n"
        ));
        assert!(not_store(
            "memoir-store\nformat-version: 1\nformat-version: 1\nbackend: sled\n"
        ));
        assert!(not_store("memoir-store\nformat-version:1\nbackend: sled\n"));
        assert!(matches!(
            parse("memoir-store\nformat-version: 5\nbackend: sled\n"),
            Err(StoreError::UnsupportedVersion {
                found: 5,
                supported: 4,
                ..
            })
        ));
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        write_format(dir.path()).unwrap();
        assert_eq!(read_format(dir.path()).unwrap(), FORMAT_VERSION);
    }
}
