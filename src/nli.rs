//! Stage 4: the NLI runtime. A BERT-family cross-encoder in ONNX (f32 or int8), run by
//! meetcite's own int8 encoder (the shipped form, [`crate::encoder`]) or, with the `tract`
//! feature, by tract-onnx (every other file); its `tokenizer.json` through the `tokenizers`
//! crate; everything loaded from bytes (the browser has no file system). The label order comes
//! from the model's config.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};
#[cfg(feature = "tract")]
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
    /// The file (or `runtime: "tract"`) needs tract, and this build has none: the npm package's
    /// default wasm carries meetcite's int8 encoder only, `meetcite/full` carries tract too.
    #[error("{0}")]
    NeedsTract(String),
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
            NliError::NeedsTract(_) => "model_needs_tract",
        }
    }
}

pub use crate::verify::{Probs, Thresholds};

/// `models/config.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object, rename = "ModelConfig"))]
pub struct NliConfig {
    #[serde(default)]
    pub name: String,
    /// The model family (`bert`, `roberta`, `deberta`, `deberta-v2`, `electra`: [`ARCHITECTURES`]): what
    /// `models/export_hf.py` exported and the tests pin against PyTorch. Absent: `bert`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub architecture: Option<String>,
    #[serde(default = "default_max_length")]
    pub max_length: usize,
    pub id2label: BTreeMap<String, String>,
    /// The graph's inputs by name, each one of `input_ids`, `attention_mask`, `token_type_ids`.
    #[serde(default = "default_inputs")]
    pub inputs: Vec<String>,
    /// The graph output holding the logits, `[batch, labels]`.
    #[serde(default = "default_output")]
    pub output: String,
    /// Token id for padding when pairs share a batch (BERT 0, RoBERTa 1). Absent: the
    /// tokenizer's `[PAD]` / `<pad>` token, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub pad_token_id: Option<u32>,
    #[serde(default)]
    pub thresholds: Thresholds,
    #[serde(default)]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub model_file: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub tokenizer_file: Option<String>,
    /// The support score's weights (see [`crate::support`]); absent: NLI entailment alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(type = "SupportConfig"))]
    pub support: Option<crate::support::SupportConfig>,
}

fn default_max_length() -> usize {
    256
}
fn default_inputs() -> Vec<String> {
    vec!["input_ids".into(), "attention_mask".into(), "token_type_ids".into()]
}
fn default_output() -> String {
    "logits".into()
}

/// The families `models/export_hf.py` exports and `tests/families.rs` pins against PyTorch and
/// onnxruntime. DeBERTa v1 (`deberta`) runs as the script exports it: with its attention span fixed
/// (tract cannot bound the span the model computes from the sequence length).
pub const ARCHITECTURES: &[&str] = &["bert", "roberta", "deberta", "deberta-v2", "electra"];

/// Where each class sits in the model's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Labels {
    /// 3-way NLI: the logit index of entailment, neutral, contradiction.
    Nli([usize; 3]),
    /// 2-way checker: the logit index of supported and of not supported. Mapped to
    /// `Probs { entailment: p(supported), neutral: p(not supported), contradiction: 0 }`, so
    /// the decision rule and the support score read it as an entailment probability and a
    /// 2-way model never "contradicts".
    Check { supported: usize, unsupported: usize },
}

impl Labels {
    fn len(&self) -> usize {
        match self {
            Labels::Nli(_) => 3,
            Labels::Check { .. } => 2,
        }
    }

    fn probs(&self, logits: &[f64]) -> Probs {
        let mx = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ex: Vec<f64> = logits.iter().map(|x| (x - mx).exp()).collect();
        let sum: f64 = ex.iter().sum();
        match *self {
            Labels::Nli(o) => Probs { entailment: ex[o[0]] / sum, neutral: ex[o[1]] / sum, contradiction: ex[o[2]] / sum },
            Labels::Check { supported, unsupported } => Probs { entailment: ex[supported] / sum, neutral: ex[unsupported] / sum, contradiction: 0.0 },
        }
    }
}

/// One input of the graph, fed from the tokenizer's encoding (the discriminant indexes the
/// three columns [`NliModel::score`] builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    Ids = 0,
    Mask = 1,
    Types = 2,
}

/// Which runtime computes the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// meetcite's own int8 encoder where the file is one it recognises (a weight-only int8
    /// `BertForSequenceClassification` export, as shipped), tract otherwise
    #[default]
    Auto,
    /// tract, whatever the file
    Tract,
}

impl std::str::FromStr for Runtime {
    type Err = String;
    /// `auto` or `tract`, as the JS option and the CLI's `MEETCITE_RUNTIME` spell it.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Runtime::Auto),
            "tract" => Ok(Runtime::Tract),
            _ => Err(format!("runtime must be \"auto\" or \"tract\", got {s:?}")),
        }
    }
}

/// Whether a model was built from its embedded graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphUse {
    /// built from the embedded NNEF graph
    Embedded,
    /// the file has no embedded graph: built from the ONNX graph
    Onnx,
    /// the file has one, but it was compiled from another file or config: built from the ONNX
    /// graph (the reason says which)
    Stale(String),
    /// meetcite's own encoder runs the model ([`Runtime::Auto`]): no graph was built
    Unused,
}

