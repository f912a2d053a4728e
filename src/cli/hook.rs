//! `memoir hook <host> <event>`: an agent host's hook, speaking its protocol (the host's
//! JSON on stdin, its JSON on stdout). The work is [`memoir::app::hook::run_hook`]; this
//! reads stdin (briefly: a host may leave it open), the settings and environment, prints the
//! answer, and starts the capture of a turn detached. A hook never fails the host's
//! session: whatever goes wrong, it exits 0 having printed nothing, and says why in the
//! hook log.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memoir::app::hook::{
    hook_store, run_hook, CaptureJob, HookEvent, HookInput, HookSettings, Host,
};
use memoir::app::{round_ms, WriteAs};

use super::context::{env, env_flag, env_var, Ctx};
use super::output::{CliError, Report};

const HELP: &str = "\
Examples (as a host runs them, with its JSON on stdin):
  echo '{\"cwd\": \"/home/ada/app\", \"source\": \"startup\"}' | memoir hook claude-code session-start
  echo '{\"cwd\": \"/home/ada/app\", \"prompt\": \"How do we deploy?\"}' | memoir hook codex user-prompt-submit

Hosts and events: claude-code (session-start, user-prompt-submit, stop, pre-compact,
session-end); codex (session-start, user-prompt-submit, stop, pre-compact). The store is -s or
MEMOIR_STORE, else ~/.memoir/<slug> of the session's git repository (the input's cwd),
created at session start. Context goes in hookSpecificOutput.additionalContext: at most 6000
bytes at session start, 2000 with a prompt (MEMOIR_HOOK_CONTEXT_BYTES overrides both).
Commits a hook makes are signed MEMOIR_AUTHOR, else GIT_AUTHOR_NAME/EMAIL, else the host.
stop and pre-compact start `memoir capture` detached and return at once (MEMOIR_NO_CAPTURE=1:
no capture). A hook always exits 0; a failure prints nothing and is written to the hook log,
MEMOIR_HOOK_LOG or ~/.memoir/hooks.log, which also collects the captures' output.";

/// Run an agent host's hook (JSON on stdin, the host's JSON on stdout; always exit 0)
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The host: claude-code or codex
    #[arg(value_name = "HOST", value_parser = |s: &str| s.parse::<Host>())]
    pub host: Host,
    /// The event (session-start, user-prompt-submit, stop, pre-compact, session-end)
    #[arg(value_name = "EVENT")]
    pub event: String,
}

/// Longest wait for the host's JSON on stdin.
const STDIN_WAIT: Duration = Duration::from_secs(1);
/// Most bytes of the host's JSON read.
const STDIN_LIMIT: u64 = 1 << 20;
/// The hook log is moved aside (to `.1`) past this size.
const LOG_LIMIT: u64 = 1 << 20;

/// Runs `hook`: whatever happens, exit 0; the answer, if any, is the report's raw output.
pub fn run(ctx: &Ctx, args: Args) -> Result<Report, CliError> {
    let started = Instant::now();
    let attempt = std::panic::AssertUnwindSafe(|| answer(ctx, &args));
    let (out, notes) = match std::panic::catch_unwind(attempt) {
        Ok(Ok((out, notes))) => (out, notes),
        Ok(Err(e)) => (String::new(), vec![format!("failed: {e}")]),
        Err(_) => (String::new(), vec!["failed: the hook panicked".to_string()]),
    };
    log(&format!(
        "{} {} {:.1} ms: {}",
        args.host.name(),
        args.event,
        round_ms(started.elapsed().as_secs_f64() * 1e3),
        if notes.is_empty() {
            "ok".to_string()
        } else {
            notes.join("; ")
        }
    ));
    Ok(Report {
        raw: Some(out),
        ..Report::default()
    })
}

