//! Streaming verification (`StreamVerifier`): any split of an answer gives, at `finish`, the report
//! `verify` gives on the whole text; verdicts come as soon as a claim's object is complete; what
//! only the whole answer decides (history, a JSON object that comes later) comes as events.
use crate::common::*;
use meetcite::stream::{Finished, StreamEvent, StreamOptions, StreamVerifier};
use meetcite::verify::{Entail, EntailError, Probs, Thresholds, VerifyOptions};
use meetcite::{build_context, parse_chunks, verify, ContextOptions, Order, Policy, Report, Source};
use std::cell::Cell;

/// A small deterministic PRNG (xorshift), so every split is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `text` cut at random char boundaries into pieces of 1 to `max` bytes (a token stream, or worse).
fn split<'a>(text: &'a str, rng: &mut Rng, max: usize) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 1 + rng.below(max)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// A stand-in NLI model whose probabilities are a hash of the pair (so a wrong pairing shows) and
/// that counts the pairs it scores.
struct HashNli {
    support: meetcite::support::SupportConfig,
    scored: Cell<usize>,
}
impl HashNli {
    fn new() -> Self {
        let cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{}/models/config.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
        HashNli { support: serde_json::from_value(cfg["support"].clone()).unwrap(), scored: Cell::new(0) }
    }
}
impl Entail for HashNli {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Probs>, EntailError> {
        self.scored.set(self.scored.get() + pairs.len());
        Ok(pairs
            .iter()
            .map(|(p, h)| {
                let mut x: u64 = 1469598103934665603;
                for b in p.bytes().chain([0]).chain(h.bytes()) {
                    x = (x ^ b as u64).wrapping_mul(1099511628211);
                }
                let e = (x % 1000) as f64 / 1000.0;
                let c = ((x >> 20) % 1000) as f64 / 1000.0 * (1.0 - e);
                Probs { entailment: e, neutral: 1.0 - e - c, contradiction: c }
            })
            .collect())
    }
    fn thresholds(&self) -> Thresholds {
        Thresholds::default()
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
    fn max_length(&self) -> usize {
        256
    }
    fn support(&self) -> &meetcite::support::SupportConfig {
        &self.support
    }
}

fn json(r: &Report) -> serde_json::Value {
    serde_json::to_value(r).unwrap()
}

/// Push every piece; returns the events of each push (by piece) and the end.
fn run<N: Entail>(mut s: StreamVerifier<N>, pieces: &[&str]) -> (Vec<Vec<StreamEvent>>, Finished) {
    let during = pieces.iter().map(|p| s.push(p).unwrap()).collect();
    (during, s.finish().unwrap())
}

fn claims_sent(during: &[Vec<StreamEvent>]) -> Vec<usize> {
    during
        .iter()
        .flatten()
        .map(|e| match e {
            StreamEvent::Claim { claim } => claim.index,
            other => panic!("only claim events while streaming, got {other:?}"),
        })
        .collect()
}

/// The fixtures' answers, and variants a real LLM writes (prose and a fence around the JSON, a
/// malformed claim, unicode), each as sources + answer.
fn cases() -> Vec<(&'static str, Vec<Source>, String)> {
    let pricing = pricing_context().sources;
    let qmsum = build_context(&parse_chunks(&fixture("qmsum_chunks.json")).unwrap(), &ContextOptions { order: Order::Date, ..Default::default() }).sources;
    let p = fixture("pricing_answer.json");
    let fenced = format!("Here is what the meetings say (see {{S1}} and S3):\n\n```json\n{p}\n```\nLet me know if you need more.");
    let broken = p.replacen("\"source\": \"S1\",\n   \"quote\": \"Finance", "\"source\": 3,\n   \"quote\": \"Finance", 1).replacen(
        "\"claims\": [",
        "\"claims\": [\"not a claim\", ",
        1,
    );
    assert_ne!(broken, p);
    let unicode = p.replace("three months.", "three months — «trois mois» 🎉.");
    vec![
        ("pricing", pricing.clone(), p),
        ("pricing fenced", pricing.clone(), fenced),
        ("pricing broken claims", pricing.clone(), broken),
        ("pricing unicode", pricing, unicode),
        ("qmsum", qmsum, fixture("qmsum_answer.json")),
        ("pricing several quotes per claim", pricing_context().sources, fixture("pricing_answer_quotes.json")),
    ]
}

#[test]
fn any_split_gives_the_report_verify_gives() {
    let mut rng = Rng(0x5eed);
    for (name, sources, answer) in cases() {
        for policy in [Policy::Warn, Policy::Drop, Policy::Feedback] {
            let opts = VerifyOptions { policy, ..Default::default() };
            let want = json(&verify(&answer, &sources, &opts).unwrap());
            for max in [1, 3, 17, 400, answer.len()] {
                for _ in 0..if max < 20 { 3 } else { 1 } {
                    let pieces = split(&answer, &mut rng, max);
                    let (during, end) = run(StreamVerifier::new(sources.clone(), StreamOptions::from(&opts)), &pieces);
                    assert_eq!(json(&end.report), want, "{name}, {policy:?}, pieces of up to {max} bytes");
                    // every claim of the answer was sent while streaming, each once, in order
                    let all = end.report.claims.len() + end.report.dropped.len();
                    assert_eq!(claims_sent(&during), (0..all).collect::<Vec<_>>(), "{name}");
                    assert!(end.events.iter().all(|e| matches!(e, StreamEvent::Update { .. })), "{name}: {:?}", end.events);
                }
            }
        }
    }
}

/// Each verdict arrives with the piece that completes its claim's object, not later.
#[test]
fn a_verdict_arrives_with_the_piece_that_completes_its_claim() {
    let sources = pricing_context().sources;
    let answer = fixture("pricing_answer.json");
    let pieces: Vec<&str> = answer.split_inclusive('\n').collect();
    let (during, _) = run(StreamVerifier::new(sources, StreamOptions::default()), &pieces);
    for (i, events) in during.iter().enumerate() {
        let closes_claim = pieces[i].starts_with("  }");
        assert_eq!(events.len(), usize::from(closes_claim), "line {i}: {:?}", pieces[i]);
    }
    // the last claim (S9) is known before the array closes
    let last = during.iter().rposition(|e| !e.is_empty()).unwrap();
    assert!(last < pieces.len() - 2);
}

/// The history check needs every claim: the April decision is superseded by the May one only at
/// `finish`, as an `update` of the verdict sent earlier.
#[test]
fn history_updates_come_at_finish() {
    let sources = pricing_context().sources;
    let answer = fixture("pricing_answer.json");
    let (during, end) = run(StreamVerifier::new(sources.clone(), StreamOptions::default()), &[&answer]);
    assert!(!end.report.conflicts.is_empty(), "the fixture has a superseded decision");
    let updated: Vec<_> = end
        .events
        .iter()
        .map(|e| match e {
            StreamEvent::Update { claim } => claim,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(!updated.is_empty());
    for u in updated {
        let sent = during[0].iter().find_map(|e| match e {
            StreamEvent::Claim { claim } if claim.index == u.index => Some(claim),
            _ => None,
        });
        assert_ne!(sent.unwrap(), u);
        assert_eq!(u, &end.report.claims[u.index]);
    }
}

/// With a model: each claim is scored as it arrives, `finish` scores only the history check's
/// pairs, and the report is verify's, for any split.
#[test]
fn with_a_model_pairs_are_scored_once_and_the_report_is_verifys() {
    let mut rng = Rng(42);
    for (name, sources, answer) in cases() {
        let plain_nli = HashNli::new();
        let want = json(&verify(&answer, &sources, &VerifyOptions { nli: Some(&plain_nli), ..Default::default() }).unwrap());
        assert!(plain_nli.scored.get() > 0);
        for max in [2, 50, answer.len()] {
            let nli = HashNli::new();
            let pieces = split(&answer, &mut rng, max);
            let (during, end) = run(StreamVerifier::with_model(sources.clone(), StreamOptions::default(), &nli), &pieces);
            assert_eq!(json(&end.report), want, "{name}, up to {max} bytes");
            assert!(end.report.nli_used);
            assert_eq!(nli.scored.get(), plain_nli.scored.get(), "{name}: a pair scored twice or not at all");
            for e in during.iter().flatten() {
                let StreamEvent::Claim { claim } = e else { panic!() };
                // scored before it was sent
                assert_eq!(claim.support.is_some(), claim.quote_score.is_some_and(|s| s >= 80.0) && claim.found_in.is_none(), "{name}: {claim:?}");
            }
        }
    }
}

/// When the real answer comes later (in a fence, after an example object with claims in the
/// prose), what was sent from the example is updated or withdrawn.
#[test]
fn claims_the_whole_answer_reads_otherwise_are_updated_or_retracted() {
    let sources = pricing_context().sources;
    let example = r#"{"claims": [{"text": "x", "source": "S1", "quote": "y"}, {"text": "z", "source": "S2", "quote": "w"}]}"#;
    let real = r#"{"claims": [{"text": "Luis Vega said finance can live with it.", "source": "S1", "quote": "Finance can live with that."}]}"#;
    let answer = format!("The format is {example}. Answer:\n```json\n{real}\n```");
    let want = verify(&answer, &sources, &VerifyOptions::default()).unwrap();
    let (during, end) = run(StreamVerifier::new(sources, StreamOptions::default()), &[&answer[..40], &answer[40..]]);
    assert_eq!(claims_sent(&during), vec![0, 1]);
    assert_eq!(json(&end.report), json(&want));
    assert_eq!(end.events.len(), 2, "{:?}", end.events);
    assert!(matches!(&end.events[0], StreamEvent::Update { claim } if claim.text.starts_with("Luis")));
    assert_eq!(end.events[1], StreamEvent::Retract { index: 1 });
}

/// Bad input: a piece past the size limit is refused and the stream keeps what it had; an answer
/// that never becomes JSON fails at `finish` with verify's error.
#[test]
fn bad_input_is_an_error_and_loses_nothing() {
    let sources = pricing_context().sources;
    let answer = fixture("pricing_answer.json");
    let mut s = StreamVerifier::new(sources.clone(), StreamOptions::default());
    let (a, b) = answer.split_at(answer.len() / 2);
    s.push(a).unwrap();
    let huge = "x".repeat(meetcite::answer::MAX_ANSWER_BYTES);
    assert_eq!(s.push(&huge).unwrap_err().code(), "too_large");
    assert_eq!(s.text(), a);
    s.push(b).unwrap();
    assert_eq!(json(&s.finish().unwrap().report), json(&verify(&answer, &sources, &VerifyOptions::default()).unwrap()));
    let mut s = StreamVerifier::new(sources.clone(), StreamOptions::default());
    assert!(s.push("I could not find that in the meetings.").unwrap().is_empty());
    assert_eq!(s.finish().unwrap_err().code(), "no_json");
    let mut s = StreamVerifier::new(sources, StreamOptions::default());
    assert!(s.push("{\"claims\": [{\"text\": \"a\", \"source\": \"S1\"").unwrap().is_empty());
    assert_eq!(s.finish().unwrap_err().code(), "malformed_json");
}

/// The shipped model: a stream scored claim by claim finishes with verify's report, bit for bit
/// (the model scores each pair alone, so the batch a pair rides in changes nothing).
#[cfg(feature = "nli")]
#[test]
fn shipped_model_stream_equals_verify() {
    let read = |p: &str| std::fs::read(format!("{}/models/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let m = meetcite::nli::NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), &read("config.json")).unwrap();
    let mut rng = Rng(7);
    for (name, sources, answer) in cases().into_iter().filter(|(n, ..)| *n == "pricing" || *n == "qmsum") {
        let want = json(&verify(&answer, &sources, &VerifyOptions { nli: Some(&m), ..Default::default() }).unwrap());
        let pieces = split(&answer, &mut rng, 24);
        let (during, end) = run(StreamVerifier::with_model(sources, StreamOptions::default(), &m), &pieces);
        assert_eq!(json(&end.report), want, "{name}");
        assert_eq!(claims_sent(&during).len(), end.report.claims.len() + end.report.dropped.len());
    }
}

mod property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// Any cut points, any fixture answer, any policy, with or without a model: `finish` gives
        /// verify's report, and the claims were all sent before the end.
        #[test]
        fn any_cuts_give_verifys_report(case in 0usize..5, cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..60), policy in 0usize..3, with_model: bool) {
            let (name, sources, answer) = cases().swap_remove(case);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(answer.len() + 1)).filter(|&i| answer.is_char_boundary(i)).collect();
            at.extend([0, answer.len()]);
            at.sort_unstable();
            at.dedup();
            let pieces: Vec<&str> = at.windows(2).map(|w| &answer[w[0]..w[1]]).collect();
            let policy = [Policy::Warn, Policy::Drop, Policy::Feedback][policy];
            let nli = HashNli::new();
            let want_nli = HashNli::new();
            let opts = VerifyOptions { policy, ..Default::default() };
            let (want, (during, end)) = if with_model {
                (verify(&answer, &sources, &VerifyOptions { nli: Some(&want_nli), ..opts }).unwrap(), run(StreamVerifier::with_model(sources.clone(), StreamOptions::from(&opts), &nli), &pieces))
            } else {
                (verify(&answer, &sources, &opts).unwrap(), run(StreamVerifier::new(sources.clone(), StreamOptions::from(&opts)), &pieces))
            };
            prop_assert_eq!(json(&end.report), json(&want), "{}", name);
            prop_assert_eq!(claims_sent(&during).len(), end.report.claims.len() + end.report.dropped.len());
            prop_assert_eq!(nli.scored.get(), want_nli.scored.get());
        }
    }
}
