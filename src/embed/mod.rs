//! Embedding providers behind one trait, for search by meaning: a sentence-embedding model
//! loaded from a directory and run in the process (`local`, the `embed` feature), and an
//! OpenAI-compatible `/v1/embeddings` endpoint (`openai`). A caller may bring its own
//! [`Embedder`] (the Python binding passes a callable). The configuration is passed in;
//! nothing here reads the environment.

#[cfg(feature = "embed")]
mod bert;
mod half_float;
#[cfg(feature = "embed")]
mod kernels;
#[cfg(feature = "embed")]
mod local;
mod openai;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use half_float::{bf16_to_f32, F16};
#[cfg(feature = "embed")]
pub use local::LocalModel;
pub use openai::OpenAiEmbedder;

/// Why an embedding could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model directory lacks a file, or a file of it cannot be read.
    #[error("embedding model {}: cannot read {file}: {reason}", dir.display())]
    ModelFile {
        /// The model directory.
        dir: PathBuf,
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
    /// The model's files are read but do not make a model this build can run.
    #[error("embedding model {}: {reason}", dir.display())]
    Model {
        /// The model directory.
        dir: PathBuf,
        /// Why.
        reason: String,
    },
    /// Running the model failed.
    #[error("embedding failed: {0}")]
    Run(String),
    /// The endpoint could not be reached, or answered with an error.
    #[error("embedding request to {endpoint} failed: {reason}")]
    Transport {
        /// Where the request went.
        endpoint: String,
        /// What went wrong.
        reason: String,
    },
    /// The answer is not in the expected form (not JSON, a vector missing, of the wrong
    /// length, or not finite).
    #[error("embedding answer is malformed: {0}")]
    Malformed(String),
    /// This build cannot run the configured kind of model.
    #[error("{0}")]
    Unsupported(String),
}

/// Result alias of embedding.
pub type EmbedResult<T> = Result<T, EmbedError>;

/// A model that turns texts into vectors of one length, unit-normalised, so that their dot
/// product is their cosine.
pub trait Embedder: Send + Sync {
    /// What names the model and its weights: vectors made by another model are never mixed
    /// with this one's.
    fn model_id(&self) -> String;

    /// The length of every vector.
    fn dims(&self) -> usize;

    /// One unit vector per text, in order.
    fn embed(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>>;
}

/// Which embedding model, as configured (`MEMOIR_EMBED_MODEL`, `MEMOIR_EMBED_BASE_URL`, or
/// the `embed.*` settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedConfig {
    /// A sentence-transformers model directory, run in the process.
    Local {
        /// The directory.
        dir: PathBuf,
    },
    /// A model behind an OpenAI-compatible `/v1/embeddings` endpoint.
    OpenAi {
        /// The model name sent.
        model: String,
        /// The base URL, with or without `/v1`.
        base_url: String,
        /// The key sent as a bearer token, if any.
        api_key: Option<String>,
        /// How long one request may take.
        timeout: Duration,
    },
}

impl EmbedConfig {
    /// What the configuration names, for messages: the directory, or `openai:NAME`.
    pub fn describe(&self) -> String {
        match self {
            EmbedConfig::Local { dir } => dir.display().to_string(),
            EmbedConfig::OpenAi { model, .. } => format!("openai:{model}"),
        }
    }
}

/// The embedder a configuration names: a local model is loaded here (its files read once;
/// an error names what is missing).
pub fn embedder(cfg: &EmbedConfig) -> EmbedResult<Arc<dyn Embedder>> {
    match cfg {
        #[cfg(feature = "embed")]
        EmbedConfig::Local { dir } => Ok(Arc::new(LocalModel::load(dir)?)),
        #[cfg(not(feature = "embed"))]
        EmbedConfig::Local { dir } => Err(EmbedError::Unsupported(format!(
            "this build of memoir cannot run a local embedding model ({}): it was built \
             without its `embed` feature; configure an endpoint (openai:NAME) instead",
            dir.display()
        ))),
        EmbedConfig::OpenAi {
            model,
            base_url,
            api_key,
            timeout,
        } => Ok(Arc::new(OpenAiEmbedder::new(
            model.clone(),
            base_url.clone(),
            api_key.clone(),
            *timeout,
        ))),
    }
}

/// `v` scaled to length 1 (a zero vector is left as it is).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