/// The hook's work: what to print, and the notes for the log.
fn answer(ctx: &Ctx, args: &Args) -> Result<(String, Vec<String>), String> {
    let event = HookEvent::parse(args.host, &args.event).map_err(|e| e.to_string())?;
    let input = HookInput::parse(&read_stdin());
    let cwd = input
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let store = if ctx.store_named {
        ctx.abs_store_path()
    } else {
        let home = env_var("HOME").ok_or("HOME is not set; no store to use")?;
        hook_store(Path::new(&home), &cwd)
    };
    let settings = HookSettings {
        capture: !env_flag("MEMOIR_NO_CAPTURE"),
        auto_promote: env_var("MEMOIR_AUTO_PROMOTE_MERGED").is_none_or(|v| v != "0"),
        create_store: true,
        budget: env_var("MEMOIR_HOOK_CONTEXT_BYTES").and_then(|b| b.trim().parse().ok()),
        who: WriteAs {
            branch: None,
            author: hook_author(args.host),
            source: None,
            actor: Some(args.host.name().to_string()),
        },
    };
    let options = ctx.app.options().clone();
    let reply = run_hook(&store, options, args.host, event, &input, &cwd, &settings)
        .map_err(|e| e.to_string())?;
    let mut notes = reply.notes;
    notes.insert(0, format!("store {}", store.display()));
    if let Some(job) = &reply.capture {
        match start_capture(job, args.host) {
            Ok(pid) => notes.push(format!("capture started (process {pid})")),
            Err(e) => notes.push(format!("cannot start capture: {e}")),
        }
    }
    let out = reply.output.map(|v| format!("{v}\n")).unwrap_or_default();
    Ok((out, notes))
}

/// Who signs the commits a hook makes (the store's creation, promotions): `MEMOIR_AUTHOR`,
/// else `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL`, else the host. Unlike the other commands, a
/// hook does not ask `git config`: that is a process, on every prompt.
fn hook_author(host: Host) -> String {
    if let Some(a) = env_var("MEMOIR_AUTHOR") {
        return a;
    }
    match (env_var("GIT_AUTHOR_NAME"), env_var("GIT_AUTHOR_EMAIL")) {
        (Some(n), Some(e)) => format!("{n} <{e}>"),
        (Some(n), None) => n,
        (None, Some(e)) => e,
        (None, None) => format!("memoir hook ({})", host.name()),
    }
}

/// The host's JSON: stdin until it ends, holds a whole JSON value, or [`STDIN_WAIT`] passes
/// (a host may leave it open).
fn read_stdin() -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock().take(STDIN_LIMIT);
        let mut buf = [0u8; 16 << 10];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let until = Instant::now() + STDIN_WAIT;
    let mut got = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                got.extend_from_slice(&chunk);
                if serde_json::from_slice::<serde_json::Value>(&got).is_ok() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Starts `memoir capture` on `job` detached: in its own process group, its stdin an
/// unlinked file holding the turn, its output appended to the hook log. Claude Code's hooks
/// without a model configured use the `claude` command (`MEMOIR_LLM_BACKEND=claude-cli`).
fn start_capture(job: &CaptureJob, host: Host) -> std::io::Result<u32> {
    let exe = std::env::current_exe()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let turn_path =
        std::env::temp_dir().join(format!("memoir-turn-{}-{nanos}", std::process::id()));
    {
        let mut f = File::create(&turn_path)?;
        f.write_all(job.turn.as_bytes())?;
    }
    let turn = File::open(&turn_path);
    let _ = std::fs::remove_file(&turn_path);
    let turn = turn?;
    let mut cmd = Command::new(exe);
    cmd.arg("-s")
        .arg(&job.store)
        .arg("capture")
        .args(["--actor", job.actor]);
    if let Some(b) = &job.branch {
        cmd.args(["--branch", b]);
    }
    if host == Host::ClaudeCode && matches!(env().llm(), Ok(None)) {
        cmd.env("MEMOIR_LLM_BACKEND", "claude-cli");
    }
    let (out, err) = match open_log() {
        Some(f) => (Stdio::from(f.try_clone()?), Stdio::from(f)),
        None => (Stdio::null(), Stdio::null()),
    };
    cmd.stdin(Stdio::from(turn)).stdout(out).stderr(err);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    // Not waited for: it finishes on its own, after the hook has exited.
    Ok(cmd.spawn()?.id())
}

/// The hook log: `MEMOIR_HOOK_LOG`, else `~/.memoir/hooks.log`.
pub fn log_path() -> Option<PathBuf> {
    env_var("MEMOIR_HOOK_LOG")
        .map(PathBuf::from)
        .or_else(|| env_var("HOME").map(|h| Path::new(&h).join(".memoir/hooks.log")))
}

/// The hook log opened for appending (moved aside to `.1` once past [`LOG_LIMIT`]).
fn open_log() -> Option<File> {
    let path = log_path()?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_LIMIT) {
        let _ = std::fs::rename(&path, path.with_extension("log.1"));
    }
    OpenOptions::new().create(true).append(true).open(path).ok()
}

/// Appends one line, dated, to the hook log (best effort).
fn log(line: &str) {
    if let Some(mut f) = open_log() {
        let now = memoir::calendar::format_iso8601(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
        );
        let _ = writeln!(f, "{now} {line}");
    }
}
