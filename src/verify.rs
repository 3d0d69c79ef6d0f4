//! Stage 6a: verdicts. Runs the matcher, the number, speaker and NLI checks and the history check
//! over every claim, applies the policy, and says when the meetings do not answer the question.

use crate::answer::{parse_answer, AnswerError, Claim};
use crate::attribution::{numbers_disagree, same_subject, speaker_mismatch};
use crate::context::{Chunk, Source};
use crate::quote::{locate, match_quote, Location, MatchOptions, QuoteMatch};
use crate::render::{deep_link, DeepLink};
use crate::text::number_values;
use serde::{Deserialize, Serialize};

/// Class probabilities of one (premise, hypothesis) pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Probs {
    pub entailment: f64,
    pub neutral: f64,
    pub contradiction: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    pub entailment: f64,
    pub contradiction: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { entailment: 0.5, contradiction: 0.5 }
    }
}

/// What the verifier needs from an NLI model ([`crate::nli::NliModel`] implements it).
pub trait Entail {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, String>;
    fn thresholds(&self) -> Thresholds;
    fn count_tokens(&self, text: &str) -> usize;
    fn max_length(&self) -> usize;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Supported,
    Flagged,
    UnknownSource,
    Unparsable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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

/// Why a claim is not supported. `code` is stable: `quote_not_found`, `number_mismatch`,
/// `stitched_quote`, `quote_too_long`, `claim_number_mismatch`, `not_entailed`,
/// `contradicted_by_turn`, `speaker_mismatch`, `superseded`, `unknown_source`, `unparsable`,
/// `nli_error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub code: String,
    pub message: String,
}

