//! The report: what verification says about each claim (status, reasons, matched span, speaker,
//! time, NLI and support scores, deep link), the conflicts between meetings, and the deep links
//! themselves. [`crate::verify`] produces it; [`crate::render`] and [`crate::metrics`] read it and
//! nothing else of the verifier.

use crate::chunk::PositionEncoding;
use crate::context::Source;
use crate::support::Support;
use crate::text::clock;
use serde::{Deserialize, Serialize};

/// Class probabilities of one (premise, hypothesis) pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Probs {
    pub entailment: f64,
    pub neutral: f64,
    pub contradiction: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Supported,
    Flagged,
    UnknownSource,
    Unparsable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Remove every claim that is not supported.
    Drop,
    /// Keep every claim, with a visible warning on the others.
    #[default]
    Warn,
    /// Keep every claim and write a short text to send back to the LLM.
    Feedback,
}

/// Why a claim is not supported. `not_entailed`: the support score is under its threshold
/// (`contradicted_by_turn` when, besides, the quoted words entail the claim but their turn
/// contradicts it). `code` is stable: `quote_not_found`, `misattributed` (the quote is in another
/// source; [`ClaimVerdict::found_in`] says where), `number_mismatch`, `stitched_quote`, `quote_too_long`, `claim_number_mismatch`, `not_entailed`,
/// `contradicted_by_turn`, `speaker_mismatch`, `superseded`, `unknown_source`, `unparsable`,
/// `nli_error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Reason {
    pub code: String,
    pub message: String,
    /// Which of the claim's quotes the reason is about, when it is one of its further quotes
    /// (2 for the first of [`ClaimVerdict::more_quotes`], as the message says); absent for the
    /// claim's own quote and for the claim as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct NliScores {
    /// premise = the quote's turn and its neighbours (or the whole chunk when it fits); null
    /// when the quote pair alone decided the claim (the model's `support.quote_first` cascade)
    #[serde(default)]
    pub context: Option<Probs>,
    /// premise = the quoted words, with their speaker
    pub quote: Probs,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ClaimVerdict {
    pub index: usize,
    pub text: String,
    /// The source label as cited (`S2`), when it could be read.
    pub source: Option<String>,
    pub status: Status,
    pub reasons: Vec<Reason>,
    pub quote: String,
    pub quote_score: Option<f64>,
    /// `[start, end]` of the matched span in the chunk text: UTF-8 bytes in Rust, UTF-16 code
    /// units in JavaScript ([`Report::encode_spans`]).
    pub span: Option<(usize, usize)>,
    pub matched_text: Option<String>,
    pub speaker: Option<String>,
    pub time: Option<f64>,
    pub time_source: Option<String>,
    pub nli: Option<NliScores>,
    /// The support score (NLI and deterministic features, calibrated), when a model took part.
    #[cfg_attr(feature = "wasm", tsify(type = "Support | null"))]
    pub support: Option<Support>,
    pub link: Option<DeepLink>,
    pub chunk_id: Option<String>,
    pub meeting_id: Option<String>,
    pub meeting_title: Option<String>,
    pub date: Option<String>,
    /// A quote that is not in the cited source but is, word for word (same threshold, numbers
    /// and stitching rules), in another source of the same context: where it is. Only sources the
    /// LLM was given are searched, so nothing about a source the viewer may not see can show here.
    #[serde(default)]
    #[cfg_attr(feature = "wasm", tsify(type = "FoundIn | null"))]
    pub found_in: Option<FoundIn>,
    /// The claim's further quotes (an answer's `"quotes"` beyond the first), each matched in its
    /// own source, with its span, speaker, time and link. A quote here that is not found, or not
    /// exactly, flags the claim with a reason that names it (`quote 2 (S4): ...`); the speaker
    /// check and the support score read every quoted turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_quotes: Vec<QuoteVerdict>,
}

/// One further quote of a claim (see [`ClaimVerdict::more_quotes`]): the same fields as the
/// claim's own quote. `span` is in the text of the chunk `chunk_id` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct QuoteVerdict {
    /// The source label as cited (`S4`).
    pub source: String,
    pub quote: String,
    /// Found: score at the threshold, numbers equal, not stitched.
    pub found: bool,
    pub quote_score: Option<f64>,
    pub span: Option<(usize, usize)>,
    pub matched_text: Option<String>,
    pub speaker: Option<String>,
    pub time: Option<f64>,
    pub time_source: Option<String>,
    pub link: Option<DeepLink>,
    pub chunk_id: Option<String>,
    pub meeting_id: Option<String>,
    pub meeting_title: Option<String>,
    pub date: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "wasm", tsify(type = "FoundIn | null"))]
    pub found_in: Option<FoundIn>,
}

/// Where a misattributed quote was found: the source, the matched span (in that chunk's text, same
/// encoding as [`ClaimVerdict::span`]), its speaker and time, and a deep link there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct FoundIn {
    /// the label of the source that has the quote (`S4`)
    pub source: String,
    pub chunk_id: String,
    pub meeting_id: String,
    pub meeting_title: String,
    pub date: String,
    pub quote_score: f64,
    pub span: (usize, usize),
    pub matched_text: String,
    pub speaker: Option<String>,
    pub time: f64,
    pub link: DeepLink,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Side {
    pub date: String,
    pub meeting_title: String,
    /// the claim index, or `None` when this side is a source nobody cited
    pub claim: Option<usize>,
    pub source: String,
    pub text: String,
}

