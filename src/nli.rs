//! Stage 4: the NLI runtime. A BERT-family cross-encoder in ONNX (f32 or int8), run with
//! tract-onnx; its `tokenizer.json` through the `tokenizers` crate; everything loaded from bytes
//! (the browser has no file system). The label order comes from the model's config.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};
use tract_onnx::prelude::*;

#[derive(Debug, Clone, thiserror::Error)]
pub enum NliError {
    #[error("model config: {0}")]
    Config(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("model: {0}")]
    Model(String),
    #[error("tokenizer does not fit the model: {0}")]
    Mismatch(String),
    #[error("inference failed: {0}")]
    Inference(String),
    #[error("claim is {tokens} tokens, the model takes at most {max} with its premise")]
    ClaimTooLong { tokens: usize, max: usize },
}

impl NliError {
    pub fn code(&self) -> &'static str {
        match self {
            NliError::Config(_) => "model_config",
            NliError::Tokenizer(_) => "tokenizer",
            NliError::Model(_) => "model",
            NliError::Mismatch(_) => "tokenizer_mismatch",
            NliError::Inference(_) => "inference",
            NliError::ClaimTooLong { .. } => "claim_too_long",
        }
    }
}

pub use crate::verify::{Probs, Thresholds};

/// `models/config.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NliConfig {
    #[serde(default)]
    pub name: String,
    #[serde(default = "default_max_length")]
    pub max_length: usize,
    pub id2label: BTreeMap<String, String>,
    #[serde(default = "default_inputs")]
    pub inputs: Vec<String>,
    #[serde(default)]
    pub thresholds: Thresholds,
    #[serde(default)]
    pub model_file: Option<String>,
    #[serde(default)]
    pub tokenizer_file: Option<String>,
}

fn default_max_length() -> usize {
    256
}
fn default_inputs() -> Vec<String> {
    vec!["input_ids".into(), "attention_mask".into(), "token_type_ids".into()]
}

pub struct NliModel {
    plan: Arc<TypedRunnableModel>,
    tokenizer: Tokenizer,
    config: NliConfig,
    /// logit index of entailment, neutral, contradiction
    order: [usize; 3],
    n_inputs: usize,
    pub batch_size: usize,
}

impl std::fmt::Debug for NliModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NliModel").field("name", &self.config.name).field("max_length", &self.config.max_length).finish()
    }
}

fn label_order(id2label: &BTreeMap<String, String>) -> Result<[usize; 3], NliError> {
    if id2label.len() != 3 {
        return Err(NliError::Config(format!("id2label must have 3 labels, found {}", id2label.len())));
    }
    let mut order = [usize::MAX; 3];
    for (k, v) in id2label {
        let i: usize = k.parse().map_err(|_| NliError::Config(format!("id2label key {k:?} is not an index")))?;
        if i > 2 {
            return Err(NliError::Config(format!("id2label index {i} out of range 0..2")));
        }
        let slot = match v.to_ascii_lowercase().as_str() {
            "entailment" | "entails" | "entailed" => 0,
            "neutral" => 1,
            "contradiction" | "contradicts" => 2,
            other => return Err(NliError::Config(format!("unknown label {other:?} in id2label (expected entailment, neutral, contradiction)"))),
        };
        if order[slot] != usize::MAX {
            return Err(NliError::Config(format!("label {v:?} appears twice in id2label")));
        }
        order[slot] = i;
    }
    Ok(order)
}

/// Vocabulary size of a BERT-family ONNX: the first dimension of its largest 2-D initializer
/// (the word-embedding table).
fn onnx_vocab_size(proto: &tract_onnx::pb::ModelProto) -> Option<usize> {
    let g = proto.graph.as_ref()?;
    g.initializer.iter().filter(|t| t.dims.len() == 2).max_by_key(|t| t.dims[0] * t.dims[1]).map(|t| t.dims[0] as usize)
}

