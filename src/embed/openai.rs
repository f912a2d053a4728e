//! An embedding model behind an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama,
//! llama.cpp's server, vLLM, text-embeddings-inference): one POST per batch of texts, bounded
//! in time and in the size of the answer.

use std::time::Duration;

use serde_json::{json, Value};

use super::{normalize, EmbedError, EmbedResult, Embedder};
#[cfg(feature = "http")]
use crate::http::{post_json, PostFailure};

/// Texts sent in one request.
const BATCH: usize = 64;

/// Largest answer read.
#[cfg(feature = "http")]
const MAX_ANSWER_BYTES: usize = 64 << 20;

/// A model behind an embeddings endpoint.
pub struct OpenAiEmbedder {
    model: String,
    url: String,
    #[cfg(feature = "http")]
    api_key: Option<String>,
    /// The length of its vectors, once one answer has told it.
    dims: std::sync::OnceLock<usize>,
    #[cfg(feature = "http")]
    client: Result<(tokio::runtime::Runtime, reqwest::Client), String>,
}

impl OpenAiEmbedder {
    /// The model `model` at `base_url` (with or without `/v1`).
    pub fn new(
        model: String,
        base_url: String,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Self {
        let base = base_url.trim_end_matches('/');
        let url = match base.ends_with("/v1") {
            true => format!("{base}/embeddings"),
            false => format!("{base}/v1/embeddings"),
        };
        // Without an HTTP client there is nothing to send them with.
        #[cfg(not(feature = "http"))]
        let _ = (timeout, api_key);
        OpenAiEmbedder {
            model,
            url,
            #[cfg(feature = "http")]
            api_key,
            dims: std::sync::OnceLock::new(),
            #[cfg(feature = "http")]
            client: crate::http::client(timeout, timeout),
        }
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.url
    }

    /// POSTs `body` and reads the JSON answer.
    #[cfg(feature = "http")]
    fn post(&self, body: &Value) -> EmbedResult<Value> {
        let transport = |reason: String| EmbedError::Transport {
            endpoint: self.url.clone(),
            reason,
        };
        let pair = self.client.as_ref().map_err(|e| transport(e.clone()))?;
        let headers: Vec<(&str, String)> = match &self.api_key {
            Some(k) => vec![("authorization", format!("Bearer {k}"))],
            None => Vec::new(),
        };
        let (status, bytes) = post_json(pair, &self.url, &headers, body, MAX_ANSWER_BYTES)
            .map_err(|f| match f {
                PostFailure::Request(e) => transport(crate::http::chain(&e)),
                PostFailure::TooLarge(max) => {
                    transport(format!("the response body is larger than {max} bytes"))
                }
            })?;
        let text = String::from_utf8_lossy(&bytes);
        if !(200..300).contains(&status) {
            let start: String = text.chars().take(300).collect();
            return Err(transport(format!("HTTP {status}: {start}")));
        }
        serde_json::from_str(&text).map_err(|e| EmbedError::Malformed(e.to_string()))
    }

    /// Without an HTTP client in the build, every request fails.
    #[cfg(not(feature = "http"))]
    fn post(&self, _: &Value) -> EmbedResult<Value> {
        Err(EmbedError::Transport {
            endpoint: self.url.clone(),
            reason: "this build of memoir has no HTTP client (its `http` feature)".into(),
        })
    }

    /// The vectors of one request's texts, in order.
    fn embed_batch(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>> {
        let answer = self.post(&json!({"model": self.model, "input": texts}))?;
        let data = answer["data"]
            .as_array()
            .ok_or_else(|| EmbedError::Malformed("no data array".into()))?;
        if data.len() != texts.len() {
            return Err(EmbedError::Malformed(format!(
                "{} vectors for {} texts",
                data.len(),
                texts.len()
            )));
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (n, item) in data.iter().enumerate() {
            let i = item["index"].as_u64().map_or(n, |i| i as usize);
            let v = parse_vector(&item["embedding"])?;
            let slot = out
                .get_mut(i)
                .ok_or_else(|| EmbedError::Malformed(format!("index {i} out of range")))?;
            *slot = v;
        }
        let dims = *self.dims.get_or_init(|| out[0].len());
        if let Some(v) = out.iter().find(|v| v.len() != dims) {
            return Err(EmbedError::Malformed(format!(
                "a vector of {} numbers where the model gives {dims}",
                v.len()
            )));
        }
        Ok(out)
    }
}

/// One vector of an answer, unit-normalised; an empty one or one with a number that is not
/// finite is malformed.
fn parse_vector(v: &Value) -> EmbedResult<Vec<f32>> {
    let items = v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| EmbedError::Malformed("an embedding is not a list of numbers".into()))?;
    let mut out = Vec::with_capacity(items.len());
    for x in items {
        match x.as_f64().map(|x| x as f32).filter(|x| x.is_finite()) {
            Some(x) => out.push(x),
            None => return Err(EmbedError::Malformed(format!("{x} is not a finite number"))),
        }
    }
    normalize(&mut out);
    Ok(out)
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> String {
        format!("openai:{}@{}", self.model, self.url)
    }

    /// Known after the first answer (0 before).
    fn dims(&self) -> usize {
        self.dims.get().copied().unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_take_v1_once() {
        let t = Duration::from_secs(1);
        let a = OpenAiEmbedder::new("m".into(), "http://h:1/".into(), None, t);
        let b = OpenAiEmbedder::new("m".into(), "http://h:1/v1".into(), None, t);
        assert_eq!(a.endpoint(), "http://h:1/v1/embeddings");
        assert_eq!(b.endpoint(), a.endpoint());
    }

    #[test]
    fn vectors_are_checked_and_normalised() {
        let v = parse_vector(&json!([3.0, 4.0])).unwrap();
        assert_eq!(v, vec![0.6, 0.8]);
        assert!(parse_vector(&json!([])).is_err());
        assert!(parse_vector(&json!(["x"])).is_err());
        assert!(parse_vector(&json!({"a": 1})).is_err());
    }
}
