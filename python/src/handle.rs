//! The Python `Memoir` class: one method per operation of the command-line contract, each
//! returning the dict `memoir --json` prints for it.

use memoir::app::{
    DiffQuery, DocumentQuery, ExportOutcome, ForgetRequest, ImportRequest, KeyScope, LogQuery,
    MemoirError, MemoryCommand, MergeRequest, Outcome, RecallMode, RecallRequest, RememberRequest,
    SearchMode, SearchRequest, Sort, SummarizeRequest, SummaryKind, WriteAs,
};
use memoir::Memoir;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::convert::{invalid, run};
use crate::documents::{conditions, writes, RawCondition};
use crate::embedder::PyEmbedder;
use crate::settings::{
    choice, identity, merge_policy, merge_strategy, optional_choice, read_point, settings_files,
    OpenArgs,
};

/// A handle on one memoir store.
///
/// Open one with ``Memoir.open(path)`` or make a store with ``Memoir.create(path)``. Every
/// method returns a plain dict shaped exactly like the JSON ``memoir --json`` prints for the
/// same command, and raises a ``memoir.errors.MemoirError`` subclass whose ``code`` is the
/// command's exit code. Reads accept ``at=`` (any revision: ``HEAD~2``, a commit id, a branch,
/// ``main@{yesterday}``) and ``branch=``; writes accept ``branch=`` (created from HEAD when
/// missing) and ``author=``/``source=``/``actor=`` overriding the handle's.
///
/// Each operation opens the store and closes it again (unless ``keep_open=True``), so other
/// processes, such as the ``memoir`` command, can write between two calls and the next call
/// sees their commits. The GIL is released while the store works, so threads run in parallel.
#[pyclass(frozen, module = "memoir._memoir", name = "Memoir")]
pub struct PyMemoir {
    inner: Memoir,
    who: WriteAs,
}

/// What `export` hands to Python: its outcome and the records (the lines `memoir export`
/// prints), as a list.
#[derive(serde::Serialize)]
struct Exported {
    #[serde(flatten)]
    out: ExportOutcome,
    records: Vec<serde_json::Value>,
}

impl Outcome for Exported {
    memoir::outcome_json!();
}

/// A string or a list of strings, as a list.
fn strings(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(vec![s.to_cow()?.into_owned()]);
    }
    obj.extract::<Vec<String>>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a str or a list of str")))
}

/// Optional globs: none, one string, or a list.
fn globs(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    match obj {
        None => Ok(Vec::new()),
        Some(o) if o.is_none() => Ok(Vec::new()),
        Some(o) => strings(o, "keys"),
    }
}

/// Reports an invalid argument as the exception of its exit code.
fn checked<T>(py: Python<'_>, r: Result<T, MemoirError>) -> PyResult<T> {
    r.map_err(|e| invalid(py, e))
}

