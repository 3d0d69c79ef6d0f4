//! meetcite: verify AI answers about meetings against the transcript.
//!
//! Pipeline: [`context`] builds numbered sources and the prompt, [`answer`] parses the LLM's
//! JSON, [`quote`] aligns each quote inside its cited chunk, [`nli`] checks entailment with a
//! cross-encoder, [`attribution`] checks speakers and superseded decisions, [`verify`] turns all
//! of it into verdicts, [`render`] makes deep links, HTML and Markdown, [`metrics`] scores a report.
//!
//! Offsets inside this crate are UTF-8 byte offsets into the chunk's `text`.

pub mod answer;
pub mod attribution;
pub mod context;
pub mod metrics;
#[cfg(feature = "nli")]
pub mod nli;
pub mod quote;
pub mod render;
pub mod support;
pub mod text;
pub mod verify;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use answer::{parse_answer, AnswerError, Claim, ClaimError, ParsedAnswer};
pub use context::{build_context, parse_chunks, Chunk, Context, ContextOptions, InputError, Order, Source, Turn, Word};
pub use metrics::{metrics, Gold, Metrics};
pub use quote::{match_quote, MatchOptions, QuoteMatch};
pub use render::{deep_link, render_html, render_markdown, DeepLink, RenderOptions};
pub use verify::{nli_plan, verify, ClaimVerdict, Policy, Precomputed, Reason, Report, ScoredPair, Status, VerifyOptions};
