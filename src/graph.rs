//! Stage 4, load time: the NLI model's graph precompiled to tract's NNEF form and carried inside
//! the ONNX file (issue 16, "convert the model at build time").
//!
//! Building a runnable graph from ONNX means translating the protobuf nodes, inferring every
//! type and shape, and decluttering; in the browser, on code V8 has not tiered up yet, those
//! passes were ~340 ms of a ~775 ms first load. `meetcite graph` does them once, at build
//! time, and stores the decluttered graph as NNEF text in the ONNX file's `metadata_props`
//! (key [`KEY`]). The weights stay where they are, int8 in the ONNX initializers, so the file
//! grows by the graph text only and onnxruntime, which ignores the metadata, runs the same file.
//! At load, [`build`] parses the text, hands tract the (folded) initializers by name, and only
//! the codegen pass runs.
//!
//! The graph is tied to the exact file it was compiled from: a [`fingerprint`] of the ONNX
//! graph (every node and attribute), of each initializer's name, type, shape and sampled bytes,
//! and of the config fields the graph depends on. A file edited after compiling (re-exported,
//! re-quantized, retrained) no longer matches, and meetcite builds from the ONNX as before.

use crate::nli::{NliConfig, NliError};
use crate::onnx::{put_field, Reader, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use tract_nnef::internal::Identifier;
use tract_onnx::pb::{ModelProto, TensorProto};
use tract_onnx::prelude::*;

/// The `metadata_props` key of the embedded graph.
pub const KEY: &str = "meetcite.graph";
/// Bumped when the embedded form or what the fingerprint covers changes: an older graph then
/// stops matching and the ONNX path is taken.
const FORMAT: u32 = 1;
/// Tensors of the graph that are no initializer (constants tract computed or the exporter put in
/// nodes) are carried in the JSON; more than this means the graph does not fit this scheme.
const MAX_INLINE_BYTES: usize = 1 << 20;
/// The tract that writes and reads the text (Cargo.toml pins tract-nnef to it). NNEF is tract's
/// serialisation, not a frozen standard for its own ops: a graph from another tract version is
/// not used.
const TRACT: &str = "0.23.9";

/// The JSON stored under [`KEY`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Embedded {
    format: u32,
    /// [`fingerprint`] of the file and config it was compiled from, hex
    fingerprint: String,
    /// tract's version that wrote the text ([`check`] takes no other)
    tract: String,
    /// `graph.nnef`
    nnef: String,
    /// NNEF variable label -> the initializer holding its data (after the int8 fold) and the
    /// shape the graph reads it in
    weights: BTreeMap<String, Weight>,
    /// NNEF variable label -> tensor in NNEF's `.dat` form, hex
    inline: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Weight {
    from: String,
    shape: Vec<usize>,
}

pub use crate::nli::GraphUse;

/// The NNEF framework meetcite writes and reads: tract's registries, the ONNX one, and one op of
/// its own. tract 0.23.9 has no NNEF form for `GeluExact`, which decluttering makes of BERT's
/// erf-based GELU; as a unit element-wise op it serialises by name.
fn framework() -> tract_nnef::framework::Nnef {
    use tract_onnx::WithOnnx;
    let mut reg = tract_nnef::internal::Registry::new("meetcite");
    reg.register_unit_element_wise("meetcite_gelu_exact", &tract_onnx::tract_core::ops::nn::GeluExact {});
    tract_nnef::nnef().with_onnx().with_registry(reg)
}

/// 64-bit FNV-1a, fed piece by piece (each piece's length first, so pieces cannot run together).
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in (b.len() as u64).to_le_bytes().iter().chain(b) {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes())
    }
    fn num(&mut self, n: i64) {
        self.bytes(&n.to_le_bytes())
    }
}

/// Up to 64 evenly spaced 8-byte samples of a weight's bytes and its length: every retrained or
/// re-quantized weight changes there, and the whole 24 MB need not be read at each load.
fn sampled(h: &mut Fnv, b: &[u8]) {
    h.num(b.len() as i64);
    let step = (b.len() / 64).max(8);
    let mut at = 0;
    while at < b.len() {
        h.bytes(&b[at..(at + 8).min(b.len())]);
        at += step;
    }
}

fn tensor_proto(h: &mut Fnv, t: &TensorProto, whole: bool) {
    h.str(&t.name);
    h.num(t.data_type as i64);
    h.num(t.dims.len() as i64);
    t.dims.iter().for_each(|&d| h.num(d));
    let floats: Vec<u8> = t.float_data.iter().flat_map(|f| f.to_le_bytes()).collect();
    let ints: Vec<u8> = t.int64_data.iter().flat_map(|i| i.to_le_bytes()).chain(t.int32_data.iter().flat_map(|i| (*i as i64).to_le_bytes())).collect();
    for b in [&t.raw_data[..], &floats, &ints] {
        if whole {
            h.bytes(b)
        } else {
            sampled(h, b)
        }
    }
}

