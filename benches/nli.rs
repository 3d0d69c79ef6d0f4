//! NLI runtime, native: tract (this crate's `NliModel`: tokenize + infer) on the shipped int8 file
//! and its f32 twin (`bench/tools/f32_model.py`), and the dynamic-int8 variant (`bench/tools/dyn_int8_model.py`:
//! MatMulInteger + DynamicQuantizeLinear), batch 1 and 8 at exactly 128 and 256 tokens
//! (`bench/fixtures/nli_pairs.json`, the inputs bench/peers.py gives onnxruntime), plus model
//! load time and peak memory. The int8 file twice: on meetcite's own int8 encoder (the default
//! runtime for it) and on tract (`int8-tract`). One model per process so peak RSS is that model's:
//!   cargo bench --bench nli -- int8    int8-tract    f32    dynint8
mod common;
use common::*;
use meetcite::nli::{NliModel, Runtime};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let which: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let which = if which.is_empty() { vec!["int8".to_string()] } else { which };
    let pairs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{}/bench/fixtures/nli_pairs.json", root())).unwrap()).unwrap();
    let tokenizer = std::fs::read(format!("{}/models/tokenizer.json", root())).unwrap();
    let config = std::fs::read(format!("{}/models/config.json", root())).unwrap();
    for kind in which {
        let (kind, runtime) = match kind.strip_suffix("-tract") {
            Some(k) => (k.to_string(), Runtime::Tract),
            None => (kind, Runtime::Auto),
        };
        let path = match kind.as_str() {
            "int8" => format!("{}/models/nli-minilm-l6-int8.onnx", root()),
            "f32" => format!("{}/target/bench/models/nli-minilm-l6-f32.onnx", root()),
            "dynint8" => format!("{}/target/bench/models/nli-minilm-l6-dynint8.onnx", root()),
            other => panic!("unknown model {other:?} (int8, f32 or dynint8)"),
        };
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e} (run python3 bench/tools/f32_model.py, then bench/tools/dyn_int8_model.py)"));
        let rss0 = peak_rss().unwrap_or(0.0);
        let t = Instant::now();
        let mut model = NliModel::load(&bytes, &tokenizer, &config, runtime).expect("model loads");
        // f32 and dynint8 files run on tract whatever was asked: name what ran
        let imp = if model.runtime() == "tract" { "tract native" } else { "meetcite-int8 native" };
        emit("nli", &format!("{kind} load"), imp, "ms", t.elapsed().as_secs_f64() * 1e3, "ms", "from bytes in memory");
        for tokens in ["128", "256"] {
            let set = pairs["sets"][tokens].as_array().unwrap();
            let all: Vec<(&str, &str)> = set.iter().map(|p| (p["premise"].as_str().unwrap(), p["hypothesis"].as_str().unwrap())).collect();
            for batch in [1usize, 8] {
                model.batch_size = batch;
                let input = &all[..batch];
                let runs = if batch * tokens.len() > 8 { 10 } else { 20 };
                let s = median_secs(2, runs, || {
                    black_box(model.score(black_box(input)).unwrap());
                });
                emit("nli", &format!("{kind} b{batch} t{tokens}"), imp, "ms", s * 1e3, "ms", "tokenize + infer, 1 thread");
            }
        }
        let rss = peak_rss().unwrap_or(0.0);
        emit("nli", &format!("{kind} load"), imp, "peak_rss_mb", rss / 1e6, "MB", &format!("process peak; {:.0} MB before load", rss0 / 1e6));
    }
}
