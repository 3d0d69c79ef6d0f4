//! Stage 6b: verification of an answer while it streams. An LLM answer arrives token by token;
//! [`StreamVerifier`] takes it in pieces and gives each claim's verdict as soon as that claim's
//! JSON object is complete, then, at [`StreamVerifier::finish`], exactly the report [`verify`]
//! gives on the whole text.
//!
//! How the two agree: a claim is checked as it arrives by the same code `verify` runs (quote
//! match, misattribution search with the same budget spent in the same order, numbers, speakers,
//! NLI), and the NLI scores are kept. `finish` runs `verify` on the whole text with those scores
//! ([`Precomputed`]), so nothing is scored twice; a pair's probabilities depend on that pair alone
//! (`NliModel::batch_size` 1), hence the identical report. What only the whole answer can decide
//! comes at `finish`, as events: the history check (a claim superseded by a later meeting) may
//! change a verdict already sent (`update`); a claim that only the whole text reveals is sent then
//! (`claim`); one sent that the whole answer does not contain after all (the answer's real JSON
//! came later, in a fence) is withdrawn (`retract`).

use crate::answer::{ClaimScanner, MAX_ANSWER_BYTES};
use crate::context::Source;
use crate::quote::{Haystack, MatchOptions};
use crate::report::{ClaimVerdict, Policy, Report};
use crate::support::SupportConfig;
use crate::verify::{
    all_speakers, check_claim, score_nli, settle, unparsable, verify, Elsewhere, Entail, EntailError, Precomputed, Probs, ScoredPair, Thresholds, VerifyError,
    VerifyOptions,
};
use crate::AnswerError;
use serde::{Deserialize, Serialize};
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;

/// [`VerifyOptions`] without the model, owned: what a [`StreamVerifier`] keeps between pieces.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamOptions {
    pub policy: Policy,
    pub matching: MatchOptions,
    /// see [`VerifyOptions::premise_tokens`]
    pub premise_tokens: usize,
    /// see [`VerifyOptions::both_pairs`]
    pub both_pairs: bool,
}

impl StreamOptions {
    /// These options with the model `nli`.
    pub fn with_nli(self, nli: Option<&dyn Entail>) -> VerifyOptions<'_> {
        VerifyOptions { policy: self.policy, matching: self.matching, nli, premise_tokens: self.premise_tokens, both_pairs: self.both_pairs }
    }
}

impl From<&VerifyOptions<'_>> for StreamOptions {
    fn from(o: &VerifyOptions<'_>) -> Self {
        StreamOptions { policy: o.policy, matching: o.matching, premise_tokens: o.premise_tokens, both_pairs: o.both_pairs }
    }
}

/// What a stream says, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A claim's verdict, as soon as its JSON object is complete (at `finish` for a claim only the
    /// whole text revealed). The history check has not run yet.
    Claim { claim: ClaimVerdict },
    /// At `finish`: the final verdict of a claim already sent differs from what was sent (most
    /// often the history check found a later meeting that supersedes it).
    Update { claim: ClaimVerdict },
    /// At `finish`: a claim sent earlier is not in the final report (the whole answer reads
    /// otherwise: its JSON object came later, in a code fence).
    Retract { index: usize },
}

/// The end of a stream: the last events and the report (what [`verify`] returns on the whole text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Finished {
    pub events: Vec<StreamEvent>,
    pub report: Report,
}

/// The model type of a stream without NLI (`StreamVerifier::new`): there is no such model.
#[derive(Debug, Clone, Copy)]
pub enum NoModel {}

impl Entail for NoModel {
    fn score_pairs(&self, _: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
        match *self {}
    }
    fn thresholds(&self) -> Thresholds {
        match *self {}
    }
    fn count_tokens(&self, _: &str) -> usize {
        match *self {}
    }
    fn max_length(&self) -> usize {
        match *self {}
    }
    fn support(&self) -> &SupportConfig {
        match *self {}
    }
}

/// Scores through `inner` and keeps every scored pair.
struct Keeping<'a> {
    inner: &'a dyn Entail,
    kept: RefCell<Vec<ScoredPair>>,
}

impl Entail for Keeping<'_> {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
        let probs = self.inner.score_pairs(pairs)?;
        let mut kept = self.kept.borrow_mut();
        for ((p, h), probs) in pairs.iter().zip(&probs) {
            kept.push(ScoredPair { premise: p.to_string(), hypothesis: h.to_string(), probs: *probs });
        }
        Ok(probs)
    }
    crate::verify::limits_from_inner!();
}

