//! The one HTTP client stack: reqwest over rustls (ring) on a tokio runtime of the caller's
//! own, for model servers, embedding endpoints and S3 remotes. What is shared lives here:
//! the client's setup, error messages with their causes, and a bounded JSON POST.

use std::time::Duration;

use serde_json::Value;

/// A runtime and a client whose requests each take at most `timeout`, connecting included,
/// and at most `connect` to connect.
pub(crate) fn client(
    timeout: Duration,
    connect: Duration,
) -> Result<(tokio::runtime::Runtime, reqwest::Client), String> {
    // rustls needs a process-wide crypto provider; a second install is a no-op error.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the I/O runtime: {e}"))?;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(connect)
        .user_agent(concat!("memoir/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {}", chain(&e)))?;
    Ok((runtime, client))
}

/// An error with its causes, `a: b: c` (reqwest's own message names only the request).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// Why [`post_json`] failed.
pub(crate) enum PostFailure {
    /// The request or the reading of its answer.
    Request(reqwest::Error),
    /// The answer is longer than this many bytes.
    TooLarge(usize),
}

/// POSTs `body` as JSON to `url` with `headers` through `pair` (see [`client`]), reading
/// at most `max` bytes of the answer: its status and body. Shared by the model and
/// embedding clients.
pub(crate) fn post_json(
    pair: &(tokio::runtime::Runtime, reqwest::Client),
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    max: usize,
) -> Result<(u16, Vec<u8>), PostFailure> {
    let (runtime, client) = pair;
    let mut req = client.post(url).header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, v.as_str());
    }
    runtime.block_on(async {
        let mut resp = req
            .body(body.to_string())
            .send()
            .await
            .map_err(PostFailure::Request)?;
        let status = resp.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(PostFailure::Request)? {
            if bytes.len() + chunk.len() > max {
                return Err(PostFailure::TooLarge(max));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((status, bytes))
    })
}
