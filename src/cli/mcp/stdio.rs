//! The stdio transport's framing: a pump between the process's stdin/stdout and the MCP
//! library's side of an in-memory pipe. Each line from the host is checked first
//! ([`super::jsonrpc::triage`]): a malformed one is answered here with the error JSON-RPC
//! names (`"id": null` when no id can be read), instead of a reply without an id or none at
//! all. A batch is answered as a batch when the negotiated protocol version has them
//! (2025-03-26: each element goes to the library, and the replies are gathered into one
//! array), and refused with an error otherwise, never dropped. A line longer than
//! [`MAX_MESSAGE_BYTES`] is not buffered: it is skipped and answered with an error (the
//! content limit is checked by the application, so a too-long memory gets its own error).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::ids::Ids;
use super::jsonrpc::{
    check, error_response, id_of, triage, version_allows_batches, Triage, INVALID_REQUEST,
    PARSE_ERROR,
};

/// The longest message line taken from the host: room for a memory of the largest size the
/// application accepts even with every character escaped (`\u00XX`), so such a memory gets
/// the application's answer rather than this one.
pub const MAX_MESSAGE_BYTES: usize = 6 * memoir::app::MAX_CONTENT_BYTES + (1 << 20);

/// One line read with [`read_line`].
enum Line {
    /// A whole line (without its newline).
    Text(String),
    /// A line over the limit, skipped to its end.
    TooLong,
    /// A line that is not UTF-8.
    NotText,
    /// End of input.
    End,
}

/// Reads one `\n`-terminated line without holding more than `max` bytes of it.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            if buf.is_empty() && !too_long {
                return Ok(Line::End);
            }
            break;
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if !too_long {
            if buf.len() + part.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        let used = done.unwrap_or(chunk.len());
        r.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Line::TooLong);
    }
    match String::from_utf8(std::mem::take(buf)) {
        Ok(s) => Ok(Line::Text(s)),
        Err(_) => Ok(Line::NotText),
    }
}

/// A batch waiting for the replies to its requests.
struct Pending {
    waiting: HashSet<String>,
    replies: Vec<Value>,
}