fn reason(code: &str, message: String) -> Reason {
    Reason { code: code.into(), message }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NliScores {
    /// premise = the quote's turn and its neighbours (or the whole chunk when it fits)
    pub context: Probs,
    /// premise = the quoted words, with their speaker
    pub quote: Probs,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub index: usize,
    pub text: String,
    /// The source label as cited (`S2`), when it could be read.
    pub source: Option<String>,
    pub status: Status,
    pub reasons: Vec<Reason>,
    pub quote: String,
    pub quote_score: Option<f64>,
    /// UTF-8 byte offsets of the matched span in the chunk text.
    pub span: Option<(usize, usize)>,
    pub matched_text: Option<String>,
    pub speaker: Option<String>,
    pub time: Option<f64>,
    pub time_source: Option<String>,
    pub nli: Option<NliScores>,
    pub link: Option<DeepLink>,
    pub chunk_id: Option<String>,
    pub meeting_id: Option<String>,
    pub meeting_title: Option<String>,
    pub date: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
pub struct Conflict {
    pub older: Side,
    pub newer: Side,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub supported: usize,
    pub flagged: usize,
    pub unknown_source: usize,
    pub unparsable: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

pub const ABSTAIN_MESSAGE: &str = "The meetings provided do not answer this question.";

#[derive(Clone, Copy, Default)]
pub struct VerifyOptions<'a> {
    pub policy: Policy,
    pub matching: MatchOptions,
    pub nli: Option<&'a dyn Entail>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Answer(#[from] AnswerError),
    #[error("NLI model failed: {0}")]
    Nli(String),
}

impl VerifyError {
    pub fn code(&self) -> &'static str {
        match self {
            VerifyError::Answer(e) => e.code(),
            VerifyError::Nli(_) => "nli_failed",
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
    if let (Some(turns), Some(i)) = (chunk.turns.as_ref().filter(|t| !t.is_empty()), loc.turn) {
        let last = turns.iter().rposition(|t| t.text_start < span.1).unwrap_or(i).max(i);
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
        return render(turns[lo].text_start, turns[hi].text_end);
    }
    // no turns: a character window around the span (about 4 characters per token)
    let half = budget * 2;
    let mut a = span.0.saturating_sub(half);
    let mut b = (span.1 + half).min(text.len());
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    while !text.is_char_boundary(b) {
        b += 1;
    }
    text[a..b].to_string()
}

fn all_speakers(sources: &[Source]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for s in sources {
        let turn_speakers = s.chunk.turns.iter().flatten().map(|t| &t.speaker);
        for sp in s.chunk.speakers.iter().chain(turn_speakers) {
            if !v.contains(sp) {
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

struct Work<'s> {
    verdict: ClaimVerdict,
    chunk: Option<&'s Chunk>,
    premise_ctx: Option<String>,
    premise_quote: Option<String>,
}

/// Verify an LLM answer against the lookup table of the context it was given.
pub fn verify(answer: &str, sources: &[Source], opts: &VerifyOptions) -> Result<Report, VerifyError> {
    let parsed = parse_answer(answer)?;
    let speakers = all_speakers(sources);
    let mut work: Vec<Work> = Vec::new();
    for e in &parsed.errors {
        work.push(Work {
            verdict: blank(e.index, e.text.clone().unwrap_or_default(), e.source_raw.clone(), String::new(), Status::Unparsable, vec![reason("unparsable", e.to_string())]),
            chunk: None,
            premise_ctx: None,
            premise_quote: None,
        });
    }
    for c in &parsed.claims {
        work.push(check_claim(c, sources, &speakers, opts));
    }
    // NLI, batched over all claims
    if let Some(nli) = opts.nli {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        let mut owners = Vec::new();
        for (i, w) in work.iter().enumerate() {
            if let (Some(pc), Some(pq)) = (&w.premise_ctx, &w.premise_quote) {
                pairs.push((pc, &w.verdict.text));
                pairs.push((pq, &w.verdict.text));
                owners.push(i);
            }
        }
        if !pairs.is_empty() {
            let probs = nli.score_pairs(&pairs).map_err(VerifyError::Nli)?;
            let th = nli.thresholds();
            for (k, &i) in owners.iter().enumerate() {
                let (pc, pq) = (probs[2 * k], probs[2 * k + 1]);
                let v = &mut work[i].verdict;
                v.nli = Some(NliScores { context: pc, quote: pq });
                let entailed_ctx = pc.entailment >= th.entailment && pc.contradiction < th.contradiction;
                let entailed_quote = pq.entailment >= th.entailment && pq.contradiction < th.contradiction;
                if entailed_quote && !entailed_ctx && pc.contradiction >= th.contradiction {
                    v.reasons.push(reason("contradicted_by_turn", format!("the quote supports the claim but its turn contradicts it (p={:.2})", pc.contradiction)));
                } else if !entailed_ctx && !entailed_quote {
                    let p = pc.entailment.max(pq.entailment);
                    v.reasons.push(reason("not_entailed", format!("the source does not entail the claim (p={p:.2})")));
                }
            }
        }
    }
    for w in &mut work {
        if w.verdict.status == Status::Flagged && w.verdict.reasons.is_empty() {
            w.verdict.status = Status::Supported;
        }
    }
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
    Ok(Report {
        policy: opts.policy,
        claims,
        counts,
        dropped,
        conflicts,
        abstain,
        abstain_message: if abstain { ABSTAIN_MESSAGE.to_string() } else { String::new() },
        feedback,
        nli_used: opts.nli.is_some(),
    })
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
        link: None,
        chunk_id: None,
        meeting_id: None,
        meeting_title: None,
        date: None,
    }
}

fn check_claim<'s>(c: &Claim, sources: &'s [Source], speakers: &[String], opts: &VerifyOptions) -> Work<'s> {
    let label = format!("S{}", c.source);
    let Some(src) = crate::context::lookup(sources, c.source) else {
        let known = match sources.len() {
            0 => "there are no sources".to_string(),
            n => format!("the sources are S1..S{n}"),
        };
        return Work {
            verdict: blank(c.index, c.text.clone(), Some(label.clone()), c.quote.clone(), Status::UnknownSource, vec![reason("unknown_source", format!("{label} is not a source ({known})"))]),
            chunk: None,
            premise_ctx: None,
            premise_quote: None,
        };
    };
    let chunk = &src.chunk;
    let mut v = blank(c.index, c.text.clone(), Some(label), c.quote.clone(), Status::Flagged, Vec::new());
    v.chunk_id = Some(chunk.id.clone());
    v.meeting_id = Some(chunk.meeting_id.clone());
    v.meeting_title = Some(chunk.meeting_title.clone());
    v.date = Some(chunk.date.clone());
    let m: QuoteMatch = match_quote(&chunk.text, &c.quote, &opts.matching);
    v.quote_score = Some(m.score);
    if m.too_long {
        v.reasons.push(reason("quote_too_long", format!("the quote is longer than {} characters", crate::quote::MAX_QUOTE_CHARS)));
    } else if m.score < opts.matching.threshold {
        v.reasons.push(reason("quote_not_found", format!("the quote was not found in {} (best match {:.0}/100)", src.label, m.score)));
    } else if m.stitched {
        v.reasons.push(reason("stitched_quote", format!("the quote stitches together distant parts of {} ({} characters skipped)", src.label, m.max_gap)));
    }
    if !m.missing_numbers.is_empty() && m.score >= opts.matching.threshold {
        v.reasons.push(reason("number_mismatch", format!("the quote's {} not in the transcript at that point", fmt_numbers(&m.missing_numbers))));
    }
    let mut w = Work { verdict: v, chunk: Some(chunk), premise_ctx: None, premise_quote: None };
    if m.score < opts.matching.threshold || m.too_long {
        return w;
    }
    let v = &mut w.verdict;
    let loc = locate(chunk, m.start, m.end);
    let matched = chunk.text[m.start..m.end].to_string();
    v.span = Some((m.start, m.end));
    v.matched_text = Some(matched.clone());
    v.speaker = loc.speaker.clone();
    v.time = Some(loc.time);
    v.time_source = Some(loc.time_source.clone());
    v.link = Some(deep_link(&chunk.meeting_title, &chunk.meeting_id, &chunk.date, loc.time, loc.speaker.as_deref(), chunk.recording_url.as_deref()));
    let evidence = &chunk.text[loc.turn_start..loc.turn_end];
    let missing = claim_numbers_missing(&c.text, evidence, &chunk.date);
    if !missing.is_empty() {
        v.reasons.push(reason("claim_number_mismatch", format!("the claim's {} not what the transcript says there", fmt_numbers(&missing))));
    }
    if let Some(named) = speaker_mismatch(&c.text, &matched, &loc.speakers, speakers) {
        v.reasons.push(reason("speaker_mismatch", format!("the claim names {} but the quoted words are {}'s", named.join(" and "), loc.speakers.join(" and "))));
    }
    if let Some(nli) = opts.nli {
        let budget = nli.max_length().saturating_sub(nli.count_tokens(&c.text) + 4);
        w.premise_ctx = Some(context_premise(chunk, &loc, (m.start, m.end), budget, nli));
        w.premise_quote = Some(speaker_prefix(loc.speaker.as_deref(), &matched));
    }
    w
}

fn fmt_numbers(n: &[String]) -> String {
    if n.len() == 1 { format!("number {} is", n[0]) } else { format!("numbers {} are", n.join(", ")) }
}

/// Mark claims superseded by a later claim or a later source about the same subject that
/// disagrees (different figures, or the NLI model finds a contradiction).
fn history(work: &mut [Work], sources: &[Source], opts: &VerifyOptions) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    let supported: Vec<usize> = (0..work.len()).filter(|&i| work[i].verdict.status == Status::Supported && work[i].chunk.is_some()).collect();
    let mut marks: Vec<(usize, Conflict)> = Vec::new();
    for &i in &supported {
        let ci = work[i].chunk.unwrap();
        // the latest later statement that disagrees: first from claims, then from sources
        let mut best: Option<Conflict> = None;
        for &j in &supported {
            let cj = work[j].chunk.unwrap();
            if cj.date <= ci.date || !same_subject(&work[i].verdict.text, &work[j].verdict.text) {
                continue;
            }
            if numbers_disagree(&work[i].verdict.text, &work[j].verdict.text) || contradicts(opts, &work[j].verdict.text, &work[i].verdict.text) {
                let c = conflict(&work[i].verdict, ci, Some(j), &work[j].verdict.source.clone().unwrap_or_default(), cj, &work[j].verdict.text);
                if best.as_ref().is_none_or(|b| b.newer.date < c.newer.date) {
                    best = Some(c);
                }
            }
        }
        if best.is_none() {
            for s in sources.iter().filter(|s| s.chunk.date > ci.date) {
                for sentence in sentences(&s.chunk) {
                    if same_subject(&work[i].verdict.text, &sentence) && numbers_disagree(&work[i].verdict.text, &sentence) {
                        let c = conflict(&work[i].verdict, ci, None, &s.label, &s.chunk, &sentence);
                        if best.as_ref().is_none_or(|b| b.newer.date < c.newer.date) {
                            best = Some(c);
                        }
                        break;
                    }
                }
            }
        }
        if let Some(c) = best {
            marks.push((i, c));
        }
    }
    for (i, c) in marks {
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
    let message = format!(
        "superseded: {} ({}) said this, but {} ({}) says otherwise",
        oc.meeting_title,
        oc.date,
        nc.meeting_title,
        nc.date
    );
    Conflict {
        older: Side { date: oc.date.clone(), meeting_title: oc.meeting_title.clone(), claim: Some(older.index), source: older.source.clone().unwrap_or_default(), text: older.text.clone() },
        newer: Side { date: nc.date.clone(), meeting_title: nc.meeting_title.clone(), claim: newer_claim, source: newer_label.to_string(), text: newer_text.trim().to_string() },
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
        t.push_str(&format!("- claim {} ({:?}, cited {}): {}.\n", c.index + 1, c.text, c.source.as_deref().unwrap_or("?"), why.join("; ")));
    }
    let labels: Vec<&str> = sources.iter().map(|s| s.label.as_str()).collect();
    t.push_str(&format!("Cite only {} and copy each quote word for word from the source you cite.", if labels.is_empty() { "the given sources".to_string() } else { labels.join(", ") }));
    Some(t)
}
