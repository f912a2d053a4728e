//! Blame: the commits where one key's value changed, and who wrote each line of it.
//!
//! The rule (both for [`Repo::blame`] and [`Repo::blame_lines`]): starting at a commit, a
//! commit C is reported iff its value id for the key differs from that of **every** parent
//! (a first commit: iff the key is present). From C the walk goes on to the parents whose
//! value equals C's (a merge that took the value from one side is explained by that side's
//! history; if both sides hold it, by both); when no parent has C's value, to all parents.
//! Every commit reachable along those edges is examined, so blame is complete along them;
//! each examined commit costs one point lookup (O(tree height) node reads) per distinct
//! tree root, and none when its root equals an examined one.
//!
//! The commit graph's change filters make most commits cost no tree read: a commit whose
//! filter rules the key out has its parent's value. While the followed edges form a single
//! line (no examined commit is followed to two parents, the usual history of one branch),
//! their order is that line's, so the walk goes down it without ordering anything, passing
//! over each one-parent commit whose filter rules the key out with one filter probe; the
//! first commit followed to two parents hands over to the ordered walk
//! ([`TopoWalk`]), which examines every followed commit.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use similar::DiffOp;

use super::diff::{line_ops, Op};
use super::graph_cache::{Changed, CommitGraph, FilterKey};
use super::walk::{dedup, Follow, PosMap, TopoWalk};
use super::{Commit, Repo, RepoResult};
use crate::key::Key;
use crate::object::ObjectId;
use crate::prolly::IdMap;

/// One commit that changed a key's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameEntry {
    /// The commit.
    pub commit: ObjectId,
    /// Its author, time, message and parents.
    pub info: Commit,
    /// Added, modified or removed, relative to the first parent (a first commit: added).
    pub change: Op,
    /// The value id in the first parent (`None` when absent there, or for a first commit).
    pub old: Option<ObjectId>,
    /// The value id in this commit (`None` = removed).
    pub new: Option<ObjectId>,
}

/// One line of a value and the commit that introduced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineBlame {
    /// The line, without its line ending.
    pub line: String,
    /// The commit that introduced it.
    pub commit: ObjectId,
}

struct Seen {
    value: Option<ObjectId>,
    first_parent_value: Option<ObjectId>,
    reported: bool,
}

/// The blame rule as a [`Follow`]: records, per examined commit, its value and whether it
/// is reported.
struct BlameFollow<'k> {
    repo: &'k Repo,
    key: &'k [u8],
    hashed: FilterKey,
    /// Use the change filters (false: read every tree, the reference behaviour).
    filters: bool,
    by_root: IdMap<Option<ObjectId>>,
    by_commit: PosMap<Option<ObjectId>>,
    /// Whether [`BlameFollow::value`] remembers the value of every commit it goes down
    /// through (the ordered walk asks for each of them next), or only of the one asked for
    /// (along a line, which passes over them by their filters instead).
    memo_chains: bool,
    seen: PosMap<Seen>,
}

impl<'k> BlameFollow<'k> {
    fn new(repo: &'k Repo, key: &'k [u8], filters: bool) -> Self {
        BlameFollow {
            repo,
            key,
            hashed: FilterKey::new(key),
            filters,
            by_root: HashMap::default(),
            by_commit: PosMap::default(),
            memo_chains: true,
            seen: PosMap::default(),
        }
    }

    fn at_root(&mut self, root: &ObjectId) -> RepoResult<Option<ObjectId>> {
        if let Some(v) = self.by_root.get(root) {
            return Ok(*v);
        }
        let v = self.repo.tree().get(root, self.key)?;
        self.by_root.insert(*root, v);
        Ok(v)
    }

    /// The key's value at commit `pos`. Goes down through parents whose change filter says
    /// the key did not change (the value is then the parent's) until a commit whose value
    /// is known, a first commit whose filter rules the key out, or a commit whose filters
    /// all say "maybe": only that one reads its tree.
    fn value(&mut self, g: &CommitGraph, pos: u32) -> RepoResult<Option<ObjectId>> {
        if !self.filters {
            return self.at_root(&g.root(pos));
        }
        let mut chain = Vec::new();
        let mut cur = pos;
        let v = loop {
            if let Some(v) = self.by_commit.get(&cur) {
                break *v;
            }
            if let Some(v) = self.by_root.get(&g.root(cur)) {
                break *v;
            }
            chain.push(cur);
            let n = g.parent_count(cur);
            if n == 0 {
                if g.changed(cur, 0, self.hashed) == Changed::No {
                    break None;
                }
                break self.at_root(&g.root(cur))?;
            }
            match (0..n).find(|&i| g.changed(cur, i, self.hashed) == Changed::No) {
                Some(i) => cur = g.parents(cur).nth(i).expect("in range"),
                None => break self.at_root(&g.root(cur))?,
            }
        };
        if self.memo_chains {
            for c in chain {
                self.by_commit.insert(c, v);
            }
        } else {
            self.by_commit.insert(pos, v);
        }
        Ok(v)
    }
}

