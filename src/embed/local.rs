//! A sentence-transformers model run in the process: a BERT encoder (candle) over the
//! directory's `config.json` and `model.safetensors`, its `tokenizer.json`, then the pooling
//! its `1_Pooling/config.json` names (mean or CLS) and, when `modules.json` lists it, unit
//! normalisation. Nothing is downloaded: every file is read from the directory.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use super::{normalize, EmbedError, EmbedResult, Embedder};

/// Texts run through the encoder at once. Texts are sorted by their number of tokens first,
/// so a batch pads little.
const BATCH: usize = 32;

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
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalized: bool,
    dims: usize,
    /// The token a batch's shorter texts are padded with.
    pad_id: u32,
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
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| model_err(format!("config.json is not a BERT configuration: {e}")))?;
        let dims: usize = serde_json::from_str::<serde_json::Value>(&config_text)
            .ok()
            .and_then(|v| v["hidden_size"].as_u64())
            .ok_or_else(|| model_err("config.json has no hidden_size".into()))?
            as usize;
        let weights = dir.join("model.safetensors");
        let tensors = candle_core::safetensors::load(&weights, &Device::Cpu).map_err(|e| {
            EmbedError::ModelFile {
                dir: dir.to_path_buf(),
                file: "model.safetensors".into(),
                reason: e.to_string(),
            }
        })?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(vb, &config)
            .map_err(|e| model_err(format!("the weights do not fit config.json: {e}")))?;
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
        // Texts are padded here, per batch, to the batch's longest (the file may ask for a
        // fixed length, which would run the encoder over padding).
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
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
            dims,
            pad_id,
            id,
        })
    }

    /// The vectors of one batch of tokenized texts, padded here to the longest.
    fn embed_batch(&self, encodings: &[&Encoding]) -> EmbedResult<Vec<Vec<f32>>> {
        let run = |e: candle_core::Error| EmbedError::Run(e.to_string());
        let len = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0);
        let n = encodings.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in encodings {
            let real = e.get_ids().len();
            ids.extend_from_slice(e.get_ids());
            ids.extend(std::iter::repeat_n(self.pad_id, len - real));
            mask.extend(std::iter::repeat_n(1u32, real));
            mask.extend(std::iter::repeat_n(0u32, len - real));
        }
        let ids = Tensor::from_vec(ids, (n, len), &Device::Cpu).map_err(run)?;
        let mask = Tensor::from_vec(mask, (n, len), &Device::Cpu).map_err(run)?;
        let types = ids.zeros_like().map_err(run)?;
        let out = self.model.forward(&ids, &types, Some(&mask)).map_err(run)?;
        let pooled = match self.pooling {
            Pooling::Cls => out.narrow(1, 0, 1).and_then(|t| t.squeeze(1)),
            Pooling::Mean => {
                let m = mask.to_dtype(DType::F32).and_then(|m| m.unsqueeze(2));
                m.and_then(|m| {
                    let summed = out.broadcast_mul(&m)?.sum(1)?;
                    let counts = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
                    summed.broadcast_div(&counts)
                })
            }
        }
        .map_err(run)?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2().map_err(run)?;
        if self.normalized {
            vectors.iter_mut().for_each(|v| normalize(v));
        }
        Ok(vectors)
    }
}

impl Embedder for LocalModel {
    fn model_id(&self) -> String {
        self.id.clone()
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Run(format!("tokenizing: {e}")))?;
        // Most tokens first, so each batch holds texts of about one length.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].get_ids().len()));
        // One batch at a time, its matrix products and other steps spread over candle's
        // threads. Two batches at once, each on one thread, ran no faster: candle's
        // element-wise steps share one pool of threads between the two.
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let encs: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, v) in batch.iter().zip(self.embed_batch(&encs)?) {
                out[i] = v;
            }
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

/// What names a model directory's model: a hash of its configuration, its tokenizer and the
/// size, start and end of its weights (reading all the weights on every start would cost
/// more than the model's first use).
fn model_id(dir: &Path, config: &str, weights: &Path) -> EmbedResult<String> {
    use std::io::{Read, Seek, SeekFrom};
    const SAMPLE: u64 = 1 << 20;
    let unreadable = |file: &str, e: std::io::Error| EmbedError::ModelFile {
        dir: dir.to_path_buf(),
        file: file.to_string(),
        reason: e.to_string(),
    };
    let mut h = blake3::Hasher::new();
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
