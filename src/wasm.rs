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
use crate::metrics::Gold;
use crate::nli::NliModel;
use crate::quote::{self, MatchOptions, QuoteMatch};
use crate::render::RenderOptions;
use crate::verify::{Entail, Policy, Report, VerifyOptions};
use serde::de::DeserializeOwned;
use serde::Deserialize;
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
        // this direction has no error case
        let _ = Self::walk(text, offsets, true);
    }

    /// Convert UTF-16 code unit offsets into `text` to UTF-8 bytes, in place. An offset past
    /// the end or between the halves of a surrogate pair is an error.
    fn to_bytes(text: &str, offsets: &mut [&mut usize]) -> Result<(), usize> {
        Self::walk(text, offsets, false)
    }

    /// One pass over the string for all offsets (sorted first).
    fn walk(text: &str, offsets: &mut [&mut usize], from_bytes: bool) -> Result<(), usize> {
        // over the ASCII prefix, bytes and UTF-16 units coincide: those offsets stay as they are
        let ascii = text.bytes().position(|b| !b.is_ascii()).unwrap_or(text.len());
        let mut order: Vec<usize> = (0..offsets.len()).filter(|&i| *offsets[i] > ascii).collect();
        if order.is_empty() {
            return Ok(());
        }
        order.sort_by_key(|&i| *offsets[i]);
        let mut results: Vec<usize> = offsets.iter().map(|o| **o).collect();
        let mut k = 0;
        let (mut b, mut u) = (ascii, ascii);
        for c in text[ascii..].chars() {
            if k == order.len() {
                break;
            }
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
///
/// The value crosses as `JSON.stringify` text parsed by serde_json (nesting limit 128), not by a
/// recursive walk of the JS object: a deeply nested value (a hostile transcript's unknown field
/// nested 100 000 deep) overflowed the wasm stack that way, and after a wasm stack overflow every
/// later call of the module fails ("memory access out of bounds") until the page reloads. Now it
/// is an `invalid_input` error, as is a cyclic value. Lone surrogates, which `JSON.stringify`
/// writes as `\udXXX` escapes, become U+FFFD, as in strings passed directly.
fn js_to_json(v: &JsValue) -> Result<Value, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Value::Null);
    }
    let not_json = |why: &str| js_error("invalid_input", &format!("the input is not JSON data: {why}"));
    let text = js_sys::JSON::stringify(v).map_err(|e| {
        let why = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_else(|| "JSON.stringify failed".into());
        not_json(&why)
    })?;
    let text = text.as_string().ok_or_else(|| not_json("a function, symbol or undefined"))?;
    let text = context::replace_lone_surrogate_escapes(&text);
    let value: Value = serde_json::from_str(&text).map_err(|e| not_json(&e.to_string()))?;
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

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** An `Error` thrown by meetcite; `code` is stable (`invalid_json`, `invalid_chunk`, `no_json`, `model`, ...). */
export interface MeetciteError extends Error { code: string }
/** Offsets are UTF-16 code units into the chunk `text` (JS string indices). */
export interface Turn { speaker: string; start: number; end: number; textStart: number; textEnd: number }
export interface Word { word: string; start: number; end: number; offset?: number }
export interface Chunk {
  id: string; meetingId: string; meetingTitle: string; /** YYYY-MM-DD */ date: string;
  start: number; end: number; speakers?: string[]; text: string; recordingUrl?: string;
  turns?: Turn[]; words?: Word[]; acl?: string[]; score?: number;
}
export interface ContextOptions { order?: "relevance" | "date"; viewer?: string; maxTokens?: number; question?: string }
export interface Source { label: string; chunk: Chunk }
export interface Context { prompt: string; instructions: string; schema: object; sources: Source[]; dropped: string[] }
export interface Claim { index: number; text: string; source: number; quote: string }
export interface ClaimError { index: number; field: string; problem: string; text?: string | null; sourceRaw?: string | null }
export interface ParsedAnswer { claims: Claim[]; errors: ClaimError[] }
export interface MatchOptions { threshold?: number; maxGap?: number }
export interface QuoteMatch {
  matched: boolean; score: number; distance: number; /** UTF-16 */ start: number; /** UTF-16 */ end: number;
  missingNumbers: string[]; maxGap: number; stitched: boolean; tooLong: boolean;
}
export interface VerifyOptions { policy?: "warn" | "drop" | "feedback"; threshold?: number; maxGap?: number; matching?: MatchOptions; /** token budget of the NLI context premise (0 or absent: the model's maximum); smaller is faster */ premiseTokens?: number; /** scores of pairs computed elsewhere (see `Verifier#plan`) */ scores?: { premise: string; hypothesis: string; probs: Probs }[] }
export interface Probs { entailment: number; neutral: number; contradiction: number }
export interface Reason { code: string; message: string }
export interface DeepLink { label: string; meetingId: string; seconds: number; url: string | null }
export type Status = "supported" | "flagged" | "unknown_source" | "unparsable";
export interface ClaimVerdict {
  index: number; text: string; source: string | null; status: Status; reasons: Reason[]; quote: string;
  quoteScore: number | null; /** [start, end], UTF-16 into the source chunk's text */ span: [number, number] | null;
  matchedText: string | null; speaker: string | null; time: number | null; timeSource: string | null;
  nli: { context: Probs; quote: Probs } | null; link: DeepLink | null; chunkId: string | null;
  meetingId: string | null; meetingTitle: string | null; date: string | null;
}
export interface Report {
  policy: "warn" | "drop" | "feedback"; claims: ClaimVerdict[];
  counts: { supported: number; flagged: number; unknownSource: number; unparsable: number };
  dropped: ClaimVerdict[]; conflicts: { older: object; newer: object; message: string }[];
  abstain: boolean; abstainMessage: string; feedback: string | null; nliUsed: boolean;
}
export interface RenderOptions { hideFlagged?: boolean }
export interface Gold { times?: (number | null)[]; answerable?: boolean }
export interface Metrics {
  claims: number; citationRecall: number; citationPrecision: number; quoteMatchRate: number;
  timestampMae: number | null; timestampN: number; abstained: boolean; abstentionCorrect: boolean | null;
}
export interface ModelFiles { model: Uint8Array | ArrayBuffer; tokenizer: Uint8Array | ArrayBuffer | string; config: Uint8Array | ArrayBuffer | string }
"#;

