//! Agent hosts' hooks (`memoir hook <host> <event>`): what memoir does when Claude Code or
//! Codex starts a session, takes a prompt, ends a turn, compacts or ends a session, and what
//! it answers. The face reads the host's JSON, settings and environment, calls [`run_hook`],
//! prints [`HookReply::output`] and starts the [`CaptureJob`] detached.
//!
//! - `session-start`: creates the project's store when missing (with the built-in taxonomy),
//!   makes the memory branch follow the code branch, promotes memory branches whose code
//!   branch was merged into `main` (with a merge commit), and injects the store's state, its
//!   keys, the unmerged and stale memory branches (`context`).
//! - `user-prompt-submit`: follows the code branch, and injects the memories a lexical search
//!   for the prompt finds (none for a short prompt or an acknowledgement).
//! - `stop`, `pre-compact`: follow the code branch, and hand the transcript's last turn to
//!   `capture` (started detached by the face; the host does not wait for the model).
//! - `session-end`: nothing to do; answers nothing.
//!
//! Context goes in `hookSpecificOutput.additionalContext`, which both hosts read, cut to a
//! byte budget ([`SESSION_START_BUDGET`], [`PROMPT_BUDGET`]).

mod context;
pub mod transcript;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::code_repo::CodeRepo;
use super::{Memoir, MemoirError, MemoirResult, Options, WriteAs};
use crate::store::FORMAT_FILE;

pub use context::{fit, is_acknowledgement};

/// Most bytes of context `session-start` injects.
pub const SESSION_START_BUDGET: usize = 6000;
/// Most bytes of context `user-prompt-submit` injects.
pub const PROMPT_BUDGET: usize = 2000;

/// An agent host whose hook protocol memoir speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI Codex.
    Codex,
}

impl Host {
    /// `claude-code` or `codex`.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
        }
    }

    /// The events memoir handles for this host.
    pub fn events(self) -> &'static [HookEvent] {
        use HookEvent::*;
        match self {
            Host::ClaudeCode => &[SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd],
            Host::Codex => &[SessionStart, UserPromptSubmit, Stop, PreCompact],
        }
    }
}

impl std::str::FromStr for Host {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "claude-code" | "claude" => Ok(Host::ClaudeCode),
            "codex" => Ok(Host::Codex),
            _ => Err(format!("unknown host '{s}' (claude-code, codex)")),
        }
    }
}

/// A hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// A session starts (or resumes, or is cleared or compacted).
    SessionStart,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The agent finished its answer.
    Stop,
    /// The conversation is about to be compacted.
    PreCompact,
    /// The session ends.
    SessionEnd,
}

impl HookEvent {
    /// The command line's name (`session-start`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::Stop => "stop",
            HookEvent::PreCompact => "pre-compact",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// The host's name of the event (`SessionStart`), as in `hookEventName`.
    pub fn host_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event `name` (the command line's or the host's) of `host`; one the host does not
    /// have is exit 2.
    pub fn parse(host: Host, name: &str) -> MemoirResult<HookEvent> {
        host.events()
            .iter()
            .copied()
            .find(|e| e.name() == name || e.host_name() == name)
            .ok_or_else(|| MemoirError::UnknownHookEvent {
                host: host.name(),
                event: name.to_string(),
                known: host.events().iter().map(|e| e.name()).collect(),
            })
    }
}

/// What the host sent on stdin, the members memoir reads (all optional: a host that sends
/// less gets less done, never an error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    /// The session's id.
    pub session_id: Option<String>,
    /// The session's working directory.
    pub cwd: Option<PathBuf>,
    /// The session's transcript (JSON Lines).
    pub transcript_path: Option<PathBuf>,
    /// The prompt (`UserPromptSubmit`).
    pub prompt: Option<String>,
    /// Whether the agent continues because of a stop hook (then nothing is captured).
    pub stop_hook_active: bool,
    /// Codex's last answer (`Stop`), used when there is no transcript.
    pub last_assistant_message: Option<String>,
}

impl HookInput {
    /// Reads the host's JSON; anything that is not an object reads as no input.
    pub fn parse(text: &str) -> HookInput {
        let v: Value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        HookInput {
            session_id: s("session_id"),
            cwd: s("cwd").filter(|c| !c.is_empty()).map(PathBuf::from),
            transcript_path: s("transcript_path")
                .filter(|c| !c.is_empty())
                .map(PathBuf::from),
            prompt: s("prompt"),
            stop_hook_active: v
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            last_assistant_message: s("last_assistant_message"),
        }
    }
}

/// What the face decides from its environment and flags.
#[derive(Debug, Clone)]
pub struct HookSettings {
    /// Whether turns are captured (`MEMOIR_NO_CAPTURE=1` turns it off: a model called
    /// through the `claude` command runs with it, so its own hooks do not capture).
    pub capture: bool,
    /// Whether merged memory branches are promoted into `main` at session start.
    pub auto_promote: bool,
    /// Whether `session-start` creates a missing store.
    pub create_store: bool,
    /// Bytes of context, overriding the event's budget.
    pub budget: Option<usize>,
    /// Who signs the commits the hook makes (store creation, promotions).
    pub who: WriteAs,
}

/// A turn to capture, started detached by the face: `memoir -s STORE capture --branch
/// BRANCH --actor ACTOR` with `turn` on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureJob {
    /// The store.
    pub store: PathBuf,
    /// The turn, as a JSON list of messages.
    pub turn: String,
    /// The memory branch the facts go to (the one following the code branch now).
    pub branch: Option<String>,
    /// The host, recorded as the actor.
    pub actor: &'static str,
}

