//! Bring your own checker: what each model family costs natively (tract), next to onnxruntime on
//! the same file in `bench/peers.py families`. Base-size models (BERT, RoBERTa, DeBERTa v3, ELECTRA:
//! 12 layers x 768, the published vocabularies) randomly initialised and exported with
//! `models/export_hf.py --int8` by `tests/families/build.py --base target/bench/families`;
//! randomly initialised is enough for speed. Per family: load time (from bytes in memory) and one
//! call of batch 1 at 128 tokens and batch 8 at 256 tokens (`bench/fixtures/family_pairs.json`,
//! the premise truncated by the model's own tokenizer so every pair is exactly that long).
//!   cargo bench --bench families [-- FAMILY ...]
mod common;
use common::*;
use meetcite::nli::NliModel;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let dir = std::env::var("MEETCITE_FAMILIES").unwrap_or_else(|_| format!("{}/target/bench/families", root()));
    let pairs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{}/bench/fixtures/family_pairs.json", root())).unwrap()).unwrap();
    let hyp = pairs["hypothesis"].as_str().unwrap();
    let premises: Vec<&str> = pairs["premises"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    let mut families: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e} (python tests/families/build.py --base {dir})"))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("config.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| only.is_empty() || only.contains(f))
        .collect();
    families.sort();
    for family in families {
        let read = |f: &str| std::fs::read(format!("{dir}/{family}/{f}")).unwrap_or_else(|e| panic!("{family}/{f}: {e}"));
        let mut config: serde_json::Value = serde_json::from_slice(&read("config.json")).unwrap();
        let file = config["model_file"].as_str().unwrap().to_string();
        let (model, tokenizer) = (read(&file), read("tokenizer.json"));
        let imp = "tract native";
        let note = format!("{} ({}), {:.0} MB weight-only int8", config["architecture"].as_str().unwrap_or("?"), family, model.len() as f64 / 1e6);
        for (batch, tokens) in [(1usize, 128usize), (8, 256)] {
            // max_length = the pair's length: the premise is cut to fit, so every pair is exactly `tokens`
            config["max_length"] = tokens.into();
            let t = Instant::now();
            let mut m = NliModel::from_bytes(&model, &tokenizer, config.to_string().as_bytes()).expect("model loads");
            if batch == 1 {
                emit("families", &format!("{family} load"), imp, "ms", t.elapsed().as_secs_f64() * 1e3, "ms", &note);
            }
            m.batch_size = batch;
            let input: Vec<(&str, &str)> = premises[..batch].iter().map(|p| (*p, hyp)).collect();
            let runs = if batch == 1 { 10 } else { 3 };
            let s = median_secs(1, runs, || {
                black_box(m.score(black_box(&input)).unwrap());
            });
            emit("families", &format!("{family} b{batch} t{tokens}"), imp, "ms", s * 1e3, "ms", "tokenize + infer, 1 thread");
        }
    }
}