/// The runtime a loaded model uses.
enum Engine {
    #[cfg(feature = "tract")]
    Tract(Arc<TypedRunnableModel>),
    Encoder(Arc<crate::encoder::Bert>),
}

pub struct NliModel {
    engine: Engine,
    tokenizer: Tokenizer,
    config: NliConfig,
    labels: Labels,
    /// the graph's inputs, in its order
    feeds: Vec<Feed>,
    /// (tract's batches only: the encoder never pads)
    #[cfg_attr(not(feature = "tract"), allow(dead_code))]
    pad_id: i64,
    support: crate::support::SupportConfig,
    /// whether the graph came from the file's embedded NNEF or its ONNX nodes
    graph: GraphUse,
    /// Pairs per model run (default 1). With 1, a pair's probabilities depend on that pair alone,
    /// bit for bit; in a batch, the padding to the longest pair and the batch's shape change the
    /// last bits (measured on the 20 parity pairs: 32 of 40 scores differ, by up to 2e-7). Bit-for-
    /// bit independence is what lets a stream score each claim as it arrives and still finish with
    /// the report `verify` gives on the whole answer, and a claim never scores differently because
    /// of the other claims beside it. Batching bought nothing here: 20 pairs took 525 ms in one
    /// call of batch 8, 514 ms in twos, 522 ms one by one (tract folds the int8 weights to f32;
    /// its matmuls are as fast one row block at a time). `benches/nli.rs` compares both.
    pub batch_size: usize,
}

impl std::fmt::Debug for NliModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NliModel").field("name", &self.config.name).field("max_length", &self.config.max_length).finish()
    }
}

/// What a label's name means: 0 entailment / supported, 1 neutral, 2 contradiction, 3 not
/// supported. The spellings of published NLI and fact-checking heads (MNLI's, RTE's
/// `not_entailment`, MiniCheck-style supported / unsupported); anything else is refused rather
/// than guessed, so a model whose labels are `LABEL_0`, `LABEL_1` never gets its outputs read in
/// the wrong order.
fn label_slot(name: &str) -> Option<usize> {
    match name.trim().to_ascii_lowercase().replace(['-', ' '], "_").as_str() {
        "entailment" | "entails" | "entailed" | "supported" | "support" | "consistent" | "faithful" => Some(0),
        "neutral" => Some(1),
        "contradiction" | "contradicts" | "contradicted" => Some(2),
        "not_entailment" | "non_entailment" | "not_entailed" | "unsupported" | "not_supported" | "inconsistent" | "hallucinated" => Some(3),
        _ => None,
    }
}

fn labels(id2label: &BTreeMap<String, String>) -> Result<Labels, NliError> {
    let n = id2label.len();
    if !(2..=3).contains(&n) {
        return Err(NliError::Config(format!(
            "id2label: {n} labels; meetcite takes 3-way NLI (entailment, neutral, contradiction) or 2-way checkers (supported, unsupported)"
        )));
    }
    let mut at = [usize::MAX; 4];
    for (k, v) in id2label {
        let i: usize = k.parse().map_err(|_| NliError::Config(format!("id2label: key {k:?} is not an output index")))?;
        if i >= n {
            return Err(NliError::Config(format!("id2label: index {i} out of range 0..{}", n - 1)));
        }
        let slot = label_slot(v).ok_or_else(|| {
            NliError::Config(format!(
                "id2label: label {i} is {v:?}, which meetcite cannot read (3-way: entailment, neutral, contradiction; 2-way: supported, unsupported); name the labels in config.json or export with models/export_hf.py --labels"
            ))
        })?;
        if at[slot] != usize::MAX {
            return Err(NliError::Config(format!("id2label: {v:?} means the same as label {}", at[slot])));
        }
        at[slot] = i;
    }
    match (n, at) {
        (3, [e, nt, c, usize::MAX]) if e != usize::MAX && nt != usize::MAX && c != usize::MAX => Ok(Labels::Nli([e, nt, c])),
        (2, [s, usize::MAX, usize::MAX, u]) if s != usize::MAX && u != usize::MAX => Ok(Labels::Check { supported: s, unsupported: u }),
        _ => Err(NliError::Config(format!(
            "id2label: {:?} is neither entailment / neutral / contradiction nor supported / unsupported",
            id2label.values().collect::<Vec<_>>()
        ))),
    }
}