/// Fingerprint of what the compiled graph depends on: the ONNX graph before the int8 fold (nodes,
/// attributes, inputs, outputs, initializers sampled) and the config's `max_length`, `inputs` and
/// `output`.
pub fn fingerprint(proto: &ModelProto, config: &NliConfig) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.num(FORMAT as i64);
    h.num(config.max_length as i64);
    config.inputs.iter().for_each(|i| h.str(i));
    h.str(&config.output);
    if let Some(g) = &proto.graph {
        for n in &g.node {
            for s in [&n.name, &n.op_type, &n.domain] {
                h.str(s);
            }
            n.input.iter().chain(&n.output).for_each(|s| h.str(s));
            for a in &n.attribute {
                h.str(&a.name);
                h.num(a.r#type as i64);
                h.num(a.i);
                h.num(a.f.to_bits() as i64);
                h.bytes(&a.s);
                a.ints.iter().for_each(|&i| h.num(i));
                a.floats.iter().for_each(|f| h.num(f.to_bits() as i64));
                // a Constant node's tensor is small and may become an inlined tensor: all of it
                if let Some(t) = &a.t {
                    tensor_proto(&mut h, t, true);
                }
            }
        }
        g.input.iter().chain(&g.output).for_each(|v| h.str(&v.name));
        g.initializer.iter().for_each(|t| tensor_proto(&mut h, t, false));
    }
    format!("{:016x}", h.0)
}

/// The embedded graph's JSON, removed from the proto's metadata (the last one if several).
pub(crate) fn take(proto: &mut ModelProto) -> Option<String> {
    let mut found = None;
    proto.metadata_props.retain(|p| {
        if p.key == KEY {
            found = Some(p.value.clone());
            false
        } else {
            true
        }
    });
    found
}

/// Parse the embedded JSON and check it was compiled from this file and config.
pub(crate) fn check(json: &str, fingerprint: &str) -> Result<Embedded, String> {
    let e: Embedded = serde_json::from_str(json).map_err(|e| format!("the embedded graph is not readable ({e})"))?;
    if e.format != FORMAT {
        return Err(format!("the embedded graph has format {} (this meetcite reads {FORMAT})", e.format));
    }
    if e.tract != TRACT {
        return Err(format!("the embedded graph was compiled with tract {} (this meetcite runs {TRACT}; re-run `meetcite graph`)", e.tract));
    }
    if e.fingerprint != fingerprint {
        return Err("the embedded graph was compiled from another model file or config (re-run `meetcite graph` on this one)".into());
    }
    Ok(e)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok())).collect()
}

fn onnx_tensor(t: &TensorProto) -> TractResult<Tensor> {
    tract_onnx::tensor::load_tensor(&*tract_onnx::data_resolver::default(), t, None)
}

