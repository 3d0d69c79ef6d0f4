//! JavaScript bindings (feature `wasm`), built with `wasm-bindgen`. This module only converts:
//! every rule (parsing, validation, offsets, errors) is the core's.
//!
//! * Values are the core's types under their own (snake_case) field names, the names of the JSON
//!   file format; the TypeScript declarations are generated from those types (tsify).
//! * A JS object crosses as `JSON.stringify` text read by the core's JSON parsers, not by a
//!   recursive walk: a hostile, deeply nested value overflowed the wasm stack that way, and after
//!   a wasm stack overflow every later call fails until the page reloads. Cycles, `BigInt` and
//!   functions become `invalid_input` errors. Results go back through serde-wasm-bindgen.
//! * Offsets in JS objects are UTF-16 code units (JS string indices), in and out
//!   ([`PositionEncoding::Utf16`]); a chunk list given as a JSON *string* is a file, read exactly
//!   as the CLI reads it (UTF-8 bytes).
//! * Arguments are checked before they reach Rust: a wrong type is an `invalid_input` error, never
//!   a wasm trap. Failures throw a JS `Error` whose `code` is the core error's stable code.

use crate::chunk::{self, PositionEncoding};
use crate::context::{self, ContextOptions};
use crate::metrics::Gold;
use crate::nli::NliModel;
use crate::quote::MatchOptions;
use crate::render::RenderOptions;
use crate::report::Report;
use crate::stream::{StreamOptions, StreamVerifier};
use crate::verify::{Entail, Policy, Precomputed, ScoredPair};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

const JS: PositionEncoding = PositionEncoding::Utf16;

/// A JS `Error` with a stable `code` property.
fn js_error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("code"), &JsValue::from_str(code));
    e.into()
}

fn core_err(code: &str, e: impl std::fmt::Display) -> JsValue {
    js_error(code, &e.to_string())
}

fn invalid(message: String) -> JsValue {
    js_error("invalid_input", &message)
}

/// What a JS value is, for messages: `null`, `undefined`, `an array`, `a number`, ...
fn kind(v: &JsValue) -> String {
    if v.is_null() {
        "null".into()
    } else if js_sys::Array::is_array(v) {
        "an array".into()
    } else {
        match v.js_typeof().as_string().unwrap_or_default().as_str() {
            "undefined" => "undefined".into(),
            t @ "object" => format!("an {t}"),
            t => format!("a {t}"),
        }
    }
}

/// A string argument; anything else is `invalid_input` (wasm-bindgen's own `&str` conversion of a
/// number or object traps with "memory access out of bounds").
fn string_arg(v: &JsValue, what: &str) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| invalid(format!("{what} must be a string, got {}", kind(v))))
}

/// `JSON.stringify(v)`; `undefined` and `null` are `null`.
fn json_text(v: &JsValue) -> Result<String, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok("null".into());
    }
    let not_json = |why: String| invalid(format!("the input is not JSON data: {why}"));
    let text = js_sys::JSON::stringify(v).map_err(|e| not_json(e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default()))?;
    text.as_string().ok_or_else(|| not_json("a function, symbol or undefined".into()))
}

/// JS value -> Rust value; the message names the field path of the first defect.
fn from_js<T: DeserializeOwned>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    chunk::from_json(&json_text(v)?).map_err(|e| match e {
        chunk::InputError::Json { path, message } => invalid(format!("{what}: at {path}: {message}")),
        e => core_err(e.code(), e),
    })
}

/// Options objects: absent means defaults; anything but an object is an error.
fn opts_from_js<T: DeserializeOwned + Default>(v: Option<JsValue>, what: &str) -> Result<T, JsValue> {
    match v {
        None => Ok(T::default()),
        Some(v) if v.is_undefined() || v.is_null() => Ok(T::default()),
        Some(v) if !v.is_object() || js_sys::Array::is_array(&v) => Err(invalid(format!("{what} must be an object, got {}", kind(&v)))),
        Some(v) => from_js(&v, what),
    }
}

