//! Several quotes per claim (issue 14): the answer's `"quotes"` array, each quote matched in its own
//! source with its span, speaker and link; a further quote that is not found (or sits elsewhere,
//! or in a source the viewer may not see) flags the claim and is named; the speaker check and the
//! claim's numbers read every quoted turn. Single-quote answers parse as before.
use crate::common::*;
use meetcite::answer::{parse_answer, Cite};
use meetcite::verify::{nli_plan, Policy, Status, VerifyOptions};
use meetcite::{build_context, parse_chunks, render_html, render_markdown, verify, ContextOptions, Order, PositionEncoding, RenderOptions};

fn one(claim: &str) -> String {
    format!(r#"{{"claims":[{claim}]}}"#)
}

#[test]
fn single_quote_answers_parse_and_serialise_as_before() {
    let p = parse_answer(&fixture("pricing_answer.json")).unwrap();
    assert_eq!((p.claims.len(), p.errors.len()), (6, 0));
    assert!(p.claims.iter().all(|c| c.more_quotes.is_empty()));
    // no new key in what a single-quote claim serialises to
    assert!(!serde_json::to_string(&p.claims).unwrap().contains("more_quotes"));
    let r = verify(&fixture("pricing_answer.json"), &pricing_context().sources, &VerifyOptions::default()).unwrap();
    assert!(!serde_json::to_string(&r).unwrap().contains("more_quotes"));
}

#[test]
fn quotes_beside_or_instead_of_source_and_quote() {
    let p = parse_answer(&fixture("pricing_answer_quotes.json")).unwrap();
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    let c = &p.claims;
    assert_eq!((c[0].source, c[0].quote.as_str()), (1, "I think we should offer a ten percent discount for the pilot"));
    assert_eq!(c[0].more_quotes, vec![Cite { source: 3, quote: "The pilot discount is now five percent.".into() }]);
    // only "quotes": the first is the claim's own
    assert_eq!((c[1].source, c[1].quote.as_str()), (3, "Fine, five percent it is."));
    assert_eq!(c[1].more_quotes.len(), 1);
    // "quotes": [] is no further quote (what strict schemas make an LLM write)
    assert!(c[3].more_quotes.is_empty());
    // the claim's own pair repeated in the list is one quote
    let a = one(r#"{"text":"t","source":"S1","quote":"a b","quotes":[{"source":"S1","quote":"a b"},{"source":"S2","quote":"c"}]}"#);
    assert_eq!(parse_answer(&a).unwrap().claims[0].more_quotes, vec![Cite { source: 2, quote: "c".into() }]);
}

#[test]
fn each_defect_of_quotes_names_its_field_and_loses_no_other_claim() {
    let good = r#"{"text":"ok","source":"S1","quote":"fine"}"#;
    let cases = [
        (r#"{"text":"t","source":"S1","quote":"q","quotes":"S2"}"#, "quotes", "expected an array, found a string"),
        (r#"{"text":"t","source":"S1","quote":"q","quotes":[{"source":"S2","quote":"x"},7]}"#, "quotes[1]", "expected an object, found the number 7"),
        (r#"{"text":"t","source":"S1","quote":"q","quotes":[{"source":"X2","quote":"x"}]}"#, "quotes[0].source", "not a source label"),
        (r#"{"text":"t","source":"S1","quote":"q","quotes":[{"source":"S2","quote":" "}]}"#, "quotes[0].quote", "is empty"),
        (r#"{"text":"t","source":"S1","quote":"q","quotes":[{"source":"S2"}]}"#, "quotes[0].quote", "missing"),
        (r#"{"text":"t","quotes":[]}"#, "source", "missing"),
    ];
    for (bad, field, problem) in cases {
        let p = parse_answer(&format!(r#"{{"claims":[{bad},{good}]}}"#)).unwrap();
        assert_eq!(p.claims.len(), 1, "{bad}");
        assert_eq!(p.errors.len(), 1, "{bad}");
        let e = &p.errors[0];
        assert_eq!(e.field, field, "{bad}: {e}");
        assert!(e.problem.contains(problem), "{bad}: {e}");
        assert_eq!(e.text.as_deref(), Some("t"), "the claim's text survives for the report");
    }
    let many: Vec<String> = (0..9).map(|i| format!(r#"{{"source":"S1","quote":"q{i}"}}"#)).collect();
    let p = parse_answer(&one(&format!(r#"{{"text":"t","quotes":[{}]}}"#, many.join(",")))).unwrap();
    assert_eq!(p.errors[0].field, "quotes");
    assert!(p.errors[0].problem.contains("at most 8"), "{}", p.errors[0]);
}

#[test]
fn a_claim_from_two_meetings_links_both_and_reads_both_turns() {
    let ctx = pricing_context();
    let r = verify(&fixture("pricing_answer_quotes.json"), &ctx.sources, &VerifyOptions::default()).unwrap();
    let c = &r.claims[0];
    assert_eq!(c.status, Status::Supported, "{:?}", c.reasons);
    assert_eq!(c.speaker.as_deref(), Some("Dana Okafor"));
    let q = &c.more_quotes[0];
    assert!(q.found);
    assert_eq!((q.source.as_str(), q.chunk_id.as_deref(), q.speaker.as_deref()), ("S3", Some("may-1"), Some("Priya Raman")));
    assert_eq!(q.link.as_ref().unwrap().label, "Pricing review, 3 May, 10:09, Priya Raman");
    let text = &ctx.sources[2].chunk.text;
    let (s, e) = q.span.unwrap();
    assert_eq!(&text[s..e], q.matched_text.as_deref().unwrap());
    // the claim's "five percent" is in the second quote's turn: with the first quote alone it is
    // a number the transcript does not say there
    let alone = one(
        r#"{"text":"The pilot discount went from ten percent in April to five percent in May.","source":"S1","quote":"I think we should offer a ten percent discount for the pilot"}"#,
    );
    let r1 = verify(&alone, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r1.claims[0].reasons.iter().map(|r| r.code.as_str()).collect::<Vec<_>>(), vec!["claim_number_mismatch"]);
    // the other claims of the fixture: two quotes of one turn, a quote list with [], and a
    // further quote cited from the wrong source
    assert_eq!(r.claims[1].status, Status::Supported, "{:?}", r.claims[1].reasons);
    assert_eq!(r.claims[3].status, Status::Supported, "{:?}", r.claims[3].reasons);
    assert_eq!(r.claims[2].status, Status::Flagged);
    // the quote match rate counts quotes, not claims: 4 own + 3 further, all found but the
    // misattributed one
    let met = meetcite::metrics::metrics(&r, &Default::default());
    assert!((met.quote_match_rate - 6.0 / 7.0).abs() < 1e-9, "{met:?}");
    // rendered: one citation per quote
    let html = render_html(&r, &RenderOptions::default());
    let first = html.lines().find(|l| l.contains("went from ten percent")).unwrap();
    assert_eq!(first.matches("class=\"meetcite-cite\"").count(), 2, "{first}");
    assert!(first.contains("[Pricing review, 3 May, 10:09, Priya Raman]"), "{first}");
    let md = render_markdown(&r, &RenderOptions::default());
    let first = md.lines().find(|l| l.contains("went from ten percent")).unwrap();
    assert!(first.contains("(<https://recordings.example.com/pricing-0503.mp4?t=609>)"), "{first}");
}

#[test]
fn a_further_quote_that_is_not_there_flags_the_claim_and_is_named() {
    let ctx = pricing_context();
    let a = one(
        r#"{"text":"Dana proposed ten percent and finance approved it.","source":"S1","quote":"I think we should offer a ten percent discount for the pilot",
            "quotes":[{"source":"S2","quote":"finance approved the discount yesterday"}]}"#,
    );
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let c = &r.claims[0];
    assert_eq!(c.status, Status::Flagged);
    assert_eq!(c.reasons.len(), 1, "{:?}", c.reasons);
    assert_eq!((c.reasons[0].code.as_str(), c.reasons[0].quote), ("quote_not_found", Some(2)));
    assert!(c.reasons[0].message.starts_with("quote 2 (S2): the quote was not found in S2"), "{}", c.reasons[0].message);
    let q = &c.more_quotes[0];
    assert!(!q.found && q.span.is_none() && q.link.is_none());
    // the claim's own quote keeps its place and link
    assert!(c.link.is_some() && c.span.is_some());
    // a further quote citing a source that does not exist
    let a = one(r#"{"text":"t","source":"S1","quote":"Finance can live with that.","quotes":[{"source":"S9","quote":"x y z"}]}"#);
    let c = &verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap().claims[0];
    assert_eq!(c.status, Status::Flagged);
    assert_eq!((c.reasons[0].code.as_str(), c.reasons[0].quote), ("unknown_source", Some(2)));
    assert_eq!(c.more_quotes[0].source, "S9");
}

#[test]
fn a_further_quote_from_another_source_is_misattributed_with_its_place() {
    let ctx = pricing_context();
    let r = verify(&fixture("pricing_answer_quotes.json"), &ctx.sources, &VerifyOptions { policy: Policy::Feedback, ..Default::default() }).unwrap();
    let c = &r.claims[2];
    assert_eq!(c.reasons.len(), 1, "{:?}", c.reasons);
    assert_eq!((c.reasons[0].code.as_str(), c.reasons[0].quote), ("misattributed", Some(2)));
    let f = c.more_quotes[0].found_in.as_ref().expect("where the words are");
    assert_eq!((f.source.as_str(), f.chunk_id.as_str(), f.speaker.as_deref()), ("S2", "apr-2", Some("Luis Vega")));
    assert!(c.reasons[0].message.starts_with("quote 2 (S1): the quote is in S2 ("), "{}", c.reasons[0].message);
    // the LLM is told, with every source the claim cited
    let fb = r.feedback.unwrap();
    assert!(fb.contains("cited S2, S1): quote 2 (S1): the quote is in S2"), "{fb}");
    let html = render_html(&verify(&fixture("pricing_answer_quotes.json"), &ctx.sources, &VerifyOptions::default()).unwrap(), &RenderOptions::default());
    assert!(html.contains("class=\"meetcite-found\""), "{html}");
}

#[test]
fn a_further_quote_in_a_source_the_viewer_may_not_see_reads_like_one_not_found() {
    let chunks = pricing_chunks();
    let a = one(r#"{"text":"The salary band is known.","source":"S1","quote":"Finance can live with that.",
            "quotes":[{"source":"S2","quote":"The salary band for the new role is ninety to one hundred ten thousand."}]}"#);
    let ctx = build_context(&chunks, &ContextOptions { order: Order::Date, ..Default::default() });
    let without: Vec<_> = chunks.iter().filter(|c| c.acl.is_none()).cloned().collect();
    let ctx_without = build_context(&without, &ContextOptions { order: Order::Date, ..Default::default() });
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r, verify(&a, &ctx_without.sources, &VerifyOptions::default()).unwrap());
    assert_eq!(r.claims[0].reasons[0].code, "quote_not_found");
    let dump = serde_json::to_string(&r).unwrap();
    assert!(!dump.contains("Compensation") && !dump.contains("hr-1") && !dump.contains("Mara"), "{dump}");
    // the HR viewer: misattributed, and where
    let hr = build_context(&chunks, &ContextOptions { order: Order::Date, viewer: Some("hr-team".into()), ..Default::default() });
    let r = verify(&a, &hr.sources, &VerifyOptions::default()).unwrap();
    let f = r.claims[0].more_quotes[0].found_in.as_ref().unwrap();
    assert_eq!(f.chunk_id, "hr-1");
}

#[test]
fn the_speaker_check_reads_every_quoted_turn() {
    let ctx = pricing_context();
    // Dana's words and Luis's: a claim that names Priya is misattributed to her ...
    let a = one(
        r#"{"text":"Priya Raman proposed ten percent for three months.","source":"S1","quote":"I think we should offer a ten percent discount for the pilot",
            "quotes":[{"source":"S1","quote":"Ten percent is fine by me if the pilot runs for three months."}]}"#,
    );
    let c = &verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap().claims[0];
    let m: Vec<_> = c.reasons.iter().filter(|r| r.code == "speaker_mismatch").collect();
    assert_eq!(m.len(), 1, "{:?}", c.reasons);
    assert!(m[0].message.contains("Dana Okafor and Luis Vega"), "{}", m[0].message);
    assert_eq!(c.more_quotes[0].speaker.as_deref(), Some("Luis Vega"));
    // ... and one that names Luis is not: his are among the quoted words
    let b = a.replace("Priya Raman proposed", "Luis Vega accepted");
    let c = &verify(&b, &ctx.sources, &VerifyOptions::default()).unwrap().claims[0];
    assert!(c.reasons.iter().all(|r| r.code != "speaker_mismatch"), "{:?}", c.reasons);
}

#[test]
fn spans_of_further_quotes_follow_the_position_encoding() {
    let chunks = parse_chunks(
        r#"[{"id":"a","meeting_id":"m","meeting_title":"Café sync","date":"2024-01-02","start":0,"end":60,"text":"Zoë Müller: 😀 déjà vu, the café is ours."},
            {"id":"b","meeting_id":"m","meeting_title":"Café sync","date":"2024-01-02","start":60,"end":120,"text":"Zoë Müller: 😀 the café opens at nine on Mondays."}]"#,
    )
    .unwrap();
    let ctx = build_context(&chunks, &ContextOptions::default());
    let a = one(
        r#"{"text":"Our café opens at nine.","source":"S1","quote":"the café is ours","quotes":[{"source":"S2","quote":"the café opens at nine on Mondays"}]}"#,
    );
    let mut r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let text = &ctx.sources[1].chunk.text;
    let (s, e) = r.claims[0].more_quotes[0].span.unwrap();
    r.encode_spans(&ctx.sources, PositionEncoding::Utf16);
    let (s16, e16) = r.claims[0].more_quotes[0].span.unwrap();
    let units: Vec<u16> = text.encode_utf16().collect();
    assert_eq!(String::from_utf16(&units[s16..e16]).unwrap(), "the café opens at nine on Mondays");
    assert_ne!((s, e), (s16, e16));
}

#[test]
fn the_model_reads_every_quoted_turn() {
    let read = |f: &str| std::fs::read(format!("{}/models/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let m = meetcite::nli::NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), &read("config.json")).unwrap();
    let ctx = pricing_context();
    // both pairs in one plan, whatever the model's quote-first cascade would leave out
    let opts = VerifyOptions { nli: Some(&m), both_pairs: true, ..Default::default() };
    let plan = nli_plan(&fixture("pricing_answer_quotes.json"), &ctx.sources, &opts).unwrap();
    let claim = "The pilot discount went from ten percent in April to five percent in May.";
    let premises: Vec<&str> = plan.iter().filter(|(_, h)| h == claim).map(|(p, _)| p.as_str()).collect();
    assert_eq!(premises.len(), 2, "{plan:?}");
    for p in &premises {
        assert!(p.contains("ten percent discount") && p.contains("now five percent"), "{p}");
    }
    let r = verify(&fixture("pricing_answer_quotes.json"), &ctx.sources, &opts).unwrap();
    assert!(r.claims[0].support.is_some());
    // the report with a model is the stream's and the plan's (pairs scored once each)
    assert_eq!(r.claims.len(), 4);
}