impl BlameFollow<'_> {
    /// The reported commits, newest first and at most `limit` of them, when the followed
    /// edges from `tip` form a single line; `None` as soon as a commit is followed to two
    /// parents. Commits with one parent whose change filter rules the key out are passed
    /// over: their value is their parent's, so they are not reported and the line goes on
    /// to that parent.
    fn line(
        &mut self,
        g: &CommitGraph,
        tip: u32,
        limit: Option<usize>,
    ) -> RepoResult<Option<Vec<u32>>> {
        self.memo_chains = false;
        let line = self.line_from(g, tip, limit);
        self.memo_chains = true;
        line
    }

    fn line_from(
        &mut self,
        g: &CommitGraph,
        tip: u32,
        limit: Option<usize>,
    ) -> RepoResult<Option<Vec<u32>>> {
        let mut out = Vec::new();
        let mut pos = tip;
        loop {
            if limit == Some(out.len()) {
                return Ok(Some(out));
            }
            if let Some(p) = g.unchanged_parent(pos, self.hashed) {
                pos = p;
                continue;
            }
            let next = self.follow(g, pos)?;
            if self.seen[&pos].reported {
                out.push(pos);
            }
            match next[..] {
                [] => return Ok(Some(out)),
                [p] => pos = p,
                _ => return Ok(None),
            }
        }
    }
}

impl Follow for BlameFollow<'_> {
    fn follow(&mut self, g: &CommitGraph, pos: u32) -> RepoResult<Vec<u32>> {
        let value = self.value(g, pos)?;
        let parents: Vec<u32> = g.parents(pos).collect();
        let mut values = Vec::with_capacity(parents.len());
        for &p in &parents {
            values.push(self.value(g, p)?);
        }
        let same: Vec<u32> = dedup(
            parents
                .iter()
                .zip(&values)
                .filter(|(_, v)| **v == value)
                .map(|(p, _)| *p),
        );
        let reported = if parents.is_empty() {
            value.is_some()
        } else {
            same.is_empty()
        };
        self.seen.insert(
            pos,
            Seen {
                value,
                first_parent_value: values.first().copied().flatten(),
                reported,
            },
        );
        Ok(if same.is_empty() {
            dedup(parents.into_iter())
        } else {
            same
        })
    }
}

/// A version of the text and the commit owning each line.
struct Version {
    lines: Rc<Vec<String>>,
    owners: Vec<ObjectId>,
}

fn split_lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

impl Repo {
    /// The commits where `key`'s value id changed, newest first (topological along the
    /// followed edges, ties by newer timestamp then smaller id), at most `limit` of them; see
    /// the module docs for the rule. A key never written gives an empty list.
    pub fn blame(
        &self,
        at: &ObjectId,
        key: &Key,
        limit: Option<usize>,
    ) -> RepoResult<Vec<BlameEntry>> {
        self.blame_with(at, key, limit, true)
    }

    /// [`Repo::blame`], with the commit graph's change filters or (`filters` false) reading
    /// the key from every examined commit's tree; the results are the same.
    pub fn blame_with(
        &self,
        at: &ObjectId,
        key: &Key,
        limit: Option<usize>,
        filters: bool,
    ) -> RepoResult<Vec<BlameEntry>> {
        if limit == Some(0) {
            return Ok(Vec::new());
        }
        let enc = key.encode();
        let mut follow = BlameFollow::new(self, &enc, filters);
        let graph = self.commit_graph(&[*at], filters)?;
        if filters {
            let tip = graph.position(at).expect("extended");
            if let Some(line) = follow.line(&graph, tip, limit)? {
                return line
                    .into_iter()
                    .filter_map(|pos| self.blame_entry(&graph, &follow, pos).transpose())
                    .collect();
            }
        }
        let mut walk = TopoWalk::new(graph.clone(), &[*at], limit.is_none());
        walk.collect(&mut follow, limit, |follow, pos| {
            self.blame_entry(&graph, follow, pos)
        })
    }

    /// The blame entry of examined commit `pos`, when it is reported.
    fn blame_entry(
        &self,
        graph: &CommitGraph,
        follow: &BlameFollow<'_>,
        pos: u32,
    ) -> RepoResult<Option<BlameEntry>> {
        let s = &follow.seen[&pos];
        if !s.reported {
            return Ok(None);
        }
        let old = s.first_parent_value;
        let id = graph.id(pos);
        Ok(Some(BlameEntry {
            commit: id,
            info: self.read_commit(&id)?,
            change: Op::between(old.as_ref(), s.value.as_ref()).unwrap_or(Op::Modified),
            old,
            new: s.value,
        }))
    }