/// Rust value -> plain JS object (maps as objects, `None` as `null`).
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| core_err("internal", e))
}

/// Chunks: a JSON string (a file: UTF-8 byte offsets) or JS objects (UTF-16 offsets).
fn chunks_from_js(v: &JsValue) -> Result<Vec<chunk::Chunk>, JsValue> {
    let r = match v.as_string() {
        Some(s) => chunk::parse_chunks(&s),
        None if v.is_object() => chunk::parse_chunks_in(&json_text(v)?, JS),
        None => return Err(invalid(format!("chunks must be an array, {{chunks: [...]}} or a JSON string, got {}", kind(v)))),
    };
    r.map_err(|e| core_err(e.code(), e))
}

fn sources_from_js(v: &JsValue) -> Result<Vec<context::Source>, JsValue> {
    if !v.is_object() {
        return Err(invalid(format!("sources must be the `sources` of buildContext (an array), got {}", kind(v))));
    }
    context::parse_sources(&json_text(v)?, JS).map_err(|e| core_err(e.code(), e))
}

#[allow(clippy::redundant_static_lifetimes)] // the form wasm-bindgen documents for custom sections
#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** An `Error` thrown by meetcite; `code` is stable (`invalid_input`, `invalid_json`, `invalid_chunk`, `no_json`, `model`, ...). */
export interface MeetciteError extends Error { code: string }
/** The model files: the ONNX file, `tokenizer.json` and `config.json` (bytes, or the JSON files as text). */
export interface ModelFiles {
  model: Uint8Array | ArrayBuffer; tokenizer: Uint8Array | ArrayBuffer | string; config: Uint8Array | ArrayBuffer | string;
  /** "auto" (default): meetcite's own int8 encoder for the BERT files it recognises (the shipped model), tract otherwise; "tract": tract always */
  runtime?: "auto" | "tract";
}
/** One feature's share of a support score: `contribution` = weight x value, in log-odds. */
export interface Part { feature: string; value: number; contribution: number }
/** The support score of one claim (NLI and deterministic features, calibrated). */
export interface Support { score: number; supported: boolean; threshold: number; parts: Part[] }
/** `config.json` -> `support`: the fitted logistic regression and its decision threshold. */
export interface SupportConfig { weights: Record<string, number>; bias: number; threshold: number; windows?: number; fitted_on?: string; quote_first?: { weights: Record<string, number>; bias: number; threshold: number; margin: number } }
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
    chunks.iter_mut().for_each(|c| c.encode_offsets(JS));
    to_js(&chunks)
}

/// Read a speech-to-text transcript (WhisperX JSON, WebVTT, SRT, or chunk JSON) and chunk it:
/// `{format, chunks}` with UTF-16 offsets. `format`: `"auto"` (default) or a format name.
#[wasm_bindgen(js_name = chunkTranscript, unchecked_return_type = "Chunked")]
pub fn chunk_transcript(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ChunkOptions")] options: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] format: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let text = string_arg(&text, "the transcript")?;
    let format = format.filter(|f| !f.is_undefined() && !f.is_null()).map(|f| string_arg(&f, "format")).transpose()?;
    // required (the meeting id), so named `options`: scripts/fix-dts.mjs makes every `opts` optional
    let opts: crate::transcript::ChunkOptions = opts_from_js(Some(options), "options")?;
    let mut out = crate::transcript::chunk_transcript(&text, format.as_deref(), &opts).map_err(|e| core_err(e.code(), e))?;
    out.chunks.iter_mut().for_each(|c| c.encode_offsets(JS));
    to_js(&out)
}