impl NliModel {
    /// Load from the bytes of the ONNX file, `tokenizer.json` and `config.json`.
    pub fn from_bytes(model: &[u8], tokenizer: &[u8], config: &[u8]) -> Result<Self, NliError> {
        let config: NliConfig = serde_json::from_slice(config).map_err(|e| NliError::Config(e.to_string()))?;
        let order = label_order(&config.id2label)?;
        if config.max_length < 16 || config.max_length > 4096 {
            return Err(NliError::Config(format!("max_length {} outside 16..4096", config.max_length)));
        }
        let mut tok = Tokenizer::from_bytes(tokenizer).map_err(|e| NliError::Tokenizer(e.to_string()))?;
        tok.with_padding(None);
        tok.with_truncation(Some(TruncationParams {
            max_length: config.max_length,
            strategy: TruncationStrategy::OnlyFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| NliError::Tokenizer(e.to_string()))?;
        let onnx = tract_onnx::onnx();
        let proto = onnx.proto_model_for_read(&mut std::io::Cursor::new(model)).map_err(|e| NliError::Model(format!("not a readable ONNX file: {e}")))?;
        let vocab = tok.get_vocab_size(true);
        match onnx_vocab_size(&proto) {
            Some(v) if vocab > v => return Err(NliError::Mismatch(format!("tokenizer has {vocab} tokens, the model's embedding table {v}"))),
            None => return Err(NliError::Model("no embedding table found in the ONNX graph".into())),
            _ => {}
        }
        let mut m = onnx.model_for_proto_model(&proto).map_err(|e| NliError::Model(format!("{e:#}")))?;
        let n_inputs = m.input_outlets().map_err(|e| NliError::Model(e.to_string()))?.len();
        if n_inputs != config.inputs.len() || !(2..=3).contains(&n_inputs) {
            return Err(NliError::Mismatch(format!("model has {n_inputs} inputs, config lists {:?}", config.inputs)));
        }
        let b = m.sym("batch");
        let s = m.sym("seq");
        for i in 0..n_inputs {
            m.set_input_fact(i, InferenceFact::dt_shape(i64::datum_type(), tvec![b.to_dim(), s.to_dim()]))
                .map_err(|e| NliError::Model(e.to_string()))?;
        }
        let plan = m
            .into_optimized()
            .and_then(|m| m.into_runnable())
            .map_err(|e| NliError::Model(format!("{e:#}")))?;
        let me = NliModel { plan, tokenizer: tok, config, order, n_inputs, batch_size: 8 };
        // a smoke run: the output must be [1, 3]
        let p = me.score(&[("The meeting started.", "A meeting started.")])?;
        if p.len() != 1 || !p[0].entailment.is_finite() {
            return Err(NliError::Model("the model does not produce 3 class scores".into()));
        }
        Ok(me)
    }

    pub fn config(&self) -> &NliConfig {
        &self.config
    }

    pub fn max_length(&self) -> usize {
        self.config.max_length
    }

    pub fn thresholds(&self) -> Thresholds {
        self.config.thresholds
    }

    /// Number of tokens of `text` alone, without special tokens.
    pub fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.encode(text, false).map(|e| e.get_ids().len()).unwrap_or(text.len() / 3)
    }

    /// The library's decision rule.
    pub fn supported(&self, p: &Probs) -> bool {
        p.entailment >= self.config.thresholds.entailment && p.contradiction < self.config.thresholds.contradiction
    }

    /// Score (premise, hypothesis) pairs in batches. The premise is truncated, never the
    /// hypothesis.
    pub fn score(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, NliError> {
        let mut encs = Vec::with_capacity(pairs.len());
        for (p, h) in pairs {
            let htoks = self.count_tokens(h);
            if htoks + 8 > self.config.max_length {
                return Err(NliError::ClaimTooLong { tokens: htoks, max: self.config.max_length - 8 });
            }
            let e = self.tokenizer.encode((*p, *h), true).map_err(|e| NliError::Tokenizer(e.to_string()))?;
            encs.push(e);
        }
        // length buckets: sort by length, batch neighbours of similar length (a batch is padded
        // to its longest pair, so a short pair never rides with a long one), restore order
        let mut idx: Vec<usize> = (0..encs.len()).collect();
        idx.sort_by_key(|&i| encs[i].get_ids().len());
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut from = 0;
        for k in 1..=idx.len() {
            let full = k - from >= self.batch_size.max(1);
            let jump = k < idx.len() && encs[idx[k]].get_ids().len() * 4 > encs[idx[from]].get_ids().len() * 5 + 32;
            if k == idx.len() || full || jump {
                batches.push(&idx[from..k]);
                from = k;
            }
        }
        let mut out = vec![Probs { entailment: 0.0, neutral: 0.0, contradiction: 0.0 }; encs.len()];
        for batch in batches {
            let len = batch.iter().map(|&i| encs[i].get_ids().len()).max().unwrap_or(1);
            let n = batch.len();
            let mut ids = vec![0i64; n * len];
            let mut mask = vec![0i64; n * len];
            let mut types = vec![0i64; n * len];
            for (r, &i) in batch.iter().enumerate() {
                let e = &encs[i];
                for (c, ((&id, &m), &t)) in e.get_ids().iter().zip(e.get_attention_mask()).zip(e.get_type_ids()).enumerate() {
                    ids[r * len + c] = id as i64;
                    mask[r * len + c] = m as i64;
                    types[r * len + c] = t as i64;
                }
            }
            let mk = |v: Vec<i64>| -> Result<TValue, NliError> {
                Ok(tract_ndarray::Array2::from_shape_vec((n, len), v).map_err(|e| NliError::Inference(e.to_string()))?.into_tensor().into_tvalue())
            };
            let mut inputs: TVec<TValue> = tvec![mk(ids)?, mk(mask)?];
            if self.n_inputs == 3 {
                inputs.push(mk(types)?);
            }
            let res = self.plan.run(inputs).map_err(|e| NliError::Inference(format!("{e:#}")))?;
            let logits = res[0].to_plain_array_view::<f32>().map_err(|e| NliError::Inference(e.to_string()))?;
            if logits.shape() != [n, 3] {
                return Err(NliError::Inference(format!("logits have shape {:?}, expected [{n}, 3]", logits.shape())));
            }
            for (r, &i) in batch.iter().enumerate() {
                let row: Vec<f64> = (0..3).map(|c| logits[[r, c]] as f64).collect();
                let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let ex: Vec<f64> = row.iter().map(|x| (x - mx).exp()).collect();
                let sum: f64 = ex.iter().sum();
                out[i] = Probs {
                    entailment: ex[self.order[0]] / sum,
                    neutral: ex[self.order[1]] / sum,
                    contradiction: ex[self.order[2]] / sum,
                };
            }
        }
        Ok(out)
    }
}

impl crate::verify::Entail for NliModel {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, String> {
        self.score(pairs).map_err(|e| e.to_string())
    }
    fn thresholds(&self) -> Thresholds {
        self.config.thresholds
    }
    fn count_tokens(&self, text: &str) -> usize {
        NliModel::count_tokens(self, text)
    }
    fn max_length(&self) -> usize {
        self.config.max_length
    }
}
