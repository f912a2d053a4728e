//! A sentence-transformers model run in the process: a BERT encoder (ours, `bert`) over the
//! directory's `config.json` and `model.safetensors`, its `tokenizer.json`, then the pooling
//! its `1_Pooling/config.json` names (mean or CLS) and, when `modules.json` lists it, unit
//! normalisation. Nothing is downloaded: every file is read from the directory.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Bert, BertConfig};
use super::{normalize, EmbedError, EmbedResult, Embedder};

/// Tokens run through the encoder at once (texts are never split): enough for the matrix
/// products to reuse each block of weights over many rows, few enough to stay in cache.
const BATCH_TOKENS: usize = 2048;

/// How the encoder computes, part of the model's id: vectors kept from another way of
/// computing are made again rather than mixed with these.
const ENCODER: &str = "bert, 8-bit products per channel and row";

/// Longest input in tokens when the directory does not say (`sentence_bert_config.json`).
const DEFAULT_MAX_TOKENS: usize = 256;

/// How token vectors become one text's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    /// The mean of the tokens' vectors (padding left out).
    Mean,
    /// The first token's (`[CLS]`) vector.
    Cls,
}

/// A local sentence-embedding model.
pub struct LocalModel {
    model: Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalized: bool,
    id: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalModel({})", self.id)
    }
}

impl LocalModel {
    /// Loads the model in directory `dir` (the sentence-transformers layout).
    pub fn load(dir: &Path) -> EmbedResult<LocalModel> {
        let model_err = |reason: String| EmbedError::Model {
            dir: dir.to_path_buf(),
            reason,
        };
        let config_text = read_text(dir, "config.json")?;
        let config: BertConfig = serde_json::from_str(&config_text)
            .map_err(|e| model_err(format!("config.json is not a BERT configuration: {e}")))?;
        let weights = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights).map_err(|e| EmbedError::ModelFile {
            dir: dir.to_path_buf(),
            file: "model.safetensors".into(),
            reason: e.to_string(),
        })?;
        let model =
            Bert::load(&config, bytes).map_err(|e| model_err(format!("model.safetensors: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| {
            EmbedError::ModelFile {
                dir: dir.to_path_buf(),
                file: "tokenizer.json".into(),
                reason: e.to_string(),
            }
        })?;
        let max_tokens = optional_json(dir, "sentence_bert_config.json")?
            .and_then(|v| v["max_seq_length"].as_u64())
            .map_or(DEFAULT_MAX_TOKENS, |n| n as usize)
            .min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| model_err(format!("tokenizer.json: {e}")))?;
        // Texts are never padded: the encoder runs each on its own tokens.
        tokenizer.with_padding(None);
        let pooling = match optional_json(dir, "1_Pooling/config.json")? {
            Some(p) if p["pooling_mode_cls_token"] == true => Pooling::Cls,
            Some(p) if p["pooling_mode_mean_tokens"] == false => {
                return Err(model_err(
                    "1_Pooling/config.json asks for a pooling other than mean or CLS".into(),
                ))
            }
            _ => Pooling::Mean,
        };
        let normalized = match optional_json(dir, "modules.json")? {
            Some(m) => m.as_array().is_some_and(|mods| {
                mods.iter()
                    .any(|m| m["type"].as_str().is_some_and(|t| t.ends_with("Normalize")))
            }),
            None => true,
        };
        let id = model_id(dir, &config_text, &weights)?;
        Ok(LocalModel {
            model,
            tokenizer,
            pooling,
            normalized,
            id,
        })
    }

    /// The vectors of one batch of tokenized texts.
    fn embed_batch(&self, texts: &[&[u32]]) -> EmbedResult<Vec<Vec<f32>>> {
        let h = self.model.hidden();
        let out = self.model.forward(texts).map_err(EmbedError::Run)?;
        let mut vectors = Vec::with_capacity(texts.len());
        let mut at = 0;
        for ids in texts {
            let tokens = &out[at * h..(at + ids.len()) * h];
            at += ids.len();
            let mut v = vec![0f32; h];
            match self.pooling {
                Pooling::Cls => v.copy_from_slice(&tokens[..h.min(tokens.len())]),
                Pooling::Mean => {
                    for t in tokens.chunks_exact(h) {
                        v.iter_mut().zip(t).for_each(|(v, t)| *v += t);
                    }
                    let n = ids.len().max(1) as f32;
                    v.iter_mut().for_each(|v| *v /= n);
                }
            }
            if self.normalized {
                normalize(&mut v);
            }
            vectors.push(v);
        }
        Ok(vectors)
    }
}

