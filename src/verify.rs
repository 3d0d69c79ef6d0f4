//! Stage 6a: verdicts. Runs the matcher, the number, speaker and NLI checks and the history check
//! over every claim, applies the policy, and says when the meetings do not answer the question.

use crate::answer::{parse_answer, AnswerError, Claim};
use crate::attribution::{same_subject_counts, speaker_mismatch, subject_words};
use crate::context::{Chunk, Source};
use crate::quote::{locate, Haystack, Location, MatchOptions, QuoteMatch};
use crate::report::{deep_link, DeepLink, QuoteVerdict};
// the report types lived here; their old paths keep working
pub use crate::report::{ClaimVerdict, Conflict, Counts, FoundIn, NliScores, Policy, Probs, Reason, Report, Side, Status};
use crate::support::{Evidence, NliPart, Support, SupportConfig};
use crate::text::number_values;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Thresholds {
    pub entailment: f64,
    pub contradiction: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { entailment: 0.5, contradiction: 0.5 }
    }
}

/// Why an NLI model could not score pairs. `code` is the model's own stable code
/// (`claim_too_long`, `inference`, ...), so callers see the cause, not just `nli_failed`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EntailError {
    pub code: &'static str,
    pub message: String,
}

impl From<String> for EntailError {
    fn from(message: String) -> Self {
        EntailError { code: "nli_failed", message }
    }
}

/// What the verifier needs from an NLI model ([`crate::nli::NliModel`] implements it).
pub trait Entail {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError>;
    fn thresholds(&self) -> Thresholds;
    fn count_tokens(&self, text: &str) -> usize;
    fn max_length(&self) -> usize;
    /// The support score's weights that go with this model.
    fn support(&self) -> &SupportConfig;
    /// The probabilities of a pair already scored elsewhere ([`Precomputed`]), without scoring it.
    fn known(&self, _premise: &str, _hypothesis: &str) -> Option<Probs> {
        None
    }
}

/// The four methods of [`Entail`] that a wrapper (`Precomputed`, the plan's recorder, a stream's
/// score keeper) takes unchanged from the model it wraps, `self.inner`.
macro_rules! limits_from_inner {
    () => {
        fn thresholds(&self) -> $crate::verify::Thresholds {
            self.inner.thresholds()
        }
        fn count_tokens(&self, text: &str) -> usize {
            self.inner.count_tokens(text)
        }
        fn max_length(&self) -> usize {
            self.inner.max_length()
        }
        fn support(&self) -> &$crate::support::SupportConfig {
            self.inner.support()
        }
    };
}
pub(crate) use limits_from_inner;

// A model behind a reference or a shared pointer is a model: `StreamVerifier` owns its `N`
// (`&NliModel` natively, `Rc<NliModel>` in the wasm bindings, whose objects cannot borrow).
macro_rules! entail_through {
    ($($ptr:ty),*) => {$(
        impl<T: Entail + ?Sized> Entail for $ptr {
            fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
                (**self).score_pairs(pairs)
            }
            fn thresholds(&self) -> Thresholds {
                Entail::thresholds(&**self)
            }
            fn count_tokens(&self, text: &str) -> usize {
                Entail::count_tokens(&**self, text)
            }
            fn max_length(&self) -> usize {
                Entail::max_length(&**self)
            }
            fn support(&self) -> &SupportConfig {
                Entail::support(&**self)
            }
            fn known(&self, premise: &str, hypothesis: &str) -> Option<Probs> {
                Entail::known(&**self, premise, hypothesis)
            }
        }
    )*};
}
entail_through!(&T, Box<T>, std::rc::Rc<T>, std::sync::Arc<T>);

/// One scored (premise, hypothesis) pair, e.g. computed by another worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ScoredPair {
    pub premise: String,
    pub hypothesis: String,
    pub probs: Probs,
}

/// An [`Entail`] that answers from precomputed scores and sends only the pairs it lacks to
/// `inner` (in one batch). With scores from the same model, `verify` gives the same report as
/// with `inner` alone: that is how a pool of workers splits the NLI work of one answer
/// ([`nli_plan`] lists the pairs, workers score them, the coordinator verifies with this).
pub struct Precomputed<'a> {
    inner: &'a dyn Entail,
    /// premise -> hypothesis -> probabilities (looked up by `&str`, no key built per lookup)
    scores: HashMap<String, HashMap<String, Probs>>,
}

impl<'a> Precomputed<'a> {
    pub fn new(inner: &'a dyn Entail, scores: impl IntoIterator<Item = ScoredPair>) -> Self {
        let mut map: HashMap<String, HashMap<String, Probs>> = HashMap::new();
        for s in scores {
            map.entry(s.premise).or_default().insert(s.hypothesis, s.probs);
        }
        Precomputed { inner, scores: map }
    }

    fn get(&self, premise: &str, hypothesis: &str) -> Option<&Probs> {
        self.scores.get(premise).and_then(|h| h.get(hypothesis))
    }
}

impl Entail for Precomputed<'_> {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
        let missing: Vec<(&str, &str)> = pairs.iter().filter(|(p, h)| self.get(p, h).is_none()).copied().collect();
        let fresh = if missing.is_empty() { Vec::new() } else { self.inner.score_pairs(&missing)? };
        let mut fresh = fresh.into_iter();
        pairs
            .iter()
            .map(|(p, h)| match self.get(p, h) {
                Some(pr) => Ok(*pr),
                None => fresh.next().ok_or_else(|| EntailError::from("NLI model returned fewer scores than pairs".to_string())),
            })
            .collect()
    }
    fn known(&self, premise: &str, hypothesis: &str) -> Option<Probs> {
        self.get(premise, hypothesis).copied().or_else(|| self.inner.known(premise, hypothesis))
    }
    limits_from_inner!();
}

/// Answers the pairs its model already knows ([`Entail::known`]); records the others and answers
/// them "neutral" (nothing entailed).
struct Recorder<'a> {
    inner: &'a dyn Entail,
    pairs: std::cell::RefCell<Vec<(String, String)>>,
}

impl Entail for Recorder<'_> {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
        let mut rec = self.pairs.borrow_mut();
        Ok(pairs
            .iter()
            .map(|&(p, h)| {
                self.inner.known(p, h).unwrap_or_else(|| {
                    rec.push((p.to_string(), h.to_string()));
                    Probs { entailment: 0.0, neutral: 1.0, contradiction: 0.0 }
                })
            })
            .collect())
    }
    limits_from_inner!();
}

