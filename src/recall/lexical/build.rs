//! Building the index of a whole tree in one pass: documents arrive in key order (a scan of
//! the tree), their terms are counted as they come, and the file is written from tables
//! that hold each document once, never as an index in memory first. A word's stem is
//! computed once per build, not once per occurrence.

use rustc_hash::FxHashMap;

use super::codec::Texts;
use super::index::Posting;
use super::tables::{DocRow, DocTables};
use super::vocab::Vocab;
use super::{DocView, Params};
use crate::object::ObjectId;
use crate::recall::tokenize::{is_stemmed, Tokenizer};
use crate::recall::{CacheError, RecallResult};

/// An index being built from documents given in key order (see the module documentation).
pub struct Builder {
    tokenizer: Tokenizer,
    key_weight: f64,
    /// The term of each word that is stemmed, by the word: one lookup per occurrence of a
    /// word seen before, instead of one for its stem and one for the stem's term.
    stemmed: FxHashMap<Box<str>, u32>,
    vocab: Vocab,
    /// (term, posting), in document order.
    postings: Vec<(u32, Posting)>,
    tables: DocTables,
    /// Per term, the document that last held it (plus one), its place in `counts`, and
    /// the documents that held it (its postings, counted here, where the term's entry is
    /// touched anyway, instead of in a pass over every posting when the file is written).
    seen: Vec<(u32, u32, u32)>,
    counts: Vec<(u32, u16, u16)>,
    terms: Vec<u32>,
}

impl Builder {
    /// An empty build, ranking with `params`.
    pub fn new(params: Params) -> Self {
        Builder {
            tokenizer: Tokenizer::default(),
            key_weight: params.key_weight,
            stemmed: FxHashMap::default(),
            vocab: Vocab::default(),
            postings: Vec::new(),
            tables: DocTables::new(),
            seen: Vec::new(),
            counts: Vec::new(),
            terms: Vec::new(),
        }
    }

    /// Adds the next document: `key` must come after the last one's. An error when a text
    /// passes what the cache file addresses.
    pub fn add(&mut self, key: &[u8], value: &ObjectId, doc: &DocView<'_>) -> RecallResult<()> {
        let number = self.tables.len() as u32;
        let stamp = number + 1;
        self.counts.clear();
        let mut key_terms = 0usize;
        let mut content_terms = 0usize;
        for (text, in_key) in [(doc.path, true), (doc.content, false)] {
            self.terms.clear();
            let (tokenizer, stemmed) = (&self.tokenizer, &mut self.stemmed);
            let (vocab, terms) = (&mut self.vocab, &mut self.terms);
            tokenizer.each_word(text, &mut |word, stem| {
                let id = if stem && is_stemmed(word) {
                    match stemmed.get(word) {
                        Some(&id) => id,
                        None => {
                            let id = vocab.id(&tokenizer.stem(word));
                            stemmed.insert(word.into(), id);
                            id
                        }
                    }
                } else {
                    vocab.id(word)
                };
                terms.push(id);
            });
            if in_key {
                key_terms = self.terms.len();
            } else {
                content_terms = self.terms.len();
            }
            for &id in &self.terms {
                if self.seen.len() <= id as usize {
                    self.seen.resize(id as usize + 1, (0, 0, 0));
                }
                let s = &mut self.seen[id as usize];
                if s.0 != stamp {
                    *s = (stamp, self.counts.len() as u32, s.2 + 1);
                    self.counts.push((id, 0, 0));
                }
                let c = &mut self.counts[s.1 as usize];
                if in_key {
                    c.1 = c.1.saturating_add(1);
                } else {
                    c.2 = c.2.saturating_add(1);
                }
            }
        }
        let len = self.key_weight * key_terms as f64 + content_terms as f64;
        for &(id, key_tf, content_tf) in &self.counts {
            self.postings.push((
                id,
                Posting {
                    doc: number,
                    key_tf,
                    content_tf,
                },
            ));
        }
        let actors: Vec<&str> = doc.actors.iter().map(String::as_str).collect();
        let row = DocRow {
            key,
            namespace: doc.namespace,
            path: doc.path,
            content: doc.content,
            value,
            timestamp: doc.timestamp,
            actors: &actors,
            len,
        };
        if !self.tables.push(&row) {
            return Err(CacheError::TooLarge.into());
        }
        Ok(())
    }

    /// Documents added.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True when no document was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the cache file of the documents added, as the index of `root`, to `out` (the
    /// bytes [`super::LexicalIndex::to_bytes`] gives for the same documents).
    pub fn write(
        self,
        root: Option<&ObjectId>,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let too_large = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let Builder {
            key_weight,
            vocab,
            postings,
            tables,
            seen,
            ..
        } = self;
        // Terms in name order; postings grouped by term in that order, documents ascending.
        let order = vocab.sorted();
        let mut rank = vec![0u32; order.len()];
        let mut terms = Texts::new();
        for (i, &id) in order.iter().enumerate() {
            rank[id as usize] = i as u32;
            if !terms.push(vocab.name(id).as_bytes()) {
                return Err(too_large());
            }
        }
        drop(order);
        drop(vocab);
        let mut post_off = vec![0u32; rank.len() + 1];
        for (id, &r) in rank.iter().enumerate() {
            post_off[r as usize + 1] = seen.get(id).map_or(0, |s| s.2);
        }
        drop(seen);
        for i in 1..post_off.len() {
            post_off[i] = post_off[i]
                .checked_add(post_off[i - 1])
                .ok_or_else(too_large)?;
        }
        debug_assert_eq!(post_off.last().copied(), Some(postings.len() as u32));
        // Where the next posting of each term goes, by term number.
        let mut next: Vec<u32> = rank.iter().map(|&r| post_off[r as usize]).collect();
        drop(rank);
        let empty = Posting {
            doc: 0,
            key_tf: 0,
            content_tf: 0,
        };
        let mut placed = vec![empty; postings.len()];
        for (id, p) in postings {
            let at = &mut next[id as usize];
            placed[*at as usize] = p;
            *at += 1;
        }
        drop(next);
        let done = tables.finish().ok_or_else(too_large)?;
        done.parts(root, key_weight, &terms, &post_off, &placed)
            .write(&mut WriteRef(out))
    }
}

/// A `dyn Write` as a sized writer.
struct WriteRef<'a>(&'a mut dyn std::io::Write);

impl std::io::Write for WriteRef<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.write(b)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
