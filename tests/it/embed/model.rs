//! The local model's vectors against those sentence-transformers made for the same texts
//! (tests/fixtures/embed/minilm_reference.json, made once with sentence-transformers 6.2.0
//! on the CPU): a long text is cut at the model's 256 tokens as sentence-transformers cuts
//! it.
//!
//! The encoder's matrix products are in 8 bits (weights per output channel, each row of
//! activations over its own range), so its vectors are not float32's: their cosine with the
//! reference is 0.996-0.999 on these texts, each number within 0.015. The bound below is what
//! that error allows, and what matters is kept by it: on the LoCoMo dev split, recall by
//! meaning and hybrid recall are those of float32 within a few tenths of a point
//! (docs/internals.md). A wrong step (a layer, the mask, the pooling) gives cosines far below.

use memoir::embed::{Embedder, LocalModel};

use crate::common::minilm_model;

#[test]
fn local_minilm_matches_sentence_transformers() {
    let Some(dir) = minilm_model() else { return };
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../../fixtures/embed/minilm_reference.json")).unwrap();
    let texts: Vec<&str> = fixture["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let model = LocalModel::load(&dir).unwrap();
    assert_eq!(model.dims(), 384);
    let ours = model.embed(&texts).unwrap();
    for (i, want) in fixture["vectors"].as_array().unwrap().iter().enumerate() {
        let want: Vec<f32> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let cos: f32 = ours[i].iter().zip(&want).map(|(a, b)| a * b).sum();
        let diff = ours[i]
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            cos > 0.995 && diff < 0.025,
            "text {i}: cosine {cos}, max difference {diff}"
        );
    }
    // One at a time gives exactly what a batch gives: each text is run on its own tokens
    // and each row of activations quantised on its own.
    let alone = model.embed(&texts[2..3]).unwrap();
    assert_eq!(alone[0], ours[2]);
}

#[test]
fn a_directory_without_the_model_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = LocalModel::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("config.json"), "{e}");
}

#[test]
fn weights_that_are_not_safetensors_are_an_error_naming_the_file() {
    let Some(model) = minilm_model() else { return };
    let dir = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(model.join(file), dir.path().join(file)).unwrap();
    }
    // A header length that runs past the end, then a header that is not JSON.
    for bytes in [
        &b"\xff\xff\xff\xff\x00\x00\x00\x00{}"[..],
        &b"\x02\x00\x00\x00\x00\x00\x00\x00[x"[..],
    ] {
        std::fs::write(dir.path().join("model.safetensors"), bytes).unwrap();
        let e = LocalModel::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("model.safetensors"), "{e}");
    }
}
