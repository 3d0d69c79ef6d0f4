use crate::common::*;
use meetcite::verify::{Policy, Status, VerifyOptions};
use meetcite::{metrics, render_html, render_markdown, verify, Gold, RenderOptions};

fn codes(r: &meetcite::Report, i: usize) -> Vec<String> {
    r.claims.iter().find(|c| c.index == i).unwrap().reasons.iter().map(|r| r.code.clone()).collect()
}

#[test]
fn pricing_scenario_without_nli() {
    let ctx = pricing_context();
    let r = verify(&fixture("pricing_answer.json"), &ctx.sources, &VerifyOptions::default()).unwrap();
    let st: Vec<Status> = r.claims.iter().map(|c| c.status).collect();
    assert_eq!(st, vec![Status::Flagged, Status::Flagged, Status::Flagged, Status::Supported, Status::Supported, Status::UnknownSource]);
    assert_eq!(codes(&r, 0), vec!["superseded"]);
    assert_eq!(codes(&r, 1), vec!["claim_number_mismatch"]);
    assert_eq!(codes(&r, 2), vec!["speaker_mismatch"]);
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!((r.conflicts[0].older.date.as_str(), r.conflicts[0].newer.date.as_str()), ("2024-04-12", "2024-05-03"));
    // deep link of the May claim: template ending in t= gets the second appended
    let link = r.claims[3].link.as_ref().unwrap();
    assert_eq!(link.label, "Pricing review, 3 May, 10:09, Priya Raman");
    assert_eq!(link.url.as_deref(), Some("https://recordings.example.com/pricing-0503.mp4?t=609"));
    assert_eq!(r.claims[0].speaker.as_deref(), Some("Dana Okafor"));
    // the unknown source leaks nothing of the ACL-hidden chunk
    let unknown = &r.claims[5];
    let dump = serde_json::to_string(unknown).unwrap();
    assert!(!dump.contains("Compensation") && !dump.contains("ninety"));
    assert!(!r.abstain);
}

#[test]
fn policies_and_abstain() {
    let ctx = pricing_context();
    let answer = fixture("pricing_answer.json");
    let drop = verify(&answer, &ctx.sources, &VerifyOptions { policy: Policy::Drop, ..Default::default() }).unwrap();
    assert!(drop.claims.iter().all(|c| c.status == Status::Supported));
    assert_eq!(drop.claims.len() + drop.dropped.len(), 6);
    let fb = verify(&answer, &ctx.sources, &VerifyOptions { policy: Policy::Feedback, ..Default::default() }).unwrap();
    let text = fb.feedback.unwrap();
    assert!(text.contains("claim 6") && text.contains("S9 is not a source") && text.contains("Cite only S1, S2, S3"));
    let none = verify(r#"{"claims":[{"text":"x","source":"S1","quote":"we will ship to the moon"}]}"#, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert!(none.abstain && none.abstain_message.contains("do not answer"));
    let empty = verify(r#"{"claims":[]}"#, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert!(empty.abstain);
}

#[test]
fn unparsable_claims_are_reported_beside_good_ones() {
    let ctx = pricing_context();
    let r = verify(
        r#"{"claims":[{"text":"Finance can live with it.","source":"S1","quote":"Finance can live with that."},{"text":"bad","source":7,"quote":"x"}]}"#,
        &ctx.sources,
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(r.claims[0].status, Status::Supported);
    assert_eq!(r.claims[1].status, Status::Unparsable);
    assert!(verify("no json here", &ctx.sources, &VerifyOptions::default()).is_err());
}

#[test]
fn rendering_escapes_everything_and_blocks_bad_urls() {
    let mut chunks = pricing_chunks();
    chunks[0].meeting_title = "<img src=x onerror=alert(1)>".into();
    chunks[0].recording_url = Some("javascript:alert(1)".into());
    for t in chunks[0].turns.as_mut().unwrap() {
        t.speaker = "\"><script>alert(2)</script>".into();
    }
    let ctx = meetcite::build_context(&chunks, &meetcite::ContextOptions { order: meetcite::Order::Date, ..Default::default() });
    let answer = r#"{"claims":[{"text":"<b onmouseover=alert(3)>x</b>","source":"S1","quote":"Finance can live with that."}]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    let html = render_html(&r, &RenderOptions::default());
    for bad in ["<img", "<script", "<b ", "javascript:"] {
        assert!(!html.contains(bad), "{bad} in {html}");
    }
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    let md = render_markdown(&r, &RenderOptions::default());
    assert!(!md.contains("<b") && !md.contains("javascript:"));
}

#[test]
fn markdown_and_html_show_links_and_warnings() {
    let ctx = pricing_context();
    let r = verify(&fixture("pricing_answer.json"), &ctx.sources, &VerifyOptions::default()).unwrap();
    let md = render_markdown(&r, &RenderOptions::default());
    assert!(md.contains("[Pricing review, 3 May, 10:09, Priya Raman](<https://recordings.example.com/pricing-0503.mp4?t=609>)"), "{md}");
    let html = render_html(&r, &RenderOptions::default());
    assert_eq!(html.matches("meetcite-warn").count(), 4);
    assert!(html.contains("data-seconds=\"609\""));
}

#[test]
fn metrics_on_the_pricing_report() {
    let ctx = pricing_context();
    let r = verify(&fixture("pricing_answer.json"), &ctx.sources, &VerifyOptions::default()).unwrap();
    let mut times = vec![None; 6];
    times[3] = Some(612.0);
    let m = metrics(&r, &Gold { times, answerable: Some(true) });
    assert_eq!(m.claims, 6);
    assert!((m.citation_recall - 2.0 / 6.0).abs() < 1e-9);
    assert!((m.citation_precision - 3.0 / 6.0).abs() < 1e-9, "{m:?}");
    assert!((m.quote_match_rate - 1.0).abs() < 1e-9);
    assert!((m.timestamp_mae.unwrap() - (612.0 - r.claims[3].time.unwrap()).abs()).abs() < 1e-9);
    assert_eq!(m.abstention_correct, Some(true));
}

#[test]
fn a_quote_with_a_stray_word_from_another_turn_is_stitched() {
    // a true sentence plus one word from a later turn: the score passes, the word is not there
    let ctx = pricing_context();
    let answer = r#"{"claims":[{"text":"Dana proposed ten percent for the pilot.","source":"S1","quote":"I think we should offer a ten percent discount for the pilot, uh, capped at fifty seats. Great"}]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r.claims[0].status, Status::Flagged);
    assert_eq!(codes(&r, 0), vec!["stitched_quote"]);
    let msg = &r.claims[0].reasons[0].message;
    assert!(msg.contains(r#"its last words "Great" are said elsewhere in it"#), "{msg}");
    // the same word opening the quote, after a filler the matcher ignores: named as the first words
    let lead = answer.replace(r#""quote":"I think"#, r#""quote":"Um, great. I think"#).replace(" Great\"", "\"");
    let r = verify(&lead, &ctx.sources, &VerifyOptions::default()).unwrap();
    let msg = &r.claims[0].reasons[0].message;
    assert!(msg.contains(r#"its first words "great" are said elsewhere in it"#), "{msg}");
    // without the stray word the same quote is found
    let ok = answer.replace(" Great\"", "\"");
    let r = verify(&ok, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert!(codes(&r, 0).is_empty(), "{:?}", r.claims[0].reasons);
}
