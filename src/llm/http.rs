//! The HTTP providers: the OpenAI-compatible and Anthropic wire formats over one POST of
//! JSON, through reqwest (the HTTP client remotes use too) on a runtime of the provider's
//! own, bounded in time and size so a hostile or stuck server cannot hold or flood a call.

#[cfg(feature = "http")]
use std::time::Instant;

use serde_json::{json, Value};

use super::{Completion, Llm, LlmError, ProviderConfig, ProviderKind, StatusHint};
#[cfg(feature = "http")]
use crate::http::{chain, client, post_json, PostFailure};

/// Largest answer read from a model server.
#[cfg(feature = "http")]
const MAX_ANSWER_BYTES: usize = 8 << 20;

/// A model behind an HTTP endpoint.
pub(super) struct HttpLlm {
    cfg: ProviderConfig,
    /// The runtime and client every call of this provider uses (or why there are none).
    #[cfg(feature = "http")]
    client: Result<(tokio::runtime::Runtime, reqwest::Client), String>,
}

impl HttpLlm {
    pub(super) fn new(cfg: ProviderConfig) -> Self {
        HttpLlm {
            #[cfg(feature = "http")]
            client: client(cfg.timeout, cfg.timeout),
            cfg,
        }
    }

    /// POSTs `body` as JSON to `url` with `headers` and reads the JSON answer: within the
    /// timeout (else [`LlmError::Timeout`]), at most 8 MiB of it, a status
    /// outside 2xx an [`LlmError::Status`] with the body's start.
    fn post(&self, url: &str, headers: &[(&str, String)], body: &Value) -> Result<Value, LlmError> {
        let transport = |reason: String| LlmError::Transport {
            endpoint: url.to_string(),
            reason,
        };
        let (status, bytes) = self.send(url, headers, body)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| transport("stream did not contain valid UTF-8".into()))?;
        if !(200..300).contains(&status) {
            return Err(LlmError::Status {
                endpoint: url.to_string(),
                status,
                body: text.chars().take(300).collect(),
                hint: self.status_hint(status),
            });
        }
        serde_json::from_str(&text).map_err(|e| LlmError::Malformed(e.to_string()))
    }

    /// One request: the status and the body.
    #[cfg(feature = "http")]
    fn send(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
    ) -> Result<(u16, Vec<u8>), LlmError> {
        let started = Instant::now();
        let transport = |reason: String| LlmError::Transport {
            endpoint: url.to_string(),
            reason,
        };
        let fail = |e: reqwest::Error| {
            if e.is_timeout() || started.elapsed() >= self.cfg.timeout {
                LlmError::Timeout(self.cfg.timeout)
            } else {
                transport(chain(&e))
            }
        };
        let pair = self.client.as_ref().map_err(|e| transport(e.clone()))?;
        post_json(pair, url, headers, body, MAX_ANSWER_BYTES).map_err(|f| match f {
            PostFailure::Request(e) => fail(e),
            PostFailure::TooLarge(max) => {
                transport(format!("the response body is larger than {max} bytes"))
            }
        })
    }

    /// Without an HTTP client in the build, every request fails.
    #[cfg(not(feature = "http"))]
    fn send(&self, url: &str, _: &[(&str, String)], _: &Value) -> Result<(u16, Vec<u8>), LlmError> {
        Err(LlmError::Transport {
            endpoint: url.to_string(),
            reason: "this build of memoir has no HTTP client (its `http` feature)".into(),
        })
    }

    /// What an error status likely says about the configuration.
    fn status_hint(&self, status: u16) -> StatusHint {
        match (status, &self.cfg.api_key, &self.cfg.kind) {
            (401 | 403, None, ProviderKind::Anthropic) => StatusHint::NoAnthropicKey,
            (401 | 403, None, _) => StatusHint::NoOpenAiKey,
            (401 | 403, Some(_), _) => StatusHint::KeyRefused,
            (404 | 405, _, _) => StatusHint::NoSuchEndpoint,
            _ => StatusHint::None,
        }
    }
}

impl Llm for HttpLlm {
    fn complete(&self, system: &str, prompt: &str) -> Result<String, LlmError> {
        self.answer(system, prompt).map(|c| c.text)
    }

    fn answer(&self, system: &str, prompt: &str) -> Result<Completion, LlmError> {
        let url = self.cfg.endpoint();
        match self.cfg.kind {
            ProviderKind::Anthropic => {
                let mut headers = vec![("anthropic-version", "2023-06-01".to_string())];
                if let Some(k) = &self.cfg.api_key {
                    headers.push(("x-api-key", k.clone()));
                }
                let body = json!({
                    "model": self.cfg.model,
                    "max_tokens": self.cfg.max_tokens,
                    "temperature": 0,
                    "system": system,
                    "messages": [{"role": "user", "content": prompt}],
                });
                let v = self.post(&url, &headers, &body)?;
                let parts = v["content"]
                    .as_array()
                    .ok_or_else(|| LlmError::Malformed("no content array".into()))?;
                let text: String = parts
                    .iter()
                    .filter(|p| p["type"] == "text")
                    .filter_map(|p| p["text"].as_str())
                    .collect();
                Ok(Completion {
                    text,
                    truncated: v["stop_reason"] == "max_tokens",
                })
            }
            _ => {
                let mut headers = Vec::new();
                if let Some(k) = &self.cfg.api_key {
                    headers.push(("authorization", format!("Bearer {k}")));
                }
                let body = json!({
                    "model": self.cfg.model,
                    "max_tokens": self.cfg.max_tokens,
                    "temperature": 0,
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": prompt},
                    ],
                });
                let v = self.post(&url, &headers, &body)?;
                let choice = &v["choices"][0];
                let text = choice["message"]["content"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| LlmError::Malformed("no choices[0].message.content".into()))?;
                Ok(Completion {
                    text,
                    truncated: choice["finish_reason"] == "length",
                })
            }
        }
    }

    fn describe(&self) -> String {
        format!("{}:{}", self.cfg.provider_name(), self.cfg.model)
    }
}