// wasm-ld treats a module that never calls its constructors itself as a "command" and wraps
// every export in a call to `__wasm_call_ctors` (tract registers its ops and kernels through
// `inventory` constructors): ~1,600 wrapped exports, each call into meetcite re-running them.
// Calling them once here, at instantiation, turns the wrapping off (see the `inventory` docs).
#[cfg(target_family = "wasm")]
extern "C" {
    fn __wasm_call_ctors();
}

#[wasm_bindgen(start)]
pub fn start() {
    #[cfg(target_family = "wasm")]
    // SAFETY: called once, by wasm-bindgen's start hook right after instantiation, before any
    // other export; the constructors only register static data.
    unsafe {
        __wasm_call_ctors();
    }
    console_error_panic_hook::set_once();
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Validate chunks (JSON string or array) and return them as JS objects (UTF-16 offsets).
#[wasm_bindgen(js_name = parseChunks, unchecked_return_type = "Chunk[]")]
pub fn parse_chunks(#[wasm_bindgen(unchecked_param_type = "Chunk[] | { chunks: Chunk[] } | string")] chunks: JsValue) -> Result<JsValue, JsValue> {
    let mut chunks = chunks_from_js(&chunks)?;
    for c in chunks.iter_mut() {
        chunk_to_js_offsets(c);
    }
    to_js(&chunks)
}

/// Build the prompt and the numbered sources: `{prompt, instructions, schema, sources, dropped}`.
/// `opts`: `{order: "relevance"|"date", viewer, maxTokens, question}`.
#[wasm_bindgen(js_name = buildContext, unchecked_return_type = "Context")]
pub fn build_context(
    #[wasm_bindgen(unchecked_param_type = "Chunk[] | { chunks: Chunk[] } | string")] chunks: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ContextOptions")] opts: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let chunks = chunks_from_js(&chunks)?;
    let opts: ContextOptions = opts_from_js(&opts.unwrap_or(JsValue::UNDEFINED), "options")?;
    let mut ctx: Context = context::build_context(&chunks, &opts);
    sources_to_js_offsets(&mut ctx.sources);
    to_js(&ctx)
}

/// Parse an LLM answer: `{claims: [{index, text, source, quote}], errors: [...]}`.
#[wasm_bindgen(js_name = parseAnswer, unchecked_return_type = "ParsedAnswer")]
pub fn parse_answer(text: &str) -> Result<JsValue, JsValue> {
    let parsed: ParsedAnswer = crate::answer::parse_answer(text).map_err(|e| core_err!(e))?;
    to_js(&parsed)
}

/// Align `quote` inside `text`. `start`/`end` are UTF-16 indices into `text`
/// (`text.slice(m.start, m.end)` is the matched span). `opts`: `{threshold, maxGap}`.
#[wasm_bindgen(js_name = matchQuote, unchecked_return_type = "QuoteMatch")]
pub fn match_quote(text: &str, quote: &str, #[wasm_bindgen(unchecked_param_type = "MatchOptions")] opts: Option<JsValue>) -> Result<JsValue, JsValue> {
    let opts: MatchOptions = opts_from_js(&opts.unwrap_or(JsValue::UNDEFINED), "options")?;
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
    /// `new Verifier({model, tokenizer, config})`: each a `Uint8Array`/`ArrayBuffer` (the ONNX
    /// file, `tokenizer.json`, `config.json`); loads synchronously (seconds for a 20 MB model).
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "ModelFiles")] files: JsValue) -> Result<Verifier, JsValue> {
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

    /// `await Verifier.load({model, tokenizer, config})`: the same as the constructor, as a
    /// promise (rejected with a coded `Error`). Run it in a Web Worker to keep pages responsive.
    #[wasm_bindgen(unchecked_return_type = "Promise<Verifier>")]
    pub fn load(#[wasm_bindgen(unchecked_param_type = "ModelFiles")] files: JsValue) -> js_sys::Promise {
        match Verifier::new(files) {
            Ok(v) => js_sys::Promise::resolve(&JsValue::from(v)),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// The model's config (name, maxLength, thresholds, labels).
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "{ name: string; maxLength: number; id2label: Record<string, string>; inputs: string[]; thresholds: { entailment: number; contradiction: number } }"
    )]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js(self.model.config())
    }

    /// Verify an answer with quote matching and NLI; see the free function [`verify`].
    #[wasm_bindgen(unchecked_return_type = "Report")]
    pub fn verify(
        &self,
        answer: &str,
        #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
        #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        verify_with(answer, &sources, &opts.unwrap_or(JsValue::UNDEFINED), Some(&self.model), false)
    }

    /// The `[premise, hypothesis]` pairs `verify` would score for this answer, without scoring
    /// them: a worker pool splits them, scores them with `score` in parallel, and passes the
    /// results back as `verify(answer, sources, {...opts, scores: [{premise, hypothesis, probs}]})`,
    /// which then gives the same report as a plain `verify`.
    #[wasm_bindgen(unchecked_return_type = "[premise: string, hypothesis: string][]")]
    pub fn plan(
        &self,
        answer: &str,
        #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
        #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        verify_with(answer, &sources, &opts.unwrap_or(JsValue::UNDEFINED), Some(&self.model), true)
    }

    /// Score (premise, hypothesis) pairs: `[{entailment, neutral, contradiction}]`.
    #[wasm_bindgen(unchecked_return_type = "Probs[]")]
    pub fn score(&self, #[wasm_bindgen(unchecked_param_type = "[premise: string, hypothesis: string][]")] pairs: JsValue) -> Result<JsValue, JsValue> {
        let pairs: Vec<(String, String)> = from_js(&pairs, "pairs")?;
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let probs = self.model.score(&refs).map_err(|e| core_err!(e))?;
        to_js(&probs)
    }
}