/// Verifies an answer while it arrives. `push` each piece as it comes (any split, even inside a
/// UTF-8 character's JSON escape or a key); `finish` at the end.
///
/// ```
/// use meetcite::stream::{StreamEvent, StreamOptions, StreamVerifier};
/// let chunks = meetcite::parse_chunks(r#"[{"id":"c1","meeting_id":"m1","meeting_title":"Pricing sync","date":"2026-04-12",
///   "start":1800,"end":1900,"speakers":["Dana Okafor"],"text":"Dana Okafor: We agreed on a ten percent discount."}]"#).unwrap();
/// let ctx = meetcite::build_context(&chunks, &Default::default());
/// let mut s = StreamVerifier::new(ctx.sources, StreamOptions::default());
/// let answer = r#"{"claims":[{"text":"They agreed on ten percent.","source":"S1","quote":"We agreed on a ten percent discount."}]}"#;
/// let (head, tail) = answer.split_at(answer.len() - 2);
/// let events = s.push(head).unwrap(); // the claim's object is complete: its verdict is here
/// assert!(matches!(&events[..], [StreamEvent::Claim { claim }] if claim.quote_score == Some(100.0)));
/// assert!(s.push(tail).unwrap().is_empty());
/// let end = s.finish().unwrap();
/// assert!(end.events.is_empty()); // nothing changed at the end
/// assert_eq!(end.report.counts.supported, 1);
/// ```
pub struct StreamVerifier<N: Entail = NoModel> {
    sources: Vec<Source>,
    nli: Option<N>,
    opts: StreamOptions,
    text: String,
    scanner: ClaimScanner,
    hay: Vec<OnceCell<Haystack>>,
    elsewhere: Elsewhere,
    speakers: Vec<String>,
    scored: Vec<ScoredPair>,
    sent: BTreeMap<usize, ClaimVerdict>,
}

impl StreamVerifier<NoModel> {
    /// A stream checked without NLI (quotes, numbers, speakers, misattribution, history).
    pub fn new(sources: Vec<Source>, opts: StreamOptions) -> Self {
        Self::build(sources, opts, None)
    }
}

impl<N: Entail> StreamVerifier<N> {
    /// A stream checked with an NLI model too (`&NliModel`, `Rc<NliModel>`, `Arc<..>`, ...).
    pub fn with_model(sources: Vec<Source>, opts: StreamOptions, nli: N) -> Self {
        Self::build(sources, opts, Some(nli))
    }

    /// [`with_model`](Self::with_model) or, with `None`, a stream without NLI.
    pub fn with_optional_model(sources: Vec<Source>, opts: StreamOptions, nli: Option<N>) -> Self {
        Self::build(sources, opts, nli)
    }

    fn build(sources: Vec<Source>, opts: StreamOptions, nli: Option<N>) -> Self {
        StreamVerifier {
            hay: sources.iter().map(|_| OnceCell::new()).collect(),
            speakers: all_speakers(&sources),
            sources,
            nli,
            opts,
            text: String::new(),
            scanner: ClaimScanner::new(),
            elsewhere: Elsewhere::new(),
            scored: Vec::new(),
            sent: BTreeMap::new(),
        }
    }

    /// The answer received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The sources it verifies against.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Take the next piece of the answer; returns the verdicts of the claims it completed (each
    /// NLI-scored before it returns). A piece that would take the answer past
    /// [`MAX_ANSWER_BYTES`] is refused (`too_large`) and the stream keeps what it had. When the
    /// model fails, the error is returned and the claim is checked again at `finish`.
    pub fn push(&mut self, piece: &str) -> Result<Vec<StreamEvent>, VerifyError> {
        let size = self.text.len() + piece.len();
        if size > MAX_ANSWER_BYTES {
            return Err(AnswerError::TooLarge { what: "bytes", size, limit: MAX_ANSWER_BYTES }.into());
        }
        self.text.push_str(piece);
        let found = self.scanner.scan(&self.text);
        let mut events = Vec::with_capacity(found.len());
        for c in found {
            let mut w = match &c {
                Err(e) => unparsable(e),
                Ok(c) => {
                    let opts = self.opts.with_nli(self.nli.as_ref().map(|n| n as &dyn Entail));
                    check_claim(c, &self.sources, &self.hay, &mut self.elsewhere, &self.speakers, &opts)
                }
            };
            if let Some(nli) = self.nli.as_ref() {
                let keeping = Keeping { inner: nli, kept: RefCell::new(Vec::new()) };
                score_nli(std::slice::from_mut(&mut w), &self.speakers, &keeping, &mut Vec::new(), self.opts.both_pairs)?;
                self.scored.append(&mut keeping.kept.into_inner());
            }
            settle(&mut w);
            self.sent.insert(w.verdict.index, w.verdict.clone());
            events.push(StreamEvent::Claim { claim: w.verdict });
        }
        Ok(events)
    }

