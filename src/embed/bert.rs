//! A BERT encoder over a safetensors file: token, position and type embeddings, then layers
//! of self-attention and a feed-forward block, each followed by a residual sum and layer
//! normalisation. Texts are run without padding: their tokens are laid end to end, the linear
//! layers take them all at once, and attention stays within each text.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Deserialize;

use super::kernels::{self, Isa, QuantLinear};

/// The fields of `config.json` the encoder needs.
#[derive(Debug, Deserialize)]
pub struct BertConfig {
    /// Width of a token's vector.
    pub hidden_size: usize,
    /// Layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward block.
    pub intermediate_size: usize,
    /// Longest input in tokens.
    pub max_position_embeddings: usize,
    /// Layer normalisation's epsilon.
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
    /// The feed-forward block's activation: only `gelu` (the exact one) is run.
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// Only `absolute` positions are run.
    #[serde(default = "default_position")]
    pub position_embedding_type: String,
}

fn default_eps() -> f32 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

fn default_position() -> String {
    "absolute".into()
}

/// A layer normalisation's scale and shift.
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// One encoder layer.
struct Layer {
    /// Query, key and value as one product (their rows stacked).
    qkv: QuantLinear,
    out: QuantLinear,
    attn_norm: Norm,
    up: QuantLinear,
    down: QuantLinear,
    ffn_norm: Norm,
}

/// The loaded encoder.
pub struct Bert {
    hidden: usize,
    heads: usize,
    max_positions: usize,
    eps: f32,
    word: Vec<f32>,
    position: Vec<f32>,
    /// The embedding of token type 0 (every token's type here).
    type0: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
}

/// The tensors of a safetensors file, by name, as f32 with their shapes.
struct Tensors {
    bytes: Vec<u8>,
    /// Name → (dtype, shape, start, end) within `bytes` (after the header).
    index: HashMap<String, (String, Vec<usize>, usize, usize)>,
    /// What names start with (`bert.` in some files, nothing in others).
    prefix: String,
}

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

impl Tensors {
    /// Parses the file's bytes: an 8-byte little-endian header length, the JSON header, then
    /// the tensors' bytes.
    fn parse(bytes: Vec<u8>) -> Result<Tensors, String> {
        let len = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
            .ok_or("too short for a safetensors file")?;
        let header = bytes
            .get(8..8usize.saturating_add(len))
            .ok_or("its header runs past the end")?;
        let entries: HashMap<String, serde_json::Value> =
            serde_json::from_slice(header).map_err(|e| format!("its header is not JSON: {e}"))?;
        let data = bytes.len() - 8 - len;
        let mut index = HashMap::new();
        for (name, v) in entries {
            if name == "__metadata__" {
                continue;
            }
            let e: Entry = serde_json::from_value(v)
                .map_err(|e| format!("tensor {name} is described wrongly: {e}"))?;
            let (start, end) = e.data_offsets;
            if start > end || end > data {
                return Err(format!("tensor {name} lies outside the file"));
            }
            index.insert(name, (e.dtype, e.shape, 8 + len + start, 8 + len + end));
        }
        let prefix = if index.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert.".to_string()
        } else {
            String::new()
        };
        Ok(Tensors {
            bytes,
            index,
            prefix,
        })
    }

    /// Tensor `name` as f32, checked to have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let (dtype, have, start, end) = self
            .index
            .get(&full)
            .ok_or_else(|| format!("the weights have no tensor {full}"))?;
        if have != shape {
            return Err(format!("tensor {full} is {have:?}, not {shape:?}"));
        }
        let raw = &self.bytes[*start..*end];
        let count: usize = shape.iter().product();
        let width = match dtype.as_str() {
            "F32" => 4,
            "F16" | "BF16" => 2,
            other => return Err(format!("tensor {full} is of type {other}, not a float")),
        };
        if raw.len() != count * width {
            return Err(format!(
                "tensor {full} has {} bytes for {count} values",
                raw.len()
            ));
        }
        Ok(match dtype.as_str() {
            "F32" => raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            "F16" => raw
                .chunks_exact(2)
                .map(|b| super::F16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            _ => raw
                .chunks_exact(2)
                .map(|b| super::bf16_to_f32([b[0], b[1]]))
                .collect(),
        })
    }

    fn norm(&self, name: &str, width: usize) -> Result<Norm, String> {
        Ok(Norm {
            gamma: self.get(&format!("{name}.weight"), &[width])?,
            beta: self.get(&format!("{name}.bias"), &[width])?,
        })
    }
}

