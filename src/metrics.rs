//! Stage 7: metrics over a report. Citation recall and precision in the ALCE sense (a claim is
//! recalled when its citations support it; its citations are precise when they support it:
//! counted per claim, so a claim with several quotes counts once), quote match rate (per quote:
//! a claim's own and its further ones), timestamp error against gold times, abstention.

use crate::report::{Report, Status};
use serde::{Deserialize, Serialize};

/// Optional gold data: per claim index, the true time of the quoted words (seconds), and
/// whether the question is answerable at all.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(default)]
pub struct Gold {
    pub times: Vec<Option<f64>>,
    pub answerable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Metrics {
    pub claims: usize,
    pub citation_recall: f64,
    pub citation_precision: f64,
    pub quote_match_rate: f64,
    pub timestamp_mae: Option<f64>,
    pub timestamp_n: usize,
    pub abstained: bool,
    /// `Some(true)` when abstention was right (unanswerable and abstained, or answerable and not).
    pub abstention_correct: Option<bool>,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

pub fn metrics(report: &Report, gold: &Gold) -> Metrics {
    let all: Vec<_> = report.claims.iter().chain(report.dropped.iter()).collect();
    let n = all.len();
    let supported = all.iter().filter(|c| c.status == Status::Supported).count();
    // citations: every claim that names a source (unknown ones count as imprecise)
    let cited = all.iter().filter(|c| c.source.is_some() && c.status != Status::Unparsable).count();
    let precise =
        all.iter().filter(|c| c.status == Status::Supported || (c.status == Status::Flagged && c.reasons.iter().all(|r| r.code == "superseded"))).count();
    // quotes: each claim's own and its further ones, each against its own source
    let more = all.iter().flat_map(|c| c.more_quotes.iter());
    let with_source = all.iter().filter(|c| c.chunk_id.is_some()).count() + more.clone().filter(|q| q.chunk_id.is_some()).count();
    let quote_found = all
        .iter()
        .filter(|c| {
            c.chunk_id.is_some()
                && c.span.is_some()
                && !c
                    .reasons
                    .iter()
                    .any(|r| r.quote.is_none() && matches!(r.code.as_str(), "quote_not_found" | "misattributed" | "number_mismatch" | "stitched_quote"))
        })
        .count()
        + more.filter(|q| q.found).count();
    let mut errs = Vec::new();
    for c in &all {
        if let (Some(Some(g)), Some(t)) = (gold.times.get(c.index), c.time) {
            errs.push((t - g).abs());
        }
    }
    Metrics {
        claims: n,
        citation_recall: ratio(supported, n),
        citation_precision: ratio(precise, cited),
        quote_match_rate: ratio(quote_found, with_source),
        timestamp_mae: (!errs.is_empty()).then(|| errs.iter().sum::<f64>() / errs.len() as f64),
        timestamp_n: errs.len(),
        abstained: report.abstain,
        abstention_correct: gold.answerable.map(|a| a != report.abstain),
    }
}
