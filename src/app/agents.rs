//! The supervisor's questions about agents: which agent (a commit's `actor`) wrote what, on
//! which branches and when. [`Memoir::history`] is `log` with filters by agent and date and
//! over every branch at once; [`Memoir::agents`] sums up each agent's writes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use crate::object::ObjectId;
use crate::repo::revision::{format_iso8601, parse_date};
use crate::repo::{KeepCommit, Repo, RepoResult};

use super::history::{LogEntry, LogQuery};
use super::ids::hex;
use super::search::{SearchOutcome, SearchRequest};
use super::status::require_namespace;
use super::ReadPoint;
use super::{Memoir, MemoirError, MemoirResult, Outcome};

/// What [`Memoir::history`] lists besides what [`LogQuery`] says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryFilter {
    /// Only commits whose `actor` is this (the empty text: commits with no actor).
    pub actor: Option<String>,
    /// Only commits made at or after this date (any form `--at` takes after `@{`).
    pub since: Option<String>,
    /// Only commits made at or before this date.
    pub until: Option<String>,
    /// Every branch's history at once (when the query names no revision).
    pub all_branches: bool,
}

/// A branch and its tip.
#[derive(Debug, Clone, Serialize)]
pub struct BranchTip {
    /// The branch.
    pub name: String,
    /// Its tip.
    #[serde(serialize_with = "hex")]
    pub commit: ObjectId,
}

/// What [`Memoir::history`] listed.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryOutcome {
    /// Always true.
    pub success: bool,
    /// The commits, newest first.
    pub commits: Vec<LogEntry>,
    /// How many.
    pub count: usize,
    /// Every branch and its tip, to label the commits with.
    pub branches: Vec<BranchTip>,
}

impl Outcome for HistoryOutcome {
    crate::outcome_json!();
}

/// One agent's writes.
#[derive(Debug, Clone, Serialize)]
pub struct AgentSummary {
    /// The agent (null: commits that record none).
    pub actor: Option<String>,
    /// Commits it made.
    pub commits: u64,
    /// The authors its commits were signed by.
    pub authors: Vec<String>,
    /// The sources its commits recorded.
    pub sources: Vec<String>,
    /// The branches from whose tip one of its commits is reachable.
    pub branches: Vec<String>,
    /// Its first commit's date (ISO 8601).
    pub first: String,
    /// Its latest commit's date (ISO 8601).
    pub last: String,
    /// Its latest commit's time (unix seconds).
    pub last_timestamp: i64,
    /// Its latest commit.
    #[serde(serialize_with = "hex")]
    pub last_commit: ObjectId,
    /// That commit's first message line.
    pub last_message: String,
}

/// Every agent that wrote to the store.
#[derive(Debug, Clone, Serialize)]
pub struct AgentsOutcome {
    /// Always true.
    pub success: bool,
    /// The agents, the most recently active first.
    pub agents: Vec<AgentSummary>,
    /// Commits read (every commit reachable from a branch).
    pub commits: u64,
}

impl Outcome for AgentsOutcome {
    crate::outcome_json!();
}

/// One day's writes by one agent.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineDay {
    /// The day (UTC), `YYYY-MM-DD`.
    pub date: String,
    /// The agent (null: commits that record none).
    pub actor: Option<String>,
    /// Commits it made that day.
    pub commits: u64,
}

/// Writes per day per agent, over every commit reachable from a branch.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineOutcome {
    /// Always true.
    pub success: bool,
    /// The days with writes, oldest first, each agent's in order of its name (none first).
    pub days: Vec<TimelineDay>,
    /// The agents that wrote, as in [`AgentsOutcome`]: the most recently active first.
    pub actors: Vec<Option<String>>,
    /// Commits read.
    pub commits: u64,
}

impl Outcome for TimelineOutcome {
    crate::outcome_json!();
}

/// Every branch and its tip.
type Tips = Vec<(String, ObjectId)>;

/// Every commit reachable from a branch, read once per position of the branches: the
/// agents' summary, and each commit's actor (so a history by agent reads only the commits
/// it lists).
#[derive(Debug)]
struct Census {
    tips: Tips,
    agents: AgentsOutcome,
    /// Commits per day (UTC, `YYYY-MM-DD`) and actor.
    days: BTreeMap<(String, Option<String>), u64>,
    actors: HashMap<ObjectId, Option<String>>,
}

