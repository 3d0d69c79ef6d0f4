//! The support verdict with the shipped model, on real-looking meeting turns: proposal vs
//! decision, speaker swap, number change, negation, paraphrase; the README's worked example with
//! the model on; and the config section that carries the score's weights.
use crate::common;

use meetcite::nli::NliModel;
use meetcite::support::{SupportConfig, FEATURES};
use meetcite::verify::{score_premise, Status, VerifyOptions};

fn read(p: &str) -> Vec<u8> {
    std::fs::read(format!("{}/models/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn shipped() -> NliModel {
    NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), &read("config.json")).unwrap()
}

const PILOT: &str = "Luis Vega: Okay, um, next item is the pilot pricing for Northwind.\n\
Dana Okafor: I talked to their procurement team. I think we should offer a ten percent discount for the pilot, uh, capped at fifty seats.\n\
Priya Raman: {disfmarker} And the pilot stays at three months.";

/// (claim, supported?) against [`PILOT`], scored as `meetcite score` does (no quote).
fn check(m: &NliModel, premise: &str, cases: &[(&str, bool)]) {
    let opts = VerifyOptions::default();
    let mut wrong = Vec::new();
    for (claim, want) in cases {
        let r = score_premise(premise, claim, None, m, &opts).unwrap();
        let s = r.support.unwrap();
        assert!((0.0..=1.0).contains(&s.score));
        assert_eq!(s.supported, s.score >= s.threshold);
        if s.supported != *want {
            wrong.push(format!("{claim:?}: support {:.3} (threshold {:.2}), parts {:?}", s.score, s.threshold, &s.parts[..s.parts.len().min(4)]));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

/// The support score of `claim` against `premise` (no quote), and the contribution of `feature`.
fn score_of(m: &NliModel, premise: &str, claim: &str, feature: &str) -> (f64, f64) {
    let s = score_premise(premise, claim, None, m, &VerifyOptions::default()).unwrap().support.unwrap();
    let c = s.parts.iter().find(|p| p.feature == feature).map(|p| p.contribution).unwrap_or(0.0);
    (s.score, c)
}

#[test]
fn paraphrase_is_supported_and_edits_are_not() {
    let m = shipped();
    check(
        &m,
        PILOT,
        &[
            // paraphrase of the last turn
            ("The pilot runs for three months.", true),
            ("Priya Raman said the pilot stays at three months.", true),
            // number changed
            ("The pilot runs for six months.", false),
            // negation
            ("The pilot does not run for three months.", false),
        ],
    );
    // speaker swapped (Priya said it, not Luis): without a quote the speaker is a feature, not a
    // rule, and with every word of the claim in the turn the score still clears the threshold
    // (MODEL_CARD.md: speaker edits caught 67 %); it must rank clearly below the true claim, with
    // the speaker feature pulling it down. With a quote, `verify` flags it by rule (README claim 3).
    let (right, _) = score_of(&m, PILOT, "Priya Raman said the pilot stays at three months.", "speaker_mismatch");
    let (swapped, pull) = score_of(&m, PILOT, "Luis Vega said the pilot stays at three months.", "speaker_mismatch");
    assert!(pull < -0.5 && swapped < right - 0.15, "swapped {swapped:.3} (speaker part {pull:.2}) vs right {right:.3}");
}

#[test]
fn a_proposal_is_not_a_decision() {
    let m = shipped();
    let premise = "Dana Okafor: I talked to their procurement team. I think we should offer a ten percent discount for the pilot.";
    check(
        &m,
        premise,
        &[
            ("Dana Okafor suggested offering a ten percent discount for the pilot.", true),
            ("The team decided to offer a ten percent discount for the pilot.", false),
            // hedged -> certain
            ("Dana Okafor confirmed that the discount will definitely be ten percent.", false),
        ],
    );
    // "agreed" on a proposal: still above the threshold today (proposal edits caught 49 %, see
    // MODEL_CARD.md), but ranked well below the faithful report and pulled down by the
    // decision feature
    let (faithful, _) = score_of(&m, premise, "Dana Okafor suggested offering a ten percent discount for the pilot.", "decision_unsupported");
    let (agreed, pull) = score_of(&m, premise, "The team agreed on a ten percent discount.", "decision_unsupported");
    assert!(pull < -0.5 && agreed < faithful - 0.15, "agreed {agreed:.3} (decision part {pull:.2}) vs faithful {faithful:.3}");
    // with the agreement in the transcript, the same decision claim is supported
    let agreed = format!("{premise}\nLuis Vega: Ten percent is fine by me.\nDana Okafor: Great, so we agreed: ten percent for the pilot.");
    check(&m, &agreed, &[("The team agreed on a ten percent discount.", true)]);
}

#[test]
fn long_premises_are_read_in_windows() {
    // the supporting turn sits after ~1,500 words of other talk: a single truncated pair never
    // sees it; the best-covering windows do
    let m = shipped();
    // (the filler names its models by letter: a number of the claim that occurs elsewhere in the
    // source counts as found there, the weakness MODEL_CARD.md names)
    let filler: String = (0..60)
        .map(|i| {
            format!(
                "Marketing: We looked at the colour of the case for model {} and the shape of the buttons in the focus group.\n",
                (b'A' + (i % 26) as u8) as char
            )
        })
        .collect();
    let premise = format!("{filler}Project Manager: So the battery lasts about two years with the kinetic charger.\n{filler}");
    let r = score_premise(&premise, "The Project Manager said the battery lasts about two years.", None, &m, &VerifyOptions::default()).unwrap();
    assert!(r.pairs >= 2, "{} windows scored", r.pairs);
    let true_claim = r.support.unwrap();
    // the window that was scored holds the turn: every content word of the claim is in it
    let cov = true_claim.parts.iter().find(|p| p.feature == "coverage_local").map(|p| p.value);
    assert_eq!(cov, Some(1.0), "{true_claim:?}");
    let r = score_premise(&premise, "The Project Manager said the battery lasts about five years.", None, &m, &VerifyOptions::default()).unwrap();
    let wrong = r.support.unwrap();
    assert!(!wrong.supported, "{wrong:?}");
    assert!(wrong.score < true_claim.score - 0.15, "five years {:.3} vs two years {:.3}", wrong.score, true_claim.score);
}

/// The README's worked example with the model on: every verdict right, claim 1 superseded.
#[test]
fn readme_example_with_the_model() {
    let m = shipped();
    let ctx = common::pricing_context();
    let answer = common::fixture("pricing_answer.json");
    let r = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(&m), ..Default::default() }).unwrap();
    // (status, the first reason): a claim may carry more than one reason (claim 2's wrong number
    // also makes the source not support it), the first is the one the reader sees first
    let codes: Vec<(Status, Option<&str>)> = r.claims.iter().map(|c| (c.status, c.reasons.first().map(|x| x.code.as_str()))).collect();
    let want: Vec<(Status, Option<&str>)> = vec![
        (Status::Flagged, Some("superseded")),
        (Status::Flagged, Some("claim_number_mismatch")),
        (Status::Flagged, Some("speaker_mismatch")),
        (Status::Supported, None),
        (Status::Supported, None),
        (Status::UnknownSource, Some("unknown_source")),
    ];
    assert_eq!(codes, want, "{:#?}", r.claims.iter().map(|c| (&c.text, &c.support)).collect::<Vec<_>>());
    // every scored claim carries its support score and the parts that moved it
    for c in r.claims.iter().filter(|c| c.nli.is_some()) {
        let s = c.support.as_ref().expect("a scored claim has a support score");
        assert!(!s.parts.is_empty());
    }
    // the message names findings a reader can check, never the fit's length priors: claim 2 is
    // lowered by its number even though the quote-first fit's `evidence_words` part is larger
    let msg = &r.claims[1].reasons.iter().find(|x| x.code == "not_entailed").expect("claim 2 is not entailed").message;
    assert!(msg.contains("a number not in the source"), "{msg}");
    assert!(!msg.contains("length"), "{msg}");
    let s2 = r.claims[1].support.as_ref().unwrap();
    let prior = s2.parts.iter().find(|p| p.feature == "evidence_words").expect("the length prior is still a part of the score");
    let number = s2.parts.iter().find(|p| p.feature.starts_with("number_missing") && p.contribution < 0.0).expect("a number part");
    assert!(prior.contribution < number.contribution, "the case this pins: the prior outweighs the number, {s2:?}");
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!((r.conflicts[0].older.date.as_str(), r.conflicts[0].newer.date.as_str()), ("2024-04-12", "2024-05-03"));
}

#[test]
fn support_config_is_validated_and_optional() {
    // the shipped config carries fitted weights for known features only
    let cfg: serde_json::Value = serde_json::from_slice(&read("config.json")).unwrap();
    let sc: SupportConfig = serde_json::from_value(cfg["support"].clone()).expect("config.json has a support section");
    sc.validate().unwrap();
    assert!(sc.weights.keys().all(|k| FEATURES.contains(&k.as_str())));
    assert!(sc.weights.len() > 3, "fitted on more than NLI alone");
    // an unknown feature name is refused with the field named
    let mut bad = cfg.clone();
    bad["support"]["weights"]["vibes"] = serde_json::json!(1.0);
    let e = NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), bad.to_string().as_bytes()).unwrap_err();
    assert_eq!(e.code(), "model_config");
    assert!(e.to_string().contains("vibes"), "{e}");
    let mut bad = cfg.clone();
    bad["support"]["threshold"] = serde_json::json!(1.5);
    assert_eq!(NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), bad.to_string().as_bytes()).unwrap_err().code(), "model_config");
    // without the section: NLI entailment alone at the model's threshold (the old rule)
    let mut old = cfg.clone();
    old.as_object_mut().unwrap().remove("support");
    let m = NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), old.to_string().as_bytes()).unwrap();
    let r = score_premise(PILOT, "The pilot runs for three months.", None, &m, &VerifyOptions::default()).unwrap();
    let s = r.support.unwrap();
    assert_eq!(s.supported, r.probs.entailment >= m.thresholds().entailment);
    assert_eq!(s.parts.len(), 1);
    assert_eq!(s.parts[0].feature, "nli_entail");
}