/// Vocabulary size of a BERT-family ONNX: the rows of the table `input_ids` indexes (a `Gather`
/// reading the graph input; an int8 table through its `DequantizeLinear`), else of the largest 2-D
/// initializer.
fn onnx_vocab_size(proto: &crate::onnx::ModelProto) -> Option<usize> {
    let g = proto.graph.as_ref()?;
    let init = |name: &str| g.initializer.iter().find(|t| t.name == name && t.dims.len() == 2).map(|t| t.dims[0] as usize);
    let dequantized = |name: &str| {
        g.node.iter().find(|n| n.op_type == "DequantizeLinear" && n.output.first().is_some_and(|o| o == name)).and_then(|n| init(n.input.first()?))
    };
    let rows = |name: &str| init(name).or_else(|| dequantized(name));
    let gathered = g.node.iter().filter(|n| n.op_type == "Gather" && n.input.get(1).is_some_and(|i| i == "input_ids")).find_map(|n| rows(&n.input[0]));
    gathered.or_else(|| g.initializer.iter().filter(|t| t.dims.len() == 2).max_by_key(|t| t.dims[0] * t.dims[1]).map(|t| t.dims[0] as usize))
}

/// A quantised byte's level: int8 or uint8. Inlined with the flag a loop invariant, so the branch
/// is hoisted out of the weight loops (an indirect call per weight, through a fn pointer chosen
/// per tensor, kept the compiler from that).
#[inline(always)]
fn level(signed: bool, b: u8) -> i32 {
    if signed {
        b as i8 as i32
    } else {
        b as i32
    }
}

/// One `DequantizeLinear` of a constant int8/uint8 weight (the weight-only int8 form the shipped
/// model uses): `(q - zero_point) * scale` per tensor or per channel, as the ONNX operator defines
/// it.
// (without tract, only the encoder reads it: signedness, scales and zero points)
#[cfg_attr(not(feature = "tract"), allow(dead_code))]
pub(crate) struct Dequant<'a> {
    out: &'a str,
    dims: &'a [i64],
    q: &'a [u8],
    pub(crate) signed: bool,
    pub(crate) scales: Vec<f32>,
    pub(crate) zps: Vec<i32>,
    pub(crate) channels: usize,
    stride: usize,
}

impl<'a> Dequant<'a> {
    pub(crate) fn of(n: &'a crate::onnx::NodeProto, inits: &std::collections::HashMap<&str, &'a crate::onnx::TensorProto>) -> Option<Self> {
        const FLOAT: i32 = 1;
        const UINT8: i32 = 2;
        const INT8: i32 = 3;
        if n.op_type != "DequantizeLinear" || !(n.domain.is_empty() || n.domain == "ai.onnx") || n.output.len() != 1 || !(2..=3).contains(&n.input.len()) {
            return None;
        }
        let q = inits.get(n.input[0].as_str())?;
        let scale = inits.get(n.input[1].as_str())?;
        let zp = match n.input.get(2).filter(|z| !z.is_empty()) {
            Some(z) => Some(*inits.get(z.as_str())?),
            None => None,
        };
        let count = q.dims.iter().try_fold(1usize, |a, &d| usize::try_from(d).ok().and_then(|d| a.checked_mul(d)))?;
        let signed = match q.data_type {
            INT8 => true,
            UINT8 => false,
            _ => return None,
        };
        if q.raw_data.len() != count || scale.data_type != FLOAT {
            return None;
        }
        let scales: Vec<f32> = if !scale.raw_data.is_empty() {
            scale.raw_data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        } else {
            scale.float_data.clone()
        };
        let zps: Vec<i32> = match zp {
            Some(z) if z.data_type == q.data_type && z.raw_data.len() == scales.len() => z.raw_data.iter().map(|&b| level(signed, b)).collect(),
            Some(_) => return None,
            None => vec![0; scales.len()],
        };
        // per tensor (scalar scale) or per channel along `axis` (default 1)
        let (channels, stride) = if scale.dims.is_empty() && scales.len() == 1 {
            (1, count.max(1))
        } else {
            let rank = q.dims.len() as i64;
            let axis = n.attribute.iter().find(|a| a.name == "axis").map(|a| a.i).unwrap_or(1);
            let axis = if axis < 0 { axis + rank } else { axis };
            if scale.dims.len() != 1 || !(0..rank).contains(&axis) || q.dims[axis as usize] as usize != scales.len() {
                return None;
            }
            (scales.len(), q.dims[axis as usize + 1..].iter().product::<i64>() as usize)
        };
        Some(Dequant { out: &n.output[0], dims: &q.dims, q: q.raw_data, signed, scales, zps, channels, stride })
    }

    /// Each run of weights that shares a channel, with its position, zero point and scale. The
    /// bytes are laid out as [outer][channel][stride]: walking them block by block, the channel is
    /// known without a division per element and the caller's inner loop is a plain map of one
    /// scale and zero point (a per-element `(i / stride) % channels` and a growing Vec made this
    /// fold ~45 % of the whole model load natively).
    #[cfg(feature = "tract")]
    fn runs(&self, mut f: impl FnMut(usize, &[u8], i32, f32)) {
        if self.q.is_empty() {
            return;
        }
        let block = self.channels * self.stride;
        for (b, qb) in self.q.chunks_exact(block).enumerate() {
            for (c, qc) in qb.chunks_exact(self.stride).enumerate() {
                f(b * block + c * self.stride, qc, self.zps[c], self.scales[c]);
            }
        }
    }