/// Build the prompt and the numbered sources: `{prompt, instructions, schema, sources, dropped}`.
#[wasm_bindgen(js_name = buildContext, unchecked_return_type = "Context")]
pub fn build_context(
    #[wasm_bindgen(unchecked_param_type = "Chunk[] | { chunks: Chunk[] } | string")] chunks: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ContextOptions")] opts: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let chunks = chunks_from_js(&chunks)?;
    let opts: ContextOptions = opts_from_js(opts, "options")?;
    let mut ctx = context::build_context(&chunks, &opts);
    ctx.sources.iter_mut().for_each(|s| s.chunk.encode_offsets(JS));
    to_js(&ctx)
}

/// Parse an LLM answer: `{claims: [{index, text, source, quote}], errors: [...]}`.
#[wasm_bindgen(js_name = parseAnswer, unchecked_return_type = "ParsedAnswer")]
pub fn parse_answer(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<JsValue, JsValue> {
    let parsed = crate::answer::parse_answer(&string_arg(&text, "the answer")?).map_err(|e| core_err(e.code(), e))?;
    to_js(&parsed)
}

/// Align `quote` inside `text`; `start`/`end` (and `stray`'s `text_start`/`text_end`) are UTF-16
/// indices into `text`, `stray`'s `quote_start`/`quote_end` into `quote`.
#[wasm_bindgen(js_name = matchQuote, unchecked_return_type = "QuoteMatch")]
pub fn match_quote(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] quote: JsValue,
    #[wasm_bindgen(unchecked_param_type = "MatchOptions")] opts: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let (text, quote) = (string_arg(&text, "text")?, string_arg(&quote, "quote")?);
    let mut m = crate::quote::match_quote(&text, &quote, &opts_from_js(opts, "options")?);
    m.encode(JS, &text, &quote);
    to_js(&m)
}

/// The NLI model, loaded once from bytes and reused for every verification.
#[wasm_bindgen]
pub struct Verifier {
    /// shared with the streams it opens (a wasm-bindgen object cannot borrow)
    model: Rc<NliModel>,
}