impl PyMemoir {
    /// The handle's provenance with per-call overrides.
    fn write_as(
        &self,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> WriteAs {
        WriteAs {
            branch,
            author: author.unwrap_or_else(|| self.who.author.clone()),
            source: source.or_else(|| self.who.source.clone()),
            actor: actor.or_else(|| self.who.actor.clone()),
        }
    }

    /// Runs an operation on the handle without the GIL.
    fn call<O, F>(&self, py: Python<'_>, work: F) -> PyResult<Py<PyAny>>
    where
        O: Outcome,
        F: FnOnce(&Memoir) -> memoir::app::MemoirResult<O> + Send,
    {
        let inner = &self.inner;
        run(py, move || work(inner))
    }
}

#[pymethods]
impl PyMemoir {
    /// Opens the store at ``path`` (nothing is read yet: a path that is not a store raises
    /// ``NotAStoreError`` at the first operation).
    ///
    /// Settings not given fall back to the environment the ``memoir`` command reads:
    /// ``author`` to ``MEMOIR_AUTHOR``, ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL``, ``USER``,
    /// else ``"unknown"``; ``source``/``actor`` to ``MEMOIR_SOURCE``/``MEMOIR_ACTOR``;
    /// ``now`` (fixed unix seconds, for reproducible ids) to ``MEMOIR_NOW``, else the system
    /// clock; ``lock_timeout`` (seconds to wait for a store another process holds) to
    /// ``MEMOIR_LOCK_TIMEOUT``, else 5; ``merge_policy`` to ``MEMOIR_MERGE_POLICY``;
    /// ``facet_cap`` to ``MEMOIR_FACET_MAX_ENTRIES``. ``keep_open=True`` keeps the store open
    /// between calls until ``close()`` (faster bursts; other processes wait meanwhile).
    #[staticmethod]
    #[pyo3(signature = (path, *, author=None, source=None, actor=None, now=None, lock_timeout=None, keep_open=false, merge_policy=None, facet_cap=None))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        path: std::path::PathBuf,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
        now: Option<f64>,
        lock_timeout: Option<f64>,
        keep_open: bool,
        merge_policy: Option<String>,
        facet_cap: Option<String>,
    ) -> PyResult<PyMemoir> {
        let args = OpenArgs {
            lock_timeout,
            now,
            keep_open,
            merge_policy,
            facet_cap,
        };
        let files = checked(py, settings_files(&path))?;
        let opts = checked(py, args.options(&files))?;
        let who = identity(author, source, actor, &files);
        checked(py, who.check())?;
        Ok(PyMemoir {
            inner: Memoir::open(path, opts),
            who,
        })
    }

    /// Creates a store at ``path`` (a new or empty directory) with its first commit and
    /// returns a handle on it; takes the settings of ``open``. A non-empty directory that is
    /// not a store, or an existing store, raises ``MemoirError`` (code 1) and is left as it was.
    #[staticmethod]
    #[pyo3(signature = (path, *, author=None, source=None, actor=None, now=None, lock_timeout=None, keep_open=false, merge_policy=None, facet_cap=None))]
    #[allow(clippy::too_many_arguments)]
    fn create(
        py: Python<'_>,
        path: std::path::PathBuf,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
        now: Option<f64>,
        lock_timeout: Option<f64>,
        keep_open: bool,
        merge_policy: Option<String>,
        facet_cap: Option<String>,
    ) -> PyResult<PyMemoir> {
        let args = OpenArgs {
            lock_timeout,
            now,
            keep_open,
            merge_policy,
            facet_cap,
        };
        let files = checked(py, settings_files(&path))?;
        let opts = checked(py, args.options(&files))?;
        let who = identity(author, source, actor, &files);
        let made = py.detach(|| {
            std::panic::catch_unwind(|| Memoir::create(&path, opts, &who))
                .unwrap_or_else(|_| Err(MemoirError::invalid("internal error in memoir create")))
        });
        let (inner, _) = checked(py, made)?;
        Ok(PyMemoir { inner, who })
    }

    /// The store directory (absolute).
    #[getter]
    fn path(&self) -> std::path::PathBuf {
        self.inner.path().to_path_buf()
    }

    /// The author this handle's writes record.
    #[getter]
    fn author(&self) -> String {
        self.who.author.clone()
    }

    /// Closes a store kept open by ``keep_open=True`` (a no-op otherwise). The handle stays
    /// usable: the next operation opens the store again.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.inner.release());
    }

    /// Makes ``embed`` this handle's embedding model, in place of the configured one
    /// (``MEMOIR_EMBED_MODEL``): a callable taking a list of texts and returning one vector,
    /// a list of ``dims`` numbers, per text. ``name`` names the model: vectors are kept per
    /// model, so another model needs another name. Search and recall by meaning call it;
    /// what it raises or returns amiss fails them with ``MemoirError`` (code 1).
    #[pyo3(signature = (embed, *, name, dims))]
    fn set_embedder(
        &self,
        py: Python<'_>,
        embed: Py<PyAny>,
        name: String,
        dims: usize,
    ) -> PyResult<()> {
        if !embed.bind(py).is_callable() {
            return Err(PyTypeError::new_err("embed must be callable"));
        }
        if name.is_empty() || dims == 0 {
            return Err(invalid(
                py,
                MemoirError::invalid("set_embedder needs a name and dims above 0"),
            ));
        }
        let model = PyEmbedder::new(embed, name, dims);
        self.inner.set_embedder(std::sync::Arc::new(model));
        Ok(())
    }

