//! What commands hand back ([`Report`]), errors with their exit codes ([`CliError`], the one
//! mapping from library errors in [`classify`]), and printing in human or JSON form.

use std::io::{IsTerminal, Write};

use serde_json::{json, Value};

use memoir::app::{MemoirError, Outcome};

pub use memoir::app::exit;

/// A failed command: exit code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// Exit code (see [`exit`]).
    pub code: u8,
    /// One-line message.
    pub message: String,
}

impl CliError {
    /// An error with an explicit code.
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        CliError {
            code,
            message: message.into(),
        }
    }

    /// Exit 1.
    pub fn invalid(message: impl Into<String>) -> Self {
        CliError::new(exit::ERROR, message)
    }

    /// An input file (`what`, named in the message) that could not be opened: exit 2 when it
    /// does not exist, as for every command that reads one, else exit 1.
    pub fn input_file(what: &str, e: &std::io::Error) -> Self {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            exit::NOT_FOUND
        } else {
            exit::ERROR
        };
        CliError::new(code, format!("cannot read {what}: {e}"))
    }
}

impl From<MemoirError> for CliError {
    fn from(e: MemoirError) -> Self {
        CliError::new(e.code(), e.to_string())
    }
}

/// Writes an outcome's JSON, as `--json` prints it, to a stream (the outcome moved in).
pub struct JsonWriter(Box<WriteOnce>);

/// Writes once to a stream.
type WriteOnce = dyn FnOnce(&mut dyn Write) -> std::io::Result<()>;

impl std::fmt::Debug for JsonWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsonWriter")
    }
}

/// What a successful (or partly successful) command hands back for printing.
#[derive(Debug, Default)]
pub struct Report {
    /// The JSON object printed with `--json`.
    pub json: Value,
    /// Human lines for stdout (already styled and escaped).
    pub lines: Vec<String>,
    /// Whether `lines` are the data asked for (printed even with `--quiet`) rather than
    /// confirmation chatter.
    pub data: bool,
    /// Human lines for stderr (warnings), printed in both modes unless quiet.
    pub warnings: Vec<String>,
    /// Raw text for stdout in both modes (JSON Lines of `export`), instead of `json`.
    pub raw: Option<String>,
    /// Writes the JSON as `--json` prints it, straight from the outcome, instead of `json`.
    pub json_writer: Option<JsonWriter>,
    /// Exit code (0 unless the command reports a partial failure, e.g. conflicts).
    pub code: u8,
}

impl Report {
    /// A report of an operation's outcome: its JSON and exit code, no human lines yet.
    /// Commands ask through [`Ctx::report`](super::context::Ctx::report), which leaves the
    /// JSON out where nothing reads it.
    pub fn of<O: Outcome>(outcome: &O) -> Self {
        Report {
            json: outcome.to_json(),
            code: outcome.exit_code(),
            ..Default::default()
        }
    }

    /// A report of an operation's outcome without its JSON: for a command line that prints
    /// only human lines, where building the JSON would be work thrown away.
    pub fn code_of<O: Outcome>(outcome: &O) -> Self {
        Report {
            code: outcome.exit_code(),
            ..Default::default()
        }
    }

    /// A report for `--json` alone: the outcome's JSON is written when printed, straight
    /// from the outcome ([`Outcome::write_json`]) to stdout, with no value tree, no copy of
    /// the whole text and no human lines.
    pub fn json_only<O: Outcome + 'static>(outcome: O) -> Self {
        let code = outcome.exit_code();
        let write = move |out: &mut dyn Write| {
            outcome.write_json(out)?;
            // Printing is the command's last act: the process gives the outcome's memory
            // back as it exits, so it is not freed piece by piece first (a thousand-key
            // diff is thousands of allocations).
            std::mem::forget(outcome);
            Ok(())
        };
        Report {
            json_writer: Some(JsonWriter(Box::new(write))),
            code,
            data: true,
            ..Default::default()
        }
    }

    /// Adds a human line.
    pub fn line(mut self, l: impl Into<String>) -> Self {
        self.lines.push(l.into());
        self
    }
}

/// Prefix markers, coloured when the stream is a terminal and `NO_COLOR` is unset.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colour decided by the caller.
    pub fn new(color: bool) -> Self {
        Style { color }
    }

    fn mark(&self, code: &str, mark: &str, msg: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{mark}\x1b[0m {msg}")
        } else {
            format!("{mark} {msg}")
        }
    }

    /// `✓ msg`.
    pub fn ok(&self, msg: &str) -> String {
        self.mark("32", "✓", msg)
    }
    /// `✗ msg`.
    pub fn err(&self, msg: &str) -> String {
        self.mark("31", "✗", msg)
    }
    /// `→ msg`.
    pub fn info(&self, msg: &str) -> String {
        self.mark("36", "→", msg)
    }
    /// `⚠ msg`.
    pub fn warn(&self, msg: &str) -> String {
        self.mark("33", "⚠", msg)
    }
    /// Bold text (for headings), plain without colour.
    pub fn bold(&self, msg: &str) -> String {
        if self.color {
            format!("\x1b[1m{msg}\x1b[0m")
        } else {
            msg.to_string()
        }
    }
}

