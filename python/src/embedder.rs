//! A Python callable as the embedding model (`Memoir.set_embedder`): memoir calls it with a
//! list of texts and takes back one vector per text, checks them and normalises them.

use memoir::embed::{normalize, EmbedError, EmbedResult, Embedder};
use pyo3::prelude::*;

/// The callable, the name that keeps its vectors apart from other models', and their length.
pub struct PyEmbedder {
    call: Py<PyAny>,
    name: String,
    dims: usize,
}

impl PyEmbedder {
    /// An embedder calling `call`; `name` names the model (vectors are kept per model).
    pub fn new(call: Py<PyAny>, name: String, dims: usize) -> Self {
        PyEmbedder { call, name, dims }
    }
}

impl Embedder for PyEmbedder {
    fn model_id(&self) -> String {
        format!("python:{}", self.name)
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> EmbedResult<Vec<Vec<f32>>> {
        let vectors: Vec<Vec<f32>> = Python::attach(|py| {
            let got = self
                .call
                .call1(py, (texts.to_vec(),))
                .map_err(|e| EmbedError::Run(format!("the Python embedder raised {e}")))?;
            got.extract(py).map_err(|e| {
                EmbedError::Malformed(format!(
                    "the Python embedder must return a list of lists of numbers: {e}"
                ))
            })
        })?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Malformed(format!(
                "the Python embedder returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        vectors
            .into_iter()
            .map(|mut v| {
                if v.len() != self.dims {
                    return Err(EmbedError::Malformed(format!(
                        "a vector of {} numbers, where dims is {}",
                        v.len(),
                        self.dims
                    )));
                }
                if !v.iter().all(|x| x.is_finite()) || v.iter().all(|x| *x == 0.0) {
                    return Err(EmbedError::Malformed(
                        "a vector with a number that is not finite, or all zeros".into(),
                    ));
                }
                normalize(&mut v);
                Ok(v)
            })
            .collect()
    }
}
