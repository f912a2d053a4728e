//! What the terminal interface shows: the revision it reads, the screen on top, and each
//! screen's data as the `Memoir` operations answered it. Loading goes through the same
//! calls as the command line and the web interface; nothing here writes.

use memoir::app::MemoirError;
use memoir::app::{
    BlameOutcome, ChangeName, ChangesQuery, GetItem, LogEntry, LogQuery, ReadPoint, SearchHit,
    SearchRequest, TreeOutcome, TreeRequest,
};
use memoir::Memoir;

/// Children listed per page of a tree level.
pub const TREE_PAGE: usize = 1000;
/// Commits listed in the log.
pub const LOG_LIMIT: usize = 500;
/// Changed keys listed for a commit.
pub const CHANGES_LIMIT: usize = 500;
/// Hits listed by a search.
pub const SEARCH_LIMIT: usize = 100;

/// The screens, each reachable from the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Tree,
    Memory,
    Log,
    Commit,
    Search,
}

/// A line of text being typed at the bottom of the screen, and what it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// A revision to read at (empty: back to HEAD).
    Revision(String),
    /// Words to search for.
    Search(String),
}

/// A selection in a list of `len` items.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursor {
    pub at: usize,
}

impl Cursor {
    /// Moves by `delta` rows, kept within `len` items.
    pub fn step(&mut self, delta: isize, len: usize) {
        if len == 0 {
            self.at = 0;
            return;
        }
        let next = self.at as isize + delta;
        self.at = next.clamp(0, len as isize - 1) as usize;
    }
}

/// One level of the key tree.
#[derive(Debug, Default)]
pub struct TreeView {
    pub namespace: Option<String>,
    pub prefix: String,
    pub offset: usize,
    pub level: Option<TreeOutcome>,
    pub cursor: Cursor,
    /// The rows selected in the levels above, to come back to.
    pub above: Vec<usize>,
}

/// A memory: its entries and who changed it.
#[derive(Debug)]
pub struct MemoryView {
    pub key: String,
    pub item: Option<GetItem>,
    pub blame: Option<BlameOutcome>,
    pub scroll: u16,
}

/// One commit: its changed keys and the selected one's patch.
#[derive(Debug)]
pub struct CommitView {
    pub entry: LogEntry,
    pub query: ChangesQuery,
    pub changes: Vec<ChangeName>,
    pub more: bool,
    pub cursor: Cursor,
    pub patch: Option<String>,
}

/// The whole interface's state.
pub struct App<'a> {
    pub memoir: &'a Memoir,
    /// Where every screen reads.
    pub point: ReadPoint,
    pub screen: Screen,
    /// Screens to go back to.
    pub back: Vec<Screen>,
    pub tree: TreeView,
    pub memory: Option<MemoryView>,
    pub log: Vec<LogEntry>,
    pub log_cursor: Cursor,
    pub commit: Option<CommitView>,
    pub search_query: String,
    pub hits: Vec<SearchHit>,
    pub search_cursor: Cursor,
    pub prompt: Option<Prompt>,
    /// The branch picker: the branches and the selected one.
    pub picker: Option<(Vec<String>, Cursor)>,
    pub help: bool,
    /// The last error or notice, on the status line.
    pub message: Option<String>,
    pub quit: bool,
}