#[derive(Default)]
struct State {
    /// Ids swapped for tokens the library can hold, until their replies go out.
    ids: Ids,
    /// The protocol version the library agreed to in its initialize reply, or until it
    /// replies, the one the host asked for.
    version: Option<String>,
    batches: Vec<Pending>,
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Pumps messages between `host_in`/`host_out` (stdin/stdout) and `library` (the other end
/// of the library's transport) until the host closes its input and the library has
/// answered everything it was sent.
pub async fn pump<I, O, L>(host_in: I, host_out: O, library: L) -> std::io::Result<()>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    L: AsyncRead + AsyncWrite + Send + 'static,
{
    let (from_library, mut to_library) = tokio::io::split(library);
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let state: Shared = Arc::new(Mutex::new(State {
        ids: Ids::new(nonce()),
        ..State::default()
    }));

    let writer = tokio::spawn(async move {
        let mut out = host_out;
        while let Some(line) = rx.recv().await {
            out.write_all(line.as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });

    let replies = {
        let tx = tx.clone();
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let mut lines = BufReader::new(from_library).lines();
            while let Some(line) = lines.next_line().await? {
                if let Some(out) = outgoing(&state, line) {
                    let _ = tx.send(out);
                }
            }
            Ok::<(), std::io::Error>(())
        })
    };

    let mut input = BufReader::new(host_in);
    let mut buf = Vec::new();
    loop {
        let line = match read_line(&mut input, &mut buf, MAX_MESSAGE_BYTES).await? {
            Line::End => break,
            Line::Text(t) => t,
            Line::TooLong => {
                let why = format!(
                    "Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes"
                );
                let _ = tx.send(error_response(Value::Null, INVALID_REQUEST, &why).to_string());
                continue;
            }
            Line::NotText => {
                let why = "Parse error: the message is not UTF-8";
                let _ = tx.send(error_response(Value::Null, PARSE_ERROR, why).to_string());
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let (forward, answer) = incoming(&state, &line);
        for message in forward {
            to_library.write_all(message.as_bytes()).await?;
            to_library.write_all(b"\n").await?;
        }
        to_library.flush().await?;
        if let Some(a) = answer {
            let _ = tx.send(a.to_string());
        }
    }
    // The host is done: let the library finish, then flush what it answered.
    to_library.shutdown().await?;
    drop(to_library);
    replies.await.map_err(std::io::Error::other)??;
    drop(tx);
    writer.await.map_err(std::io::Error::other)?
}

/// One line from the host: what goes on to the library, and what is answered here.
fn incoming(state: &Shared, line: &str) -> (Vec<String>, Option<Value>) {
    match triage(line.as_bytes()) {
        Triage::Single => {
            note_requested_version(state, line);
            let swapped = lock(state).ids.swap_in(line);
            (vec![swapped.unwrap_or_else(|| line.to_string())], None)
        }
        Triage::Reject(error) => (Vec::new(), Some(error)),
        Triage::Batch(items) => {
            let items = swap_batch_ids(state, line).unwrap_or(items);
            batch(state, items)
        }
    }
}

/// The elements of the batch `line`, each with its id swapped when the library cannot hold
/// it (read from the text, so a large number keeps its every digit).
fn swap_batch_ids(state: &Shared, line: &str) -> Option<Vec<Value>> {
    let raws: Vec<&serde_json::value::RawValue> = serde_json::from_str(line).ok()?;
    let mut st = lock(state);
    raws.into_iter()
        .map(|raw| {
            let text = st.ids.swap_in(raw.get());
            serde_json::from_str(text.as_deref().unwrap_or(raw.get())).ok()
        })
        .collect()
}

/// A number unlike any other process's, for the tokens of swapped ids.
fn nonce() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// A host that sends a batch right behind its initialize request (without waiting for the
/// reply) is judged by the version it asked for until the library's reply says otherwise.
fn note_requested_version(state: &Shared, line: &str) {
    if !line.contains("\"initialize\"") {
        return;
    }
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return;
    };
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        return;
    }
    if let Some(v) = message
        .get("params")
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    {
        let mut st = lock(state);
        if st.version.is_none() {
            st.version = Some(v.to_string());
        }
    }
}

fn batch(state: &Shared, items: Vec<Value>) -> (Vec<String>, Option<Value>) {
    let mut st = lock(state);
    let version = st.version.clone();
    if !version.as_deref().is_some_and(version_allows_batches) {
        let why = match &version {
            Some(v) => format!("Invalid Request: protocol version {v} has no JSON-RPC batches"),
            None => "Invalid Request: a batch before initialization".to_string(),
        };
        return (
            Vec::new(),
            Some(error_response(Value::Null, INVALID_REQUEST, &why)),
        );
    }
    let mut forward = Vec::new();
    let mut pending = Pending {
        waiting: HashSet::new(),
        replies: Vec::new(),
    };
    for item in items {
        match check(&item) {
            Err(error) => pending.replies.push(error),
            Ok(()) => {
                // Requests are answered; notifications and responses are not.
                if item.get("method").is_some() {
                    if let Some(id) = id_of(&item) {
                        pending.waiting.insert(id.to_string());
                    }
                }
                forward.push(item.to_string());
            }
        }
    }
    if pending.waiting.is_empty() {
        let answer = (!pending.replies.is_empty()).then_some(Value::Array(pending.replies));
        return (forward, answer);
    }
    st.batches.push(pending);
    (forward, None)
}

/// One line from the library: what to write to the host now (a reply that completes a batch
/// releases the whole batch; one that only advances it, nothing).
fn outgoing(state: &Shared, line: String) -> Option<String> {
    let Ok(message) = serde_json::from_str::<Value>(&line) else {
        return Some(line);
    };
    let mut st = lock(state);
    if let Some(v) = message
        .get("result")
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str)
    {
        st.version = Some(v.to_string());
    }
    let is_reply = message.get("method").is_none();
    let Some(key) = id_of(&message)
        .filter(|_| is_reply)
        .map(|id| id.to_string())
    else {
        return Some(st.ids.swap_out(line));
    };
    let Some(at) = st.batches.iter().position(|b| b.waiting.contains(&key)) else {
        return Some(st.ids.swap_out(line));
    };
    let b = &mut st.batches[at];
    b.waiting.remove(&key);
    b.replies.push(message);
    if !b.waiting.is_empty() {
        return None;
    }
    let done = st.batches.remove(at);
    Some(st.ids.swap_out(Value::Array(done.replies).to_string()))
}