/// Makes stored text safe for a terminal: control characters (other than newline and tab),
/// escape sequences' introducers, and bidirectional or invisible formatting characters are
/// shown as `\u{..}` escapes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    esc_into(&mut out, s);
    out
}

/// [`esc`], appended to `out`.
pub fn esc_into(out: &mut String, s: &str) {
    // Printable ASCII, newlines and tabs are shown as they are; most text is nothing else.
    if s.bytes().all(|b| matches!(b, b' '..=b'~' | b'\n' | b'\t')) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        let hide = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}');
        if hide {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
}

/// Escapes and also shows newlines as `\n` (for one-line display).
pub fn esc_line(s: &str) -> String {
    esc(s).replace('\n', "\\n").replace('\t', "\\t")
}

/// Whether colour may be used on stdout / stderr.
pub fn color_allowed(stream_is_terminal: bool) -> bool {
    stream_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Pretty JSON with sorted keys and a final newline.
pub fn render_json(v: Value) -> String {
    let mut text = Vec::new();
    write_json(&mut text, v);
    String::from_utf8(text).unwrap_or_else(|_| "{}\n".into())
}

/// [`render_json`] written straight to `out` through a buffer, without building the whole
/// text first (a large result is hundreds of kilobytes).
fn write_json(out: &mut dyn Write, v: Value) {
    let _ = memoir::app::write_printed(out, v);
}

/// The JSON error object.
pub fn error_json(e: &CliError) -> Value {
    json!({"success": false, "error": e.message, "code": e.code})
}

/// How to print.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// Style of stdout lines.
    pub out: Style,
    /// Style of stderr lines.
    pub err: Style,
}

impl Printer {
    /// Prints a command's result; returns the exit code.
    pub fn emit(&self, result: Result<Report, CliError>) -> u8 {
        let stdout = std::io::stdout();
        let mut so = stdout.lock();
        match result {
            Ok(r) => {
                if let Some(raw) = &r.raw {
                    let _ = so.write_all(raw.as_bytes());
                } else if let (true, Some(writer)) = (self.json, r.json_writer) {
                    let _ = (writer.0)(&mut unbuffered(&mut so));
                } else if self.json {
                    write_json(&mut so, r.json);
                } else if r.data || !self.quiet {
                    // One write for all the lines, not one per line.
                    let mut text = String::with_capacity(r.lines.iter().map(|l| l.len() + 1).sum());
                    for l in &r.lines {
                        text.push_str(l);
                        text.push('\n');
                    }
                    let _ = so.write_all(text.as_bytes());
                }
                let _ = so.flush();
                if !self.quiet || r.code != exit::OK {
                    for w in &r.warnings {
                        eprintln!("{w}");
                    }
                }
                r.code
            }
            Err(e) => {
                if self.json {
                    let _ = so.write_all(render_json(error_json(&e)).as_bytes());
                    let _ = so.flush();
                } else {
                    eprintln!("{}", self.err.err(&esc(&e.message)));
                }
                e.code
            }
        }
    }
}

/// Stdout without its line buffer, for a writer that gathers its own writes: Rust's stdout
/// buffers every line, so each large write would be cut at its last line break and the rest
/// written with the next one, two writes for one. Falls back to `so` itself when the
/// descriptor cannot be duplicated.
fn unbuffered<'a>(so: &'a mut std::io::StdoutLock<'static>) -> Box<dyn Write + 'a> {
    let _ = so.flush();
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = so.as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(so)
}

/// Whether stderr is a terminal (for progress display).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls() {
        assert_eq!(esc("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(esc("x\ny\tz"), "x\ny\tz");
        assert_eq!(
            esc("\r\u{7f}\u{9b}\u{202e}"),
            "\\u{d}\\u{7f}\\u{9b}\\u{202e}"
        );
        assert_eq!(esc_line("a\nb"), "a\\nb");
        // Plain text, the fast path, comes back as it is; one hidden character anywhere
        // sends the whole string through the slow one.
        let plain = "preferences.coding: use pytest ~ \"always\"\n\tand {x}";
        assert_eq!(esc(plain), plain);
        assert_eq!(esc("caf\u{e9} a\u{200b}b"), "caf\u{e9} a\\u{200b}b");
        let mut out = String::from("> ");
        esc_into(&mut out, "a\x07b");
        assert_eq!(out, "> a\\u{7}b");
    }

    #[test]
    fn sorted_orders_nested_keys() {
        let v = json!({"b": 1, "a": {"d": 1, "c": [ {"z": 1, "y": 2} ]}});
        assert_eq!(
            serde_json::to_string(&memoir::app::sorted(v)).unwrap(),
            r#"{"a":{"c":[{"y":2,"z":1}],"d":1},"b":1}"#
        );
    }
}
