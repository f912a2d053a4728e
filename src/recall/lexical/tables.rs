//! The per-document tables of a cache file, filled one document at a time in key order:
//! what both the writer of an index held in memory ([`LexicalIndex::to_bytes`]) and the
//! builder of a whole tree's index fill, so both write the same bytes.

use std::collections::HashMap;

use super::codec::{Parts, Texts};
use super::context::{date_of, parent_of};
use super::index::Posting;
use crate::object::ObjectId;

/// The document tables, as documents are added in key order.
pub(super) struct DocTables {
    keys: Texts,
    paths: Texts,
    contents: Texts,
    values: Vec<u8>,
    stamps: Vec<u8>,
    lens: Vec<u8>,
    dates: Vec<u8>,
    /// (year, month, number) of each document, sorted when finished.
    date_order: Vec<(i64, u8, u32)>,
    /// Namespaces and parents numbered as first met, renumbered in name order when finished.
    ns_raw: HashMap<String, u32>,
    doc_ns: Vec<u32>,
    /// Actors numbered as first met, renumbered in name order when finished; per document,
    /// where its actor numbers end, and the numbers.
    actor_raw: HashMap<String, u32>,
    doc_actor_off: Vec<u32>,
    doc_actors: Vec<u32>,
    parent_raw: HashMap<Vec<u8>, u32>,
    /// Per parent as first met: its key, the sum of its documents' lengths (in key order)
    /// and their number.
    parents: Vec<(Vec<u8>, f64, u32)>,
    doc_parent: Vec<u32>,
    total_len: f64,
}

/// One document of [`DocTables::push`].
pub(super) struct DocRow<'a> {
    pub(super) key: &'a [u8],
    pub(super) namespace: &'a str,
    pub(super) path: &'a str,
    pub(super) content: &'a str,
    pub(super) value: &'a ObjectId,
    pub(super) timestamp: f64,
    /// The agents whose entries the record holds, the record's actor first.
    pub(super) actors: &'a [&'a str],
    pub(super) len: f64,
}

impl DocTables {
    pub(super) fn new() -> Self {
        DocTables {
            keys: Texts::new(),
            paths: Texts::new(),
            contents: Texts::new(),
            values: Vec::new(),
            stamps: Vec::new(),
            lens: Vec::new(),
            dates: Vec::new(),
            date_order: Vec::new(),
            ns_raw: HashMap::new(),
            doc_ns: Vec::new(),
            actor_raw: HashMap::new(),
            doc_actor_off: vec![0],
            doc_actors: Vec::new(),
            parent_raw: HashMap::new(),
            parents: Vec::new(),
            doc_parent: Vec::new(),
            total_len: 0.0,
        }
    }

    /// Documents added so far.
    pub(super) fn len(&self) -> usize {
        self.doc_ns.len()
    }

    /// Adds the next document in key order; false when a text passes what the format's
    /// u32 offsets address.
    pub(super) fn push(&mut self, d: &DocRow<'_>) -> bool {
        let ok = self.keys.push(d.key)
            && self.paths.push(d.path.as_bytes())
            && self.contents.push(d.content.as_bytes());
        if !ok {
            return false;
        }
        let next = self.ns_raw.len() as u32;
        let ns = match self.ns_raw.get(d.namespace) {
            Some(&ns) => ns,
            None => {
                self.ns_raw.insert(d.namespace.to_string(), next);
                next
            }
        };
        for &a in d.actors {
            let next = self.actor_raw.len() as u32;
            let no = *self.actor_raw.entry(a.to_string()).or_insert(next);
            self.doc_actors.push(no);
        }
        match u32::try_from(self.doc_actors.len()) {
            Ok(end) => self.doc_actor_off.push(end),
            Err(_) => return false,
        }
        let number = self.doc_ns.len() as u32;
        self.doc_ns.push(ns);
        self.values.extend_from_slice(d.value.as_bytes());
        self.stamps.extend_from_slice(&d.timestamp.to_le_bytes());
        self.lens.extend_from_slice(&d.len.to_le_bytes());
        match date_of(d.timestamp) {
            Some((y, m)) => {
                self.dates.extend_from_slice(&y.to_le_bytes());
                self.dates.push(m as u8);
                self.date_order.push((y, m as u8, number));
            }
            None => {
                self.dates.extend_from_slice(&[0; 9]);
                self.date_order.push((0, 0, number));
            }
        }
        let pk = parent_of(d.key);
        // Keys come in order, so a document's parent is most often the one before's.
        let last = self.doc_parent.last().copied();
        let p = match last.filter(|&p| self.parents[p as usize].0 == pk) {
            Some(p) => p,
            None => match self.parent_raw.get(pk) {
                Some(&p) => p,
                None => {
                    let p = self.parents.len() as u32;
                    self.parent_raw.insert(pk.to_vec(), p);
                    self.parents.push((pk.to_vec(), 0.0, 0));
                    p
                }
            },
        };
        let slot = &mut self.parents[p as usize];
        slot.1 += d.len;
        slot.2 += 1;
        self.doc_parent.push(p);
        self.total_len += d.len;
        true
    }