/// The (premise, hypothesis) pairs that `verify` with `opts` scores in its main NLI pass and
/// that `opts.nli` does not already know, without running the model (`opts.nli` supplies the
/// tokenizer and limits; none: no pairs). With the model's quote-first cascade
/// (`support.quote_first`) the first plan lists the quote pairs; plan again with a
/// [`Precomputed`] holding their scores for the context pairs they left open, until the plan is
/// empty (at most two rounds). The history check may ask for a few more pairs later;
/// [`Precomputed`] scores those itself.
pub fn nli_plan(answer: &str, sources: &[Source], opts: &VerifyOptions) -> Result<Vec<(String, String)>, VerifyError> {
    let Some(nli) = opts.nli else {
        return Ok(Vec::new());
    };
    let rec = Recorder { inner: nli, pairs: Default::default() };
    verify(answer, sources, &VerifyOptions { nli: Some(&rec), ..*opts })?;
    let mut seen = HashSet::new();
    Ok(rec.pairs.into_inner().into_iter().filter(|p| seen.insert(p.clone())).collect())
}

fn reason(code: &str, message: String) -> Reason {
    Reason { code: code.into(), message, quote: None }
}

pub const ABSTAIN_MESSAGE: &str = "The meetings provided do not answer this question.";

#[derive(Clone, Copy, Default)]
pub struct VerifyOptions<'a> {
    pub policy: Policy,
    pub matching: MatchOptions,
    pub nli: Option<&'a dyn Entail>,
    /// Token budget of the NLI context premise (the quote's turn grown by neighbouring turns);
    /// 0 = as much as the model takes (`max_length` minus the claim). Smaller is faster: the cost
    /// of a pair grows with its length (about 2x from 128 to 256 tokens).
    pub premise_tokens: usize,
    /// Score both NLI pairs of every quoted claim even when the model's `support.quote_first`
    /// cascade would decide it from the quote pair alone (slower; what the support fit needs).
    pub both_pairs: bool,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Answer(#[from] AnswerError),
    #[error("NLI model failed: {0}")]
    Nli(EntailError),
}

impl VerifyError {
    pub fn code(&self) -> &'static str {
        match self {
            VerifyError::Answer(e) => e.code(),
            VerifyError::Nli(e) => e.code,
        }
    }
}

fn speaker_prefix(speaker: Option<&str>, text: &str) -> String {
    match speaker {
        Some(s) => format!("{s}: {text}"),
        None => text.to_string(),
    }
}

/// The premise for the context check: the whole chunk when it fits the model, else the quote's
/// turn(s) plus neighbouring turns while they fit (without turns: a window around the span).
fn context_premise(chunk: &Chunk, loc: &Location, span: (usize, usize), budget: usize, nli: &dyn Entail) -> String {
    let text = &chunk.text;
    let render = |a: usize, b: usize| -> String {
        match &chunk.turns {
            Some(turns) if !turns.is_empty() => turns
                .iter()
                .filter(|t| t.text_start >= a && t.text_end <= b && t.text_end > t.text_start)
                .map(|t| format!("{}: {}", t.speaker, text[t.text_start..t.text_end].trim()))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => text[a..b].to_string(),
        }
    };
    let whole = render(0, text.len());
    if whole.len() < budget * 8 && nli.count_tokens(&whole) <= budget {
        return whole;
    }
    if let (Some(turns), Some(i)) = (chunk.turns.as_deref().filter(|t| !t.is_empty()), loc.turn) {
        let last = turns.iter().rposition(|t| t.text_start < span.1).unwrap_or(i).max(i);
        let (a, b) = (turns[i].text_start, turns[last].text_end);
        // the quote's turn(s) must fit the budget; then grow by whole neighbouring turns
        if a <= b && nli.count_tokens(&render(a, b)) <= budget {
            return grow_turns(turns, i, last, budget, nli, &render);
        }
    }
    // no turns, or the quote's turn alone is over the budget: a window around the span of about
    // `budget` tokens (4 characters per token to start, narrowed while it is over)
    let mut half = (budget * 4).saturating_sub(span.1 - span.0) / 2;
    loop {
        let mut a = span.0.saturating_sub(half);
        let mut b = (span.1 + half).min(text.len());
        while !text.is_char_boundary(a) {
            a -= 1;
        }
        while !text.is_char_boundary(b) {
            b += 1;
        }
        let w = &text[a..b];
        if half == 0 || nli.count_tokens(w) <= budget {
            return w.to_string();
        }
        half = half * 4 / 5;
    }
}

