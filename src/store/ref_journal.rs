//! The ref journal: the ref log's lines of the newest moves, kept in the database's `meta`
//! tree (key [`JOURNAL_KEY`]) and written in the same transaction as the moves. The log is
//! appended only after the flush that makes a move durable; a crash between the two would
//! lose the log's line, so the next open appends what the journal holds and the log's tail
//! lacks. Lines known to be logged are dropped by the next move's transaction, so keeping
//! the journal costs no write of its own. Layout in store-format.md, section 1.

use sled::transaction::{abort, ConflictableTransactionError, TransactionError};
use sled::Transactional;

use super::{RefMismatch, RefMove};

/// Key of the `meta` tree holding the journal: ref log lines, each ending in a line feed.
pub(super) const JOURNAL_KEY: &[u8] = b"ref-journal";

/// Moves every ref of `moves` in `refs` by compare-and-swap, all or none, and in the same
/// transaction drops `logged` (lines the ref log holds) from the journal in `meta` and
/// appends `lines`; on a mismatch, the first ref that differs and its current value.
pub(super) fn move_refs(
    refs: &sled::Tree,
    meta: &sled::Tree,
    moves: &[RefMove<'_>],
    lines: &[u8],
    logged: &[u8],
) -> Result<Result<(), RefMismatch>, sled::Error> {
    let outcome = (refs, meta).transaction(|(refs, meta)| {
        for m in moves {
            let current = refs.get(m.name)?;
            if current.as_deref() != m.expected {
                return abort((m.name.to_string(), current.map(|v| v.to_vec())));
            }
        }
        for m in moves {
            match m.new {
                Some(v) => refs.insert(m.name, v)?,
                None => refs.remove(m.name)?,
            };
        }
        if !lines.is_empty() || !logged.is_empty() {
            let old = meta
                .get(JOURNAL_KEY)?
                .map(|v| v.to_vec())
                .unwrap_or_default();
            let mut journal = without(&old, logged);
            journal.extend_from_slice(lines);
            if journal.is_empty() {
                meta.remove(JOURNAL_KEY)?;
            } else if journal != old {
                meta.insert(JOURNAL_KEY, journal)?;
            }
        }
        Ok::<(), ConflictableTransactionError<RefMismatch>>(())
    });
    match outcome {
        Ok(()) => Ok(Ok(())),
        Err(TransactionError::Abort(differs)) => Ok(Err(differs)),
        Err(TransactionError::Storage(e)) => Err(e),
    }
}

/// The journal's bytes (empty when there is none).
pub(super) fn read(meta: &sled::Tree) -> Result<Vec<u8>, sled::Error> {
    Ok(meta
        .get(JOURNAL_KEY)?
        .map(|v| v.to_vec())
        .unwrap_or_default())
}

/// `journal` without the bytes of `logged`, wherever they sit in it (lines an earlier open
/// could not log may come before them); unchanged when it does not hold them.
fn without(journal: &[u8], logged: &[u8]) -> Vec<u8> {
    if logged.is_empty() {
        return journal.to_vec();
    }
    match journal.windows(logged.len()).position(|w| w == logged) {
        Some(at) => [&journal[..at], &journal[at + logged.len()..]].concat(),
        None => journal.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_and_lines_go_together_and_a_mismatch_changes_neither() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let (refs, meta) = (db.open_tree("refs").unwrap(), db.open_tree("meta").unwrap());
        let mv = |expected: Option<&'static [u8]>, new: &'static [u8]| RefMove {
            name: "HEAD",
            expected,
            new: Some(new),
        };
        assert_eq!(
            move_refs(&refs, &meta, &[mv(None, b"a")], b"one\n", b"").unwrap(),
            Ok(())
        );
        assert_eq!(
            move_refs(&refs, &meta, &[mv(None, b"b")], b"two\n", b"one\n").unwrap(),
            Err(("HEAD".to_string(), Some(b"a".to_vec())))
        );
        assert_eq!(read(&meta).unwrap(), b"one\n");
        move_refs(&refs, &meta, &[mv(Some(b"a"), b"c")], b"three\n", b"one\n")
            .unwrap()
            .unwrap();
        assert_eq!(read(&meta).unwrap(), b"three\n");
        assert_eq!(refs.get("HEAD").unwrap().as_deref(), Some(&b"c"[..]));
    }

    #[test]
    fn logged_lines_are_dropped_wherever_they_are() {
        assert_eq!(without(b"old\nnew\nlater\n", b"new\n"), b"old\nlater\n");
        assert_eq!(without(b"old\n", b"absent\n"), b"old\n");
        assert_eq!(without(b"old\n", b""), b"old\n");
    }
}
