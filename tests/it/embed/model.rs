//! The local model's vectors against those sentence-transformers made for the same texts
//! (tests/fixtures/embed/minilm_reference.json, made once with sentence-transformers 6.2.0
//! on the CPU): a long text is cut at the model's 256 tokens as sentence-transformers cuts
//! it.

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
            cos > 0.9999 && diff < 1e-3,
            "text {i}: cosine {cos}, max difference {diff}"
        );
    }
    // One at a time (no padding) gives what a batch gives.
    let alone = model.embed(&texts[2..3]).unwrap();
    let cos: f32 = alone[0].iter().zip(&ours[2]).map(|(a, b)| a * b).sum();
    assert!(cos > 0.99999, "{cos}");
}

#[test]
fn a_directory_without_the_model_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = LocalModel::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("config.json"), "{e}");
}