    /// The f32 weights as an ONNX initializer (little-endian raw data), for tract's ONNX import.
    #[cfg(feature = "tract")]
    fn to_proto(&self) -> tract_onnx::pb::TensorProto {
        let mut raw = vec![0u8; self.q.len() * 4];
        let signed = self.signed;
        self.runs(|at, qc, zp, sc| {
            for (&b, o) in qc.iter().zip(raw[at * 4..(at + qc.len()) * 4].chunks_exact_mut(4)) {
                o.copy_from_slice(&(((level(signed, b) - zp) as f32) * sc).to_le_bytes());
            }
        });
        tract_onnx::pb::TensorProto { name: self.out.to_string(), dims: self.dims.to_vec(), data_type: 1, raw_data: raw, ..Default::default() }
    }

    /// The f32 weights as a tract tensor, written in place (the embedded graph's path: no
    /// initializer in between, so 91 MB of f32 are written once instead of written and copied).
    #[cfg(feature = "tract")]
    fn to_tensor(&self) -> TractResult<Tensor> {
        let shape: Vec<usize> = self.dims.iter().map(|&d| d as usize).collect();
        let mut t = Tensor::zero::<f32>(&shape)?;
        let mut plain = t.try_as_plain_ram_mut()?;
        let out = plain.as_slice_mut::<f32>()?;
        let signed = self.signed;
        self.runs(|at, qc, zp, sc| {
            for (&b, o) in qc.iter().zip(&mut out[at..at + qc.len()]) {
                *o = ((level(signed, b) - zp) as f32) * sc;
            }
        });
        Ok(t)
    }
}

/// Take every foldable `DequantizeLinear` out of tract's graph, with the int8 tensors nothing
/// reads any more, and return what `make` builds of each (named by the node's output). `own` is
/// meetcite's reading of the same file ([`crate::onnx`]): node `i` there is node `i` in `proto`.
#[cfg(feature = "tract")]
fn take_dequantized<T>(proto: &mut tract_onnx::pb::ModelProto, own: &crate::onnx::ModelProto, make: impl Fn(&Dequant) -> T) -> Vec<(String, T)> {
    use std::collections::{HashMap, HashSet};
    let (Some(g), Some(og)) = (proto.graph.as_mut(), own.graph.as_ref()) else { return Vec::new() };
    if g.node.len() != og.node.len() || g.node.iter().zip(&og.node).any(|(a, b)| a.output != b.output) {
        // not the same file: fold nothing (tract folds the constants itself, only slower)
        return Vec::new();
    }
    let mut folded = Vec::new();
    let mut drop = HashSet::new();
    let inits: HashMap<&str, &crate::onnx::TensorProto> = og.initializer.iter().map(|t| (t.name.as_str(), t)).collect();
    for (i, n) in og.node.iter().enumerate() {
        if let Some(d) = Dequant::of(n, &inits) {
            folded.push((d.out.to_string(), make(&d)));
            drop.insert(i);
        }
    }
    if folded.is_empty() {
        return folded;
    }
    let mut i = 0;
    g.node.retain(|_| {
        i += 1;
        !drop.contains(&(i - 1))
    });
    let used: HashSet<String> = g.node.iter().flat_map(|n| n.input.iter().cloned()).chain(g.output.iter().map(|o| o.name.clone())).collect();
    g.initializer.retain(|t| used.contains(&t.name));
    folded
}

/// Replace each `DequantizeLinear` of constant int8/uint8 weights by the f32 initializer it
/// computes ([`Dequant`]). tract folds these constants itself at load, but through its generic
/// cast and broadcast code, which was ~40 % of the model load time in wasm; this is one pass over
/// the bytes. Nodes in any other form are left to tract. Returns the number of nodes folded.
#[cfg(feature = "tract")]
fn fold_weight_dequantize(proto: &mut tract_onnx::pb::ModelProto, own: &crate::onnx::ModelProto) -> usize {
    let folded = take_dequantized(proto, own, |d| d.to_proto());
    let n = folded.len();
    if let Some(g) = proto.graph.as_mut() {
        g.initializer.extend(folded.into_iter().map(|(_, t)| t));
    }
    n
}

/// The same fold, to tract tensors by name, for a graph that takes its weights by name.
#[cfg(feature = "tract")]
fn fold_weight_tensors(proto: &mut tract_onnx::pb::ModelProto, own: &crate::onnx::ModelProto) -> Result<std::collections::HashMap<String, Tensor>, NliError> {
    take_dequantized(proto, own, |d| d.to_tensor()).into_iter().map(|(n, t)| t.map(|t| (n, t)).map_err(|e| NliError::Model(format!("{e:#}")))).collect()
}

/// `Err` with a message when `bytes` are empty or an HTML page instead of `what`.
pub fn not_html_or_empty(bytes: &[u8], what: &str) -> Result<(), String> {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = &start[start.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(start.len())..];
    if start.is_empty() {
        return Err(format!("the file is empty, not {what}: check the URL or path"));
    }
    let head = String::from_utf8_lossy(&start[..start.len().min(64)]).to_ascii_lowercase();
    if head.starts_with("<!doctype") || head.starts_with("<html") || head.starts_with("<head") || head.starts_with("<body") || head.starts_with("<!--") {
        return Err(format!("got HTML, not {what}: check the URL (a missing file answered by a web page?)"));
    }
    Ok(())
}