    /// The tables with namespaces and parents numbered in name order; `None` when a text
    /// passes what the format's u32 offsets address.
    pub(super) fn finish(mut self) -> Option<DocTablesDone> {
        let mut names: Vec<(String, u32)> = self.ns_raw.drain().collect();
        names.sort_unstable();
        let mut ns_no = vec![0u32; names.len()];
        let mut ns = Texts::new();
        for (i, (name, raw)) in names.iter().enumerate() {
            ns_no[*raw as usize] = i as u32;
            if !ns.push(name.as_bytes()) {
                return None;
            }
        }
        for n in &mut self.doc_ns {
            *n = ns_no[*n as usize];
        }
        let mut names: Vec<(String, u32)> = self.actor_raw.drain().collect();
        names.sort_unstable();
        let mut actor_no = vec![0u32; names.len()];
        let mut actors = Texts::new();
        for (i, (name, raw)) in names.iter().enumerate() {
            actor_no[*raw as usize] = i as u32;
            if !actors.push(name.as_bytes()) {
                return None;
            }
        }
        for a in &mut self.doc_actors {
            *a = actor_no[*a as usize];
        }
        // Each actor's documents, ascending: documents are numbered in the order they came.
        let mut actor_doc_off = vec![0u32; names.len() + 1];
        for &a in &self.doc_actors {
            actor_doc_off[a as usize + 1] += 1;
        }
        for i in 1..actor_doc_off.len() {
            actor_doc_off[i] += actor_doc_off[i - 1];
        }
        let mut next = actor_doc_off.clone();
        let mut actor_docs = vec![0u32; self.doc_actors.len()];
        for (d, w) in self.doc_actor_off.windows(2).enumerate() {
            for &a in &self.doc_actors[w[0] as usize..w[1] as usize] {
                actor_docs[next[a as usize] as usize] = d as u32;
                next[a as usize] += 1;
            }
        }
        let mut order: Vec<u32> = (0..self.parents.len() as u32).collect();
        order.sort_unstable_by(|a, b| {
            self.parents[*a as usize]
                .0
                .cmp(&self.parents[*b as usize].0)
        });
        let mut parent_no = vec![0u32; order.len()];
        let mut pkeys = Texts::new();
        let (mut parent_len, mut parent_docs) = (Vec::new(), Vec::new());
        for (i, &raw) in order.iter().enumerate() {
            parent_no[raw as usize] = i as u32;
            let (key, len, docs) = &self.parents[raw as usize];
            if !pkeys.push(key) {
                return None;
            }
            parent_len.extend_from_slice(&len.to_le_bytes());
            parent_docs.extend_from_slice(&docs.to_le_bytes());
        }
        for p in &mut self.doc_parent {
            *p = parent_no[*p as usize];
        }
        self.date_order.sort_unstable();
        Some(DocTablesDone {
            date_order: self.date_order.iter().map(|d| d.2).collect(),
            ns,
            actors,
            actor_doc_off,
            actor_docs,
            pkeys,
            parent_len,
            parent_docs,
            t: self,
        })
    }
}

/// [`DocTables`] finished: ready to write.
pub(super) struct DocTablesDone {
    t: DocTables,
    date_order: Vec<u32>,
    ns: Texts,
    actors: Texts,
    actor_doc_off: Vec<u32>,
    actor_docs: Vec<u32>,
    pkeys: Texts,
    parent_len: Vec<u8>,
    parent_docs: Vec<u8>,
}

impl DocTablesDone {
    /// The whole file's parts: these tables with the terms and postings given.
    pub(super) fn parts<'a>(
        &'a self,
        root: Option<&'a ObjectId>,
        key_weight: f64,
        terms: &'a Texts,
        post_off: &'a [u32],
        postings: &'a [Posting],
    ) -> Parts<'a> {
        let t = &self.t;
        Parts {
            root,
            key_weight,
            total_len: t.total_len,
            terms,
            post_off,
            postings,
            keys: &t.keys,
            ns: &self.ns,
            doc_ns: &t.doc_ns,
            paths: &t.paths,
            contents: &t.contents,
            values: &t.values,
            stamps: &t.stamps,
            lens: &t.lens,
            doc_parent: &t.doc_parent,
            dates: &t.dates,
            date_order: &self.date_order,
            actors: &self.actors,
            doc_actor_off: &t.doc_actor_off,
            doc_actors: &t.doc_actors,
            actor_doc_off: &self.actor_doc_off,
            actor_docs: &self.actor_docs,
            pkeys: &self.pkeys,
            parent_len: &self.parent_len,
            parent_docs: &self.parent_docs,
        }
    }
}