/// Widen turns `i..=last` by whole neighbouring turns while the rendered premise fits `budget`.
fn grow_turns(turns: &[crate::context::Turn], i: usize, last: usize, budget: usize, nli: &dyn Entail, render: &dyn Fn(usize, usize) -> String) -> String {
    let (mut lo, mut hi) = (i, last);
    loop {
        let mut grew = false;
        for cand in [(lo.wrapping_sub(1), hi), (lo, hi + 1)] {
            if cand.0 < turns.len() && cand.1 < turns.len() {
                let p = render(turns[cand.0].text_start, turns[cand.1].text_end);
                if nli.count_tokens(&p) <= budget {
                    (lo, hi) = cand;
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
    }
    render(turns[lo].text_start, turns[hi].text_end)
}

pub(crate) fn all_speakers(sources: &[Source]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for s in sources {
        let turn_speakers = s.chunk.turns.iter().flatten().map(|t| &t.speaker);
        for sp in s.chunk.speakers.iter().chain(turn_speakers) {
            if seen.insert(sp) {
                v.push(sp.clone());
            }
        }
    }
    v
}

/// Numbers of the claim that neither the quoted turn(s) nor the meeting's date contain.
fn claim_numbers_missing(claim: &str, evidence: &str, date: &str) -> Vec<String> {
    let have = number_values(evidence);
    let date_parts: Vec<String> = date.split('-').filter_map(|p| p.parse::<u32>().ok()).map(|n| n.to_string()).collect();
    number_values(claim)
        .into_iter()
        .filter(|n| !have.iter().any(|h| h == n || h.strip_suffix('%') == Some(n.as_str()) || n.strip_suffix('%') == Some(h.as_str())))
        .filter(|n| !date_parts.contains(n))
        .collect()
}

pub(crate) struct Work<'s> {
    pub(crate) verdict: ClaimVerdict,
    chunk: Option<&'s Chunk>,
    premise_ctx: Option<String>,
    premise_quote: Option<String>,
    /// the text of the quote's turn(s) and their speakers, for the support features
    quote_turn: Option<String>,
    quote_speakers: Vec<String>,
}

impl<'s> Work<'s> {
    /// A verdict with nothing to score yet (no premises, no quoted turn).
    fn new(verdict: ClaimVerdict, chunk: Option<&'s Chunk>) -> Self {
        Work { verdict, chunk, premise_ctx: None, premise_quote: None, quote_turn: None, quote_speakers: Vec::new() }
    }
}

/// Verify an LLM answer against the lookup table of the context it was given.
pub fn verify(answer: &str, sources: &[Source], opts: &VerifyOptions) -> Result<Report, VerifyError> {
    verify_inner(answer, sources, opts).map(|(r, _)| r)
}

/// [`verify`], and the support features of each scored claim (by claim index).
/// The support features of each scored claim, by claim index (what `score_premise` reports).
pub(crate) type ClaimFeatures = Vec<(usize, Vec<f64>)>;

fn verify_inner(answer: &str, sources: &[Source], opts: &VerifyOptions) -> Result<(Report, ClaimFeatures), VerifyError> {
    let mut feats = Vec::new();
    let parsed = parse_answer(answer)?;
    let speakers = all_speakers(sources);
    let mut work: Vec<Work> = Vec::new();
    for e in &parsed.errors {
        work.push(unparsable(e));
    }
    // each cited chunk is normalised for matching once, however many claims cite it
    let hay: Vec<std::cell::OnceCell<Haystack>> = sources.iter().map(|_| std::cell::OnceCell::new()).collect();
    let mut elsewhere = Elsewhere::new();
    for c in &parsed.claims {
        work.push(check_claim(c, sources, &hay, &mut elsewhere, &speakers, opts));
    }
    if let Some(nli) = opts.nli {
        score_nli(&mut work, &speakers, nli, &mut feats, opts.both_pairs)?;
    }
    work.iter_mut().for_each(settle);
    let conflicts = history(&mut work, sources, opts);
    let mut claims: Vec<ClaimVerdict> = work.into_iter().map(|w| w.verdict).collect();
    claims.sort_by_key(|c| c.index);
    let mut counts = Counts::default();
    for c in &claims {
        match c.status {
            Status::Supported => counts.supported += 1,
            Status::Flagged => counts.flagged += 1,
            Status::UnknownSource => counts.unknown_source += 1,
            Status::Unparsable => counts.unparsable += 1,
        }
    }
    let feedback = (opts.policy == Policy::Feedback).then(|| feedback_text(&claims, sources)).flatten();
    let (claims, dropped) = if opts.policy == Policy::Drop { claims.into_iter().partition(|c| c.status == Status::Supported) } else { (claims, Vec::new()) };
    let abstain = counts.supported == 0;
    let report = Report {
        policy: opts.policy,
        claims,
        counts,
        dropped,
        conflicts,
        abstain,
        abstain_message: if abstain { ABSTAIN_MESSAGE.to_string() } else { String::new() },
        feedback,
        nli_used: opts.nli.is_some(),
    };
    Ok((report, feats))
}

/// A claim that could not be read: its verdict.
pub(crate) fn unparsable(e: &crate::answer::ClaimError) -> Work<'static> {
    let v =
        blank(e.index, e.text.clone().unwrap_or_default(), e.source_raw.clone(), String::new(), Status::Unparsable, vec![reason("unparsable", e.to_string())]);
    Work::new(v, None)
}

/// A flagged verdict with no reason left is supported.
pub(crate) fn settle(w: &mut Work) {
    if w.verdict.status == Status::Flagged && w.verdict.reasons.is_empty() {
        w.verdict.status = Status::Supported;
    }
}

/// The NLI pairs of the claims in `work` (context and quote premise of each claim whose quote
/// was found), and their support scores and reasons. With the model's `support.quote_first`
/// cascade (and not `both_pairs`), the quote pairs of all claims are scored in one call first,
/// and only the claims that pass left undecided get their context pair, in a second call.
pub(crate) fn score_nli(work: &mut [Work], speakers: &[String], nli: &dyn Entail, feats: &mut ClaimFeatures, both_pairs: bool) -> Result<(), VerifyError> {
    let owners: Vec<usize> = work.iter().enumerate().filter(|(_, w)| w.premise_ctx.is_some() && w.premise_quote.is_some()).map(|(i, _)| i).collect();
    if owners.is_empty() {
        return Ok(());
    }
    let support = nli.support();
    let first = support.quote_first.as_ref().filter(|_| !both_pairs);
    let premises = |i: usize| {
        let w = &work[i];
        (w.premise_ctx.as_deref().unwrap_or_default(), w.premise_quote.as_deref().unwrap_or_default(), w.verdict.text.as_str())
    };
    // every claim's text features (the NLI slots are filled in below)
    let mut values: Vec<Vec<f64>> = owners
        .iter()
        .map(|&i| {
            let w = &work[i];
            let chunk = w.chunk.expect("a scored claim has its chunk");
            let ev = Evidence::from_chunk(chunk, speakers);
            let part = NliPart {
                entailment: 0.5,
                entailment_mean: 0.5,
                contradiction: 0.0,
                local: w.premise_ctx.as_deref().unwrap_or_default(),
                turns: None,
                quote_turn: w.quote_turn.as_deref(),
                quote_speakers: &w.quote_speakers,
                quoted: w.verdict.matched_text.as_deref(),
            };
            crate::support::features(&w.verdict.text, &ev, &part)
        })
        .collect();
    let (quote_probs, ctx_probs, decided): (Vec<Probs>, Vec<Option<Probs>>, Vec<Option<Support>>) = match first {
        None => {
            let pairs: Vec<(&str, &str)> = owners.iter().flat_map(|&i| [(premises(i).0, premises(i).2), (premises(i).1, premises(i).2)]).collect();
            let probs = nli.score_pairs(&pairs).map_err(VerifyError::Nli)?;
            let ctx = probs.iter().step_by(2).map(|p| Some(*p)).collect();
            (probs.into_iter().skip(1).step_by(2).collect(), ctx, vec![None; owners.len()])
        }
        Some(q) => {
            let pairs: Vec<(&str, &str)> = owners.iter().map(|&i| (premises(i).1, premises(i).2)).collect();
            let quote = nli.score_pairs(&pairs).map_err(VerifyError::Nli)?;
            let decided: Vec<Option<Support>> = values
                .iter_mut()
                .zip(&quote)
                .map(|(v, pq)| {
                    crate::support::set_nli(v, pq.entailment, pq.entailment, pq.contradiction);
                    q.decide(v)
                })
                .collect();
            let open: Vec<usize> = (0..owners.len()).filter(|&k| decided[k].is_none()).collect();
            let pairs: Vec<(&str, &str)> = open.iter().map(|&k| (premises(owners[k]).0, premises(owners[k]).2)).collect();
            let mut ctx = vec![None; owners.len()];
            if !pairs.is_empty() {
                for (k, p) in open.into_iter().zip(nli.score_pairs(&pairs).map_err(VerifyError::Nli)?) {
                    ctx[k] = Some(p);
                }
            }
            (quote, ctx, decided)
        }
    };
    let th = nli.thresholds();
    for (k, (&i, mut f)) in owners.iter().zip(values).enumerate() {
        let pq = quote_probs[k];
        let s = match (decided[k].clone(), ctx_probs[k]) {
            (Some(s), _) => s,
            (None, pc) => {
                let pc = pc.expect("an undecided claim has its context pair");
                crate::support::set_nli(&mut f, pc.entailment.max(pq.entailment), (pc.entailment + pq.entailment) / 2.0, pc.contradiction);
                support.score(&f)
            }
        };
        let pc = ctx_probs[k];
        feats.push((work[i].verdict.index, f));
        let v = &mut work[i].verdict;
        v.nli = Some(NliScores { context: pc, quote: pq });
        let entailed = |p: &Probs| p.entailment >= th.entailment && p.contradiction < th.contradiction;
        // the support score decides; the two codes only say which way it failed
        match pc {
            Some(pc) if !s.supported && entailed(&pq) && !entailed(&pc) && pc.contradiction >= th.contradiction => {
                let m = format!("the quote supports the claim but its turn contradicts it (p={:.2}; {})", pc.contradiction, explain(&s));
                v.reasons.push(reason("contradicted_by_turn", m));
            }
            _ if !s.supported => v.reasons.push(reason("not_entailed", format!("the source does not support the claim ({})", explain(&s)))),
            _ => {}
        }
        v.support = Some(s);
    }
    Ok(())
}

/// What [`score_premise`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PremiseScore {
    /// the most entailing pair's probabilities (with a quote: the context pair's, or the quote pair's when the
    /// `support.quote_first` cascade decided from it alone; `verdict.nli` has both)
    pub probs: Probs,
    /// the support score; `None` when a quote was given and not found in the premise
    pub support: Option<Support>,
    /// the feature values, in [`crate::support::FEATURES`] order (empty when `support` is `None`)
    pub features: Vec<f64>,
    /// with a quote: the verdict `verify` gives the claim citing the premise
    pub verdict: Option<ClaimVerdict>,
    /// NLI pairs scored
    pub pairs: usize,
}

