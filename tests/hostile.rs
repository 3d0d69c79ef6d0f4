//! Hostile inputs that the other suites do not cover: broken surrogate escapes, tampered reports,
//! a cited source the viewer may not see, fuzzing regressions. See SECURITY.md.
use crate::common::*;
use meetcite::context::replace_lone_surrogate_escapes;
use meetcite::verify::{Status, VerifyOptions};
use meetcite::{build_context, parse_answer, parse_chunks, render_html, render_markdown, verify, ContextOptions, RenderOptions};

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    // JSON.stringify('\uD800') and json.dumps('\ud800') write these escapes; serde_json rejects them
    let a = r#"{"claims":[{"text":"broken \ud83d emoji","source":"S1","quote":"q \udc00x"},{"text":"fine \ud83d\ude00","source":"S2","quote":"ok"}]}"#;
    let p = parse_answer(a).expect("one broken character does not lose the answer");
    assert_eq!(p.claims.len(), 2);
    assert_eq!(p.claims[0].text, "broken \u{fffd} emoji");
    assert_eq!(p.claims[0].quote, "q \u{fffd}x");
    assert_eq!(p.claims[1].text, "fine 😀");
    // an escaped backslash followed by "ud800" is text, not an escape
    assert_eq!(replace_lone_surrogate_escapes(r#""\\ud800""#), r#""\\ud800""#);
    assert_eq!(replace_lone_surrogate_escapes(r#""\\\ud800""#), r#""\\\ufffd""#);
    // high then high, low then high, at the very end
    assert_eq!(replace_lone_surrogate_escapes(r#""\ud800\ud801\udc01""#), r#""\ufffd\ud801\udc01""#);
    assert_eq!(replace_lone_surrogate_escapes(r#""\udfff\ud800"#), r#""\ufffd\ufffd"#);
    assert_eq!(replace_lone_surrogate_escapes(r#"\ud80"#), r#"\ud80"#);
    // same length: error positions do not move
    let bad = "{\"claims\": [\"\\ud800\", }";
    match parse_answer(bad).unwrap_err() {
        meetcite::AnswerError::Malformed { column, .. } => assert_eq!(column, bad.find('}').unwrap() + 1),
        e => panic!("{e:?}"),
    }
    // chunk files too
    let chunks = parse_chunks(
        r#"[{"id":"a","meeting_id":"m","meeting_title":"T \udc00","date":"2024-01-01","start":0,"end":1,"text":"we agreed \ud800 on ten percent"}]"#,
    )
    .unwrap();
    assert_eq!(chunks[0].text, "we agreed \u{fffd} on ten percent");
    let ctx = build_context(&chunks, &ContextOptions::default());
    let r = verify(
        r#"{"claims":[{"text":"They agreed on ten percent.","source":"S1","quote":"we agreed \ud800 on ten percent"}]}"#,
        &ctx.sources,
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(r.claims[0].status, Status::Supported, "{:?}", r.claims[0].reasons);
}

#[test]
fn render_rechecks_urls_of_reports_from_elsewhere() {
    // renderHtml/renderMarkdown take a report from JS: it may not come from `verify`
    let ctx = pricing_context();
    let mut r = verify(&fixture("pricing_answer.json"), &ctx.sources, &VerifyOptions::default()).unwrap();
    let bad = [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "https://x.example/\" onmouseover=\"alert(1)",
        " javascript:alert(1)",
        "vbscript:msgbox(1)",
    ];
    let mut n = 0;
    for c in r.claims.iter_mut() {
        if let Some(l) = c.link.as_mut() {
            l.url = Some(bad[n % bad.len()].to_string());
            n += 1;
        }
    }
    assert!(n >= 3);
    let html = render_html(&r, &RenderOptions::default());
    let md = render_markdown(&r, &RenderOptions::default());
    for out in [&html, &md] {
        let lower = out.to_lowercase();
        for b in ["javascript:", "data:", "vbscript:", "onmouseover", "<script"] {
            assert!(!lower.contains(b), "{b} in {out}");
        }
    }
    // the citation stays, as a link-less button
    assert_eq!(html.matches("href=\"#\" role=\"button\"").count(), n);
}

#[test]
fn acl_hidden_source_is_indistinguishable_from_a_missing_one() {
    let chunks = pricing_chunks();
    let ctx = build_context(&chunks, &ContextOptions { order: meetcite::Order::Date, ..Default::default() });
    let hr = build_context(&chunks, &ContextOptions { order: meetcite::Order::Date, viewer: Some("hr-team".into()), ..Default::default() });
    assert_eq!((ctx.sources.len(), hr.sources.len()), (3, 4));
    let hidden = hr.sources.iter().find(|s| s.chunk.acl.is_some()).unwrap();
    // the HR viewer has four sources: cite S4, and a label that never existed, with the HR text
    let quote = &hidden.chunk.text[..40];
    let answer = format!(
        r#"{{"claims":[{{"text":"The salary band is known.","source":"S4","quote":"{quote}"}},{{"text":"The salary band is known.","source":"S9","quote":"{quote}"}}]}}"#
    );
    let r = verify(&answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    let (a, b) = (&r.claims[0], &r.claims[1]);
    assert_eq!((a.status, b.status), (Status::UnknownSource, Status::UnknownSource));
    assert_eq!(a.reasons[0].message.replace("S4", "S9"), b.reasons[0].message);
    assert_eq!(a.reasons[0].message, "S4 is not a source (the sources are S1..S3)");
    let dump = serde_json::to_string(&r).unwrap();
    assert!(!dump.contains(&hidden.chunk.meeting_title) && !dump.contains(&hidden.chunk.id));
    // nothing of it in the prompt either, nor in `dropped`
    assert!(!ctx.prompt.contains(&hidden.chunk.text[..40]));
    assert!(!ctx.dropped.contains(&hidden.chunk.id));
}

#[test]
fn conflict_names_the_newer_claim_by_its_claim_index() {
    // an unparsable claim: claim indices and the verifier's internal order differ
    let ctx = pricing_context();
    let answer = r#"{"claims":[
        {"text":"The pilot discount is now five percent.","source":"S3","quote":"the pilot discount is now five percent"},
        {"text":"The pilot discount is ten percent.","source":"S1","quote":"we should offer a ten percent discount for the pilot"},
        {"text":"bad","source":7,"quote":"x"}
    ]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r.conflicts.len(), 1, "{:?}", r.claims);
    let c = &r.conflicts[0];
    assert_eq!((c.older.claim, c.newer.claim), (Some(1), Some(0)));
    assert_eq!(r.claims[1].reasons[0].code, "superseded");
}

/// Fuzzing regression (context_builder, crash-5bd01dc4...): turns that are valid one by one but
/// out of order made `locate` return a turn range that ends before it starts, and `verify` sliced
/// the chunk text with it (a panic; "unreachable" in wasm).
#[test]
fn turns_out_of_order_do_not_panic() {
    let text = "we agreed on a ten percent discount for the pilot";
    let chunk = serde_json::json!([{
        "id": "a", "meeting_id": "m", "meeting_title": "T", "date": "2024-01-01", "start": 0, "end": 60, "text": text,
        "turns": [
            {"speaker": "Dana Okafor", "start": 1, "end": 60, "text_start": 3, "text_end": text.len()},
            {"speaker": "Luis Vega", "start": 0, "end": 1, "text_start": 0, "text_end": 2}
        ]
    }]);
    let chunks = parse_chunks(&chunk.to_string()).unwrap();
    let ctx = build_context(&chunks, &ContextOptions::default());
    let r = verify(
        r#"{"claims":[{"text":"Dana agreed on a 10% discount.","source":"S1","quote":"agreed on a ten percent discount"}]}"#,
        &ctx.sources,
        &VerifyOptions::default(),
    )
    .unwrap();
    assert_eq!(r.claims[0].status, Status::Supported, "{:?}", r.claims[0].reasons);
    assert_eq!(r.claims[0].speaker.as_deref(), Some("Dana Okafor"));
}

/// The cause of the crash above, in `quote::locate`: with turns out of order,
/// `turn_start..turn_end` was inverted (here 3..2). It is now the union of both ends' turns
/// (and `verify` also guards its slice).
#[test]
fn locate_turn_range_is_ordered_for_out_of_order_turns() {
    let text = "we agreed on a ten percent discount for the pilot";
    let turn = |speaker: &str, a: usize, b: usize| meetcite::Turn { speaker: speaker.into(), start: 0.0, end: 1.0, text_start: a, text_end: b };
    let mut chunk = pricing_chunks().remove(0);
    chunk.text = text.into();
    chunk.turns = Some(vec![turn("Dana Okafor", 3, text.len()), turn("Luis Vega", 0, 2)]);
    chunk.validate().unwrap();
    let loc = meetcite::quote::locate(&chunk, 3, 35);
    assert!(loc.turn_start <= loc.turn_end, "inverted turn range: {loc:?}");
}

/// Fuzzing regression (context_builder, crash-6b4a854a...): a quote containing ``` (copied from a
/// transcript that has code fences) made the parser take a claim object between two "fences" for
/// the answer, and the whole answer failed with `missing_claims`.
#[test]
fn backtick_fences_inside_quotes_do_not_lose_the_answer() {
    let claims = serde_json::json!({"claims": [
        {"text": "Dana showed the config", "source": "S1", "quote": "we agreed on ten percent ```"},
        {"text": "Luis agreed.", "source": "S1", "quote": "fine by me"},
        {"text": "``` Priya", "source": "S2", "quote": "ok ```json"}
    ]})
    .to_string();
    for answer in [claims.clone(), format!("Sure, here it is: {claims}"), format!("```json\n{claims}\n```"), format!("Sure {{}} and {{\"a\":1}}: {claims}")] {
        let p = parse_answer(&answer).unwrap_or_else(|e| panic!("{e} in {answer}"));
        assert_eq!(p.claims.len(), 3, "{answer}");
    }
    // an object without claims is still reported as such
    assert_eq!(parse_answer("Sure {} and {\"answer\": 1}").unwrap_err().code(), "missing_claims");
}
