//! Language-model providers behind one trait, for the recall picker and the classifier.
//!
//! Three kinds: an OpenAI-compatible chat-completions endpoint (OpenAI, llama.cpp's server,
//! Ollama, vLLM, ... at any base URL), the Anthropic messages API, and an external command
//! that reads the prompt on stdin and answers on stdout. Every call has a timeout. The
//! configuration is passed in; nothing here reads the environment. [`reply`] reads a reply
//! in the one form the prompt asked for (a JSON object) and refuses any other.

mod http;
pub mod reply;

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The endpoint could not be reached or the connection failed.
    #[error("LLM request to {endpoint} failed: {reason}")]
    Transport {
        /// Where the request went.
        endpoint: String,
        /// What went wrong.
        reason: String,
    },
    /// The endpoint answered with an error status.
    #[error("LLM endpoint {endpoint} answered HTTP {status}: {body}{hint}")]
    Status {
        /// Where the request went.
        endpoint: String,
        /// HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
        /// What the status likely means for the configuration.
        hint: StatusHint,
    },
    /// The answer is not in the provider's format.
    #[error("LLM answer is malformed: {0}")]
    Malformed(String),
    /// The answer is in the provider's format, but its text is not the JSON object the prompt
    /// asked for (prose, the prompt repeated, a field missing or of the wrong type, a name
    /// that was not offered). The call counts as failed.
    #[error("unusable model reply: {0}")]
    BadReply(String),
    /// No answer within the timeout.
    #[error("LLM call timed out after {0:?}")]
    Timeout(Duration),
    /// The command provider failed.
    #[error("LLM command failed: {0}")]
    Command(String),
}

/// What an error status likely says about the configuration, shown after the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusHint {
    /// Nothing to add.
    None,
    /// 401 or 403 to an OpenAI-compatible request without a key.
    NoOpenAiKey,
    /// 401 or 403 to an Anthropic request without a key.
    NoAnthropicKey,
    /// 401 or 403 to a request with a key.
    KeyRefused,
    /// 404 or 405: the URL names no such endpoint.
    NoSuchEndpoint,
}

impl std::fmt::Display for StatusHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusHint::None => Ok(()),
            StatusHint::NoOpenAiKey => {
                f.write_str(" (no API key was sent: the endpoint needs one; set OPENAI_API_KEY)")
            }
            StatusHint::NoAnthropicKey => {
                f.write_str(" (no API key was sent: the endpoint needs one; set ANTHROPIC_API_KEY)")
            }
            StatusHint::KeyRefused => f.write_str(" (the endpoint refused the API key)"),
            StatusHint::NoSuchEndpoint => f.write_str(" (no such endpoint: check the base URL)"),
        }
    }
}

/// A model's answer and whether the provider cut it at the token limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The answer's text.
    pub text: String,
    /// The provider reported that the answer stopped at the token limit (OpenAI
    /// `finish_reason: "length"`, Anthropic `stop_reason: "max_tokens"`). Providers that
    /// cannot tell report `false`.
    pub truncated: bool,
}

/// A model that completes a prompt.
pub trait Llm: Send + Sync {
    /// Answers `prompt` (with an optional system instruction) as plain text.
    fn complete(&self, system: &str, prompt: &str) -> Result<String, LlmError>;
    /// Like [`Llm::complete`], also telling whether the answer was cut at the token limit
    /// (for callers that must not use a partial answer, such as a merge). The default
    /// cannot tell and reports `truncated: false`.
    fn answer(&self, system: &str, prompt: &str) -> Result<Completion, LlmError> {
        self.complete(system, prompt).map(|text| Completion {
            text,
            truncated: false,
        })
    }
    /// A short description for results and errors (`openai:gpt-4o-mini`).
    fn describe(&self) -> String;
}

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderKind {
    /// `POST {base}/chat/completions`; a base URL without a path gets `/v1` (see
    /// [`ProviderConfig::endpoint`]).
    OpenAi,
    /// `POST {base}/v1/messages`; a base URL that already ends in `/v1` gets `/messages`.
    Anthropic,
    /// An external program: prompt on stdin, answer on stdout.
    Command(Vec<String>),
    /// The `claude` command (Claude Code's own sign-in): a command provider run with
    /// `CLAUDECODE` emptied and `MEMOIR_NO_CAPTURE=1` (so that the hooks of the `claude` it
    /// starts neither think they run inside a session nor capture its turn), from `dir` (so
    /// that no project's `CLAUDE.md` is read into the prompt).
    ClaudeCli {
        /// The command line: `claude -p --model M ...`.
        argv: Vec<String>,
        /// The directory it runs in.
        dir: std::path::PathBuf,
    },
}

/// The variables a `claude` started as a model runs with.
pub const CLAUDE_CLI_ENV: [(&str, &str); 2] = [("CLAUDECODE", ""), ("MEMOIR_NO_CAPTURE", "1")];