/// Score one claim against a premise, as `verify` does for a claim whose cited source is the
/// premise (`Speaker: text` lines become its turns). With a quote this is `verify` itself, on a
/// one-source context. Without one, the evidence is the whole premise: the `windows`
/// best-covering windows of turns that fit the model (MiniCheck-style chunking of a long
/// premise) are scored, the most entailing one counts, and the features read the whole premise.
pub fn score_premise(premise: &str, claim: &str, quote: Option<&str>, nli: &dyn Entail, opts: &VerifyOptions) -> Result<PremiseScore, VerifyError> {
    if let Some(q) = quote {
        let turns: Vec<crate::context::Turn> = crate::support::line_turns(premise)
            .into_iter()
            .map(|t| crate::context::Turn { speaker: t.speaker, start: 0.0, end: 0.0, text_start: t.start, text_end: t.end })
            .collect();
        let chunk = Chunk {
            id: "premise".into(),
            meeting_id: "premise".into(),
            meeting_title: "premise".into(),
            date: String::new(),
            start: 0.0,
            end: 0.0,
            speakers: Vec::new(),
            text: premise.to_string(),
            recording_url: None,
            turns: Some(turns).filter(|t| !t.is_empty()),
            words: None,
            acl: None,
            score: None,
        };
        let sources = [Source { label: "S1".into(), chunk }];
        let answer = serde_json::json!({"claims": [{"text": claim, "source": "S1", "quote": q}]}).to_string();
        let (report, feats) = verify_inner(&answer, &sources, &VerifyOptions { nli: Some(nli), ..*opts })?;
        let v = report.claims.into_iter().chain(report.dropped).next();
        let (probs, support) = match &v {
            Some(ClaimVerdict { nli: Some(n), support: Some(s), .. }) => (n.context.unwrap_or(n.quote), Some(s.clone())),
            _ => (Probs { entailment: 0.0, neutral: 1.0, contradiction: 0.0 }, None),
        };
        let pairs = match &v {
            Some(ClaimVerdict { nli: Some(n), .. }) => 1 + usize::from(n.context.is_some()),
            _ => 0,
        };
        let features = v.as_ref().and_then(|v| feats.into_iter().find(|(i, _)| *i == v.index)).map(|(_, f)| f).unwrap_or_default();
        return Ok(PremiseScore { probs, support, features, verdict: v, pairs });
    }
    let ev = Evidence::from_text(premise);
    let mut budget = nli.max_length().saturating_sub(nli.count_tokens(claim) + 4);
    if opts.premise_tokens > 0 {
        budget = budget.min(opts.premise_tokens);
    }
    let count = |t: &str| nli.count_tokens(t);
    let mut ws = crate::support::windows(claim, &ev, budget, nli.support().windows, &count);
    if ws.is_empty() {
        ws.push(crate::support::Window { premise: String::new(), turns: None });
    }
    let pairs: Vec<(&str, &str)> = ws.iter().map(|w| (w.premise.as_str(), claim)).collect();
    let probs = nli.score_pairs(&pairs).map_err(VerifyError::Nli)?;
    let best = (0..probs.len()).max_by(|&a, &b| probs[a].entailment.total_cmp(&probs[b].entailment)).unwrap_or(0);
    let part = NliPart {
        entailment: probs[best].entailment,
        entailment_mean: probs.iter().map(|p| p.entailment).sum::<f64>() / probs.len() as f64,
        contradiction: probs[best].contradiction,
        local: &ws[best].premise,
        turns: ws[best].turns,
        quote_turn: None,
        quote_speakers: &[],
        quoted: None,
    };
    let features = crate::support::features(claim, &ev, &part);
    let support = nli.support().score(&features);
    Ok(PremiseScore { probs: probs[best], support: Some(support), features, verdict: None, pairs: pairs.len() })
}