impl<'a> App<'a> {
    /// The interface on `memoir`, reading HEAD, showing the top of the tree.
    pub fn new(memoir: &'a Memoir) -> App<'a> {
        let mut app = App {
            memoir,
            point: ReadPoint::head(),
            screen: Screen::Tree,
            back: Vec::new(),
            tree: TreeView::default(),
            memory: None,
            log: Vec::new(),
            log_cursor: Cursor::default(),
            commit: None,
            search_query: String::new(),
            hits: Vec::new(),
            search_cursor: Cursor::default(),
            prompt: None,
            picker: None,
            help: false,
            message: None,
            quit: false,
        };
        app.load_tree();
        app
    }

    /// Keeps `r`'s value, or puts its error on the status line.
    fn noted<T>(&mut self, r: Result<T, MemoirError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.message = Some(e.to_string());
                None
            }
        }
    }

    /// What the header says is being read.
    pub fn point_label(&self) -> String {
        match (&self.point.at, &self.point.branch) {
            (Some(rev), _) => format!("at {rev} (the past, read only)"),
            (None, Some(b)) => format!("branch {b}"),
            (None, None) => "HEAD".to_string(),
        }
    }

    /// Loads the tree level of the tree view.
    pub fn load_tree(&mut self) {
        let req = TreeRequest {
            namespace: self.tree.namespace.clone(),
            prefix: Some(self.tree.prefix.clone()),
            limit: Some(TREE_PAGE),
            offset: self.tree.offset,
            previews: true,
            ..TreeRequest::default()
        };
        let r = self.memoir.tree(&req, &self.point);
        if let Some(level) = self.noted(r) {
            self.tree.namespace = Some(level.namespace.clone());
            let len = level.children.len();
            self.tree.level = Some(level);
            self.tree.cursor.step(0, len);
        } else {
            self.tree.level = None;
        }
    }

    /// Opens the memory at `key` (`ns:path`).
    pub fn open_memory(&mut self, key: String) {
        self.memory = Some(MemoryView {
            key,
            item: None,
            blame: None,
            scroll: 0,
        });
        self.load_memory();
        self.go(Screen::Memory);
    }

    /// Loads the open memory at the read point: its record and its blame.
    pub fn load_memory(&mut self) {
        let Some(key) = self.memory.as_ref().map(|m| m.key.clone()) else {
            return;
        };
        let got = self
            .memoir
            .get(std::slice::from_ref(&key), None, &self.point);
        let item = self.noted(got).and_then(|g| g.items.into_iter().next());
        let blame = self.memoir.blame(&key, None, &self.point, Some(50), true);
        let blame = self.noted(blame);
        if let Some(m) = self.memory.as_mut() {
            m.item = item;
            m.blame = blame;
        }
    }

    /// Loads the log of the read point.
    pub fn load_log(&mut self) {
        let q = LogQuery {
            rev: self.point.at.clone(),
            branch: self.point.branch.clone(),
            limit: Some(LOG_LIMIT),
            ..LogQuery::default()
        };
        let r = self.memoir.log(&q);
        self.log = self.noted(r).map(|o| o.commits).unwrap_or_default();
        self.log_cursor.step(0, self.log.len());
    }

    /// Opens the selected commit of the log: what it changed against its first parent.
    pub fn open_commit(&mut self) {
        let Some(entry) = self.log.get(self.log_cursor.at).cloned() else {
            return;
        };
        let query = ChangesQuery {
            from: entry.parents.first().map(|p| p.to_hex()),
            to: Some(entry.id.to_hex()),
            ..ChangesQuery::default()
        };
        let (changes, more) = if query.from.is_some() {
            let r = self.memoir.changes(&query, None, Some(CHANGES_LIMIT));
            match self.noted(r) {
                Some(p) => (p.changes, p.next.is_some()),
                None => (Vec::new(), false),
            }
        } else {
            (Vec::new(), false)
        };
        self.commit = Some(CommitView {
            entry,
            query,
            changes,
            more,
            cursor: Cursor::default(),
            patch: None,
        });
        self.load_patch();
        self.go(Screen::Commit);
    }

    /// Loads the patch of the selected change of the open commit.
    pub fn load_patch(&mut self) {
        let Some(c) = self.commit.as_ref() else {
            return;
        };
        let Some(name) = c.changes.get(c.cursor.at) else {
            return;
        };
        let key = format!("{}:{}", name.namespace, name.key);
        let r = self.memoir.change(&c.query, &key, None);
        let patch = self.noted(r).map(|o| o.change.patch.unwrap_or_default());
        if let Some(c) = self.commit.as_mut() {
            c.patch = patch;
        }
    }

    /// Runs the search typed.
    pub fn run_search(&mut self) {
        self.hits.clear();
        self.search_cursor = Cursor::default();
        if self.search_query.trim().is_empty() {
            return;
        }
        let req = SearchRequest {
            query: self.search_query.clone(),
            limit: SEARCH_LIMIT,
            ..SearchRequest::default()
        };
        let r = self.memoir.search(&req, &self.point);
        self.hits = self.noted(r).map(|o| o.hits).unwrap_or_default();
    }

    /// Reads at `point` from now on, if it names a revision or branch there is; every
    /// screen is read again there.
    pub fn switch_to(&mut self, point: ReadPoint) {
        let probe = LogQuery {
            rev: point.at.clone(),
            branch: point.branch.clone(),
            limit: Some(1),
            ..LogQuery::default()
        };
        let r = self.memoir.log(&probe);
        if self.noted(r).is_none() {
            return;
        }
        self.point = point;
        self.message = Some(format!("reading {}", self.point_label()));
        self.reload();
    }

    /// Reads every screen's data again at the read point.
    pub fn reload(&mut self) {
        self.load_tree();
        self.load_memory();
        if !self.log.is_empty() || self.screen == Screen::Log {
            self.load_log();
        }
        if self.screen == Screen::Commit {
            self.commit = None;
            self.screen = Screen::Log;
        }
        if !self.hits.is_empty() {
            self.run_search();
        }
    }

    /// Shows `screen`, remembering the one shown to come back to it.
    pub fn go(&mut self, screen: Screen) {
        if self.screen != screen {
            self.back.push(self.screen);
            self.screen = screen;
        }
    }

    /// Goes back one screen (or up one tree level on the tree).
    pub fn go_back(&mut self) {
        if self.screen == Screen::Tree && !self.tree.prefix.is_empty() {
            self.tree_up();
            return;
        }
        if let Some(s) = self.back.pop() {
            self.screen = s;
        }
    }

    /// Opens the selected child of the tree level: a level below it, else its memory.
    pub fn tree_open(&mut self, memory_first: bool) {
        let Some(child) = self
            .tree
            .level
            .as_ref()
            .and_then(|l| l.children.get(self.tree.cursor.at))
            .cloned()
        else {
            return;
        };
        let ns = self.tree.namespace.clone().unwrap_or_default();
        if child.has_children && !(memory_first && child.has_record) {
            self.tree.above.push(self.tree.cursor.at);
            self.tree.prefix = child.path;
            self.tree.offset = 0;
            self.tree.cursor = Cursor::default();
            self.load_tree();
        } else if child.has_record {
            self.open_memory(format!("{ns}:{}", child.path));
        }
    }

    /// Goes up one level of the tree, to the row it came from.
    pub fn tree_up(&mut self) {
        if self.tree.prefix.is_empty() {
            return;
        }
        self.tree.prefix = match self.tree.prefix.rsplit_once('.') {
            Some((up, _)) => up.to_string(),
            None => String::new(),
        };
        self.tree.offset = 0;
        self.tree.cursor = Cursor {
            at: self.tree.above.pop().unwrap_or(0),
        };
        self.load_tree();
    }

    /// Shows the tree of the next namespace of the revision.
    pub fn next_namespace(&mut self) {
        let Some(level) = self.tree.level.as_ref() else {
            return;
        };
        let names: Vec<&String> = level.namespaces.iter().map(|(n, _)| n).collect();
        if names.is_empty() {
            return;
        }
        let at = names
            .iter()
            .position(|n| Some(*n) == self.tree.namespace.as_ref())
            .map_or(0, |i| (i + 1) % names.len());
        self.tree.namespace = Some(names[at].clone());
        self.tree.prefix.clear();
        self.tree.above.clear();
        self.tree.offset = 0;
        self.tree.cursor = Cursor::default();
        self.load_tree();
    }

    /// Pages the tree level forward (`+1`) or back (`-1`).
    pub fn tree_page(&mut self, dir: isize) {
        let Some(level) = self.tree.level.as_ref() else {
            return;
        };
        let offset = if dir > 0 {
            if level.omitted == 0 {
                return;
            }
            level.offset + TREE_PAGE
        } else {
            if level.offset == 0 {
                return;
            }
            level.offset.saturating_sub(TREE_PAGE)
        };
        self.tree.offset = offset;
        self.tree.cursor = Cursor::default();
        self.load_tree();
    }

    /// Opens the branch picker.
    pub fn open_picker(&mut self) {
        let r = self.memoir.branches();
        if let Some(b) = self.noted(r) {
            let at = b
                .current
                .as_ref()
                .and_then(|c| b.branches.iter().position(|n| n == c))
                .unwrap_or(0);
            self.picker = Some((b.branches, Cursor { at }));
        }
    }
}
