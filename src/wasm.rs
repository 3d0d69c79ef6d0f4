//! JavaScript bindings (feature `wasm`), built with `wasm-bindgen`.
//!
//! Conventions at the boundary:
//! * Structures cross as plain JS objects with **camelCase** keys (`textStart`, `meetingId`).
//!   Inputs accept camelCase or snake_case keys. A chunk list may also be given as a JSON
//!   *string*: that is the file format, read exactly as the CLI reads it.
//! * Offsets are **UTF-16 code units** (JS string indices) in every JS object, in and out; inside
//!   Rust they are UTF-8 bytes. JSON strings keep the file convention (UTF-8 bytes). All
//!   conversions go through [`Utf16`], the one place that walks strings for it.
//! * Failures throw a JS `Error` whose `code` property is the stable code of the core error
//!   (`invalid_json`, `no_json`, `model`, ...) and whose `message` is its Display text.
//! * `console_error_panic_hook` is installed on load; the core is written not to panic.

use crate::answer::ParsedAnswer;
use crate::context::{self, Chunk, Context, ContextOptions, Source};
use crate::nli::NliModel;
use crate::quote::{self, MatchOptions, QuoteMatch};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

// ---------------------------------------------------------------------------------------------
// Errors

/// A JS `Error` with a stable `code` property.
fn js_error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(code));
    e.into()
}

macro_rules! core_err {
    ($e:expr) => {{
        let e = $e;
        js_error(e.code(), &e.to_string())
    }};
}

// ---------------------------------------------------------------------------------------------
// Offsets: the single place that converts between UTF-8 bytes and UTF-16 code units.

/// Offset conversion over one string. Every conversion in this module goes through here.
struct Utf16;

impl Utf16 {
    /// Convert UTF-8 byte offsets into `text` to UTF-16 code units, in place. Offsets past the
    /// end clamp to the end; offsets inside a character round down to its start.
    fn from_bytes(text: &str, offsets: &mut [&mut usize]) {
        Self::walk(text, offsets, true).expect("byte -> utf16 never fails");
    }

    /// Convert UTF-16 code unit offsets into `text` to UTF-8 bytes, in place. An offset past
    /// the end or between the halves of a surrogate pair is an error.
    fn to_bytes(text: &str, offsets: &mut [&mut usize]) -> Result<(), usize> {
        Self::walk(text, offsets, false)
    }

    /// One pass over the string for all offsets (sorted first).
    fn walk(text: &str, offsets: &mut [&mut usize], from_bytes: bool) -> Result<(), usize> {
        if offsets.is_empty() {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..offsets.len()).collect();
        order.sort_by_key(|&i| *offsets[i]);
        let mut results = vec![0usize; offsets.len()];
        let mut k = 0;
        let (mut b, mut u) = (0usize, 0usize);
        for c in text.chars() {
            let (cb, cu) = (c.len_utf8(), c.len_utf16());
            while k < order.len() {
                let want = *offsets[order[k]];
                let here = if from_bytes { b } else { u };
                let step = if from_bytes { cb } else { cu };
                if want < here + step {
                    if want != here && !from_bytes {
                        return Err(want); // inside a surrogate pair
                    }
                    results[order[k]] = if from_bytes { u } else { b };
                    k += 1;
                } else {
                    break;
                }
            }
            b += cb;
            u += cu;
        }
        while k < order.len() {
            let want = *offsets[order[k]];
            let end = if from_bytes { b } else { u };
            if !from_bytes && want > end {
                return Err(want);
            }
            results[order[k]] = if from_bytes { u } else { b };
            k += 1;
        }
        for (o, r) in offsets.iter_mut().zip(results) {
            **o = r;
        }
        Ok(())
    }
}

/// Chunk offsets (turn boundaries, word offsets): bytes -> UTF-16.
fn chunk_to_js_offsets(c: &mut Chunk) {
    let mut offs: Vec<&mut usize> = Vec::new();
    if let Some(turns) = c.turns.as_mut() {
        for t in turns.iter_mut() {
            offs.push(&mut t.text_start);
            offs.push(&mut t.text_end);
        }
    }
    if let Some(words) = c.words.as_mut() {
        for w in words.iter_mut() {
            if let Some(o) = w.offset.as_mut() {
                offs.push(o);
            }
        }
    }
    Utf16::from_bytes(&c.text, &mut offs);
}