/// Features that are priors of the fit, not findings about the claim: how long the claim and the
/// premise are. They stay in `support.parts` (the score is their sum), but a message naming "source
/// length" as the reason a claim is lowered tells the reader nothing to check; the quote-first fit
/// weighs `evidence_words` at -1.3, so it led the README's number-mismatch message.
const PRIORS: &[&str] = &["claim_words", "evidence_words"];

/// "support 0.21 < 0.50: words covered -1.3, NLI -0.9": the score and the findings that pulled it
/// down most (length priors left out, see [`PRIORS`]).
pub fn explain(s: &Support) -> String {
    let down: Vec<String> = s
        .parts
        .iter()
        .filter(|p| p.contribution < -0.05 && !PRIORS.contains(&p.feature.as_str()))
        .take(3)
        .map(|p| format!("{} {:+.1}", feature_label(&p.feature), p.contribution))
        .collect();
    let cmp = if s.supported { ">=" } else { "<" };
    if down.is_empty() {
        format!("support {:.2} {cmp} {:.2}", s.score, s.threshold)
    } else {
        format!("support {:.2} {cmp} {:.2}; lowered by {}", s.score, s.threshold, down.join(", "))
    }
}

/// Plain words for a feature name (messages only; the report keeps the names).
pub fn feature_label(f: &str) -> &str {
    match f {
        "nli_entail" => "entailment",
        "nli_entail_mean" => "entailment across windows",
        "nli_contradiction" => "contradiction",
        "coverage_local" => "words covered nearby",
        "coverage_all" => "words covered in the source",
        "coverage_turn" => "words covered in the turn",
        "number_missing_local" | "number_missing_all" => "a number not in the source",
        "entity_missing" => "a name not in the source",
        "speaker_mismatch" => "someone else said it",
        "speaker_absent" => "the person named does not speak there",
        "negation_added" => "a negation the source does not have",
        "negation_at_word" => "the claim negates what the speaker said",
        "negation_dropped" => "the source says the opposite",
        "decision_unsupported" => "a decision nobody made",
        "decision_far" => "a decision made about something else",
        "certainty_unsupported" | "certainty_added" => "more certain than the speaker",
        "hedge_dropped" => "the speaker hedged",
        "modal_strengthened" => "a plan where the speaker said it might happen",
        "date_mismatch" => "another date",
        "claim_words" => "claim length",
        "evidence_words" => "source length",
        other => other,
    }
}

fn blank(index: usize, text: String, source: Option<String>, quote: String, status: Status, reasons: Vec<Reason>) -> ClaimVerdict {
    ClaimVerdict {
        index,
        text,
        source,
        status,
        reasons,
        quote,
        quote_score: None,
        span: None,
        matched_text: None,
        speaker: None,
        time: None,
        time_source: None,
        nli: None,
        support: None,
        link: None,
        chunk_id: None,
        meeting_id: None,
        meeting_title: None,
        date: None,
        found_in: None,
        more_quotes: Vec::new(),
    }
}

/// Most work the search for misattributed quotes does in one verification, in characters of
/// normalised source text times 64-character blocks of the quote (the cost of one Myers pass):
/// about a second on one core of the 2-core test machine while it trains (tests/misattribution.rs
/// prints a hostile case). A hostile answer (10 000 invented quotes over 16 MiB of sources) stops
/// searching there; the claims left read `quote_not_found`, as before the search existed.
pub const MISATTRIBUTION_BUDGET: usize = 400_000_000;

/// The search of the other sources for a quote the cited one lacks: results memoised per
/// (quote, cited source), the whole search bounded by [`MISATTRIBUTION_BUDGET`].
pub(crate) struct Elsewhere {
    budget: usize,
    memo: HashMap<(String, usize), Option<(usize, QuoteMatch)>>,
}

impl Elsewhere {
    pub(crate) fn new() -> Self {
        Elsewhere { budget: MISATTRIBUTION_BUDGET, memo: HashMap::new() }
    }

    /// The best full match (score, numbers, not stitched) of `quote` in a source other than
    /// `cited`; ties go to the first source.
    fn find(
        &mut self,
        quote: &str,
        cited: usize,
        sources: &[Source],
        hay: &[std::cell::OnceCell<Haystack>],
        opts: &MatchOptions,
    ) -> Option<(usize, QuoteMatch)> {
        let key = (quote.to_string(), cited);
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let blocks = quote.chars().count().div_ceil(64).max(1);
        let mut best: Option<(usize, QuoteMatch)> = None;
        for (j, s) in sources.iter().enumerate() {
            if j == cited {
                continue;
            }
            let h = hay[j].get_or_init(|| Haystack::new(&s.chunk.text));
            let cost = h.len().max(1).saturating_mul(blocks);
            if cost > self.budget {
                self.budget = 0;
                break;
            }
            self.budget -= cost;
            let m = h.match_quote(quote, opts);
            if m.matched && best.as_ref().is_none_or(|(_, b)| m.score > b.score) {
                best = Some((j, m));
            }
        }
        self.memo.insert(key, best.clone());
        best
    }
}

/// One `{source, quote}` of a claim, matched in its source.
struct Cited<'s> {
    src: &'s Source,
    m: QuoteMatch,
    /// what is wrong with the quote (not found, stitched, numbers, too long, misattributed)
    problems: Vec<Reason>,
    /// where the words are when they are not in the cited source but in another one
    found_in: Option<FoundIn>,
    /// where the span sits, when the quote is (approximately) there
    loc: Option<Location>,
}

