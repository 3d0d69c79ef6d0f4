//! A quote that is real but sits in another source than the one cited: `misattributed`, with
//! where the words are; only sources the viewer may see are searched.
use crate::common::*;
use meetcite::verify::{Policy, Status, VerifyOptions};
use meetcite::{build_context, parse_chunks, render_html, render_markdown, verify, ContextOptions, Order, PositionEncoding, RenderOptions};

fn one(answer_claim: &str) -> String {
    format!(r#"{{"claims":[{answer_claim}]}}"#)
}

#[test]
fn quote_from_another_chunk_of_the_same_meeting() {
    let ctx = pricing_context();
    // S1 and S2 are both the 12 April sync; the invoices line is in S2
    let a = one(r#"{"text":"Invoices go out on the first of the month.","source":"S1","quote":"the invoices go out on the first of the month"}"#);
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let c = &r.claims[0];
    assert_eq!(c.status, Status::Flagged);
    assert_eq!(c.reasons.len(), 1, "{:?}", c.reasons);
    assert_eq!(c.reasons[0].code, "misattributed");
    let f = c.found_in.as_ref().expect("where the quote is");
    assert_eq!((f.source.as_str(), f.chunk_id.as_str()), ("S2", "apr-2"));
    assert_eq!(f.speaker.as_deref(), Some("Priya Raman"));
    assert_eq!(f.matched_text, "the invoices go out on the first of the month");
    let s2 = &ctx.sources[1].chunk.text;
    assert_eq!(&s2[f.span.0..f.span.1], f.matched_text);
    assert!(c.reasons[0].message.starts_with(&format!("the quote is in S2 ({}), not S1", f.link.label)), "{}", c.reasons[0].message);
    assert!(f.link.label.starts_with("Pricing sync, 12 April, "), "{}", f.link.label);
    // nothing is claimed about the cited source: no span, link or time there
    assert!(c.span.is_none() && c.link.is_none() && c.time.is_none());
    assert_eq!(c.chunk_id.as_deref(), Some("apr-1"));
}

#[test]
fn quote_from_a_later_meeting_names_it_and_links_there() {
    let ctx = pricing_context();
    let a = one(r#"{"text":"The pilot discount is five percent.","source":"S1","quote":"The pilot discount is now five percent."}"#);
    let r = verify(&a, &ctx.sources, &VerifyOptions { policy: Policy::Feedback, ..Default::default() }).unwrap();
    let c = &r.claims[0];
    let f = c.found_in.as_ref().unwrap();
    assert_eq!(f.source, "S3");
    assert_eq!((f.meeting_title.as_str(), f.date.as_str()), ("Pricing review", "2024-05-03"));
    // the same place the claim citing S3 correctly links to (tests/verify.rs)
    assert_eq!(f.link.label, "Pricing review, 3 May, 10:09, Priya Raman");
    assert_eq!(f.link.url.as_deref(), Some("https://recordings.example.com/pricing-0503.mp4?t=609"));
    assert_eq!(c.reasons[0].message, "the quote is in S3 (Pricing review, 3 May, 10:09, Priya Raman), not S1; cite S3");
    // the feedback policy tells the LLM the right source
    let fb = r.feedback.clone().unwrap();
    assert!(fb.contains("not S1; cite S3"), "{fb}");
    // a misattributed claim is not a supported one, and the answer abstains without any
    assert_eq!(r.counts.flagged, 1);
    assert!(r.abstain);
    // rendered: the warning, and a link to where the words are
    let html = render_html(&r, &RenderOptions::default());
    assert!(html.contains("class=\"meetcite-found\" data-meeting=\"pricing-0503\" data-seconds=\"609\""), "{html}");
    assert!(html.contains("href=\"https://recordings.example.com/pricing-0503.mp4?t=609\""), "{html}");
    assert!(html.contains("[found in Pricing review, 3 May, 10:09, Priya Raman]"), "{html}");
    let md = render_markdown(&r, &RenderOptions::default());
    assert!(md.contains("[found in Pricing review, 3 May, 10:09, Priya Raman](<https://recordings.example.com/pricing-0503.mp4?t=609>)"), "{md}");
}

#[test]
fn invented_quote_stays_quote_not_found() {
    let ctx = pricing_context();
    let a = one(r#"{"text":"We will ship to the moon.","source":"S1","quote":"we will ship the pilot to the moon in June"}"#);
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let c = &r.claims[0];
    assert_eq!(c.reasons.iter().map(|r| r.code.as_str()).collect::<Vec<_>>(), vec!["quote_not_found"]);
    assert!(c.found_in.is_none());
}

#[test]
fn the_right_source_is_not_misattributed() {
    // a quote in the cited source is matched there even when another source has it too
    let ctx = pricing_context();
    let a = one(r#"{"text":"Dana will tell procurement.","source":"S3","quote":"I'll tell their procurement team this week."}"#);
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r.claims[0].status, Status::Supported, "{:?}", r.claims[0].reasons);
    assert!(r.claims[0].found_in.is_none());
}

#[test]
fn a_source_the_viewer_may_not_see_is_never_searched() {
    let chunks = pricing_chunks();
    let hr_quote = "The salary band for the new role is ninety to one hundred ten thousand.";
    let a = one(&format!(r#"{{"text":"The salary band is known.","source":"S1","quote":"{hr_quote}"}}"#));
    // everyone else: the HR chunk is not in their sources; the verdict reads exactly as if the
    // chunk did not exist at all
    let ctx = build_context(&chunks, &ContextOptions { order: Order::Date, ..Default::default() });
    let without: Vec<_> = chunks.iter().filter(|c| c.acl.is_none()).cloned().collect();
    let ctx_without = build_context(&without, &ContextOptions { order: Order::Date, ..Default::default() });
    let r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let r_without = verify(&a, &ctx_without.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r, r_without);
    assert_eq!(r.claims[0].reasons[0].code, "quote_not_found");
    let dump = serde_json::to_string(&r).unwrap();
    assert!(!dump.contains("Compensation") && !dump.contains("hr-1"), "{dump}");
    // the HR viewer may see it: for them it is misattributed, and where it is
    let hr = build_context(&chunks, &ContextOptions { order: Order::Date, viewer: Some("hr-team".into()), ..Default::default() });
    let r = verify(&a, &hr.sources, &VerifyOptions::default()).unwrap();
    let f = r.claims[0].found_in.as_ref().unwrap();
    assert_eq!((f.chunk_id.as_str(), f.meeting_title.as_str()), ("hr-1", "Compensation review"));
}

#[test]
fn spans_in_the_other_source_follow_the_position_encoding() {
    let chunks = parse_chunks(
        r#"[{"id":"a","meeting_id":"m","meeting_title":"Café sync","date":"2024-01-02","start":0,"end":60,"text":"Zoë Müller: 😀 déjà vu, nothing here."},
            {"id":"b","meeting_id":"m","meeting_title":"Café sync","date":"2024-01-02","start":60,"end":120,"text":"Zoë Müller: 😀 the café opens at nine on Mondays."}]"#,
    )
    .unwrap();
    let ctx = build_context(&chunks, &ContextOptions::default());
    let a = one(r#"{"text":"The café opens at nine.","source":"S1","quote":"the café opens at nine on Mondays"}"#);
    let mut r = verify(&a, &ctx.sources, &VerifyOptions::default()).unwrap();
    let text = &ctx.sources[1].chunk.text;
    let (s, e) = r.claims[0].found_in.as_ref().unwrap().span;
    assert_eq!(&text[s..e], "the café opens at nine on Mondays");
    r.encode_spans(&ctx.sources, PositionEncoding::Utf16);
    let (s16, e16) = r.claims[0].found_in.as_ref().unwrap().span;
    let units: Vec<u16> = text.encode_utf16().collect();
    assert_eq!(String::from_utf16(&units[s16..e16]).unwrap(), "the café opens at nine on Mondays");
    assert_ne!((s, e), (s16, e16), "the emoji and the accents move UTF-16 offsets");
}

#[test]
fn the_search_of_other_sources_is_bounded() {
    // a hostile answer: hundreds of distinct invented long quotes over many large sources. The
    // search stops at its budget; every verdict stays `quote_not_found` and the answer verifies.
    let text: String = (0..4000).map(|i| format!("word{} ", i % 977)).collect();
    let chunks: Vec<String> = (0..40)
        .map(|i| {
            let text = format!("part {i}: {text}");
            serde_json::json!({"id": format!("c{i}"), "meeting_id": format!("m{i}"), "meeting_title": "T", "date": "2024-01-01", "start": 0, "end": 1, "text": text}).to_string()
        })
        .collect();
    let chunks = parse_chunks(&format!("[{}]", chunks.join(","))).unwrap();
    let ctx = build_context(&chunks, &ContextOptions::default());
    assert_eq!(ctx.sources.len(), 40);
    let claims: Vec<String> = (0..300)
        .map(|i| {
            let q: String = (0..150).map(|k| format!("zz{i}q{k} ")).collect();
            format!(r#"{{"text":"x","source":"S1","quote":"{}"}}"#, q.trim())
        })
        .collect();
    let t = std::time::Instant::now();
    let r = verify(&format!("{{\"claims\":[{}]}}", claims.join(",")), &ctx.sources, &VerifyOptions::default()).unwrap();
    eprintln!("300 invented quotes over 40 sources: {:.2?}", t.elapsed());
    assert!(r.claims.iter().all(|c| c.reasons[0].code == "quote_not_found" && c.found_in.is_none()));
}