/// The graph's inputs in its order, each matched to what feeds it; they must be the ones
/// `config.inputs` lists.
fn graph_feeds(proto: &crate::onnx::ModelProto, config: &NliConfig) -> Result<Vec<Feed>, NliError> {
    let g = proto.graph.as_ref().ok_or_else(|| NliError::Model("the ONNX file has no graph".into()))?;
    let inits: std::collections::HashSet<&str> = g.initializer.iter().map(|t| t.name.as_str()).collect();
    let names: Vec<&str> = g.input.iter().map(|i| i.name.as_str()).filter(|n| !inits.contains(n)).collect();
    let feed = |n: &str| match n {
        "input_ids" => Some(Feed::Ids),
        "attention_mask" => Some(Feed::Mask),
        "token_type_ids" => Some(Feed::Types),
        _ => None,
    };
    if let Some(bad) = config.inputs.iter().find(|n| feed(n).is_none()) {
        return Err(NliError::Config(format!("inputs: {bad:?} is not one meetcite feeds (input_ids, attention_mask, token_type_ids)")));
    }
    let mut listed: Vec<&str> = config.inputs.iter().map(String::as_str).collect();
    let mut have = names.clone();
    listed.sort_unstable();
    have.sort_unstable();
    if listed != have {
        return Err(NliError::Config(format!("inputs: the model's inputs are {names:?}, config.json lists {:?}", config.inputs)));
    }
    if !names.contains(&"input_ids") {
        return Err(NliError::Config("inputs: the model has no input_ids".into()));
    }
    Ok(names.into_iter().filter_map(feed).collect())
}

fn read_onnx(model: &[u8]) -> Result<crate::onnx::ModelProto<'_>, NliError> {
    crate::onnx::read(model).map_err(|e| NliError::Model(format!("not a readable ONNX file: {e}")))
}

/// The same file as tract's protobuf types, for tract's ONNX import.
#[cfg(feature = "tract")]
fn read_tract_onnx(model: &[u8]) -> Result<tract_onnx::pb::ModelProto, NliError> {
    tract_onnx::onnx().proto_model_for_read(&mut std::io::Cursor::new(model)).map_err(|e| NliError::Model(format!("not a readable ONNX file: {e}")))
}

/// A DeBERTa v1 graph exported without the fixed span (another exporter, or export_hf.py before
/// it fixed it) fails on the span's gather, at optimisation or at the first run: say what to do.
fn deberta_hint(config: &NliConfig) -> &'static str {
    if config.architecture.as_deref() == Some("deberta") {
        " (a DeBERTa v1 graph must be exported by models/export_hf.py, which fixes the attention span tract cannot bound)"
    } else {
        ""
    }
}

/// tract's decluttered graph of the (folded) ONNX file: inputs `[batch, seq]` of i64, the
/// config's output only (`feeds`: how many graph inputs meetcite feeds). What the loader
/// optimises, and what `meetcite graph` stores.
#[cfg(feature = "tract")]
fn decluttered(proto: &tract_onnx::pb::ModelProto, config: &NliConfig, feeds: usize) -> Result<TypedModel, NliError> {
    let mut m = tract_onnx::onnx().model_for_proto_model(proto).map_err(|e| NliError::Model(format!("{e:#}")))?;
    let outputs = proto.graph.as_ref().map(|g| g.output.iter().map(|o| o.name.clone()).collect::<Vec<_>>()).unwrap_or_default();
    if !outputs.contains(&config.output) {
        return Err(NliError::Config(format!("output: the model has no output {:?}; its outputs are {outputs:?}", config.output)));
    }
    if outputs.len() > 1 {
        m.select_outputs_by_name([config.output.as_str()]).map_err(|e| NliError::Model(e.to_string()))?;
    }
    let b = m.sym("batch");
    let s = m.sym("seq");
    // A pair is never longer than max_length (the premise is truncated, a longer claim is an
    // error). Telling tract so lets it prove bounds such as DeBERTa's `512 - seq` are not
    // negative; without it, a slice bound it cannot sign is taken for a negative index and
    // wrapped.
    m.symbols.add_assertion(format!("seq <= {}", config.max_length)).map_err(|e| NliError::Model(e.to_string()))?;
    for i in 0..feeds {
        m.set_input_fact(i, InferenceFact::dt_shape(i64::datum_type(), tvec![b.to_dim(), s.to_dim()])).map_err(|e| NliError::Model(e.to_string()))?;
    }
    let hint = deberta_hint(config);
    let mut t = m.into_typed().map_err(|e| NliError::Model(format!("{e:#}{hint}")))?;
    t.declutter().map_err(|e| NliError::Model(format!("{e:#}{hint}")))?;
    Ok(t)
}

impl NliModel {
    /// Load from the bytes of the ONNX file, `tokenizer.json` and `config.json`
    /// ([`Runtime::Auto`]).
    pub fn from_bytes(model: &[u8], tokenizer: &[u8], config: &[u8]) -> Result<Self, NliError> {
        Self::load(model, tokenizer, config, Runtime::Auto)
    }