/// Match `quote` in source `n`: `Err` (an `unknown_source` reason) when there is no such source.
fn match_cite<'s>(
    n: u32,
    quote: &str,
    sources: &'s [Source],
    hay: &[std::cell::OnceCell<Haystack>],
    elsewhere: &mut Elsewhere,
    opts: &MatchOptions,
) -> Result<Cited<'s>, Reason> {
    let Some(si) = crate::context::position(sources, n) else {
        let known = match sources.len() {
            0 => "there are no sources".to_string(),
            n => format!("the sources are S1..S{n}"),
        };
        return Err(reason("unknown_source", format!("S{n} is not a source ({known})")));
    };
    let src = &sources[si];
    let chunk = &src.chunk;
    let m: QuoteMatch = hay[si].get_or_init(|| Haystack::new(&chunk.text)).match_quote(quote, opts);
    let mut c = Cited { src, m, problems: Vec::new(), found_in: None, loc: None };
    let m = &c.m;
    // not (exactly) here: is it in another source the LLM was given? Then it is misattributed,
    // the commonest cause of a wrong citation, and the verdict says where the words are.
    if !m.matched && !m.too_long {
        if let Some((j, om)) = elsewhere.find(quote, si, sources, hay, opts) {
            let other = &sources[j];
            let loc = locate(&other.chunk, om.start, om.end);
            let link = deep_link(
                &other.chunk.meeting_title,
                &other.chunk.meeting_id,
                &other.chunk.date,
                loc.time,
                loc.speaker.as_deref(),
                other.chunk.recording_url.as_deref(),
            );
            let msg = format!("the quote is in {} ({}), not {}; cite {}", other.label, link.label, src.label, other.label);
            c.problems.push(reason("misattributed", msg));
            c.found_in = Some(FoundIn {
                source: other.label.clone(),
                chunk_id: other.chunk.id.clone(),
                meeting_id: other.chunk.meeting_id.clone(),
                meeting_title: other.chunk.meeting_title.clone(),
                date: other.chunk.date.clone(),
                quote_score: om.score,
                span: (om.start, om.end),
                matched_text: other.chunk.text[om.start..om.end].to_string(),
                speaker: loc.speaker,
                time: loc.time,
                link,
            });
            return Ok(c);
        }
    }
    if m.too_long {
        c.problems.push(reason("quote_too_long", format!("the quote is longer than {} characters", crate::quote::MAX_QUOTE_CHARS)));
    } else if m.score < opts.threshold {
        c.problems.push(reason("quote_not_found", format!("the quote was not found in {} (best match {:.0}/100)", src.label, m.score)));
    } else if let Some(s) = &m.stray {
        // a short piece at one end (set only when no long skip was found inside): name it, since
        // the score alone looked fine
        let words = &quote[s.quote_start..s.quote_end];
        let end = if s.first { "first" } else { "last" };
        c.problems.push(reason(
            "stitched_quote",
            format!("the quote stitches together distant parts of {}: its {end} words \"{words}\" are said elsewhere in it, not next to the rest", src.label),
        ));
    } else if m.stitched {
        c.problems.push(reason("stitched_quote", format!("the quote stitches together distant parts of {} ({} characters skipped)", src.label, m.max_gap)));
    }
    if !m.missing_numbers.is_empty() && m.score >= opts.threshold {
        c.problems.push(reason("number_mismatch", format!("the quote's {} not in the transcript at that point", fmt_numbers(&m.missing_numbers))));
    }
    if m.score >= opts.threshold && !m.too_long {
        c.loc = Some(locate(chunk, m.start, m.end));
    }
    Ok(c)
}

impl Cited<'_> {
    /// The matched words in the source's text (empty when the quote was not found there).
    fn words(&self) -> &str {
        if self.loc.is_some() {
            &self.src.chunk.text[self.m.start..self.m.end]
        } else {
            ""
        }
    }

    fn link(&self, loc: &Location) -> DeepLink {
        let ch = &self.src.chunk;
        deep_link(&ch.meeting_title, &ch.meeting_id, &ch.date, loc.time, loc.speaker.as_deref(), ch.recording_url.as_deref())
    }

    /// The text of the quote's turn(s) (the chunk's turn range around the span). The range comes
    /// from the chunk's turns, which need not be in order: when it is inverted (a fuzzing find),
    /// the span's own turn, else the whole chunk.
    fn turn_text(&self, loc: &Location) -> &str {
        let chunk = &self.src.chunk;
        chunk.text.get(loc.turn_start..loc.turn_end).unwrap_or_else(|| {
            loc.turn.and_then(|i| chunk.turns.as_ref()?.get(i)).and_then(|t| chunk.text.get(t.text_start..t.text_end)).unwrap_or(&chunk.text)
        })
    }
}

pub(crate) fn check_claim<'s>(
    c: &Claim,
    sources: &'s [Source],
    hay: &[std::cell::OnceCell<Haystack>],
    elsewhere: &mut Elsewhere,
    speakers: &[String],
    opts: &VerifyOptions,
) -> Work<'s> {
    let label = format!("S{}", c.source);
    let first = match match_cite(c.source, &c.quote, sources, hay, elsewhere, &opts.matching) {
        Ok(f) => f,
        Err(why) => {
            let mut w = Work::new(blank(c.index, c.text.clone(), Some(label), c.quote.clone(), Status::UnknownSource, vec![why]), None);
            more_quotes(&mut w, c, sources, hay, elsewhere, opts);
            return w;
        }
    };
    let chunk = &first.src.chunk;
    let mut v = blank(c.index, c.text.clone(), Some(label), c.quote.clone(), Status::Flagged, first.problems.clone());
    v.chunk_id = Some(chunk.id.clone());
    v.meeting_id = Some(chunk.meeting_id.clone());
    v.meeting_title = Some(chunk.meeting_title.clone());
    v.date = Some(chunk.date.clone());
    v.quote_score = Some(first.m.score);
    v.found_in = first.found_in.clone();
    let mut w = Work::new(v, Some(chunk));
    let Some(loc) = first.loc.as_ref() else {
        more_quotes(&mut w, c, sources, hay, elsewhere, opts);
        return w;
    };
    let m = &first.m;
    let v = &mut w.verdict;
    let matched = chunk.text[m.start..m.end].to_string();
    v.span = Some((m.start, m.end));
    v.matched_text = Some(matched.clone());
    v.speaker = loc.speaker.clone();
    v.time = Some(loc.time);
    v.time_source = Some(loc.time_source.clone());
    v.link = Some(first.link(loc));
    w.quote_turn = Some(first.turn_text(loc).to_string());
    w.quote_speakers = loc.speakers.clone();
    // the further quotes' turns, speakers and words join the first's: a claim drawn from two
    // turns is checked against both
    let found = more_quotes(&mut w, c, sources, hay, elsewhere, opts);
    let evidence = w.quote_turn.clone().unwrap_or_default();
    let quoted: Vec<&str> = std::iter::once(matched.as_str()).chain(found.iter().map(Cited::words)).collect();
    let v = &mut w.verdict;
    let missing = claim_numbers_missing(&c.text, &evidence, &chunk.date);
    if !missing.is_empty() {
        v.reasons.push(reason("claim_number_mismatch", format!("the claim's {} not what the transcript says there", fmt_numbers(&missing))));
    }
    if let Some(named) = speaker_mismatch(&c.text, &quoted.join(" "), &w.quote_speakers, speakers) {
        v.reasons
            .push(reason("speaker_mismatch", format!("the claim names {} but the quoted words are {}'s", named.join(" and "), w.quote_speakers.join(" and "))));
    }
    if let Some(nli) = opts.nli {
        let mut budget = nli.max_length().saturating_sub(nli.count_tokens(&c.text) + 4);
        if opts.premise_tokens > 0 {
            budget = budget.min(opts.premise_tokens);
        }
        // each quote's turn gets an equal share of the premise
        let share = budget / (1 + found.len());
        let mut ctx = context_premise(chunk, loc, (m.start, m.end), share, nli);
        let mut words = speaker_prefix(loc.speaker.as_deref(), &matched);
        for cited in &found {
            let Some(l) = cited.loc.as_ref() else { continue };
            ctx.push('\n');
            ctx.push_str(&context_premise(&cited.src.chunk, l, (cited.m.start, cited.m.end), share, nli));
            words.push('\n');
            words.push_str(&speaker_prefix(l.speaker.as_deref(), cited.words()));
        }
        w.premise_ctx = Some(crate::support::clean_premise(&ctx));
        w.premise_quote = Some(crate::support::clean_premise(&words));
    }
    w
}