impl Embedder for LocalModel {
    fn model_id(&self) -> String {
        self.id.clone()
    }

    fn dims(&self) -> usize {
        self.model.hidden()
    }

    fn embed(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Run(format!("tokenizing: {e}")))?;
        // Batches of whole texts up to BATCH_TOKENS tokens (a longer text alone).
        let mut out = Vec::with_capacity(texts.len());
        let mut batch: Vec<&[u32]> = Vec::new();
        let mut tokens = 0;
        for e in &encodings {
            let ids = e.get_ids();
            if !batch.is_empty() && tokens + ids.len() > BATCH_TOKENS {
                out.extend(self.embed_batch(&batch)?);
                batch.clear();
                tokens = 0;
            }
            batch.push(ids);
            tokens += ids.len();
        }
        if !batch.is_empty() {
            out.extend(self.embed_batch(&batch)?);
        }
        Ok(out)
    }
}

/// A file of the model directory as text; a missing or unreadable one is an error naming it.
fn read_text(dir: &Path, file: &str) -> EmbedResult<String> {
    std::fs::read_to_string(dir.join(file)).map_err(|e| EmbedError::ModelFile {
        dir: dir.to_path_buf(),
        file: file.to_string(),
        reason: e.to_string(),
    })
}

/// An optional JSON file of the model directory: `None` when it is not there.
fn optional_json(dir: &Path, file: &str) -> EmbedResult<Option<serde_json::Value>> {
    if !dir.join(file).exists() {
        return Ok(None);
    }
    let text = read_text(dir, file)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| EmbedError::ModelFile {
            dir: dir.to_path_buf(),
            file: file.to_string(),
            reason: e.to_string(),
        })
}

/// What names a model directory's model: a hash of how this build runs it (the encoder's
/// 8-bit products give vectors a little different from a float32 run's, which are not to be
/// mixed with them), its configuration, its tokenizer and the size, start and end of its
/// weights (reading all the weights on every start would cost more than the model's first use).
fn model_id(dir: &Path, config: &str, weights: &Path) -> EmbedResult<String> {
    use std::io::{Read, Seek, SeekFrom};
    const SAMPLE: u64 = 1 << 20;
    let unreadable = |file: &str, e: std::io::Error| EmbedError::ModelFile {
        dir: dir.to_path_buf(),
        file: file.to_string(),
        reason: e.to_string(),
    };
    let mut h = blake3::Hasher::new();
    h.update(ENCODER.as_bytes());
    h.update(config.as_bytes());
    h.update(
        &std::fs::read(dir.join("tokenizer.json")).map_err(|e| unreadable("tokenizer.json", e))?,
    );
    let mut f = std::fs::File::open(weights).map_err(|e| unreadable("model.safetensors", e))?;
    let size = f
        .metadata()
        .map_err(|e| unreadable("model.safetensors", e))?
        .len();
    h.update(&size.to_le_bytes());
    let mut buf = vec![0u8; SAMPLE.min(size) as usize];
    f.read_exact(&mut buf)
        .map_err(|e| unreadable("model.safetensors", e))?;
    h.update(&buf);
    f.seek(SeekFrom::Start(size - buf.len() as u64))
        .and_then(|_| f.read_exact(&mut buf))
        .map_err(|e| unreadable("model.safetensors", e))?;
    h.update(&buf);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(format!("local:{name}:{}", &h.finalize().to_hex()[..16]))
}
