//! meetcite: verify AI answers about meetings against the transcript.
//!
//! Data: [`chunk`] is the input data model (chunks, turns, words; JSON input and validation;
//! position encodings), [`report`] the output (verdicts, conflicts, deep links).
//!
//! Pipeline: [`context`] builds numbered sources and the prompt, [`answer`] parses the LLM's
//! JSON, [`quote`] aligns each quote inside its cited chunk, [`nli`] checks entailment with a
//! cross-encoder, [`attribution`] checks speakers and superseded decisions, [`verify`] turns all
//! of it into a [`report::Report`] ([`stream`] does it while the answer arrives), [`render`] makes HTML and Markdown of a report, [`metrics`]
//! scores one. [`wasm`] only converts between JavaScript values and these types.
//!
//! Offsets inside this crate are UTF-8 byte offsets into the chunk's `text`
//! ([`chunk::PositionEncoding`] converts them for callers that count otherwise).

pub mod answer;
pub mod attribution;
pub mod chunk;
pub mod context;
#[cfg(feature = "nli")]
mod encoder;
#[cfg(feature = "tract")]
pub mod graph;
pub mod metrics;
#[cfg(feature = "nli")]
pub mod nli;
#[cfg(feature = "nli")]
pub mod onnx;
pub mod quote;
pub mod render;
pub mod report;
pub mod stream;
pub mod support;
pub mod text;
pub mod transcript;
pub mod verify;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use answer::{parse_answer, AnswerError, Claim, ClaimError, ParsedAnswer};
pub use chunk::{parse_chunks, parse_chunks_in, Chunk, InputError, PositionEncoding, Turn, Word};
pub use context::{build_context, Context, ContextOptions, Order, Source};
pub use metrics::{metrics, Gold, Metrics};
pub use quote::{match_quote, MatchOptions, QuoteMatch};
pub use render::{render_html, render_markdown, RenderOptions};
pub use report::{deep_link, ClaimVerdict, DeepLink, Policy, Reason, Report, Status};
pub use stream::{StreamEvent, StreamOptions, StreamVerifier};
pub use verify::{nli_plan, verify, Precomputed, ScoredPair, VerifyOptions};
