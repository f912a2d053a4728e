//! `graph`: the memory graph around one key at a revision. Its nodes are a namespace, the
//! taxonomy prefixes in it and its memories; its edges join each path to its parent (the
//! taxonomy) and a memory to the keys it was written with (its `related_keys`). The graph is
//! read from the tree as it is walked, so a neighbourhood costs its own size, never the
//! store's: a prefix's children come from a histogram of its range and every count from the
//! tree's subtree counts.

use std::collections::{HashMap, VecDeque};

use petgraph::graphmap::UnGraphMap;
use petgraph::unionfind::UnionFind;
use serde::Serialize;

use crate::key::{encode_path_start, group_prefix, group_range, namespace_prefix, split_encoded};
use crate::memory::read_record_with_sets;
use crate::object::ObjectId;
use crate::prolly::{prefix_range, KeyRange};
use crate::repo::Repo;

use super::ids::hex;
use super::input::parse_key;
use super::status::require_namespace;
use super::tree::natural_cmp;
use super::{Memoir, MemoirError, MemoirResult, Outcome, ReadPoint};

/// Hops from the key walked by default.
pub const GRAPH_DEFAULT_DEPTH: usize = 1;
/// Most hops walked.
pub const GRAPH_MAX_DEPTH: usize = 6;
/// Most nodes given by default.
pub const GRAPH_DEFAULT_LIMIT: usize = 200;
/// Most nodes given at all.
pub const GRAPH_MAX_LIMIT: usize = 5000;

/// Which neighbourhood to give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphRequest {
    /// The key (`path` or `ns:path`) of a memory or a prefix.
    pub key: String,
    /// Namespace of a bare path [default: `default`].
    pub namespace: Option<String>,
    /// Hops from the key [default [`GRAPH_DEFAULT_DEPTH`], 1 to [`GRAPH_MAX_DEPTH`]].
    pub depth: Option<usize>,
    /// Most nodes [default [`GRAPH_DEFAULT_LIMIT`], at most [`GRAPH_MAX_LIMIT`]]; the walk
    /// stops adding nodes there and says it was cut short.
    pub limit: Option<usize>,
}

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// A namespace: the root of its taxonomy.
    Namespace,
    /// A taxonomy prefix with memories below it and none stored at it.
    Prefix,
    /// A stored memory (which may have memories below it too).
    Memory,
}

/// One node of a [`GraphOutcome`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// `ns:path` (`ns:` for a namespace).
    pub id: String,
    /// The namespace.
    pub namespace: String,
    /// The dot path (empty for a namespace).
    pub path: String,
    /// What it stands for.
    pub kind: NodeKind,
    /// Memories at this path or below it.
    pub count: u64,
    /// Hops from the key asked for.
    pub distance: usize,
    /// Its edges in this graph.
    pub degree: usize,
}

/// What an edge stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// A path and its parent in the taxonomy.
    Taxonomy,
    /// Two memories written together (one's `related_keys` names the other).
    Related,
}

/// One edge of a [`GraphOutcome`], between two node ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// One end (the parent of a taxonomy edge).
    pub from: String,
    /// The other end.
    pub to: String,
    /// What it stands for.
    pub kind: EdgeKind,
}

/// The neighbourhood of a key.
#[derive(Debug, Clone, Serialize)]
pub struct GraphOutcome {
    /// Always true.
    pub success: bool,
    /// The commit read.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
    /// The node asked for (`ns:path`).
    pub key: String,
    /// Its namespace.
    pub namespace: String,
    /// Hops walked.
    pub depth: usize,
    /// The nodes, by distance and then in natural order of their paths.
    pub nodes: Vec<GraphNode>,
    /// The edges, in the order of their nodes.
    pub edges: Vec<GraphEdge>,
    /// How many nodes.
    pub node_count: usize,
    /// How many edges.
    pub edge_count: usize,
    /// The memories joined by related keys, in groups of two or more (the taxonomy joins
    /// every node, so it is left out): the largest group first, each in natural order.
    pub components: Vec<Vec<String>>,
    /// Whether the walk stopped at the node limit before reaching every node in reach.
    pub truncated: bool,
}