#[wasm_bindgen]
impl Verifier {
    /// `new Verifier({model, tokenizer, config})`: each a `Uint8Array`/`ArrayBuffer` (the ONNX
    /// file, `tokenizer.json`, `config.json`); loads synchronously (about a second for this model:
    /// `meetcite/worker` loads it off the main thread).
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "ModelFiles")] files: JsValue) -> Result<Verifier, JsValue> {
        if !files.is_object() {
            return Err(invalid(format!("load() takes {{model, tokenizer, config}}, got {}", kind(&files))));
        }
        let get = |name: &str| -> Result<Vec<u8>, JsValue> {
            let v = js_sys::Reflect::get(&files, &JsValue::from_str(name))?;
            match v.as_string() {
                Some(s) => Ok(s.into_bytes()),
                None if v.is_instance_of::<js_sys::ArrayBuffer>() || js_sys::ArrayBuffer::is_view(&v) => Ok(js_sys::Uint8Array::new(&v).to_vec()),
                None if v.is_undefined() || v.is_null() => Err(invalid(format!("load(): `{name}` is missing"))),
                None => Err(invalid(format!("load(): `{name}` must be a Uint8Array, ArrayBuffer or string, got {}", kind(&v)))),
            }
        };
        let (model, tokenizer, config) = (get("model")?, get("tokenizer")?, get("config")?);
        let runtime = js_sys::Reflect::get(&files, &JsValue::from_str("runtime"))?;
        let runtime = match runtime.as_string() {
            None if runtime.is_undefined() || runtime.is_null() => crate::nli::Runtime::Auto,
            Some(name) => name.parse().map_err(|e| invalid(format!("load(): {e}")))?,
            None => return Err(invalid(format!("load(): `runtime` must be \"auto\" or \"tract\", got {}", kind(&runtime)))),
        };
        let model = NliModel::load(&model, &tokenizer, &config, runtime).map_err(|e| core_err(e.code(), e))?;
        Ok(Verifier { model: Rc::new(model) })
    }

    /// `await Verifier.load({model, tokenizer, config})`: the constructor as a promise (rejected
    /// with a coded `Error`). It still blocks the thread it runs on; see `meetcite/worker`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Verifier>")]
    pub fn load(#[wasm_bindgen(unchecked_param_type = "ModelFiles")] files: JsValue) -> js_sys::Promise {
        match Verifier::new(files) {
            Ok(v) => js_sys::Promise::resolve(&JsValue::from(v)),
            Err(e) => js_sys::Promise::reject(&e),
        }
    }

    /// `"meetcite-int8"` (meetcite's own encoder) or `"tract"`: what computes the model.
    #[wasm_bindgen(getter)]
    pub fn runtime(&self) -> String {
        self.model.runtime().to_string()
    }

    /// The model's `config.json` (name, max_length, labels, thresholds, support weights).
    #[wasm_bindgen(getter, unchecked_return_type = "ModelConfig")]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js(self.model.config())
    }

    /// Verify an answer with quote matching and NLI; see the free function [`verify`].
    #[wasm_bindgen(unchecked_return_type = "Report")]
    pub fn verify(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
        #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        verify_with(&answer, &sources, opts, Some(&*self.model), false)
    }

    /// The `[premise, hypothesis]` pairs `verify` would score for this answer and that
    /// `opts.scores` does not already hold, without scoring them: a worker pool scores them in
    /// parallel with `score` and passes the results back as
    /// `verify(answer, sources, {...opts, scores: [{premise, hypothesis, probs}]})`. With the
    /// model's quote-first cascade, plan again with the first round's scores for the context
    /// pairs they left open; an empty plan means nothing is left.
    #[wasm_bindgen(unchecked_return_type = "[premise: string, hypothesis: string][]")]
    pub fn plan(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
        #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        verify_with(&answer, &sources, opts, Some(&*self.model), true)
    }

    /// Verify an answer while it arrives: `const s = verifier.stream(sources, opts)`, then
    /// `s.push(piece)` for each piece (returns the verdicts of the claims it completed, NLI
    /// included) and `s.finish()` (`{events, report}`: the report `verify` gives on the whole text).
    pub fn stream(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
        #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
    ) -> Result<AnswerStream, JsValue> {
        AnswerStream::open(&sources, opts, Some(self.model.clone()))
    }

    /// Score (premise, hypothesis) pairs as `verify` does (each pair alone: its probabilities never depend on the others).
    #[wasm_bindgen(unchecked_return_type = "Probs[]")]
    pub fn score(&self, #[wasm_bindgen(unchecked_param_type = "[premise: string, hypothesis: string][]")] pairs: JsValue) -> Result<JsValue, JsValue> {
        let pairs: Vec<(String, String)> = from_js(&pairs, "pairs")?;
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        to_js(&self.model.score(&refs).map_err(|e| core_err(e.code(), e))?)
    }
}

/// Options of `verify`: the policy, the quote matcher's settings (`threshold`, `max_gap` or
/// `matching`), the NLI premise budget, and NLI scores computed elsewhere (`Verifier#plan`).
#[derive(Debug, Default, Deserialize, tsify::Tsify)]
#[tsify(missing_as_null, rename = "VerifyOptions")]
#[serde(default)]
struct JsVerifyOptions {
    policy: Policy,
    matching: Option<MatchOptions>,
    /// quote score needed, 0-100 (default 80)
    threshold: Option<f64>,
    max_gap: Option<usize>,
    /// token budget of the NLI context premise (0 or absent: the model's maximum); smaller is faster
    premise_tokens: Option<usize>,
    /// score both NLI pairs of every quoted claim, even where the model's quote-first cascade
    /// would decide from the quote pair alone (slower)
    both_pairs: Option<bool>,
    /// scores of pairs computed elsewhere (see `Verifier#plan`)
    scores: Option<Vec<ScoredPair>>,
}