/// Chunk offsets: UTF-16 -> bytes (JS objects).
fn chunk_from_js_offsets(index: usize, c: &mut Chunk) -> Result<(), JsValue> {
    let mut offs: Vec<&mut usize> = Vec::new();
    if let Some(turns) = c.turns.as_mut() {
        for t in turns.iter_mut() {
            offs.push(&mut t.text_start);
            offs.push(&mut t.text_end);
        }
    }
    if let Some(words) = c.words.as_mut() {
        for w in words.iter_mut() {
            if let Some(o) = w.offset.as_mut() {
                offs.push(o);
            }
        }
    }
    Utf16::to_bytes(&c.text, &mut offs).map_err(|bad| {
        js_error(
            "invalid_chunk",
            &format!("chunk {index} ({}): offset {bad} is not a UTF-16 boundary of the text (past the end or inside a surrogate pair)", c.id),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Key case and (de)serialisation

fn snake_to_camel(k: &str) -> String {
    if !k.contains('_') {
        return k.to_string();
    }
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for (i, c) in k.chars().enumerate() {
        if c == '_' && i > 0 {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn camel_to_snake(k: &str) -> String {
    let mut out = String::with_capacity(k.len() + 4);
    let mut prev_lower = false;
    for c in k.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    out
}

/// Keys whose values are free-form data: never renamed (a JSON schema, label maps).
const OPAQUE: &[&str] = &["schema", "id2label", "id2Label"];

fn rekey(v: Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                let nk = f(&k);
                let nv = if OPAQUE.contains(&k.as_str()) { v } else { rekey(v, f) };
                out.insert(nk, nv);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|v| rekey(v, f)).collect()),
        other => other,
    }
}

/// Rust value -> plain JS object with camelCase keys.
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    let value = serde_json::to_value(v).map_err(|e| js_error("internal", &e.to_string()))?;
    let value = rekey(value, &snake_to_camel);
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| js_error("internal", &e.to_string()))
}

/// JS value -> serde_json value with snake_case keys. `undefined`/`null` become `null`.
fn js_to_json(v: &JsValue) -> Result<Value, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Value::Null);
    }
    let value: Value = serde_wasm_bindgen::from_value(v.clone()).map_err(|e| js_error("invalid_input", &e.to_string()))?;
    Ok(rekey(value, &camel_to_snake))
}

/// JS value -> Rust value; the message names the field path of the first defect.
fn from_js<T: DeserializeOwned>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    let value = js_to_json(v)?;
    serde_path_to_error::deserialize(value).map_err(|e| js_error("invalid_input", &format!("{what}: at {}: {}", e.path(), e.inner())))
}

/// Options objects: absent means defaults.
fn opts_from_js<T: DeserializeOwned + Default>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    from_js(v, what)
}

/// Chunks from a JSON string (file format, UTF-8 byte offsets) or a JS array / `{chunks}` object
/// (UTF-16 offsets). Validated by the core either way.
fn chunks_from_js(v: &JsValue) -> Result<Vec<Chunk>, JsValue> {
    if let Some(s) = v.as_string() {
        return context::parse_chunks(&s).map_err(|e| core_err!(e));
    }
    let mut value = js_to_json(v)?;
    if let Value::Object(mut m) = value {
        value = m.remove("chunks").unwrap_or(Value::Null);
    }
    let mut chunks: Vec<Chunk> = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let idx = path.split(|c| c == '[' || c == ']').nth(1).and_then(|s| s.parse::<usize>().ok());
        match idx {
            Some(index) => js_error("invalid_chunk", &format!("chunk {index}: at {path}: {}", e.inner())),
            None => js_error("invalid_json", &format!("chunks: at {path}: {}", e.inner())),
        }
    })?;
    for (i, c) in chunks.iter_mut().enumerate() {
        chunk_from_js_offsets(i, c)?;
    }
    // the core validates (ids, dates, times, offsets on char boundaries, duplicates)
    let json = serde_json::to_string(&chunks).map_err(|e| js_error("internal", &e.to_string()))?;
    context::parse_chunks(&json).map_err(|e| core_err!(e))
}

/// Sources (`[{label, chunk}]` as `buildContext` returns them) from JS.
fn sources_from_js(v: &JsValue) -> Result<Vec<Source>, JsValue> {
    let mut value = js_to_json(v)?;
    if let Value::Object(mut m) = value {
        value = m.remove("sources").unwrap_or(Value::Null);
    }
    let mut sources: Vec<Source> =
        serde_path_to_error::deserialize(value).map_err(|e| js_error("invalid_input", &format!("sources: at {}: {}", e.path(), e.inner())))?;
    for (i, s) in sources.iter_mut().enumerate() {
        chunk_from_js_offsets(i, &mut s.chunk)?;
        s.chunk.validate().map_err(|m| js_error("invalid_chunk", &format!("source {i} ({}): {m}", s.label)))?;
    }
    Ok(sources)
}

fn sources_to_js_offsets(sources: &mut [Source]) {
    for s in sources {
        chunk_to_js_offsets(&mut s.chunk);
    }
}