/// Two statements about the same subject that disagree across meetings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Conflict {
    pub older: Side,
    pub newer: Side,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Counts {
    pub supported: usize,
    pub flagged: usize,
    pub unknown_source: usize,
    pub unparsable: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Report {
    pub policy: Policy,
    pub claims: Vec<ClaimVerdict>,
    pub counts: Counts,
    /// Claims removed by the `drop` policy.
    pub dropped: Vec<ClaimVerdict>,
    pub conflicts: Vec<Conflict>,
    pub abstain: bool,
    pub abstain_message: String,
    /// With the `feedback` policy: text to send back to the LLM.
    pub feedback: Option<String>,
    /// Whether an NLI model took part.
    pub nli_used: bool,
}

// ---- deep links

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct DeepLink {
    /// `Pricing sync, 12 April, 30:35, Dana Okafor`
    pub label: String,
    pub meeting_id: String,
    pub seconds: u64,
    /// The recording URL at that second; `None` when the chunk has none or it is not http(s).
    pub url: Option<String>,
}

const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// `2024-04-12` -> `12 April`.
pub fn day_month(date: &str) -> String {
    let m: Option<usize> = date.get(5..7).and_then(|m| m.parse().ok());
    let d: Option<u32> = date.get(8..10).and_then(|d| d.parse().ok());
    match (m, d) {
        (Some(m @ 1..=12), Some(d)) => format!("{d} {}", MONTHS[m - 1]),
        _ => date.to_string(),
    }
}

/// Accept only absolute http(s) URLs without whitespace or control characters.
pub fn safe_url(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        && !url.chars().any(|c| c.is_control() || c.is_whitespace() || c == '"' || c == '<' || c == '>')
}

/// The recording URL at `seconds`: `{t}` in the template is replaced; otherwise the media
/// fragment `#t=N` is appended (or `&t=`/`?t=` when the template ends with `t=`).
pub fn url_at(template: &str, seconds: u64) -> Option<String> {
    if !safe_url(template) {
        return None;
    }
    Some(if template.contains("{t}") {
        template.replace("{t}", &seconds.to_string())
    } else if template.ends_with("t=") {
        format!("{template}{seconds}")
    } else if template.contains('#') {
        format!("{template}&t={seconds}")
    } else {
        format!("{template}#t={seconds}")
    })
}

pub fn deep_link(title: &str, meeting_id: &str, date: &str, seconds: f64, speaker: Option<&str>, recording_url: Option<&str>) -> DeepLink {
    let secs = if seconds.is_finite() && seconds > 0.0 { seconds.floor() as u64 } else { 0 };
    let mut label = format!("{title}, {}, {}", day_month(date), clock(secs as f64));
    if let Some(s) = speaker {
        label.push_str(", ");
        label.push_str(s);
    }
    DeepLink { label, meeting_id: meeting_id.to_string(), seconds: secs, url: recording_url.and_then(|u| url_at(u, secs)) }
}

impl Report {
    /// Express the claims' spans (UTF-8 bytes) in `enc`: see [`ClaimVerdict::encode_spans`].
    pub fn encode_spans(&mut self, sources: &[Source], enc: PositionEncoding) {
        for v in self.claims.iter_mut().chain(self.dropped.iter_mut()) {
            v.encode_spans(sources, enc);
        }
    }
}

impl ClaimVerdict {
    /// Express the spans (UTF-8 bytes) in `enc`: `span` is converted over the text of the chunk
    /// it points into, found by `chunk_id`, else by the cited label; `found_in.span` and the
    /// further quotes' spans over their chunks' texts.
    pub fn encode_spans(&mut self, sources: &[Source], enc: PositionEncoding) {
        if enc == PositionEncoding::Utf8 {
            return;
        }
        let by_chunk = |id: &str| sources.iter().find(|s| s.chunk.id == id);
        for f in self.found_in.iter_mut().chain(self.more_quotes.iter_mut().filter_map(|q| q.found_in.as_mut())) {
            if let Some(s) = by_chunk(&f.chunk_id) {
                enc.encode(&s.chunk.text, &mut [&mut f.span.0, &mut f.span.1]);
            }
        }
        for q in &mut self.more_quotes {
            if let (Some((a, b)), Some(s)) = (q.span.as_mut(), q.chunk_id.as_deref().and_then(by_chunk)) {
                enc.encode(&s.chunk.text, &mut [a, b]);
            }
        }
        let Some((mut start, mut end)) = self.span else {
            return;
        };
        let by_id = self.chunk_id.as_deref().and_then(|id| sources.iter().find(|s| s.chunk.id == id));
        let by_label = || self.source.as_deref().and_then(|l| crate::answer::parse_source(l).ok()).and_then(|n| crate::context::lookup(sources, n));
        if let Some(s) = by_id.or_else(by_label) {
            enc.encode(&s.chunk.text, &mut [&mut start, &mut end]);
            self.span = Some((start, end));
        }
    }
}