/// Verification options at the JS boundary: `{policy: "warn"|"drop"|"feedback", threshold, maxGap}`
/// (`matching: {threshold, maxGap}` is accepted too).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsVerifyOptions {
    policy: Policy,
    matching: Option<MatchOptions>,
    threshold: Option<f64>,
    max_gap: Option<usize>,
    premise_tokens: Option<usize>,
    /// Scores computed elsewhere (another worker): used instead of running the model on those pairs.
    scores: Option<Vec<crate::verify::ScoredPair>>,
}

/// Spans of a report's verdicts: bytes -> UTF-16 of their chunk's text.
fn report_to_js_offsets(report: &mut Report, sources: &[Source]) {
    for v in report.claims.iter_mut().chain(report.dropped.iter_mut()) {
        let Some((mut start, mut end)) = v.span else {
            continue;
        };
        let by_id = v.chunk_id.as_deref().and_then(|id| sources.iter().find(|s| s.chunk.id == id));
        let by_label = || v.source.as_deref().and_then(|l| crate::answer::parse_source(l).ok()).and_then(|n| context::lookup(sources, n));
        if let Some(s) = by_id.or_else(by_label) {
            Utf16::from_bytes(&s.chunk.text, &mut [&mut start, &mut end]);
            v.span = Some((start, end));
        }
    }
}

fn verify_with(answer: &str, sources: &JsValue, opts: &JsValue, nli: Option<&dyn Entail>, plan_only: bool) -> Result<JsValue, JsValue> {
    let sources = sources_from_js(sources)?;
    let o: JsVerifyOptions = opts_from_js(opts, "options")?;
    let mut matching = o.matching.unwrap_or_default();
    if let Some(t) = o.threshold {
        matching.threshold = t;
    }
    if let Some(g) = o.max_gap {
        matching.max_gap = g;
    }
    let pre = match (nli, o.scores) {
        (Some(inner), Some(scores)) => Some(crate::verify::Precomputed::new(inner, scores)),
        _ => None,
    };
    let vo = VerifyOptions { policy: o.policy, matching, nli: pre.as_ref().map(|p| p as &dyn Entail).or(nli), premise_tokens: o.premise_tokens.unwrap_or(0) };
    if plan_only {
        let pairs = crate::verify::nli_plan(answer, &sources, &vo).map_err(|e| core_err!(e))?;
        return to_js(&pairs);
    }
    let mut report = crate::verify::verify(answer, &sources, &vo).map_err(|e| core_err!(e))?;
    report_to_js_offsets(&mut report, &sources);
    to_js(&report)
}