    /// As [`NliModel::from_bytes`], with the runtime chosen.
    pub fn load(model: &[u8], tokenizer: &[u8], config: &[u8], runtime: Runtime) -> Result<Self, NliError> {
        // a wrong URL behind a web server or a dev server's fallback page arrives as HTML, a failed
        // download as nothing: say so instead of reporting a protobuf or JSON decode error
        not_html_or_empty(model, "an ONNX file").map_err(NliError::Model)?;
        not_html_or_empty(tokenizer, "tokenizer.json").map_err(NliError::Tokenizer)?;
        not_html_or_empty(config, "config.json").map_err(NliError::Config)?;
        let config: NliConfig = serde_json::from_slice(config).map_err(|e| NliError::Config(e.to_string()))?;
        let labels = labels(&config.id2label)?;
        if let Some(a) = config.architecture.as_deref().filter(|a| !ARCHITECTURES.contains(a)) {
            return Err(NliError::Config(format!(
                "architecture: {a:?} is not supported (meetcite has not been tested with it); supported: {}",
                ARCHITECTURES.join(", ")
            )));
        }
        let support = match &config.support {
            Some(sc) => {
                sc.validate().map_err(NliError::Config)?;
                sc.clone()
            }
            None => crate::support::SupportConfig::nli_only(config.thresholds.entailment),
        };
        if config.max_length < 16 || config.max_length > 4096 {
            return Err(NliError::Config(format!("max_length: {} outside 16..4096", config.max_length)));
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
        let pad_id = config.pad_token_id.or_else(|| tok.token_to_id("[PAD]")).or_else(|| tok.token_to_id("<pad>")).unwrap_or(0) as i64;
        let proto = read_onnx(model)?;
        let vocab = tok.get_vocab_size(true);
        match onnx_vocab_size(&proto) {
            Some(v) if vocab > v => return Err(NliError::Mismatch(format!("tokenizer has {vocab} tokens, the model's embedding table {v}"))),
            None => return Err(NliError::Model("no embedding table found in the ONNX graph".into())),
            _ => {}
        }
        let feeds = graph_feeds(&proto, &config)?;
        let bert = matches!(config.architecture.as_deref(), None | Some("bert")) && runtime == Runtime::Auto;
        // (the tokenizer was checked above against the table input_ids gathers: the encoder's)
        if let Some(enc) = bert.then(|| crate::encoder::Bert::from_onnx(&proto, labels.len())).flatten() {
            let engine = Engine::Encoder(Arc::new(enc));
            return Self::smoke(NliModel { engine, tokenizer: tok, config, labels, feeds, pad_id, support, graph: GraphUse::Unused, batch_size: 1 });
        }
        #[cfg(feature = "tract")]
        {
            let (engine, graph) = Self::tract_engine(model, &proto, &config, feeds.len())?;
            Self::smoke(NliModel { engine, tokenizer: tok, config, labels, feeds, pad_id, support, graph, batch_size: 1 })
        }
        #[cfg(not(feature = "tract"))]
        Err(NliError::NeedsTract(if runtime == Runtime::Tract {
            "runtime \"tract\" asked for, and this build of meetcite has no tract (the npm package: import \"meetcite/full\"; Rust: the `tract` feature)".into()
        } else {
            "this model file needs tract: this build of meetcite runs only weight-only int8 BERT files (the form models/ ships) on its own int8 encoder; import \"meetcite/full\" (npm) or build with the `tract` feature (Rust) for other files".into()
        }))
    }

    /// tract's runnable plan for the file: from the graph the file carries when it matches, else
    /// from the ONNX nodes.
    #[cfg(feature = "tract")]
    fn tract_engine(model: &[u8], own: &crate::onnx::ModelProto, config: &NliConfig, feeds: usize) -> Result<(Engine, GraphUse), NliError> {
        let mut proto = read_tract_onnx(model)?;
        // the fingerprint is of the file as it is, before the fold and without the graph it carries
        let checked = crate::graph::take(&mut proto).map(|json| crate::graph::check(&json, &crate::graph::fingerprint(&proto, config)));
        let hint = deberta_hint(config);
        let from_onnx = |mut proto: tract_onnx::pb::ModelProto| -> Result<TypedModel, NliError> {
            fold_weight_dequantize(&mut proto, own);
            let mut m = decluttered(&proto, config, feeds)?;
            m.optimize().map_err(|e| NliError::Model(format!("{e:#}{hint}")))?;
            Ok(m)
        };
        let (m, graph) = match checked {
            Some(Ok(e)) => {
                let folded = fold_weight_tensors(&mut proto, own)?;
                (crate::graph::build(e, folded, &mut proto)?, GraphUse::Embedded)
            }
            Some(Err(why)) => (from_onnx(proto)?, GraphUse::Stale(why)),
            None => (from_onnx(proto)?, GraphUse::Onnx),
        };
        let plan = m.into_runnable().map_err(|e| NliError::Model(format!("{e:#}{hint}")))?;
        Ok((Engine::Tract(plan), graph))
    }

    fn smoke(me: NliModel) -> Result<Self, NliError> {
        let hint = deberta_hint(&me.config);
        // a smoke run: one row of as many scores as id2label names. A graph that cannot run is the
        // model's fault, not the input's: `model`, not `inference`
        let p = me.score(&[("The meeting started.", "A meeting started.")]).map_err(|e| match e {
            NliError::Inference(e) => NliError::Model(format!("the model's smoke run failed: {e}{hint}")),
            e => e,
        })?;
        if p.len() != 1 || !p[0].entailment.is_finite() {
            return Err(NliError::Model("the model's smoke run gave no finite scores".into()));
        }
        Ok(me)
    }

    /// Compile the graph of `model` (ONNX bytes) for `config` and return the file with it embedded
    /// (see [`crate::graph`]): the same weights and nodes, plus the decluttered NNEF graph in the
    /// file's metadata, which later loads use instead of building it again.
    /// A file that carries a graph already is compiled again from the file without it.
    #[cfg(feature = "tract")]
    pub fn compile_graph(model: &[u8], config: &[u8]) -> Result<Vec<u8>, NliError> {
        not_html_or_empty(model, "an ONNX file").map_err(NliError::Model)?;
        let config: NliConfig = serde_json::from_slice(config).map_err(|e| NliError::Config(e.to_string()))?;
        let model = &crate::graph::strip(model).ok_or_else(|| NliError::Model("not a readable ONNX file".into()))?;
        let own = read_onnx(model)?;
        let feeds = graph_feeds(&own, &config)?.len();
        let mut proto = read_tract_onnx(model)?;
        let fingerprint = crate::graph::fingerprint(&proto, &config);
        fold_weight_dequantize(&mut proto, &own);
        let typed = decluttered(&proto, &config, feeds)?;
        crate::graph::embed(model, fingerprint, &proto, &typed)
    }

    /// Whether this model was built from the graph its file carries, or from the ONNX nodes (and
    /// why, when the file carries one that does not match), or needed no graph (meetcite's
    /// encoder).
    pub fn graph(&self) -> &GraphUse {
        &self.graph
    }

    /// `"meetcite-int8"` (meetcite's own encoder) or `"tract"`.
    pub fn runtime(&self) -> &'static str {
        match self.engine {
            #[cfg(feature = "tract")]
            Engine::Tract(_) => "tract",
            Engine::Encoder(_) => "meetcite-int8",
        }
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

    /// The support score's weights in use (the config's, or NLI alone when it has none).
    pub fn support_config(&self) -> &crate::support::SupportConfig {
        &self.support
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
        match &self.engine {
            #[cfg(feature = "tract")]
            Engine::Tract(plan) => self.score_tract(plan, &encs),
            // one pair at a time, unpadded: the same numbers whatever the batch
            Engine::Encoder(bert) => encs
                .iter()
                .map(|e| {
                    let types: Vec<u32> = if self.feeds.contains(&Feed::Types) { e.get_type_ids().to_vec() } else { vec![0; e.get_ids().len()] };
                    let row: Vec<f64> = bert.logits(e.get_ids(), &types)?.into_iter().map(f64::from).collect();
                    Ok(self.labels.probs(&row))
                })
                .collect(),
        }
    }

    /// tract's batches of `batch_size` pairs of similar length.
    #[cfg(feature = "tract")]
    fn score_tract(&self, plan: &Arc<TypedRunnableModel>, encs: &[tokenizers::Encoding]) -> Result<Vec<Probs>, NliError> {
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
            let mut ids = vec![self.pad_id; n * len];
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
            // each graph input takes its column by move (the names are unique, so no column twice)
            let mut columns = [ids, mask, types];
            let inputs: TVec<TValue> = self
                .feeds
                .iter()
                .map(|&f| {
                    let v = std::mem::take(&mut columns[f as usize]);
                    Ok(tract_ndarray::Array2::from_shape_vec((n, len), v).map_err(|e| NliError::Inference(e.to_string()))?.into_tensor().into_tvalue())
                })
                .collect::<Result<_, NliError>>()?;
            let res = plan.run(inputs).map_err(|e| NliError::Inference(format!("{e:#}")))?;
            let logits = res[0].to_plain_array_view::<f32>().map_err(|e| NliError::Inference(e.to_string()))?;
            let k = self.labels.len();
            if logits.shape() != [n, k] {
                return Err(NliError::Config(format!(
                    "id2label: the model gives logits of shape {:?}, id2label names {k} labels ([{n}, {k}] expected)",
                    logits.shape()
                )));
            }
            for (r, &i) in batch.iter().enumerate() {
                let row: Vec<f64> = (0..k).map(|c| logits[[r, c]] as f64).collect();
                out[i] = self.labels.probs(&row);
            }
        }
        Ok(out)
    }
}