/// The runnable graph from the embedded NNEF: the weights (`folded`: the int8 weights as f32, by
/// the name of the node that dequantized them; the other initializers are taken out of `proto`)
/// are handed to tract under the labels the graph names; only tract's codegen pass runs.
pub(crate) fn build(e: Embedded, mut folded: HashMap<String, Tensor>, proto: &mut ModelProto) -> Result<TypedModel, NliError> {
    let err = |what: &str, e: &dyn std::fmt::Display| NliError::Model(format!("the embedded graph: {what}: {e:#}"));
    let g = proto.graph.as_mut().ok_or_else(|| NliError::Model("the ONNX file has no graph".into()))?;
    let mut inits: HashMap<String, TensorProto> = std::mem::take(&mut g.initializer).into_iter().map(|t| (t.name.clone(), t)).collect();
    // a weight two labels read is converted once per label; the last one moves it
    let mut uses: HashMap<&str, usize> = HashMap::new();
    e.weights.values().for_each(|w| *uses.entry(w.from.as_str()).or_default() += 1);
    let mut tensors: HashMap<Identifier, Arc<Tensor>> = HashMap::with_capacity(e.weights.len() + e.inline.len());
    for (label, w) in &e.weights {
        let left = uses.get_mut(w.from.as_str()).expect("counted above");
        *left -= 1;
        let last = *left == 0;
        let t = match folded.get(&w.from) {
            Some(_) if last => folded.remove(&w.from),
            Some(t) => Some(t.clone()),
            None => {
                let tp = if last { inits.remove(&w.from) } else { inits.get(&w.from).cloned() };
                tp.map(|tp| onnx_tensor(&tp)).transpose().map_err(|x| err(&format!("initializer {:?}", w.from), &x))?
            }
        };
        let t = t.ok_or_else(|| NliError::Model(format!("the embedded graph reads initializer {:?}, which the file does not have", w.from)))?;
        let t = t.into_shape(&w.shape).map_err(|x| err(&format!("initializer {:?}", w.from), &x))?;
        tensors.insert(Identifier::from(label.as_str()), Arc::new(t));
    }
    for (label, h) in &e.inline {
        let bytes = unhex(h).ok_or_else(|| NliError::Model(format!("the embedded graph: tensor {label:?} is not hex")))?;
        let t = tract_nnef::tensors::read_tensor(&bytes[..]).map_err(|x| err(&format!("tensor {label:?}"), &x))?;
        tensors.insert(Identifier::from(label.as_str()), Arc::new(t));
    }
    let doc = tract_nnef::ast::parse::parse_document(&e.nnef).map_err(|x| err("graph.nnef", &x))?;
    let pm = tract_nnef::ProtoModel { doc, tensors, quantization: None, resources: HashMap::new() };
    let mut m = framework().translate(&pm, TypedModel::default()).map_err(|(_, x)| err("translating", &x))?;
    // decluttered when it was compiled: the codegen pass is what `into_optimized` would still do
    m.optimize().map_err(|x| err("optimising", &x))?;
    Ok(m)
}

/// Compile `model`'s graph and return the file with it embedded (`meetcite graph`). `model` carries
/// no graph ([`strip`]ped); `fingerprint` is its [`fingerprint`], `folded` the file after the int8
/// fold and `decluttered` the graph tract builds from it, as the loader would.
pub(crate) fn embed(model: &[u8], fingerprint: String, folded: &ModelProto, decluttered: &TypedModel) -> Result<Vec<u8>, NliError> {
    let err = |what: &str, e: &dyn std::fmt::Display| NliError::Model(format!("compiling the graph: {what}: {e:#}"));
    // Short node names: the ONNX exporter's (`/layer.0/attention/output/LayerNorm/...`) were two
    // thirds of the text (95 -> 32 kB, so the file grows by 49 kB instead of 95), and the first
    // load in wasm parses and translates it 10-20 ms faster. The graph's inputs and outputs keep
    // theirs; `was` maps a new name back, for the weights below.
    let mut short = decluttered.clone();
    let keep: std::collections::HashSet<usize> = short.inputs.iter().chain(&short.outputs).map(|o| o.node).collect();
    let mut was: HashMap<String, String> = HashMap::new();
    for n in short.nodes.iter_mut().filter(|n| !keep.contains(&n.id)) {
        let name = format!("n{}", n.id);
        was.insert(name.clone(), std::mem::replace(&mut n.name, name));
    }
    short.outlet_labels.retain(|o, _| keep.contains(&o.node));
    let nnef = framework();
    let pm = tract_nnef::ser::to_proto_model(&nnef, &short).map_err(|x| err("NNEF form", &x))?;
    let mut text = Vec::new();
    tract_nnef::ast::dump::Dumper::new(&nnef, &mut text).document(&pm.doc).map_err(|x| err("graph.nnef", &x))?;
    let text = String::from_utf8(text).map_err(|x| err("graph.nnef", &x))?;
    // the initializers as tract reads them, each NNEF tensor compared with all of them (build time)
    let g = folded.graph.as_ref().ok_or_else(|| NliError::Model("the ONNX file has no graph".into()))?;
    let mut inits: Vec<(&str, Tensor)> = Vec::with_capacity(g.initializer.len());
    for t in &g.initializer {
        inits.push((t.name.as_str(), onnx_tensor(t).map_err(|x| err(&format!("initializer {:?}", t.name), &x))?));
    }
    let same = |a: &Tensor, b: &Tensor| a.datum_type() == b.datum_type() && a.len() == b.len() && a.clone().into_shape(b.shape()).is_ok_and(|a| &a == b);
    let mut weights = BTreeMap::new();
    let mut inline = BTreeMap::new();
    let mut inline_bytes = 0;
    for (label, t) in &pm.tensors {
        let hits: Vec<&str> = inits.iter().filter(|(_, i)| same(i, t)).map(|(n, _)| *n).collect();
        // by name first (tract labels a weight `name.0`), else the only initializer with these
        // values; two with equal values (zero biases, say) could swap after a retrain, so those
        // are inlined instead
        let label_was = was.get(label.0.as_str()).unwrap_or(&label.0);
        let named = hits.iter().find(|n| label_was == **n || *label_was == format!("{n}.0"));
        match named.or(if hits.len() == 1 { hits.first() } else { None }) {
            Some(from) => {
                weights.insert(label.0.to_string(), Weight { from: from.to_string(), shape: t.shape().to_vec() });
            }
            None => {
                let mut dat = Vec::new();
                tract_nnef::tensors::write_tensor(&mut dat, t).map_err(|x| err(&format!("tensor {:?}", label.0), &x))?;
                inline_bytes += dat.len();
                inline.insert(label.0.to_string(), hex(&dat));
            }
        }
    }
    if inline_bytes > MAX_INLINE_BYTES {
        return Err(NliError::Model(format!(
            "compiling the graph: {inline_bytes} bytes of its tensors are no initializer of the file (at most {MAX_INLINE_BYTES}); this model does not fit an embedded graph"
        )));
    }
    let e = Embedded { format: FORMAT, fingerprint, tract: TRACT.into(), nnef: text, weights, inline };
    let json = serde_json::to_string(&e).map_err(|x| err("JSON", &x))?;
    // ModelProto field 14, `repeated StringStringEntryProto metadata_props` ({1: key, 2: value}):
    // protobuf allows a repeated field's entries anywhere in the message, so one appended at the
    // end leaves every byte of the file before it as it was (weights included)
    let mut entry = Vec::new();
    put_field(&mut entry, 1, KEY.as_bytes());
    put_field(&mut entry, 2, json.as_bytes());
    let mut out = model.to_vec();
    put_field(&mut out, 14, &entry);
    Ok(out)
}