/// Everything needed to call a model.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The protocol.
    pub kind: ProviderKind,
    /// Base URL for HTTP providers, with or without a trailing `/v1` (see
    /// [`ProviderConfig::endpoint`]).
    pub base_url: String,
    /// API key, when the endpoint needs one.
    pub api_key: Option<String>,
    /// Model name.
    pub model: String,
    /// Longest wait for one answer.
    pub timeout: Duration,
    /// Most tokens the answer may have.
    pub max_tokens: u32,
    /// How the caller chose this configuration, in words, for status and diagnostics
    /// (`OPENAI_API_KEY is set`); empty when it does not say.
    pub origin: String,
}

impl ProviderConfig {
    /// The provider's name: `openai`, `anthropic` or `command`.
    pub fn provider_name(&self) -> &'static str {
        match self.kind {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Command(_) => "command",
            ProviderKind::ClaudeCli { .. } => "claude-cli",
        }
    }

    /// Where requests go: the full URL for HTTP providers, the command line for the command
    /// provider.
    ///
    /// A base URL is accepted in the forms users have it, with or without `/v1`, as the
    /// providers' own SDKs take it: for OpenAI-compatible endpoints, a base URL without a
    /// path gets `/v1` (`http://127.0.0.1:8080` and `http://127.0.0.1:8080/v1` both give
    /// `http://127.0.0.1:8080/v1/chat/completions`) and one with a path is used as it is
    /// (`https://example.org/api/openai` gives `.../api/openai/chat/completions`); for
    /// Anthropic, a base URL ending in `/v1` gets `/messages`, any other `/v1/messages`. A URL
    /// that already names the endpoint is used as it is. Trailing slashes are ignored.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        match &self.kind {
            ProviderKind::Command(argv) | ProviderKind::ClaudeCli { argv, .. } => argv.join(" "),
            ProviderKind::OpenAi => {
                if base.ends_with("/chat/completions") {
                    base.to_string()
                } else if url_path(base).is_empty() {
                    format!("{base}/v1/chat/completions")
                } else {
                    format!("{base}/chat/completions")
                }
            }
            ProviderKind::Anthropic => {
                if base.ends_with("/v1/messages") {
                    base.to_string()
                } else if base.ends_with("/v1") {
                    format!("{base}/messages")
                } else {
                    format!("{base}/v1/messages")
                }
            }
        }
    }
}

/// The path of a URL (`/v1` of `http://host:8080/v1`), empty when it has none.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("", |i| &rest[i..])
}

/// Default base URL of the OpenAI API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default base URL of the Anthropic API.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// Builds the provider a configuration describes.
pub fn provider(cfg: ProviderConfig) -> Box<dyn Llm> {
    match cfg.kind.clone() {
        ProviderKind::Command(argv) => Box::new(CommandLlm {
            argv,
            timeout: cfg.timeout,
            env: Vec::new(),
            dir: None,
            name: "command",
        }),
        ProviderKind::ClaudeCli { argv, dir } => Box::new(CommandLlm {
            argv,
            timeout: cfg.timeout,
            env: CLAUDE_CLI_ENV.to_vec(),
            dir: Some(dir),
            name: "claude-cli",
        }),
        _ => Box::new(http::HttpLlm::new(cfg)),
    }
}

struct CommandLlm {
    argv: Vec<String>,
    timeout: Duration,
    /// Variables set for the command, over the inherited ones.
    env: Vec<(&'static str, &'static str)>,
    /// The directory it runs in (none: this process's).
    dir: Option<std::path::PathBuf>,
    /// The provider's name, for [`Llm::describe`].
    name: &'static str,
}

/// Most bytes of an answer (or of the error output kept) read from the command.
const COMMAND_OUTPUT_LIMIT: usize = 8 << 20;

/// After the command exited, how long a helper it left behind may keep its output open
/// before the helper is killed and the answer taken as it stands.
const COMMAND_EXIT_GRACE: Duration = Duration::from_millis(200);

/// Reads `from` on a thread, sending what it reads in chunks (at most `limit` bytes in all,
/// the rest read and dropped); the channel closes at the end of the stream.
fn pipe_reader(mut from: impl Read + Send + 'static, limit: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        let mut sent = 0usize;
        loop {
            match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let keep = n.min(limit - sent);
                    sent += keep;
                    if keep > 0 && tx.send(buf[..keep].to_vec()).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    rx
}

/// Everything sent on `rx` until it closes or `until` passes; whether it closed.
fn drain(rx: &mpsc::Receiver<Vec<u8>>, out: &mut Vec<u8>, until: Instant) -> bool {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => out.extend_from_slice(&chunk),
            Err(mpsc::RecvTimeoutError::Timeout) => return false,
            Err(mpsc::RecvTimeoutError::Disconnected) => return true,
        }
    }
}

/// A command started in its own process group, so that it and every helper it starts can be
/// killed together.
struct Group {
    child: Child,
    /// The leader's exit status, once it was seen.
    status: Option<std::process::ExitStatus>,
}

impl Group {
    /// Whether the command (the group's leader) has exited.
    fn leader_exited(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status.is_some()
    }