/// Match the claim's further quotes (`c.more_quotes`) into `w.verdict.more_quotes`: each one's
/// problems become the claim's reasons, named by position and source (`quote 2 (S4): ...`); the
/// turns and speakers of those found join `w.quote_turn` / `w.quote_speakers`. Returns the found
/// ones (matched in their source, span known: `loc` is set), for the premises.
fn more_quotes<'s>(
    w: &mut Work<'s>,
    c: &Claim,
    sources: &'s [Source],
    hay: &[std::cell::OnceCell<Haystack>],
    elsewhere: &mut Elsewhere,
    opts: &VerifyOptions,
) -> Vec<Cited<'s>> {
    let mut found = Vec::new();
    for (k, cite) in c.more_quotes.iter().enumerate() {
        let label = format!("S{}", cite.source);
        let mut q = QuoteVerdict {
            source: label.clone(),
            quote: cite.quote.clone(),
            found: false,
            quote_score: None,
            span: None,
            matched_text: None,
            speaker: None,
            time: None,
            time_source: None,
            link: None,
            chunk_id: None,
            meeting_id: None,
            meeting_title: None,
            date: None,
            found_in: None,
        };
        let named = |r: Reason| Reason { message: format!("quote {} ({label}): {}", k + 2, r.message), quote: Some(k + 2), ..r };
        let cited = match match_cite(cite.source, &cite.quote, sources, hay, elsewhere, &opts.matching) {
            Ok(x) => x,
            Err(why) => {
                w.verdict.reasons.push(named(why));
                w.verdict.more_quotes.push(q);
                continue;
            }
        };
        let ch = &cited.src.chunk;
        q.found = cited.problems.is_empty();
        q.quote_score = Some(cited.m.score);
        q.chunk_id = Some(ch.id.clone());
        q.meeting_id = Some(ch.meeting_id.clone());
        q.meeting_title = Some(ch.meeting_title.clone());
        q.date = Some(ch.date.clone());
        q.found_in = cited.found_in.clone();
        w.verdict.reasons.extend(cited.problems.iter().cloned().map(named));
        if let Some(loc) = cited.loc.as_ref() {
            q.span = Some((cited.m.start, cited.m.end));
            q.matched_text = Some(cited.words().to_string());
            q.speaker = loc.speaker.clone();
            q.time = Some(loc.time);
            q.time_source = Some(loc.time_source.clone());
            q.link = Some(cited.link(loc));
            if let Some(t) = w.quote_turn.as_mut() {
                t.push('\n');
                t.push_str(cited.turn_text(loc));
            }
            for s in &loc.speakers {
                if !w.quote_speakers.contains(s) {
                    w.quote_speakers.push(s.clone());
                }
            }
            found.push(cited);
        }
        w.verdict.more_quotes.push(q);
    }
    found
}

fn fmt_numbers(n: &[String]) -> String {
    if n.len() == 1 {
        format!("number {} is", n[0])
    } else {
        format!("numbers {} are", n.join(", "))
    }
}

/// Most statement comparisons the history check makes in one verification (claim against later
/// claim, claim against sentence of a later source). Each is a comparison of precomputed word and
/// number sets; the budget bounds a hostile answer at the limits (10 000 claims about one subject,
/// 16 MiB sources) to about a second. Past it, the remaining claims are not checked for supersession.
pub const HISTORY_BUDGET: usize = 20_000_000;
/// Most NLI contradiction checks between claims in one verification (each is a model call).
pub const MAX_HISTORY_NLI_CHECKS: usize = 256;

/// A statement as the history check compares it, computed once: its subject words and numbers,
/// interned and sorted.
struct Statement {
    words: Vec<u32>,
    numbers: Vec<u32>,
}

#[derive(Default)]
struct Interner(HashMap<String, u32>);

impl Interner {
    fn id(&mut self, s: String) -> u32 {
        let n = self.0.len() as u32;
        *self.0.entry(s).or_insert(n)
    }

    fn statement(&mut self, text: &str) -> Statement {
        let mut words: Vec<u32> = subject_words(text).into_iter().map(|w| self.id(w)).collect();
        words.sort_unstable();
        let numbers = number_values(text).into_iter().map(|n| self.id(n)).collect();
        Statement { words, numbers }
    }
}

