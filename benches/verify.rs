//! Verifier cost vs number of claims (native, shipped int8 model), with and without NLI.
//! Claims are quotes of QMSum turns (`tests/fixtures/qmsum_chunks.json`) restated as claims,
//! spread over the 6 chunks. `cargo bench --bench verify`
mod common;
use common::*;
use meetcite::nli::NliModel;
use meetcite::{build_context, parse_chunks, verify, ContextOptions, Order, VerifyOptions};
use std::hint::black_box;

fn main() {
    let chunks = parse_chunks(&std::fs::read_to_string(format!("{}/tests/fixtures/qmsum_chunks.json", root())).unwrap()).unwrap();
    let ctx = build_context(&chunks, &ContextOptions { order: Order::Date, ..Default::default() });
    // one claim per substantial turn, round-robin over the sources
    let mut claims = Vec::new();
    for (si, s) in ctx.sources.iter().enumerate() {
        for t in s.chunk.turns.as_deref().unwrap_or(&[]) {
            let words: Vec<&str> = s.chunk.text[t.text_start..t.text_end]
                .split_whitespace()
                .skip(1) // speaker label
                .filter(|w| w.chars().all(|c| c.is_alphanumeric() || c == '\''))
                .take(12)
                .collect();
            if words.len() >= 8 {
                let q = words.join(" ");
                claims.push((si, serde_json::json!({"text": format!("{} said that {q}.", t.speaker), "source": s.label, "quote": q})));
            }
        }
    }
    claims.sort_by_key(|(si, _)| *si);
    let bytes = std::fs::read(format!("{}/models/nli-minilm-l6-int8.onnx", root())).unwrap();
    let model = NliModel::from_bytes(
        &bytes,
        &std::fs::read(format!("{}/models/tokenizer.json", root())).unwrap(),
        &std::fs::read(format!("{}/models/config.json", root())).unwrap(),
    )
    .unwrap();
    for n in [1usize, 2, 5, 10, 20, 40] {
        if n > claims.len() {
            break;
        }
        // spread the n claims over the sources
        let step = claims.len() / n;
        let pick: Vec<&serde_json::Value> = (0..n).map(|i| &claims[i * step].1).collect();
        let answer = serde_json::json!({ "claims": pick }).to_string();
        let case = format!("verify {n} claims");
        let no_nli = VerifyOptions::default();
        let s = median_secs(2, 10, || {
            black_box(verify(&answer, &ctx.sources, &no_nli).unwrap());
        });
        emit("scaling", &case, "meetcite native, no NLI", "ms", s * 1e3, "ms", "");
        let with = VerifyOptions { nli: Some(&model), ..Default::default() };
        let runs = if n >= 20 { 3 } else { 5 };
        let s = median_secs(1, runs, || {
            black_box(verify(&answer, &ctx.sources, &with).unwrap());
        });
        emit("scaling", &case, "meetcite native, int8 NLI", "ms", s * 1e3, "ms", "premise up to the model's 256 tokens");
        let short = VerifyOptions { nli: Some(&model), premise_tokens: 128, ..Default::default() };
        let s = median_secs(1, runs, || {
            black_box(verify(&answer, &ctx.sources, &short).unwrap());
        });
        emit("scaling", &case, "meetcite native, int8 NLI, premise 128", "ms", s * 1e3, "ms", "premiseTokens: 128");
    }
}