/// What a hook answers.
#[derive(Debug, Clone, Default)]
pub struct HookReply {
    /// The JSON to print (none: print nothing).
    pub output: Option<Value>,
    /// A capture to start.
    pub capture: Option<CaptureJob>,
    /// What was done, for the hook log.
    pub notes: Vec<String>,
}

/// The store a hook uses when none is named: the repo-mode store of the code repository
/// `cwd` is in, else, outside one, the store of `cwd` itself (`HOME/.memoir/<slug>`, as the
/// reference plugin does).
pub fn hook_store(home: &Path, cwd: &Path) -> PathBuf {
    match CodeRepo::find(cwd) {
        Some(r) => super::code_repo::project_store(home, &r.main_worktree),
        None => super::code_repo::project_store(home, &super::absolute(cwd)),
    }
}

/// Runs `event` of `host` on the store at `store` for a session in `cwd`; `now` in unix
/// seconds.
pub fn run_hook(
    store: &Path,
    options: Options,
    host: Host,
    event: HookEvent,
    input: &HookInput,
    cwd: &Path,
    settings: &HookSettings,
) -> MemoirResult<HookReply> {
    let mut reply = HookReply::default();
    let exists = store.join(FORMAT_FILE).is_file();
    if event == HookEvent::SessionEnd {
        reply.notes.push("session ended".into());
        return Ok(reply);
    }
    let creates = event == HookEvent::SessionStart && settings.create_store;
    if !exists && !creates {
        reply
            .notes
            .push(format!("no store at {}; nothing done", store.display()));
        return Ok(reply);
    }
    let app = if exists {
        Memoir::open(store, options)
    } else {
        let (app, out) = Memoir::create(store, options, &settings.who)?;
        app.taxonomy_init(false, &settings.who)?;
        reply.notes.push(out.message);
        app
    };
    let code = CodeRepo::find(cwd);
    let followed = follow(&app, code.as_ref(), &mut reply);
    match event {
        HookEvent::SessionStart => {
            let budget = settings.budget.unwrap_or(SESSION_START_BUDGET);
            let now = app.clock().now_secs();
            let c = context::session_start(&app, code.as_ref(), followed, settings, now)?;
            reply.notes.extend(c.notes);
            reply.output = Some(answer(event, Some(c.status), &fit(&c.context, budget)));
        }
        HookEvent::UserPromptSubmit => {
            let budget = settings.budget.unwrap_or(PROMPT_BUDGET);
            let prompt = input.prompt.as_deref().unwrap_or("");
            let text = context::prompt_memories(&app, prompt)?;
            if !text.is_empty() {
                reply.output = Some(answer(event, None, &fit(&text, budget)));
            }
        }
        HookEvent::Stop | HookEvent::PreCompact => {
            if input.stop_hook_active {
                reply
                    .notes
                    .push("stop hook active; nothing captured".into());
            } else if !settings.capture {
                reply
                    .notes
                    .push("capture is off (MEMOIR_NO_CAPTURE)".into());
            } else {
                reply.capture = capture_job(&app, host, input);
                if reply.capture.is_none() {
                    reply.notes.push("no answered turn to capture".into());
                }
            }
        }
        HookEvent::SessionEnd => {}
    }
    Ok(reply)
}

/// Makes the memory branch follow the code branch when the store says so; returns what
/// changed (failures go to the notes: a hook goes on without following).
fn follow(
    app: &Memoir,
    code: Option<&CodeRepo>,
    reply: &mut HookReply,
) -> Option<super::follow::FollowOutcome> {
    let branch = code.and_then(CodeRepo::current_branch)?;
    if !app.branch_match_enabled() {
        return None;
    }
    match app.follow_code_branch(&branch) {
        Ok(f) => {
            if f.switched {
                reply.notes.push(f.message.clone());
            }
            Some(f)
        }
        Err(e) => {
            reply
                .notes
                .push(format!("cannot follow code branch '{branch}': {e}"));
            None
        }
    }
}

/// The capture of the transcript's last turn (or of Codex's last answer alone).
fn capture_job(app: &Memoir, host: Host, input: &HookInput) -> Option<CaptureJob> {
    let from_transcript = input
        .transcript_path
        .as_deref()
        .and_then(|p| transcript::tail(p).ok())
        .and_then(|t| transcript::last_turn(&t));
    let turn = match from_transcript {
        Some(t) => transcript::turn_json(&t),
        None => {
            let answer = input.last_assistant_message.as_deref()?.trim();
            if answer.is_empty() {
                return None;
            }
            json!([{"role": "assistant", "content": answer}]).to_string()
        }
    };
    let branch = app.branches().ok().and_then(|b| b.current);
    Some(CaptureJob {
        store: app.path().to_path_buf(),
        turn,
        branch,
        actor: host.name(),
    })
}

/// The host's answer: `systemMessage` (shown to the user) and the context for the model.
fn answer(event: HookEvent, status: Option<String>, context: &str) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(s) = status {
        out.insert("systemMessage".into(), Value::String(s));
    }
    if !context.is_empty() {
        out.insert(
            "hookSpecificOutput".into(),
            json!({"hookEventName": event.host_name(), "additionalContext": context}),
        );
    }
    Value::Object(out)
}