impl Statement {
    /// Same subject ([`crate::attribution::same_subject_counts`]) on the precomputed word sets.
    fn same_subject(&self, o: &Statement) -> bool {
        let (mut i, mut j, mut shared) = (0, 0, 0);
        while i < self.words.len() && j < o.words.len() {
            match self.words[i].cmp(&o.words[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        same_subject_counts(shared, self.words.len(), o.words.len())
    }

    /// Different figures: both have numbers and share none.
    fn numbers_disagree(&self, o: &Statement) -> bool {
        !self.numbers.is_empty() && !o.numbers.is_empty() && !self.numbers.iter().any(|x| o.numbers.contains(x))
    }
}

/// The later statement that supersedes a claim.
#[derive(Clone, Copy)]
enum Newer {
    Claim(usize),
    Sentence(usize, usize),
}

/// Mark claims superseded by a later claim or a later source about the same subject that
/// disagrees (different figures, or the NLI model finds a contradiction). The latest such
/// statement wins; among statements of one date, the first claim (in answer order), then the
/// first source.
///
/// Cost: statements are analysed once; claims are scanned newest first and the scan stops at the
/// first disagreement; claims with the same text and date share one scan; the whole check makes at
/// most [`HISTORY_BUDGET`] comparisons and [`MAX_HISTORY_NLI_CHECKS`] model calls.
fn history(work: &mut [Work], sources: &[Source], opts: &VerifyOptions) -> Vec<Conflict> {
    let supported: Vec<usize> = (0..work.len()).filter(|&i| work[i].verdict.status == Status::Supported && work[i].chunk.is_some()).collect();
    if supported.is_empty() {
        return Vec::new();
    }
    let date = |i: usize| work[i].chunk.unwrap().date.as_str();
    let mut interner = Interner::default();
    let mut stmt: Vec<Option<Statement>> = (0..work.len()).map(|_| None).collect();
    for &i in &supported {
        stmt[i] = Some(interner.statement(&work[i].verdict.text));
    }
    // newest first; a stable sort keeps answer order within a date
    let mut newest_first = supported.clone();
    newest_first.sort_by(|&a, &b| date(b).cmp(date(a)));
    let mut sentence_stmts: Vec<Option<Vec<(String, Statement)>>> = (0..sources.len()).map(|_| None).collect();
    let mut budget = HISTORY_BUDGET;
    let mut nli_checks = 0;
    let mut memo: HashMap<(&str, &str), Option<Newer>> = HashMap::new();
    let mut marks: Vec<(usize, Newer)> = Vec::new();
    for &i in &supported {
        let key = (work[i].verdict.text.as_str(), date(i));
        let found = match memo.get(&key) {
            Some(f) => *f,
            None => {
                let si = stmt[i].as_ref().unwrap();
                let mut found = None;
                for &j in &newest_first {
                    if date(j) <= date(i) || budget == 0 {
                        break;
                    }
                    budget -= 1;
                    let sj = stmt[j].as_ref().unwrap();
                    if !si.same_subject(sj) {
                        continue;
                    }
                    let disagree = si.numbers_disagree(sj)
                        || (opts.nli.is_some() && nli_checks < MAX_HISTORY_NLI_CHECKS && {
                            nli_checks += 1;
                            contradicts(opts, &work[j].verdict.text, &work[i].verdict.text)
                        });
                    if disagree {
                        found = Some(Newer::Claim(j));
                        break;
                    }
                }
                if found.is_none() {
                    let mut best_date: Option<&str> = None;
                    for (k, s) in sources.iter().enumerate() {
                        if s.chunk.date.as_str() <= date(i) || best_date.is_some_and(|d| s.chunk.date.as_str() <= d) {
                            continue;
                        }
                        let sents = sentence_stmts[k].get_or_insert_with(|| {
                            sentences(&s.chunk)
                                .into_iter()
                                .map(|t| {
                                    let st = interner.statement(&t);
                                    (t, st)
                                })
                                .collect()
                        });
                        for (n, (_, st)) in sents.iter().enumerate() {
                            if budget == 0 {
                                break;
                            }
                            budget -= 1;
                            if si.same_subject(st) && si.numbers_disagree(st) {
                                found = Some(Newer::Sentence(k, n));
                                best_date = Some(s.chunk.date.as_str());
                                break;
                            }
                        }
                    }
                }
                memo.insert(key, found);
                found
            }
        };
        if let Some(f) = found {
            marks.push((i, f));
        }
    }
    let mut conflicts = Vec::new();
    for (i, newer) in marks {
        let ci = work[i].chunk.unwrap();
        let c = match newer {
            Newer::Claim(j) => {
                let w = &work[j];
                conflict(&work[i].verdict, ci, Some(w.verdict.index), w.verdict.source.as_deref().unwrap_or_default(), w.chunk.unwrap(), &w.verdict.text)
            }
            Newer::Sentence(k, n) => {
                let s = &sources[k];
                conflict(&work[i].verdict, ci, None, &s.label, &s.chunk, &sentence_stmts[k].as_ref().unwrap()[n].0)
            }
        };
        let v = &mut work[i].verdict;
        v.reasons.push(reason("superseded", c.message.clone()));
        v.status = Status::Flagged;
        conflicts.push(c);
    }
    conflicts
}

fn contradicts(opts: &VerifyOptions, newer: &str, older: &str) -> bool {
    let Some(nli) = opts.nli else { return false };
    match nli.score_pairs(&[(newer, older)]) {
        Ok(p) => p[0].contradiction >= nli.thresholds().contradiction.max(0.5),
        Err(_) => false,
    }
}

/// Turn texts (or sentences when there are no turns) of a chunk.
fn sentences(chunk: &Chunk) -> Vec<String> {
    match &chunk.turns {
        Some(t) if !t.is_empty() => t.iter().map(|t| chunk.text[t.text_start..t.text_end].to_string()).collect(),
        _ => chunk.text.split(['.', '?', '!', '\n']).filter(|s| !s.trim().is_empty()).map(str::to_string).collect(),
    }
}

fn conflict(older: &ClaimVerdict, oc: &Chunk, newer_claim: Option<usize>, newer_label: &str, nc: &Chunk, newer_text: &str) -> Conflict {
    let message = format!("superseded: {} ({}) said this, but {} ({}) says otherwise", oc.meeting_title, oc.date, nc.meeting_title, nc.date);
    Conflict {
        older: Side {
            date: oc.date.clone(),
            meeting_title: oc.meeting_title.clone(),
            claim: Some(older.index),
            source: older.source.clone().unwrap_or_default(),
            text: older.text.clone(),
        },
        newer: Side {
            date: nc.date.clone(),
            meeting_title: nc.meeting_title.clone(),
            claim: newer_claim,
            source: newer_label.to_string(),
            text: newer_text.trim().to_string(),
        },
        message,
    }
}

fn feedback_text(claims: &[ClaimVerdict], sources: &[Source]) -> Option<String> {
    let bad: Vec<&ClaimVerdict> = claims.iter().filter(|c| c.status != Status::Supported).collect();
    if bad.is_empty() {
        return None;
    }
    let mut t = String::from("Some claims in your answer could not be verified. Fix or remove them and answer again in the same JSON format.\n");
    for c in bad {
        let why: Vec<&str> = c.reasons.iter().map(|r| r.message.as_str()).collect();
        let cited: Vec<&str> = std::iter::once(c.source.as_deref().unwrap_or("?")).chain(c.more_quotes.iter().map(|q| q.source.as_str())).collect();
        t.push_str(&format!("- claim {} ({:?}, cited {}): {}.\n", c.index + 1, c.text, cited.join(", "), why.join("; ")));
    }
    let labels: Vec<&str> = sources.iter().map(|s| s.label.as_str()).collect();
    t.push_str(&format!(
        "Cite only {} and copy each quote word for word from the source you cite.",
        if labels.is_empty() { "the given sources".to_string() } else { labels.join(", ") }
    ));
    Some(t)
}