    /// Kills every process left in the group (the leader too, if it still runs), then reaps
    /// the leader: its exit status. A group id is not reused while any process of the group
    /// lives, so after the leader was reaped the signal reaches its helpers or no one.
    fn finish(mut self) -> std::io::Result<std::process::ExitStatus> {
        #[cfg(unix)]
        kill_group(self.child.id());
        if let Some(s) = self.status {
            return Ok(s);
        }
        let _ = self.child.kill();
        self.child.wait()
    }
}

/// Sends SIGKILL to the process group `pgid`.
#[cfg(unix)]
fn kill_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        if pgid > 1 {
            // SAFETY: killpg(2) takes plain integers and touches no memory of ours.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Llm for CommandLlm {
    /// Runs the command in its own process group with the prompt on stdin. The timeout bounds
    /// the whole call: when it passes, the group is killed (helpers included) and reaped.
    /// Once the command has exited, helpers it left holding its output get
    /// [`COMMAND_EXIT_GRACE`] to finish, then the group is killed and the answer read so far
    /// is used.
    fn complete(&self, system: &str, prompt: &str) -> Result<String, LlmError> {
        let (prog, args) = self
            .argv
            .split_first()
            .ok_or_else(|| LlmError::Command("empty command".into()))?;
        let started = Instant::now();
        let deadline = started + self.timeout;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .envs(self.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(d) = &self.dir {
            cmd.current_dir(d);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let child = cmd
            .spawn()
            .map_err(|e| LlmError::Command(format!("cannot start {prog}: {e}")))?;
        let mut group = Group {
            child,
            status: None,
        };
        let input = if system.is_empty() {
            prompt.to_string()
        } else {
            format!("{system}\n\n{prompt}")
        };
        let pipes = (
            group.child.stdin.take(),
            group.child.stdout.take(),
            group.child.stderr.take(),
        );
        let (Some(mut stdin), Some(stdout), Some(stderr)) = pipes else {
            let _ = group.finish();
            return Err(LlmError::Command(format!("{prog}: no pipe to the child")));
        };
        // The writer ends when the prompt is written or the pipe breaks (the group killed).
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let out_rx = pipe_reader(stdout, COMMAND_OUTPUT_LIMIT);
        let err_rx = pipe_reader(stderr, 64 << 10);
        let mut out = Vec::new();
        let mut closed = false;
        let mut exited_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if exited_at.is_none() && group.leader_exited() {
                exited_at = Some(now);
            }
            match exited_at {
                Some(_) if closed => break,
                Some(t) if now >= (t + COMMAND_EXIT_GRACE).min(deadline) => break,
                _ if now >= deadline => {
                    let _ = group.finish();
                    return Err(LlmError::Timeout(self.timeout));
                }
                _ => {}
            }
            let step = (now + Duration::from_millis(5)).min(deadline);
            if closed {
                std::thread::sleep(step.saturating_duration_since(now));
            } else {
                closed = drain(&out_rx, &mut out, step);
            }
        }
        let status = group
            .finish()
            .map_err(|e| LlmError::Command(e.to_string()))?;
        // The group is gone: what is left in the pipes comes at once.
        let soon = Instant::now() + Duration::from_millis(100);
        drain(&out_rx, &mut out, soon);
        if !status.success() {
            let mut err = Vec::new();
            drain(&err_rx, &mut err, soon);
            let err = String::from_utf8_lossy(&err);
            return Err(LlmError::Command(format!(
                "{prog} exited with {status}: {}",
                err.trim().chars().take(300).collect::<String>()
            )));
        }
        String::from_utf8(out).map_err(|_| LlmError::Malformed("answer is not UTF-8".into()))
    }

    fn describe(&self) -> String {
        format!("{}:{}", self.name, self.argv.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: ProviderKind, base: &str) -> String {
        ProviderConfig {
            kind,
            base_url: base.into(),
            api_key: None,
            model: "m".into(),
            timeout: Duration::from_secs(1),
            max_tokens: 1,
            origin: String::new(),
        }
        .endpoint()
    }

    #[test]
    fn base_urls_with_or_without_v1() {
        let chat = "http://127.0.0.1:8080/v1/chat/completions";
        for base in [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
            " http://127.0.0.1:8080/v1/chat/completions ",
        ] {
            assert_eq!(at(ProviderKind::OpenAi, base), chat, "{base:?}");
        }
        assert_eq!(
            at(ProviderKind::OpenAi, "https://example.org/api/openai/"),
            "https://example.org/api/openai/chat/completions"
        );
        let messages = "https://api.example.org/v1/messages";
        for base in [
            "https://api.example.org",
            "https://api.example.org/v1",
            "https://api.example.org/v1/",
            "https://api.example.org/v1/messages",
        ] {
            assert_eq!(at(ProviderKind::Anthropic, base), messages, "{base:?}");
        }
        assert_eq!(
            at(ProviderKind::Anthropic, "http://proxy/anthropic"),
            "http://proxy/anthropic/v1/messages"
        );
        assert_eq!(
            at(
                ProviderKind::Command(vec!["claude".into(), "-p".into()]),
                ""
            ),
            "claude -p"
        );
    }
}