    /// The end of the answer: the report [`verify`] returns on the whole text (its error, if the
    /// whole text is not a readable answer), and the events that the end changes (see the module).
    pub fn finish(self) -> Result<Finished, VerifyError> {
        let pre = self.nli.as_ref().map(|n| Precomputed::new(n, self.scored));
        let opts = self.opts.with_nli(pre.as_ref().map(|p| p as &dyn Entail));
        let report = verify(&self.text, &self.sources, &opts)?;
        let mut events = Vec::new();
        let mut final_index: BTreeMap<usize, &ClaimVerdict> = BTreeMap::new();
        for v in report.claims.iter().chain(&report.dropped) {
            final_index.insert(v.index, v);
        }
        for (&index, v) in &final_index {
            match self.sent.get(&index) {
                None => events.push(StreamEvent::Claim { claim: (*v).clone() }),
                Some(s) if s != *v => events.push(StreamEvent::Update { claim: (*v).clone() }),
                Some(_) => {}
            }
        }
        for &index in self.sent.keys() {
            if !final_index.contains_key(&index) {
                events.push(StreamEvent::Retract { index });
            }
        }
        Ok(Finished { events, report })
    }
}

#[cfg(test)]
mod tests {
    use crate::answer::ClaimScanner;

    /// The scanner finds each element once, at the byte that completes it, however the text is split.
    #[test]
    fn scanner_yields_each_claim_when_it_closes() {
        let answer = "Sure! Here is {an aside} and the answer:\n```json\n{\"note\": \"a } and a \\\" in a string\", \"claims\": [\n {\"text\": \"A {b}\", \"source\": \"S1\", \"quote\": \"q ]\"},\n 7,\n {\"text\": \"C\", \"source\": \"S9\", \"quote\": \"d\"}\n], \"x\": [1]}\n```\nDone.";
        let mut whole = ClaimScanner::new();
        let all = whole.scan(answer);
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].as_ref().unwrap().text, "A {b}");
        assert_eq!(all[1].as_ref().unwrap_err().field, "");
        assert_eq!(all[2].as_ref().unwrap().source, 9);
        // the same elements as parse_answer
        let parsed = crate::parse_answer(answer).unwrap();
        assert_eq!(parsed.claims, all.iter().filter_map(|c| c.clone().ok()).collect::<Vec<_>>());
        assert_eq!(parsed.errors, all.iter().filter_map(|c| c.clone().err()).collect::<Vec<_>>());
        // byte by byte: each element appears exactly at its closing byte (the `}`, or the `,` after 7)
        let mut s = ClaimScanner::new();
        let mut at = Vec::new();
        for end in 1..=answer.len() {
            if !answer.is_char_boundary(end) {
                continue;
            }
            for c in s.scan(&answer[..end]) {
                at.push((answer.as_bytes()[end - 1], c.map(|c| c.index).unwrap_or_else(|e| e.index)));
            }
        }
        assert_eq!(at, vec![(b'}', 0), (b',', 1), (b'}', 2)]);
    }

    #[test]
    fn scanner_stops_at_malformed_json_and_caps_claims() {
        let mut s = ClaimScanner::new();
        assert!(s.scan("{\"claims\": [{\"text\": \"a\", \"source\": \"S1\", \"quote\": \"b\"] }").is_empty());
        let many = format!("{{\"claims\": [{}]}}", vec!["1"; crate::answer::MAX_CLAIMS + 5].join(","));
        assert_eq!(ClaimScanner::new().scan(&many).len(), crate::answer::MAX_CLAIMS);
    }
}