impl JsVerifyOptions {
    /// Everything but the model and `scores`.
    fn settings(&self) -> StreamOptions {
        let mut matching = self.matching.unwrap_or_default();
        matching.threshold = self.threshold.unwrap_or(matching.threshold);
        matching.max_gap = self.max_gap.unwrap_or(matching.max_gap);
        StreamOptions { policy: self.policy, matching, premise_tokens: self.premise_tokens.unwrap_or(0), both_pairs: self.both_pairs.unwrap_or(false) }
    }
}

fn verify_with(answer: &JsValue, sources: &JsValue, opts: Option<JsValue>, nli: Option<&dyn Entail>, plan_only: bool) -> Result<JsValue, JsValue> {
    let answer = string_arg(answer, "the answer")?;
    let sources = sources_from_js(sources)?;
    let o: JsVerifyOptions = opts_from_js(opts, "options")?;
    let so = o.settings();
    let pre = nli.zip(o.scores).map(|(inner, scores)| Precomputed::new(inner, scores));
    let nli = pre.as_ref().map(|p| p as &dyn Entail).or(nli);
    let vo = so.with_nli(nli);
    if plan_only {
        return to_js(&crate::verify::nli_plan(&answer, &sources, &vo).map_err(|e| core_err(e.code(), e))?);
    }
    let mut report = crate::verify::verify(&answer, &sources, &vo).map_err(|e| core_err(e.code(), e))?;
    report.encode_spans(&sources, JS);
    to_js(&report)
}

/// Verify an LLM answer against the `sources` that `buildContext` returned (quote matching,
/// numbers, speakers, history; no NLI). `Verifier#verify` adds the NLI check. Each claim's `span`
/// is `[start, end]` in UTF-16 units of its source chunk's text.
#[wasm_bindgen(unchecked_return_type = "Report")]
pub fn verify(
    #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
    #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    verify_with(&answer, &sources, opts, None, false)
}

/// An answer being verified as it arrives (`Verifier#stream`, or `stream` without NLI).
#[wasm_bindgen]
pub struct AnswerStream {
    /// `None` once finished
    inner: Option<StreamVerifier<Rc<NliModel>>>,
}

impl AnswerStream {
    fn open(sources: &JsValue, opts: Option<JsValue>, model: Option<Rc<NliModel>>) -> Result<AnswerStream, JsValue> {
        let sources = sources_from_js(sources)?;
        let o: JsVerifyOptions = opts_from_js(opts, "options")?;
        if o.scores.is_some() {
            return Err(invalid("options.scores: a stream scores each claim as it arrives; `scores` is for verify".into()));
        }
        Ok(AnswerStream { inner: Some(StreamVerifier::with_optional_model(sources, o.settings(), model)) })
    }

    fn open_stream(&mut self) -> Result<&mut StreamVerifier<Rc<NliModel>>, JsValue> {
        self.inner.as_mut().ok_or_else(|| js_error("finished", "the stream is finished: open a new one for the next answer"))
    }
}

#[wasm_bindgen]
impl AnswerStream {
    /// Take the next piece of the answer; returns the events (verdicts of the claims it
    /// completed, spans in UTF-16 units).
    #[wasm_bindgen(unchecked_return_type = "StreamEvent[]")]
    pub fn push(&mut self, #[wasm_bindgen(unchecked_param_type = "string")] piece: JsValue) -> Result<JsValue, JsValue> {
        let piece = string_arg(&piece, "the piece")?;
        let s = self.open_stream()?;
        let mut events = s.push(&piece).map_err(|e| core_err(e.code(), e))?;
        for e in &mut events {
            encode_event(e, s.sources());
        }
        to_js(&events)
    }