/// The file without its embedded graph(s): every top-level field copied as it is but the
/// `metadata_props` entries under [`KEY`]. `None` when the bytes are not a protobuf message.
pub fn strip(model: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(model.len());
    let mut r = Reader::of(model, 0);
    loop {
        let start = r.pos();
        match r.next().ok()? {
            None => return Some(out),
            Some((14, Value::Bytes(entry, _))) if is_graph_entry(entry) => {}
            Some(_) => out.extend_from_slice(&model[start..r.pos()]),
        }
    }
}

/// A `StringStringEntryProto` whose key is [`KEY`].
fn is_graph_entry(entry: &[u8]) -> bool {
    let mut r = Reader::of(entry, 0);
    while let Ok(Some((field, v))) = r.next() {
        match v {
            Value::Bytes(key, _) if field == 1 => return key == KEY.as_bytes(),
            Value::Bytes(..) => {}
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let b: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert!(unhex("0g").is_none());
        assert!(unhex("abc").is_none());
    }

    #[test]
    fn strip_takes_out_the_entry_embed_appended_and_nothing_else() {
        // a message with a varint field, a metadata entry of another key and one of ours
        let mut m = vec![0x08, 0x07];
        let mut other = Vec::new();
        put_field(&mut other, 1, b"producer");
        put_field(&mut other, 2, b"x");
        put_field(&mut m, 14, &other);
        let mut ours = Vec::new();
        put_field(&mut ours, 1, KEY.as_bytes());
        put_field(&mut ours, 2, b"{}");
        let mut with = m.clone();
        put_field(&mut with, 14, &ours);
        assert_eq!(strip(&with).unwrap(), m);
        assert_eq!(strip(&m).unwrap(), m);
        // a cut-off message is not one
        assert!(strip(&with[..with.len() - 1]).is_none());
    }

    #[test]
    fn a_sampled_weight_byte_changes_the_fingerprint() {
        let cfg: NliConfig = serde_json::from_str(r#"{"id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"}}"#).unwrap();
        let mut p = ModelProto::default();
        let w = TensorProto { name: "w".into(), dims: vec![64, 64], data_type: 1, raw_data: vec![1; 64 * 64 * 4], ..Default::default() };
        p.graph = Some(tract_onnx::pb::GraphProto { initializer: vec![w], ..Default::default() });
        let a = fingerprint(&p, &cfg);
        p.graph.as_mut().unwrap().initializer[0].raw_data[256] = 2;
        assert_ne!(fingerprint(&p, &cfg), a);
        let mut cfg2 = cfg.clone();
        cfg2.max_length = 128;
        assert_ne!(fingerprint(&p, &cfg2), fingerprint(&p, &cfg));
    }

    #[test]
    fn fnv_pieces_do_not_run_together() {
        let (mut a, mut b) = (Fnv(1), Fnv(1));
        a.str("ab");
        a.str("c");
        b.str("a");
        b.str("bc");
        assert_ne!(a.0, b.0);
    }
}