/// The last [`Census`] taken: it stays right until a branch moves.
#[derive(Debug, Default)]
pub(crate) struct AgentsCache(std::sync::Mutex<Option<Arc<Census>>>);

impl Memoir {
    /// `log` with the filters of `f`: by agent, by date, and over every branch. The answer
    /// also lists the branches and their tips.
    pub fn history(&self, q: &LogQuery, f: &HistoryFilter) -> MemoirResult<HistoryOutcome> {
        let filter = q.scope.filter()?;
        let now = self.clock().now_secs();
        let date = |d: &Option<String>| -> MemoirResult<Option<i64>> {
            Ok(d.as_deref()
                .filter(|d| !d.is_empty())
                .map(|d| parse_date(d, now))
                .transpose()?)
        };
        let window = (date(&f.since)?, date(&f.until)?);
        self.reading(|repo| {
            let branches = repo.branches()?;
            let (exclude, include) = match (&q.rev, f.all_branches) {
                (Some(r), _) => {
                    let (x, i) = repo.resolve_range(r, now)?;
                    (x.into_iter().collect(), vec![i])
                }
                (None, true) => (Vec::new(), branches.iter().map(|(_, id)| *id).collect()),
                (None, false) => {
                    let at = ReadPoint {
                        at: None,
                        branch: q.branch.clone(),
                    };
                    (Vec::new(), vec![self.read_commit(repo, &at)?.1])
                }
            };
            let census = match &f.actor {
                Some(_) => Some(self.census(repo, &branches)?),
                None => None,
            };
            let keep = |id: &ObjectId| -> RepoResult<bool> {
                let want = f.actor.as_deref().filter(|a| !a.is_empty());
                let actor = match census.as_ref().and_then(|c| c.actors.get(id)) {
                    Some(a) => a.clone(),
                    None => repo.read_commit(id)?.metadata.get("actor").cloned(),
                };
                Ok(actor.as_deref() == want)
            };
            let keep: Option<&KeepCommit<'_>> = f.actor.as_ref().map(|_| &keep as _);
            let commits: Vec<LogEntry> = repo
                .log_where(&include, &exclude, filter.as_ref(), q.limit, window, keep)?
                .into_iter()
                .map(|(id, c)| LogEntry::new(id, c))
                .collect();
            if let Some(ns) = q.scope.namespace.as_ref().filter(|_| commits.is_empty()) {
                if let Some(tip) = include.first() {
                    require_namespace(repo, &repo.root_of(tip)?, ns)?;
                }
            }
            Ok(HistoryOutcome {
                success: true,
                count: commits.len(),
                commits,
                branches: branches
                    .into_iter()
                    .map(|(name, commit)| BranchTip { name, commit })
                    .collect(),
            })
        })
    }

    /// `search` among the memories that agent `actor` wrote (an entry of theirs records it):
    /// the search index keeps each record's agents, and the filter is applied while ranking,
    /// so a top-k by agent holds k of that agent's memories when the store has them.
    pub fn search_by_agent(
        &self,
        req: &SearchRequest,
        actor: &str,
        at: &ReadPoint,
    ) -> MemoirResult<SearchOutcome> {
        self.search_by(None, req, Some(actor), at)
    }

    /// Every agent that made a commit reachable from a branch: how many commits, signed by
    /// whom, from which sources, on which branches, first and last. The answer is kept until
    /// a branch moves.
    pub fn agents(&self) -> MemoirResult<AgentsOutcome> {
        self.reading(|repo| Ok(self.census(repo, &repo.branches()?)?.agents.clone()))
    }

    /// Writes per day per agent over every commit reachable from a branch (from the same
    /// census as [`Memoir::agents`], kept until a branch moves).
    pub fn timeline(&self) -> MemoirResult<TimelineOutcome> {
        self.reading(|repo| {
            let c = self.census(repo, &repo.branches()?)?;
            Ok(TimelineOutcome {
                success: true,
                days: c
                    .days
                    .iter()
                    .map(|((date, actor), n)| TimelineDay {
                        date: date.clone(),
                        actor: actor.clone(),
                        commits: *n,
                    })
                    .collect(),
                actors: c.agents.agents.iter().map(|a| a.actor.clone()).collect(),
                commits: c.agents.commits,
            })
        })
    }