impl Bert {
    /// The encoder `config` describes, its weights from the bytes of a safetensors file.
    pub fn load(config: &BertConfig, weights: Vec<u8>) -> Result<Bert, String> {
        if config.hidden_act != "gelu" {
            return Err(format!(
                "the activation {} is not supported (only gelu)",
                config.hidden_act
            ));
        }
        if config.position_embedding_type != "absolute" {
            return Err(format!(
                "position embeddings of type {} are not supported",
                config.position_embedding_type
            ));
        }
        let (h, f) = (config.hidden_size, config.intermediate_size);
        let heads = config.num_attention_heads;
        if heads == 0 || h % heads != 0 {
            return Err(format!("{heads} heads do not divide a width of {h}"));
        }
        let t = Tensors::parse(weights)?;
        let isa = Isa::detect();
        let word_shape = t
            .index
            .get(&format!("{}embeddings.word_embeddings.weight", t.prefix))
            .map(|e| e.1.clone())
            .unwrap_or_default();
        let vocab = word_shape.first().copied().unwrap_or(0);
        let word = t.get("embeddings.word_embeddings.weight", &[vocab, h])?;
        let position = t.get(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, h],
        )?;
        let types = t
            .index
            .get(&format!(
                "{}embeddings.token_type_embeddings.weight",
                t.prefix
            ))
            .map(|e| e.1.first().copied().unwrap_or(0))
            .unwrap_or(0);
        let type0 = t
            .get("embeddings.token_type_embeddings.weight", &[types, h])?
            .get(..h)
            .ok_or("the weights have no token types")?
            .to_vec();
        let embed_norm = t.norm("embeddings.LayerNorm", h)?;
        let linear = |name: &str, n: usize, k: usize| -> Result<QuantLinear, String> {
            let w = t.get(&format!("{name}.weight"), &[n, k])?;
            let b = t.get(&format!("{name}.bias"), &[n])?;
            Ok(QuantLinear::new(isa, &w, &b, n, k))
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let mut w = Vec::with_capacity(3 * h * h);
            let mut b = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                w.extend(t.get(&format!("{p}.attention.self.{part}.weight"), &[h, h])?);
                b.extend(t.get(&format!("{p}.attention.self.{part}.bias"), &[h])?);
            }
            layers.push(Layer {
                qkv: QuantLinear::new(isa, &w, &b, 3 * h, h),
                out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                up: linear(&format!("{p}.intermediate.dense"), f, h)?,
                down: linear(&format!("{p}.output.dense"), h, f)?,
                ffn_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        Ok(Bert {
            hidden: h,
            heads,
            max_positions: config.max_position_embeddings,
            eps: config.layer_norm_eps,
            word,
            position,
            type0,
            embed_norm,
            layers,
        })
    }

    /// Width of a token's vector.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The last layer's token vectors of each text (`texts[i]` its token ids), laid end to end
    /// (`Σ len × hidden`). A text longer than the model's positions is an error.
    pub fn forward(&self, texts: &[&[u32]]) -> Result<Vec<f32>, String> {
        let h = self.hidden;
        let vocab = self.word.len() / h;
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let mut x = Vec::with_capacity(total * h);
        for ids in texts {
            if ids.len() > self.max_positions {
                return Err(format!(
                    "a text of {} tokens is longer than the model's {}",
                    ids.len(),
                    self.max_positions
                ));
            }
            for (pos, &id) in ids.iter().enumerate() {
                let id = id as usize;
                if id >= vocab {
                    return Err(format!("token {id} is outside the vocabulary of {vocab}"));
                }
                let word = &self.word[id * h..(id + 1) * h];
                let position = &self.position[pos * h..(pos + 1) * h];
                x.extend(
                    word.iter()
                        .zip(position)
                        .zip(&self.type0)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        x.par_chunks_mut(64 * h).for_each(|x| {
            kernels::layer_norm(x, &self.embed_norm.gamma, &self.embed_norm.beta, self.eps)
        });
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let mut qkv = vec![0f32; total * 3 * h];
        let mut ctx = vec![0f32; total * h];
        let mut y = vec![0f32; total * h];
        let mut up = vec![0f32; total * self.layers.first().map_or(0, |l| l.up.n())];
        for layer in &self.layers {
            layer.qkv.forward(&x, &mut qkv);
            self.attention(&qkv, &lens, &mut ctx);
            layer.out.forward(&ctx, &mut y);
            add_norm(&mut y, &mut x, &layer.attn_norm, self.eps);
            layer.up.forward(&x, &mut up);
            up.par_chunks_mut(64 * layer.up.n()).for_each(kernels::gelu);
            layer.down.forward(&up, &mut y);
            add_norm(&mut y, &mut x, &layer.ffn_norm, self.eps);
        }
        Ok(x)
    }

    /// Self-attention of each text over its own tokens: `qkv` holds each token's query, key
    /// and value (each `hidden` wide, heads side by side), `ctx` gets the heads' outputs.
    fn attention(&self, qkv: &[f32], lens: &[usize], ctx: &mut [f32]) {
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        // Each text's rows of `qkv` and of `ctx`, to run the texts in parallel.
        let mut parts = Vec::with_capacity(lens.len());
        let (mut rest_in, mut rest_out) = (qkv, &mut ctx[..]);
        for &len in lens {
            let (a, b) = rest_in.split_at(len * 3 * h);
            let (c, e) = std::mem::take(&mut rest_out).split_at_mut(len * h);
            parts.push((a, c));
            rest_in = b;
            rest_out = e;
        }
        parts.into_par_iter().for_each(|(qkv, ctx)| {
            let len = ctx.len() / h;
            // One head's queries, keys (transposed) and values, gathered contiguous.
            let mut q = vec![0f32; len * d];
            let mut k = vec![0f32; len * d];
            let mut v = vec![0f32; len * d];
            let mut out = vec![0f32; len * d];
            let mut scores = vec![0f32; len];
            for head in 0..self.heads {
                for t in 0..len {
                    let at = t * 3 * h + head * d;
                    q[t * d..(t + 1) * d].copy_from_slice(&qkv[at..at + d]);
                    for (c, &key) in qkv[at + h..at + h + d].iter().enumerate() {
                        k[c * len + t] = key;
                    }
                    v[t * d..(t + 1) * d].copy_from_slice(&qkv[at + 2 * h..at + 2 * h + d]);
                }
                kernels::attend(&q, &k, &v, d, scale, &mut scores, &mut out);
                for t in 0..len {
                    ctx[t * h + head * d..t * h + (head + 1) * d]
                        .copy_from_slice(&out[t * d..(t + 1) * d]);
                }
            }
        });
    }
}

/// `x ← norm(y + x)`, rows split between threads.
fn add_norm(y: &mut [f32], x: &mut [f32], norm: &Norm, eps: f32) {
    let chunk = 64 * norm.gamma.len();
    y.par_chunks_mut(chunk)
        .zip(x.par_chunks_mut(chunk))
        .for_each(|(y, x)| kernels::add_layer_norm(y, x, &norm.gamma, &norm.beta, eps));
}