impl Outcome for GraphOutcome {
    crate::outcome_json!();
}

impl Memoir {
    /// The memory graph around a memory or prefix at a read point: every node within
    /// `depth` hops, the edges among them, each node's degree, and the groups of memories
    /// joined by related keys. An invalid key, depth or limit, or an unknown namespace, is
    /// exit 1; a key with no memory at or below it is exit 2.
    pub fn graph(&self, req: &GraphRequest, at: &ReadPoint) -> MemoirResult<GraphOutcome> {
        let key = parse_key(&req.key, req.namespace.as_deref())?;
        let depth = req.depth.unwrap_or(GRAPH_DEFAULT_DEPTH);
        if !(1..=GRAPH_MAX_DEPTH).contains(&depth) {
            return Err(MemoirError::invalid(format!(
                "depth must be between 1 and {GRAPH_MAX_DEPTH}"
            )));
        }
        let limit = req.limit.unwrap_or(GRAPH_DEFAULT_LIMIT);
        if !(1..=GRAPH_MAX_LIMIT).contains(&limit) {
            return Err(MemoirError::invalid(format!(
                "limit must be between 1 and {GRAPH_MAX_LIMIT}"
            )));
        }
        self.reading(|repo| {
            let (commit, root) = self.read_root(repo, at)?;
            let ns = key.namespace().to_string();
            if req.namespace.is_some() {
                require_namespace(repo, &root, &ns)?;
            }
            let enc = key.encode();
            let (lo, hi) = group_range(&enc);
            let range = KeyRange {
                lo: Some(lo),
                hi: Some(hi),
            };
            let count = repo.tree().count_range(&root, &range)?;
            if count == 0 {
                return Err(MemoirError::not_found(format!(
                    "no memory at or below '{}' (namespace '{ns}')",
                    key.path()
                )));
            }
            let mut walk = Walk {
                repo,
                root,
                ns,
                nodes: Vec::new(),
                index: HashMap::new(),
                graph: UnGraphMap::new(),
                limit,
                truncated: false,
            };
            walk.add(enc, count, 0)?;
            walk.run(depth)?;
            let id = format!("{}:{}", key.namespace(), key.path());
            Ok(walk.finish(commit, id, depth))
        })
    }
}

/// A node as the walk holds it.
struct Found {
    enc: Vec<u8>,
    path: String,
    kind: NodeKind,
    count: u64,
    distance: usize,
    value: Option<ObjectId>,
}

/// The walk of a neighbourhood: the nodes found, by their encoded key, and the edges.
struct Walk<'a> {
    repo: &'a Repo,
    root: ObjectId,
    ns: String,
    nodes: Vec<Found>,
    index: HashMap<Vec<u8>, u32>,
    graph: UnGraphMap<u32, EdgeKind>,
    limit: usize,
    truncated: bool,
}