    /// The census of the commits reachable from `tips`, taken anew when a branch moved.
    fn census(&self, repo: &Repo, tips: &Tips) -> MemoirResult<Arc<Census>> {
        let mut cache = self.agents.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.as_ref().filter(|c| c.tips == *tips) {
            return Ok(c.clone());
        }
        let c = Arc::new(census_of(repo, tips)?);
        *cache = Some(c.clone());
        Ok(c)
    }
}

/// Reads every commit reachable from `tips` and sums them up by actor.
fn census_of(repo: &Repo, tips: &[(String, ObjectId)]) -> MemoirResult<Census> {
    let ids: Vec<ObjectId> = tips.iter().map(|(_, id)| *id).collect();
    let graph = repo.commit_graph(&ids, false)?;
    // Which branches reach each commit: one bit per branch (`words` words per commit), by
    // a walk from each tip.
    let words = tips.len().div_ceil(64).max(1);
    let mut reach: Vec<u64> = vec![0; graph.len() * words];
    for (b, (_, tip)) in tips.iter().enumerate() {
        let Some(start) = graph.position(tip) else {
            continue;
        };
        let (w, bit) = (b / 64, 1u64 << (b % 64));
        let mut stack = vec![start];
        while let Some(p) = stack.pop() {
            let cell = &mut reach[p as usize * words + w];
            if *cell & bit != 0 {
                continue;
            }
            *cell |= bit;
            stack.extend(graph.parents(p));
        }
    }
    struct Acc {
        commits: u64,
        authors: BTreeMap<String, ()>,
        sources: BTreeMap<String, ()>,
        branches: Vec<u64>,
        first: i64,
        last: (i64, ObjectId, String),
    }
    let mut by: BTreeMap<Option<String>, Acc> = BTreeMap::new();
    let mut read = 0u64;
    let mut actors = HashMap::with_capacity(graph.len());
    let mut days: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
    for (pos, bits) in reach.chunks(words).enumerate() {
        if bits.iter().all(|w| *w == 0) {
            continue;
        }
        let id =
            graph.id(u32::try_from(pos).map_err(|_| MemoirError::invalid("too many commits"))?);
        let c = repo.read_commit(&id)?;
        read += 1;
        actors.insert(id, c.metadata.get("actor").cloned());
        let day = format_iso8601(c.timestamp)[..10].to_string();
        *days
            .entry((day, c.metadata.get("actor").cloned()))
            .or_default() += 1;
        let a = by
            .entry(c.metadata.get("actor").cloned())
            .or_insert_with(|| Acc {
                commits: 0,
                authors: BTreeMap::new(),
                sources: BTreeMap::new(),
                branches: vec![0; words],
                first: c.timestamp,
                last: (c.timestamp, id, String::new()),
            });
        a.commits += 1;
        a.authors.insert(c.author.clone(), ());
        if let Some(s) = c.metadata.get("source") {
            a.sources.insert(s.clone(), ());
        }
        for (acc, w) in a.branches.iter_mut().zip(bits) {
            *acc |= w;
        }
        a.first = a.first.min(c.timestamp);
        if (c.timestamp, id) >= (a.last.0, a.last.1) {
            let subject = c.message.lines().next().unwrap_or("").to_string();
            a.last = (c.timestamp, id, subject);
        }
    }
    let mut agents: Vec<AgentSummary> = by
        .into_iter()
        .map(|(actor, a)| AgentSummary {
            actor,
            commits: a.commits,
            authors: a.authors.into_keys().collect(),
            sources: a.sources.into_keys().collect(),
            branches: tips
                .iter()
                .enumerate()
                .filter(|(b, _)| a.branches[b / 64] & (1 << (b % 64)) != 0)
                .map(|(_, (n, _))| n.clone())
                .collect(),
            first: format_iso8601(a.first),
            last: format_iso8601(a.last.0),
            last_timestamp: a.last.0,
            last_commit: a.last.1,
            last_message: a.last.2,
        })
        .collect();
    agents.sort_by(|x, y| {
        y.last_timestamp
            .cmp(&x.last_timestamp)
            .then_with(|| x.actor.cmp(&y.actor))
    });
    Ok(Census {
        tips: tips.to_vec(),
        agents: AgentsOutcome {
            success: true,
            agents,
            commits: read,
        },
        days,
        actors,
    })
}