    /// Each line of `key`'s value at `at`, with the commit that introduced it. `text_of`
    /// gives the text of a value id (called once per distinct value). Versions are visited
    /// oldest first along the blame walk; each changed version is diffed line by line against
    /// the version of every followed parent, and a line equal to a parent's line keeps that
    /// line's commit (the first parent that has it wins); other lines belong to the commit.
    /// An absent key gives an empty list.
    pub fn blame_lines(
        &self,
        at: &ObjectId,
        key: &Key,
        text_of: &mut dyn FnMut(&ObjectId) -> RepoResult<String>,
    ) -> RepoResult<Vec<LineBlame>> {
        Ok(self.blame_lines_with(at, key, text_of, false, true)?.1)
    }

    /// [`Repo::blame`] without a limit and [`Repo::blame_lines`] together, from one walk
    /// (both walk the whole history the same way).
    pub fn blame_and_lines(
        &self,
        at: &ObjectId,
        key: &Key,
        text_of: &mut dyn FnMut(&ObjectId) -> RepoResult<String>,
    ) -> RepoResult<(Vec<BlameEntry>, Vec<LineBlame>)> {
        self.blame_lines_with(at, key, text_of, true, true)
    }

    /// [`Repo::blame_and_lines`], with the commit graph's change filters or (`filters`
    /// false) reading the key from every examined commit's tree and ordering every one of
    /// them; the results are the same.
    pub fn blame_and_lines_with(
        &self,
        at: &ObjectId,
        key: &Key,
        text_of: &mut dyn FnMut(&ObjectId) -> RepoResult<String>,
        filters: bool,
    ) -> RepoResult<(Vec<BlameEntry>, Vec<LineBlame>)> {
        self.blame_lines_with(at, key, text_of, true, filters)
    }

    /// The lines' blame, and the blame entries too when `entries`.
    fn blame_lines_with(
        &self,
        at: &ObjectId,
        key: &Key,
        text_of: &mut dyn FnMut(&ObjectId) -> RepoResult<String>,
        entries: bool,
        filters: bool,
    ) -> RepoResult<(Vec<BlameEntry>, Vec<LineBlame>)> {
        let enc = key.encode();
        let mut follow = BlameFollow::new(self, &enc, filters);
        let graph: Arc<CommitGraph> = self.commit_graph(&[*at], filters)?;
        let tip = graph.position(at).expect("extended");
        let line = match filters {
            true => follow.line(&graph, tip, None)?,
            false => None,
        };
        let mut walk = None;
        let order = match &line {
            Some(line) => line.clone(),
            None => {
                let w = walk.insert(TopoWalk::new(graph.clone(), &[*at], true));
                w.collect(&mut follow, None, |_, pos| Ok(Some(pos)))?
            }
        };
        let mut reported = Vec::new();
        if entries {
            for &pos in &order {
                reported.extend(self.blame_entry(&graph, &follow, pos)?);
            }
        }
        let mut texts: HashMap<ObjectId, Rc<Vec<String>>> = HashMap::new();
        let empty: Rc<Vec<String>> = Rc::new(Vec::new());
        let mut versions: PosMap<Rc<Version>> = PosMap::default();
        // Along a line (every commit of `order` reported), the version a commit's followed
        // parent has is that of the next older reported commit, or the empty version that
        // the line starts from.
        let mut older: Option<u32> = None;
        for &pos in order.iter().rev() {
            let id = graph.id(pos);
            let s = &follow.seen[&pos];
            let parents: &[u32] = match &walk {
                Some(w) => w.followed(pos),
                None => older.as_slice(),
            };
            let version = if !s.reported {
                match parents.first() {
                    Some(p) => versions[p].clone(),
                    None => Rc::new(Version {
                        lines: empty.clone(),
                        owners: Vec::new(),
                    }),
                }
            } else {
                let lines = match &s.value {
                    None => empty.clone(),
                    Some(v) => match texts.get(v) {
                        Some(l) => l.clone(),
                        None => {
                            let l = Rc::new(split_lines(&text_of(v)?));
                            texts.insert(*v, l.clone());
                            l
                        }
                    },
                };
                let mut owners: Vec<Option<ObjectId>> = vec![None; lines.len()];
                for p in parents {
                    let pv = &versions[p];
                    for op in line_ops(&pv.lines, &lines) {
                        if let DiffOp::Equal {
                            old_index,
                            new_index,
                            len,
                        } = op
                        {
                            for i in 0..len {
                                let o = &mut owners[new_index + i];
                                if o.is_none() {
                                    *o = Some(pv.owners[old_index + i]);
                                }
                            }
                        }
                    }
                }
                Rc::new(Version {
                    owners: owners.into_iter().map(|o| o.unwrap_or(id)).collect(),
                    lines,
                })
            };
            versions.insert(pos, version);
            older = Some(pos);
        }
        let top = match &walk {
            Some(_) => Some(tip),
            None => order.first().copied(),
        };
        let Some(top) = top.and_then(|p| versions.get(&p)) else {
            return Ok((reported, Vec::new()));
        };
        let lines = top
            .lines
            .iter()
            .zip(&top.owners)
            .map(|(line, commit)| LineBlame {
                line: line.clone(),
                commit: *commit,
            })
            .collect();
        Ok((reported, lines))
    }
}