/// Verify an LLM answer against the `sources` that `buildContext` returned (quote matching,
/// numbers, speakers, history; no NLI). `Verifier#verify` adds the NLI check. The report's
/// `span` of each claim is `[start, end]` in UTF-16 units of its source chunk's text.
#[wasm_bindgen(unchecked_return_type = "Report")]
pub fn verify(
    answer: &str,
    #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
    #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    verify_with(answer, &sources, &opts.unwrap_or(JsValue::UNDEFINED), None, false)
}

/// Report -> Rust. Render and metrics never read spans, so they are taken as they come.
fn report_from_js(v: &JsValue) -> Result<Report, JsValue> {
    from_js(v, "report")
}

/// An HTML fragment for a report (every transcript/LLM string escaped). `opts`: `{hideFlagged}`.
#[wasm_bindgen(js_name = renderHtml)]
pub fn render_html(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RenderOptions")] opts: Option<JsValue>,
) -> Result<String, JsValue> {
    let report = report_from_js(&report)?;
    let opts: RenderOptions = opts_from_js(&opts.unwrap_or(JsValue::UNDEFINED), "options")?;
    Ok(crate::render::render_html(&report, &opts))
}

/// Markdown for a report. `opts`: `{hideFlagged}`.
#[wasm_bindgen(js_name = renderMarkdown)]
pub fn render_markdown(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RenderOptions")] opts: Option<JsValue>,
) -> Result<String, JsValue> {
    let report = report_from_js(&report)?;
    let opts: RenderOptions = opts_from_js(&opts.unwrap_or(JsValue::UNDEFINED), "options")?;
    Ok(crate::render::render_markdown(&report, &opts))
}

/// Score a report against gold data `{times: [seconds|null per claim], answerable}`.
#[wasm_bindgen(unchecked_return_type = "Metrics")]
pub fn metrics(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Gold")] gold: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let report = report_from_js(&report)?;
    let gold: Gold = opts_from_js(&gold.unwrap_or(JsValue::UNDEFINED), "gold")?;
    to_js(&crate::metrics::metrics(&report, &gold))
}

/// A deep link for a moment of a meeting: `{label, meetingId, seconds, url}`.
#[wasm_bindgen(js_name = deepLink, unchecked_return_type = "DeepLink")]
pub fn deep_link(title: &str, meeting_id: &str, date: &str, seconds: f64, speaker: Option<String>, recording_url: Option<String>) -> Result<JsValue, JsValue> {
    to_js(&crate::render::deep_link(title, meeting_id, date, seconds, speaker.as_deref(), recording_url.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_both_ways() {
        let t = "a😀é\u{301}b 🎉x";
        for (b, _) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
            let (mut x, mut y) = (b, t.len());
            Utf16::from_bytes(t, &mut [&mut x, &mut y]);
            assert_eq!(x, crate::text::byte_to_utf16(t, b));
            assert_eq!(y, t.encode_utf16().count());
            let mut back = x;
            Utf16::to_bytes(t, &mut [&mut back]).unwrap();
            assert_eq!(back, b);
        }
        // inside the surrogate pair of 😀 (units 1..3) and past the end
        assert_eq!(Utf16::to_bytes(t, &mut [&mut 2]), Err(2));
        assert_eq!(Utf16::to_bytes(t, &mut [&mut 99]), Err(99));
        // unsorted input keeps its order
        let (mut a, mut b) = (t.len(), 0);
        Utf16::from_bytes(t, &mut [&mut a, &mut b]);
        assert_eq!((a, b), (t.encode_utf16().count(), 0));
    }

    #[test]
    fn key_case() {
        assert_eq!(snake_to_camel("text_start"), "textStart");
        assert_eq!(snake_to_camel("id"), "id");
        assert_eq!(camel_to_snake("textStart"), "text_start");
        assert_eq!(camel_to_snake("text_start"), "text_start");
        assert_eq!(camel_to_snake("S1"), "S1");
        let v = rekey(serde_json::json!({"meeting_id": 1, "schema": {"additional_x": 1}}), &snake_to_camel);
        assert_eq!(v, serde_json::json!({"meetingId": 1, "schema": {"additional_x": 1}}));
    }
}