impl Walk<'_> {
    /// The node of `enc`, added at `distance` with `count` memories if it is new; `None`
    /// when it is new and the limit is reached.
    fn add(&mut self, enc: Vec<u8>, count: u64, distance: usize) -> MemoirResult<Option<u32>> {
        if let Some(&i) = self.index.get(&enc) {
            return Ok(Some(i));
        }
        if self.nodes.len() >= self.limit {
            self.truncated = true;
            return Ok(None);
        }
        let is_root = enc == namespace_prefix(&self.ns);
        let (value, kind) = if is_root {
            (None, NodeKind::Namespace)
        } else {
            match self.repo.tree().get(&self.root, &enc)? {
                Some(v) => (Some(v), NodeKind::Memory),
                None => (None, NodeKind::Prefix),
            }
        };
        let i =
            u32::try_from(self.nodes.len()).map_err(|_| MemoirError::invalid("too many nodes"))?;
        let path = if is_root {
            String::new()
        } else {
            split_encoded(&enc).1
        };
        self.index.insert(enc.clone(), i);
        self.graph.add_node(i);
        self.nodes.push(Found {
            enc,
            path,
            kind,
            count,
            distance,
            value,
        });
        Ok(Some(i))
    }

    /// Memories at or below the encoded path `enc` (the namespace's root included).
    fn count_of(&self, enc: &[u8]) -> MemoirResult<u64> {
        Ok(self
            .repo
            .tree()
            .count_range(&self.root, &self.range_of(enc))?)
    }

    /// The keys at or below a node's encoded path.
    fn range_of(&self, enc: &[u8]) -> KeyRange {
        if enc == namespace_prefix(&self.ns) {
            prefix_range(enc)
        } else {
            let (lo, hi) = group_range(enc);
            KeyRange {
                lo: Some(lo),
                hi: Some(hi),
            }
        }
    }

    /// The encoded parent of a node (none for the namespace).
    fn parent_of(&self, i: u32) -> Option<Vec<u8>> {
        let n = &self.nodes[i as usize];
        match n.kind {
            NodeKind::Namespace => None,
            _ => {
                let segments = n.path.split('.').count();
                Some(group_prefix(&n.enc, segments - 1).to_vec())
            }
        }
    }

    /// The encoded keys a memory node's record names as related (stored ones only).
    fn related_of(&self, i: u32) -> MemoirResult<Vec<Vec<u8>>> {
        let Some(v) = self.nodes[i as usize].value else {
            return Ok(Vec::new());
        };
        let rec = read_record_with_sets(self.repo.objects(), &v)?;
        let mut out = Vec::new();
        for k in rec.all_related() {
            let enc = encode_path_start(&self.ns, k);
            if enc != self.nodes[i as usize].enc
                && self.repo.tree().get(&self.root, &enc)?.is_some()
            {
                out.push(enc);
            }
        }
        Ok(out)
    }

    /// The children of a node, encoded, with their counts, in natural order of their paths.
    fn children_of(&self, i: u32) -> MemoirResult<Vec<(Vec<u8>, u64)>> {
        let n = &self.nodes[i as usize];
        let depth = if n.kind == NodeKind::Namespace {
            1
        } else {
            n.path.split('.').count() + 1
        };
        let mut groups = self
            .repo
            .tree()
            .histogram(&self.root, &self.range_of(&n.enc), &|k| {
                group_prefix(k, depth)
            })?;
        groups.retain(|(g, _)| *g != n.enc);
        let mut named: Vec<(String, Vec<u8>, u64)> = groups
            .into_iter()
            .map(|(g, c)| (split_encoded(&g).1, g, c))
            .collect();
        named.sort_by(|a, b| natural_cmp(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
        Ok(named.into_iter().map(|(_, g, c)| (g, c)).collect())
    }

    /// Walks breadth first from the first node to `depth` hops: each node's parent, the
    /// memories it names, then its children, until the limit. Then joins the nodes found at
    /// the last hop to those they touch.
    fn run(&mut self, depth: usize) -> MemoirResult<()> {
        let mut queue = VecDeque::from([0u32]);
        while let Some(i) = queue.pop_front() {
            let d = self.nodes[i as usize].distance;
            if d >= depth {
                continue;
            }
            let before = self.nodes.len();
            if let Some(p) = self.parent_of(i) {
                let count = match self.index.get(&p) {
                    Some(_) => 0,
                    None => self.count_of(&p)?,
                };
                if let Some(j) = self.add(p, count, d + 1)? {
                    self.graph.add_edge(j, i, EdgeKind::Taxonomy);
                }
            }
            for r in self.related_of(i)? {
                let count = match self.index.get(&r) {
                    Some(_) => 0,
                    None => self.count_of(&r)?,
                };
                if let Some(j) = self.add(r, count, d + 1)? {
                    self.edge_related(i, j);
                }
            }
            for (c, count) in self.children_of(i)? {
                match self.add(c, count, d + 1)? {
                    Some(j) => {
                        self.graph.add_edge(i, j, EdgeKind::Taxonomy);
                    }
                    None => break,
                }
            }
            queue.extend(before as u32..self.nodes.len() as u32);
        }
        // The last hop's nodes: their edges to nodes already found.
        for i in 0..self.nodes.len() as u32 {
            if self.nodes[i as usize].distance < depth {
                continue;
            }
            if let Some(&j) = self.parent_of(i).and_then(|p| self.index.get(&p)) {
                self.graph.add_edge(j, i, EdgeKind::Taxonomy);
            }
            for r in self.related_of(i)? {
                if let Some(&j) = self.index.get(&r) {
                    self.edge_related(i, j);
                }
            }
        }
        Ok(())
    }

    /// A related edge, unless the two are already joined by the taxonomy.
    fn edge_related(&mut self, a: u32, b: u32) {
        if !self.graph.contains_edge(a, b) {
            self.graph.add_edge(a, b, EdgeKind::Related);
        }
    }

    /// The outcome: nodes by distance then path, edges in that order, the related groups.
    fn finish(self, commit: ObjectId, key: String, depth: usize) -> GraphOutcome {
        let id = |n: &Found| format!("{}:{}", self.ns, n.path);
        let mut order: Vec<u32> = (0..self.nodes.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&self.nodes[a as usize], &self.nodes[b as usize]);
            x.distance
                .cmp(&y.distance)
                .then_with(|| natural_cmp(&x.path, &y.path))
        });
        let nodes: Vec<GraphNode> = order
            .iter()
            .map(|&i| {
                let n = &self.nodes[i as usize];
                GraphNode {
                    id: id(n),
                    namespace: self.ns.clone(),
                    path: n.path.clone(),
                    kind: n.kind,
                    count: n.count,
                    distance: n.distance,
                    degree: self.graph.neighbors(i).count(),
                }
            })
            .collect();
        let rank: HashMap<u32, usize> = order.iter().enumerate().map(|(r, &i)| (i, r)).collect();
        let mut pairs: Vec<(usize, usize, EdgeKind)> = self
            .graph
            .all_edges()
            .map(|(a, b, k)| {
                let (ra, rb) = (rank[&a], rank[&b]);
                let parent_first = *k == EdgeKind::Taxonomy
                    && self.nodes[b as usize].enc.len() < self.nodes[a as usize].enc.len();
                if parent_first || (*k == EdgeKind::Related && rb < ra) {
                    (rb, ra, *k)
                } else {
                    (ra, rb, *k)
                }
            })
            .collect();
        pairs.sort_by_key(|&(a, b, _)| (a.min(b), a.max(b)));
        let edges: Vec<GraphEdge> = pairs
            .iter()
            .map(|&(a, b, kind)| GraphEdge {
                from: nodes[a].id.clone(),
                to: nodes[b].id.clone(),
                kind,
            })
            .collect();
        let mut groups = UnionFind::<usize>::new(nodes.len());
        for &(a, b, kind) in &pairs {
            if kind == EdgeKind::Related {
                groups.union(a, b);
            }
        }
        let mut by: HashMap<usize, Vec<usize>> = HashMap::new();
        for (r, n) in nodes.iter().enumerate() {
            if n.kind == NodeKind::Memory {
                by.entry(groups.find(r)).or_default().push(r);
            }
        }
        let mut components: Vec<Vec<String>> = by
            .into_values()
            .filter(|g| g.len() > 1)
            .map(|g| {
                let mut ids: Vec<String> = g.into_iter().map(|r| nodes[r].id.clone()).collect();
                ids.sort_by(|a, b| natural_cmp(a, b));
                ids
            })
            .collect();
        components.sort_by(|a, b| {
            b.len()
                .cmp(&a.len())
                .then_with(|| natural_cmp(&a[0], &b[0]))
        });
        GraphOutcome {
            success: true,
            commit,
            key,
            namespace: self.ns.clone(),
            depth,
            node_count: nodes.len(),
            edge_count: edges.len(),
            nodes,
            edges,
            components,
            truncated: self.truncated,
        }
    }
}