mod no_panic {
    //! The support features are string work on untrusted text (chunks and claims from the page):
    //! any text, any claim, no panic, finite values. (An inline-label search once sliced inside
    //! a multi-byte character; found on calib data, now pinned here for every input shape.)
    use meetcite::support::{clean_premise, features, line_turns, windows, Evidence, NliPart, FEATURES};
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        // speaker labels, sentence ends, numbers, dashes, multi-byte letters, markers, newlines
        let piece = prop_oneof![
            Just("Dana Okafor: ".to_string()),
            Just("Project Manager: ".to_string()),
            Just(". ".to_string()),
            Just("? ".to_string()),
            Just("\n".to_string()),
            Just("{disfmarker} ".to_string()),
            Just("ten percent ".to_string()),
            Just("15% ".to_string()),
            Just("2024-05-03 ".to_string()),
            Just("—".to_string()),
            Just("naïve Zoë ".to_string()),
            Just("we agreed ".to_string()),
            Just("not ".to_string()),
            "\\PC{0,12}",
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn any_text_any_claim(premise in text(), claim in text(), cut in 0usize..64) {
            let turns = line_turns(&premise);
            for t in &turns {
                prop_assert!(t.start <= t.end && t.end <= premise.len());
                prop_assert!(premise.is_char_boundary(t.start) && premise.is_char_boundary(t.end));
            }
            let cleaned = clean_premise(&premise);
            let ev = Evidence::from_text(&cleaned);
            let count = |s: &str| s.split_whitespace().count();
            let ws = windows(&claim, &ev, 8 + cut, 3, &count);
            prop_assert!(ws.len() <= 3);
            let local = ws.first().map(|w| w.premise.as_str()).unwrap_or("");
            let part = NliPart {
                entailment: 0.5,
                entailment_mean: 0.4,
                contradiction: 0.1,
                local,
                turns: ws.first().and_then(|w| w.turns),
                quote_turn: None,
                quote_speakers: &[],
                quoted: None,
            };
            let f = features(&claim, &ev, &part);
            prop_assert_eq!(f.len(), FEATURES.len());
            prop_assert!(f.iter().all(|v| v.is_finite()), "{:?}", f);
        }
    }
}