impl crate::verify::Entail for NliModel {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, crate::verify::EntailError> {
        self.score(pairs).map_err(|e| crate::verify::EntailError { code: e.code(), message: e.to_string() })
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
    fn support(&self) -> &crate::support::SupportConfig {
        &self.support
    }
}

#[cfg(all(test, feature = "tract"))]
mod tests {
    use super::*;

    /// meetcite's ONNX reader against tract's (prost, generated from onnx.proto) on every ONNX
    /// file the project has: the same nodes, attributes and tensors, byte for byte.
    #[test]
    fn own_onnx_reader_reads_what_tract_reads() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut files = vec![std::path::PathBuf::from(format!("{root}/models/nli-minilm-l6-int8.onnx"))];
        let mut dirs = vec![std::path::PathBuf::from(format!("{root}/tests/fixtures/families"))];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()) {
                if e.is_dir() {
                    dirs.push(e);
                } else if e.extension().is_some_and(|x| x == "onnx") {
                    files.push(e);
                }
            }
        }
        files.sort();
        assert!(files.len() >= 10, "{files:?}");
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let f = f.display();
            let theirs = read_tract_onnx(&bytes).unwrap();
            let ours = read_onnx(&bytes).unwrap();
            let (tg, og) = (theirs.graph.as_ref().unwrap(), ours.graph.as_ref().unwrap());
            assert_eq!(tg.node.len(), og.node.len(), "{f}");
            for (t, o) in tg.node.iter().zip(&og.node) {
                assert_eq!((&t.input, &t.output, &t.name, &t.op_type, &t.domain), (&o.input, &o.output, &o.name, &o.op_type, &o.domain), "{f}");
                assert_eq!(t.attribute.len(), o.attribute.len(), "{f} {}", t.name);
                for (ta, oa) in t.attribute.iter().zip(&o.attribute) {
                    assert_eq!((&ta.name, ta.f.to_bits(), ta.i, &ta.ints), (&oa.name, oa.f.to_bits(), oa.i, &oa.ints), "{f} {}", t.name);
                    assert_eq!(
                        ta.t.as_ref().map(|x| (&x.dims, x.data_type, &x.raw_data[..])),
                        oa.t.as_ref().map(|x| (&x.dims, x.data_type, x.raw_data)),
                        "{f} {}",
                        t.name
                    );
                }
            }
            let names = |v: &[tract_onnx::pb::ValueInfoProto]| v.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
            let onames = |v: &[crate::onnx::ValueInfoProto]| v.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
            assert_eq!(names(&tg.input), onames(&og.input), "{f}");
            assert_eq!(names(&tg.output), onames(&og.output), "{f}");
            assert_eq!(tg.initializer.len(), og.initializer.len(), "{f}");
            for (t, o) in tg.initializer.iter().zip(&og.initializer) {
                assert_eq!((&t.name, &t.dims, t.data_type, &t.raw_data[..]), (&o.name, &o.dims, o.data_type, o.raw_data), "{f}");
                assert_eq!((&t.float_data, &t.int32_data, &t.int64_data), (&o.float_data, &o.int32_data, &o.int64_data), "{f} {}", t.name);
            }
        }
    }

    #[test]
    fn shipped_weights_fold_to_f32_initializers() {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/models/nli-minilm-l6-int8.onnx")).unwrap();
        let own = read_onnx(&bytes).unwrap();
        let onnx = tract_onnx::onnx();
        let mut proto = onnx.proto_model_for_read(&mut std::io::Cursor::new(&bytes[..])).unwrap();
        let g = proto.graph.as_ref().unwrap();
        let dq: Vec<_> = g.node.iter().filter(|n| n.op_type == "DequantizeLinear").cloned().collect();
        assert!(dq.len() >= 30, "{} DequantizeLinear nodes", dq.len());
        // the first row of the word embeddings, by hand: (q - zp) * scale[0] (per row, axis 0)
        let find = |name: &str| g.initializer.iter().find(|t| t.name == name).unwrap().clone();
        let emb = dq.iter().find(|n| n.output[0].contains("word_embeddings")).unwrap();
        let (q, scale, zp) = (find(&emb.input[0]), find(&emb.input[1]), find(&emb.input[2]));
        let s0 = f32::from_le_bytes(scale.raw_data[0..4].try_into().unwrap());
        let want: Vec<f32> = q.raw_data[..384].iter().map(|&b| ((b as i8 as i32 - zp.raw_data[0] as i8 as i32) as f32) * s0).collect();
        assert_eq!(fold_weight_dequantize(&mut proto, &own), dq.len());
        let g = proto.graph.as_ref().unwrap();
        assert!(!g.node.iter().any(|n| n.op_type == "DequantizeLinear"));
        assert!(!g.initializer.iter().any(|t| t.name == q.name), "the int8 tensor is dropped");
        let w = g.initializer.iter().find(|t| t.name == emb.output[0]).unwrap();
        assert_eq!((w.dims.clone(), w.data_type), (q.dims.clone(), 1));
        let got: Vec<f32> = w.raw_data[..384 * 4].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, want);
        assert!(want.iter().any(|&x| x != 0.0));
        // a second pass folds nothing (the graph is no longer the file's)
        assert_eq!(fold_weight_dequantize(&mut proto, &own), 0);
    }
}