// ---------------------------------------------------------------------------------------------
// API

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Validate chunks (JSON string or array) and return them as JS objects (UTF-16 offsets).
#[wasm_bindgen(js_name = parseChunks)]
pub fn parse_chunks(chunks: JsValue) -> Result<JsValue, JsValue> {
    let mut chunks = chunks_from_js(&chunks)?;
    for c in chunks.iter_mut() {
        chunk_to_js_offsets(c);
    }
    to_js(&chunks)
}

/// Build the prompt and the numbered sources: `{prompt, instructions, schema, sources, dropped}`.
/// `opts`: `{order: "relevance"|"date", viewer, maxTokens, question}`.
#[wasm_bindgen(js_name = buildContext)]
pub fn build_context(chunks: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
    let chunks = chunks_from_js(&chunks)?;
    let opts: ContextOptions = opts_from_js(&opts, "options")?;
    let mut ctx: Context = context::build_context(&chunks, &opts);
    sources_to_js_offsets(&mut ctx.sources);
    to_js(&ctx)
}

/// Parse an LLM answer: `{claims: [{index, text, source, quote}], errors: [...]}`.
#[wasm_bindgen(js_name = parseAnswer)]
pub fn parse_answer(text: &str) -> Result<JsValue, JsValue> {
    let parsed: ParsedAnswer = crate::answer::parse_answer(text).map_err(|e| core_err!(e))?;
    to_js(&parsed)
}

/// Align `quote` inside `text`. `start`/`end` are UTF-16 indices into `text`
/// (`text.slice(m.start, m.end)` is the matched span). `opts`: `{threshold, maxGap}`.
#[wasm_bindgen(js_name = matchQuote)]
pub fn match_quote(text: &str, quote: &str, opts: JsValue) -> Result<JsValue, JsValue> {
    let opts: MatchOptions = opts_from_js(&opts, "options")?;
    let mut m: QuoteMatch = quote::match_quote(text, quote, &opts);
    Utf16::from_bytes(text, &mut [&mut m.start, &mut m.end]);
    to_js(&m)
}

/// The NLI model, loaded once from bytes and reused for every verification.
#[wasm_bindgen]
pub struct Verifier {
    model: NliModel,
}

#[wasm_bindgen]
impl Verifier {
    /// `Verifier.load({model, tokenizer, config})`: each a `Uint8Array`/`ArrayBuffer` (the ONNX
    /// file, `tokenizer.json`, `config.json`). Async so that callers can `await` it.
    #[wasm_bindgen]
    pub async fn load(files: JsValue) -> Result<Verifier, JsValue> {
        let get = |name: &str| -> Result<Vec<u8>, JsValue> {
            let v = js_sys::Reflect::get(&files, &JsValue::from_str(name)).map_err(|_| js_error("invalid_input", "load() takes {model, tokenizer, config}"))?;
            if v.is_undefined() || v.is_null() {
                return Err(js_error("invalid_input", &format!("load(): `{name}` is missing")));
            }
            if let Some(s) = v.as_string() {
                return Ok(s.into_bytes());
            }
            if v.is_instance_of::<js_sys::ArrayBuffer>() {
                return Ok(js_sys::Uint8Array::new(&v).to_vec());
            }
            if v.is_instance_of::<js_sys::Uint8Array>() {
                return Ok(js_sys::Uint8Array::from(v).to_vec());
            }
            if js_sys::ArrayBuffer::is_view(&v) {
                let view: js_sys::Object = v.into();
                let buf = js_sys::Reflect::get(&view, &"buffer".into())?;
                let off = js_sys::Reflect::get(&view, &"byteOffset".into())?.as_f64().unwrap_or(0.0) as u32;
                let len = js_sys::Reflect::get(&view, &"byteLength".into())?.as_f64().unwrap_or(0.0) as u32;
                return Ok(js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, off, len).to_vec());
            }
            Err(js_error("invalid_input", &format!("load(): `{name}` must be a Uint8Array, ArrayBuffer or string")))
        };
        let (model, tokenizer, config) = (get("model")?, get("tokenizer")?, get("config")?);
        let model = NliModel::from_bytes(&model, &tokenizer, &config).map_err(|e| core_err!(e))?;
        Ok(Verifier { model })
    }

    /// The model's config (name, maxLength, thresholds, labels).
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js(self.model.config())
    }

    /// Score (premise, hypothesis) pairs: `[{entailment, neutral, contradiction}]`.
    pub fn score(&self, pairs: JsValue) -> Result<JsValue, JsValue> {
        let pairs: Vec<(String, String)> = from_js(&pairs, "pairs")?;
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let probs = self.model.score(&refs).map_err(|e| core_err!(e))?;
        to_js(&probs)
    }
}