    /// ``memoir status``: path, branch, commit and memory counts, namespaces.
    fn status(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.call(py, |m| m.status())
    }

    /// ``memoir remember CONTENT -p PATH ...``: stores ``content`` under each key of
    /// ``paths`` (``path`` or ``ns:path``; a str or a list) in one commit. ``merge_policy``
    /// (append, replace, confidence_gated, llm_merge, merge_on_read, reject) or
    /// ``replace=True`` decide what happens to an existing memory; ``reject`` raises
    /// ``ConflictError`` (code 4) whose ``result`` lists the conflicts.
    #[pyo3(signature = (content, paths, *, namespace=None, merge_policy=None, replace=false, confidence=None, allow_secrets=false, branch=None, author=None, source=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn remember(
        &self,
        py: Python<'_>,
        content: String,
        paths: &Bound<'_, PyAny>,
        namespace: Option<String>,
        merge_policy: Option<String>,
        replace: bool,
        confidence: Option<f64>,
        allow_secrets: bool,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let paths = strings(paths, "paths")?;
        let policy = checked(
            py,
            merge_policy.as_deref().map(self::merge_policy).transpose(),
        )?;
        let req = RememberRequest {
            content,
            paths,
            namespace,
            merge_policy: policy,
            replace,
            confidence,
            model: None,
            allow_secrets,
            event_time: None,
        };
        let who = self.write_as(branch, author, source, actor);
        self.call(py, move |m| m.remember(&req, &who))
    }

    /// ``memoir get KEY ...``: the memories at ``keys`` (a str or a list; ``path`` or
    /// ``ns:path``), in order; a missing key is an item with ``found: False``. Asking for
    /// exactly one key that is missing raises ``NotFoundError`` (code 2), as the command exits 2.
    #[pyo3(signature = (keys, *, namespace=None, at=None, branch=None))]
    fn get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        namespace: Option<String>,
        at: Option<String>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let keys = strings(keys, "keys")?;
        let point = read_point(at, branch);
        self.call(py, move |m| m.get(&keys, namespace.as_deref(), &point))
    }

    /// ``memoir summarize [KIND] [--keys GLOB ...] [--depth N]``: memory counts by namespace,
    /// by key prefix of ``depth`` segments, and the keys matching ``keys`` globs.
    #[pyo3(signature = (kind="all", *, namespace=None, keys=None, depth=None, at=None, branch=None))]
    #[allow(clippy::too_many_arguments)]
    fn summarize(
        &self,
        py: Python<'_>,
        kind: &str,
        namespace: Option<String>,
        keys: Option<&Bound<'_, PyAny>>,
        depth: Option<usize>,
        at: Option<String>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let kind = choice(
            "summary",
            kind,
            &[
                ("all", SummaryKind::All),
                ("taxonomy", SummaryKind::Taxonomy),
                ("timeline", SummaryKind::Timeline),
                ("places", SummaryKind::Places),
            ],
        )
        .map_err(|e| invalid(py, e))?;
        let req = SummarizeRequest {
            kind,
            namespace,
            keys: globs(keys)?,
            depth,
        };
        let point = read_point(at, branch);
        self.call(py, move |m| m.summarize(&req, &point))
    }

    /// ``memoir search QUERY``: ranked search over keys and contents (``limit`` hits, best
    /// first; ``sort="recency"`` puts the newest first), within ``namespace``, keys matching
    /// ``keys`` globs, and records dated between ``since`` and ``until``. ``mode`` is
    /// ``"lexical"``, ``"semantic"`` or ``"hybrid"`` (default: hybrid with an embedding
    /// model, ``MEMOIR_EMBED_MODEL``, else lexical), as ``--mode`` is.
    #[pyo3(signature = (query, *, namespace=None, keys=None, limit=10, since=None, until=None, sort="relevance", at=None, branch=None, mode=None))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: String,
        namespace: Option<String>,
        keys: Option<&Bound<'_, PyAny>>,
        limit: usize,
        since: Option<String>,
        until: Option<String>,
        sort: &str,
        at: Option<String>,
        branch: Option<String>,
        mode: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let modes = [
            ("lexical", SearchMode::Lexical),
            ("semantic", SearchMode::Semantic),
            ("hybrid", SearchMode::Hybrid),
        ];
        let mode = optional_choice("search mode", mode, &modes).map_err(|e| invalid(py, e))?;
        let sort = choice(
            "sort",
            sort,
            &[("relevance", Sort::Relevance), ("recency", Sort::Recency)],
        )
        .map_err(|e| invalid(py, e))?;
        let req = SearchRequest {
            query,
            namespace,
            keys: globs(keys)?,
            limit,
            since,
            until,
            sort,
            explain: false,
        };
        let point = read_point(at, branch);
        self.call(py, move |m| m.search_in(mode, &req, &point))
    }

    /// ``memoir recall QUERY``: the memories that answer ``query``. ``mode`` is
    /// ``"lexical"``, ``"single"``, ``"tiered"``, ``"semantic"`` or ``"hybrid"``; by default
    /// ``single`` when a language model is configured, else ``hybrid`` with an embedding
    /// model, else ``lexical``, as for ``memoir recall``. The models are configured as for the
    /// command (``MEMOIR_LLM_*``, ``MEMOIR_EMBED_MODEL``, the settings files); ``model``
    /// names another language model of the configured provider. Without the model a mode
    /// needs, recall is lexical and ``metadata`` says why.
    #[pyo3(signature = (query, *, namespace=None, limit=10, threshold=None, at=None, branch=None, mode=None, model=None))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        query: String,
        namespace: Option<String>,
        limit: usize,
        threshold: Option<f64>,
        at: Option<String>,
        branch: Option<String>,
        mode: Option<&str>,
        model: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let modes = [
            ("lexical", RecallMode::Lexical),
            ("single", RecallMode::Single),
            ("tiered", RecallMode::Tiered),
            ("semantic", RecallMode::Semantic),
            ("hybrid", RecallMode::Hybrid),
        ];
        let mode = optional_choice("recall mode", mode, &modes).map_err(|e| invalid(py, e))?;
        let req = RecallRequest {
            query,
            namespace,
            limit,
            mode,
            model,
            threshold,
        };
        let point = read_point(at, branch);
        self.call(py, move |m| m.recall(&req, &point))
    }

    /// The JSON documents (records whose content is a JSON object) of ``namespace`` under
    /// the path ``prefix`` (a list of segments; empty: all) that satisfy ``conditions``
    /// (``(member_path, "$op", number, json_text)`` tuples), ranked by the words of
    /// ``words`` when given (documents holding none follow, in key order), ``offset`` and
    /// ``limit`` applied, all inside memoir. Returns ``{"items": [{"key", "score",
    /// "content", "timestamp"}], "total"}``; ``keys_only=True`` leaves contents out.
    #[pyo3(signature = (namespace, prefix, *, conditions=Vec::new(), words=None, offset=0, limit=None, keys_only=false, at=None, branch=None))]
    #[allow(clippy::too_many_arguments)]
    fn find_documents(
        &self,
        py: Python<'_>,
        namespace: String,
        prefix: Vec<String>,
        conditions: Vec<RawCondition>,
        words: Option<String>,
        offset: usize,
        limit: Option<usize>,
        keys_only: bool,
        at: Option<String>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let q = DocumentQuery {
            namespace,
            prefix,
            conditions: checked(py, self::conditions(conditions))?,
            words,
            offset,
            limit,
            keys_only,
        };
        let point = read_point(at, branch);
        self.call(py, move |m| m.find_documents(&q, &point))
    }

    /// Stores and deletes JSON documents of ``namespace`` in one commit: ``writes`` is a
    /// list of ``(path, json_text)``, or ``(path, None)`` to delete; each stored document
    /// replaces the record at its path. Returns ``{"commit", "stored", "deleted"}``.
    #[pyo3(signature = (namespace, writes, *, allow_secrets=false, branch=None, author=None, source=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn write_documents(
        &self,
        py: Python<'_>,
        namespace: String,
        writes: Vec<(String, Option<String>)>,
        allow_secrets: bool,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let writes = self::writes(writes);
        let who = self.write_as(branch, author, source, actor);
        self.call(py, move |m| {
            m.write_documents(&namespace, &writes, allow_secrets, &who)
        })
    }

    /// ``memoir forget KEY``: removes the memory in a new commit; a missing key raises
    /// ``NotFoundError`` (code 2) and commits nothing. ``purge=True`` also rewrites history
    /// so no commit keeps it.
    #[pyo3(signature = (key, *, namespace=None, purge=false, branch=None, author=None, source=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn forget(
        &self,
        py: Python<'_>,
        key: String,
        namespace: Option<String>,
        purge: bool,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let req = ForgetRequest {
            key,
            namespace,
            purge,
            dry_run: false,
        };
        let who = self.write_as(branch, author, source, actor);
        self.call(py, move |m| m.forget(&req, &who))
    }

    /// Anthropic's memory tool (``memory_20250818``) over the store: runs one command, given
    /// as the JSON the model sends (``{"command": "view", "path": "/memories"}``), on the
    /// memories of ``namespace`` (default ``default``): directories are key prefixes, files
    /// are memories, each change one commit. Returns the outcome dict; ``text`` is the
    /// tool's answer. A refusal raises ``MemoirError`` whose message is the tool's error text
    /// (``NotFoundError`` when nothing is at the path). ``memoir.anthropic.MemoirMemoryTool``
    /// wraps this in the ``anthropic`` SDK's tool class.
    #[pyo3(signature = (command, *, namespace=None, branch=None, author=None, source=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn memory_command(
        &self,
        py: Python<'_>,
        command: String,
        namespace: Option<String>,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let parsed: MemoryCommand = serde_json::from_str(&command).map_err(|e| {
            invalid(
                py,
                MemoirError::invalid(format!("not a memory tool command: {e}")),
            )
        })?;
        let who = self.write_as(branch, author, source, actor);
        self.call(py, move |m| {
            m.memory_files(&parsed, namespace.as_deref(), &who)
        })
    }

    /// ``memoir log [REV or A..B]``: commits newest first (``limit`` of them), only those that
    /// changed keys in ``namespace``/``keys`` globs when given.
    #[pyo3(signature = (rev=None, *, limit=None, namespace=None, keys=None, branch=None))]
    fn log(
        &self,
        py: Python<'_>,
        rev: Option<String>,
        limit: Option<usize>,
        namespace: Option<String>,
        keys: Option<&Bound<'_, PyAny>>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let q = LogQuery {
            rev,
            branch,
            limit,
            scope: KeyScope {
                namespace,
                keys: globs(keys)?,
            },
        };
        self.call(py, move |m| m.log(&q))
    }

    /// ``memoir blame KEY``: the commits where the memory changed, newest first; with
    /// ``lines=True`` also which commit introduced each line of its content.
    #[pyo3(signature = (key, *, namespace=None, limit=None, lines=false, at=None, branch=None))]
    #[allow(clippy::too_many_arguments)]
    fn blame(
        &self,
        py: Python<'_>,
        key: String,
        namespace: Option<String>,
        limit: Option<usize>,
        lines: bool,
        at: Option<String>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let point = read_point(at, branch);
        self.call(py, move |m| {
            m.blame(&key, namespace.as_deref(), &point, limit, lines)
        })
    }

    /// ``memoir diff [A] [B]``: keys added, modified and removed between two revisions
    /// (none: ``HEAD~1`` and ``HEAD``; one: it and ``HEAD``; ``A..B`` ranges too).
    #[pyo3(signature = (from_rev=None, to_rev=None, *, namespace=None, keys=None, stat=false, patch=false))]
    #[allow(clippy::too_many_arguments)]
    fn diff(
        &self,
        py: Python<'_>,
        from_rev: Option<String>,
        to_rev: Option<String>,
        namespace: Option<String>,
        keys: Option<&Bound<'_, PyAny>>,
        stat: bool,
        patch: bool,
    ) -> PyResult<Py<PyAny>> {
        let q = DiffQuery {
            from: from_rev,
            to: to_rev,
            scope: KeyScope {
                namespace,
                keys: globs(keys)?,
            },
            stat,
            patch,
            names_only: false,
        };
        self.call(py, move |m| m.diff(&q))
    }

    /// ``memoir branch [NAME] [--from REV]``: without a name, the branches and the current
    /// one; with one, creates that branch at ``from_rev`` (default HEAD).
    #[pyo3(signature = (name=None, *, from_rev=None))]
    fn branch(
        &self,
        py: Python<'_>,
        name: Option<String>,
        from_rev: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        match name {
            None => self.call(py, |m| m.branches()),
            Some(n) => self.call(py, move |m| m.create_branch(&n, from_rev.as_deref())),
        }
    }

    /// ``memoir branch -d NAME`` (``-D`` with ``force=True``): deletes a branch.
    #[pyo3(signature = (name, *, force=false))]
    fn delete_branch(&self, py: Python<'_>, name: String, force: bool) -> PyResult<Py<PyAny>> {
        self.call(py, move |m| m.delete_branch(&name, force))
    }

    /// ``memoir checkout TARGET [-b]``: moves HEAD to a branch (``create=True`` makes it
    /// first) or, detached, to a revision.
    #[pyo3(signature = (target, *, create=false))]
    fn checkout(&self, py: Python<'_>, target: String, create: bool) -> PyResult<Py<PyAny>> {
        self.call(py, move |m| m.checkout(&target, create))
    }

    /// ``memoir merge SOURCE [--into BRANCH] [-S STRATEGY]``: three-way merge by key. Without a
    /// ``strategy`` (ours, skip, theirs, union) conflicts raise ``ConflictError`` (code 4) whose
    /// ``result`` lists them, and nothing is committed; ``ff_only=True`` raises
    /// ``NonFastForwardError`` (code 6) when the histories diverged.
    #[pyo3(signature = (source, *, into=None, strategy=None, ff_only=false, author=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn merge(
        &self,
        py: Python<'_>,
        source: String,
        into: Option<String>,
        strategy: Option<String>,
        ff_only: bool,
        author: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let strategy = checked(py, strategy.as_deref().map(merge_strategy).transpose())?;
        let req = MergeRequest {
            source,
            into,
            strategy,
            ff_only,
        };
        let who = self.write_as(None, author, None, actor);
        self.call(py, move |m| m.merge(&req, &who))
    }

    /// ``memoir import``: stores records given as JSON Lines (the lines ``export`` gives) in one
    /// commit; records that name no namespace go to ``namespace``.
    #[pyo3(signature = (lines, *, namespace=None, allow_secrets=false, branch=None, author=None, source=None, actor=None))]
    #[allow(clippy::too_many_arguments)]
    fn import_lines(
        &self,
        py: Python<'_>,
        lines: String,
        namespace: Option<String>,
        allow_secrets: bool,
        branch: Option<String>,
        author: Option<String>,
        source: Option<String>,
        actor: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let req = ImportRequest {
            lines,
            namespace,
            allow_secrets,
        };
        let who = self.write_as(branch, author, source, actor);
        self.call(py, move |m| m.import(&req, &who))
    }

    /// ``memoir export``: every record (of ``namespace``) at a read point, as ``records``.
    #[pyo3(signature = (*, namespace=None, at=None, branch=None))]
    fn export(
        &self,
        py: Python<'_>,
        namespace: Option<String>,
        at: Option<String>,
        branch: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let point = read_point(at, branch);
        self.call(py, move |m| {
            let out = m.export(namespace.as_deref(), &point)?;
            let records = out.records.iter().map(|r| r.to_json()).collect();
            Ok(Exported { out, records })
        })
    }

    fn __repr__(&self) -> String {
        format!("Memoir({:?})", self.inner.path().display().to_string())
    }
}