    /// The end of the answer: `{events, report}`; `report` is what `verify` returns on the whole
    /// text, `events` what the end changed (`update`, late `claim`, `retract`). Throws verify's
    /// error when the whole text is not a readable answer; the stream is finished either way.
    #[wasm_bindgen(unchecked_return_type = "Finished")]
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let s = self.inner.take().ok_or_else(|| js_error("finished", "the stream is finished: open a new one for the next answer"))?;
        let sources = s.sources().to_vec();
        let mut end = s.finish().map_err(|e| core_err(e.code(), e))?;
        end.events.iter_mut().for_each(|e| encode_event(e, &sources));
        end.report.encode_spans(&sources, JS);
        to_js(&end)
    }

    /// The answer received so far.
    #[wasm_bindgen(getter)]
    pub fn text(&self) -> String {
        self.inner.as_ref().map(|s| s.text().to_string()).unwrap_or_default()
    }
}

fn encode_event(e: &mut crate::stream::StreamEvent, sources: &[context::Source]) {
    use crate::stream::StreamEvent::*;
    if let Claim { claim } | Update { claim } = e {
        claim.encode_spans(sources, JS);
    }
}

/// `stream(sources, opts)`: `Verifier#stream` without NLI (quotes, numbers, speakers,
/// misattribution, history).
#[wasm_bindgen]
pub fn stream(
    #[wasm_bindgen(unchecked_param_type = "Source[] | { sources: Source[] }")] sources: JsValue,
    #[wasm_bindgen(unchecked_param_type = "VerifyOptions")] opts: Option<JsValue>,
) -> Result<AnswerStream, JsValue> {
    AnswerStream::open(&sources, opts, None)
}

/// A report from JS. Render and metrics never read spans, so they are taken as they come.
fn report_from_js(v: &JsValue) -> Result<Report, JsValue> {
    if !v.is_object() {
        return Err(invalid(format!("report must be the object verify returned, got {}", kind(v))));
    }
    from_js(v, "report")
}

/// An HTML fragment for a report (every transcript/LLM string escaped).
#[wasm_bindgen(js_name = renderHtml)]
pub fn render_html(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RenderOptions")] opts: Option<JsValue>,
) -> Result<String, JsValue> {
    Ok(crate::render::render_html(&report_from_js(&report)?, &opts_from_js::<RenderOptions>(opts, "options")?))
}

/// Markdown for a report.
#[wasm_bindgen(js_name = renderMarkdown)]
pub fn render_markdown(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RenderOptions")] opts: Option<JsValue>,
) -> Result<String, JsValue> {
    Ok(crate::render::render_markdown(&report_from_js(&report)?, &opts_from_js::<RenderOptions>(opts, "options")?))
}

/// Score a report against gold data `{times: [seconds|null per claim], answerable}`.
#[wasm_bindgen(unchecked_return_type = "Metrics")]
pub fn metrics(
    #[wasm_bindgen(unchecked_param_type = "Report")] report: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Gold")] gold: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    to_js(&crate::metrics::metrics(&report_from_js(&report)?, &opts_from_js::<Gold>(gold, "gold")?))
}

/// A deep link for a moment of a meeting: `{label, meeting_id, seconds, url}`.
#[wasm_bindgen(js_name = deepLink, unchecked_return_type = "DeepLink")]
pub fn deep_link(
    #[wasm_bindgen(unchecked_param_type = "string")] title: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] meeting_id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] date: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] seconds: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | null")] speaker: Option<JsValue>,
    #[wasm_bindgen(unchecked_param_type = "string | null")] recording_url: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let opt = |v: Option<JsValue>, what: &str| v.filter(|v| !v.is_undefined() && !v.is_null()).map(|v| string_arg(&v, what)).transpose();
    let seconds = seconds.as_f64().ok_or_else(|| invalid(format!("seconds must be a number, got {}", kind(&seconds))))?;
    let (speaker, url) = (opt(speaker, "speaker")?, opt(recording_url, "recording_url")?);
    let (title, id, date) = (string_arg(&title, "title")?, string_arg(&meeting_id, "meeting_id")?, string_arg(&date, "date")?);
    to_js(&crate::report::deep_link(&title, &id, &date, seconds, speaker.as_deref(), url.as_deref()))
}
