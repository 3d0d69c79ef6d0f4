use crate::common::{self, fixture};
use meetcite::chunk::PositionEncoding;
use meetcite::quote::{locate, match_quote, Haystack, MatchOptions};
use proptest::prelude::*;

#[test]
fn qmsum_val_cases_accuracy() {
    // held-out cases from QMSum *val* (the threshold was tuned on the train-derived file)
    let mo = MatchOptions::default();
    let (mut tp, mut p, mut tn, mut n) = (0, 0, 0, 0);
    // kind -> (right, cases): true quotes found, each kind of false quote rejected
    let mut kinds: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for line in fixture("quotes_test.jsonl").lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let m = match_quote(c["text"].as_str().unwrap(), c["quote"].as_str().unwrap(), &mo);
        let label = c["label"].as_bool().unwrap();
        if label {
            p += 1;
            tp += m.matched as usize;
        } else {
            n += 1;
            tn += !m.matched as usize;
        }
        let k = kinds.entry(c["kind"].as_str().unwrap().to_string()).or_default();
        k.0 += (m.matched == label) as usize;
        k.1 += 1;
    }
    let bal = (tp as f64 / p as f64 + tn as f64 / n as f64) / 2.0;
    let rate = |k: &str| kinds[k].0 as f64 / kinds[k].1 as f64;
    let table: Vec<String> = kinds.iter().map(|(k, (r, c))| format!("{k} {r}/{c} ({:.3})", *r as f64 / *c as f64)).collect();
    eprintln!("true quotes found {tp}/{p}, false quotes rejected {tn}/{n}, balanced {bal:.3}; per kind: {}", table.join(", "));
    assert!(p > 50 && n > 150);
    assert!(bal >= 0.95, "balanced accuracy {bal:.3}");
    assert!(tn as f64 / n as f64 >= 0.97, "false quotes must be rejected");
    // every kind holds its own floor (today: franken 1.000, was 0.941 before stray edge words
    // counted as stitching; number 1.000, invented 1.000, true 0.966, was 0.954 before
    // `Name (Role):` speaker labels were left out of the match): a change that trades one kind
    // for another shows here, not only in the balance
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    for (k, floor) in [("franken", 0.99), ("invented", 0.99), ("number", 0.97), ("true", 0.96)] {
        assert!(rate(k) >= floor, "{k}: {}", table.join(", "));
    }
}

#[test]
fn prepared_haystack_gives_the_same_result_for_every_quote() {
    // one Haystack per chunk, reused for many quotes (its own and those of the next cases: mostly
    // misses, some stitched or partial), against a fresh `match_quote` each time
    let mo = MatchOptions::default();
    let cases: Vec<(String, String)> = fixture("quotes_test.jsonl")
        .lines()
        .map(|l| {
            let c: serde_json::Value = serde_json::from_str(l).unwrap();
            (c["text"].as_str().unwrap().to_string(), c["quote"].as_str().unwrap().to_string())
        })
        .collect();
    let (mut compared, mut matched) = (0, 0);
    for (i, (text, _)) in cases.iter().enumerate().step_by(3) {
        let h = Haystack::new(text);
        for (_, quote) in cases.iter().cycle().skip(i).take(12) {
            let m = h.match_quote(quote, &mo);
            assert_eq!(m, match_quote(text, quote, &mo), "{quote:?}");
            compared += 1;
            matched += m.matched as usize;
        }
    }
    for quote in ["", &"word ".repeat(meetcite::quote::MAX_QUOTE_CHARS)] {
        let h = Haystack::new("some text");
        assert_eq!(h.match_quote(quote, &mo), match_quote("some text", quote, &mo));
    }
    assert!(compared > 1000 && matched > 20, "{compared} compared, {matched} matched");
}

#[test]
fn noise_case_punctuation_fillers_markers() {
    let text = "Dana Okafor: I think we should, um, offer a {disfmarker} a ten percent discount for the the pilot.";
    let m = match_quote(text, "We should offer a ten-percent discount for the pilot", &MatchOptions::default());
    assert!(m.matched, "{m:?}");
    assert_eq!(&text[m.start..m.end], "we should, um, offer a {disfmarker} a ten percent discount for the the pilot");
}

#[test]
fn numbers_must_match_exactly() {
    let text = "Priya: The pilot discount is now 5% on a hundred seats.";
    let mo = MatchOptions::default();
    assert!(match_quote(text, "The pilot discount is now five percent", &mo).matched);
    // scale words without a number before them are numbers too
    let t = "you've got like a hundred buttons on your remote control , you won't use them";
    let m = match_quote(t, "like a thousand buttons on your remote control , you won't", &mo);
    assert!(!m.matched && m.missing_numbers == vec!["1000"], "{m:?}");
    assert!(match_quote(t, "like a hundred buttons on your remote control", &mo).matched);
    let m = match_quote(text, "The pilot discount is now 6% on a hundred seats", &mo);
    assert!(!m.matched && m.missing_numbers == vec!["6%"]);
    let m = match_quote(text, "discount is now 5% on two hundred seats", &mo);
    assert!(!m.matched, "{m:?}");
}

#[test]
fn frankenquote_fails() {
    let text = "Luis: We will keep the pilot at three months because the legal review takes time and nobody wants to renegotiate the contract in the summer when half of procurement is away. Dana: The price stays where it is.";
    let m = match_quote(text, "We will keep the pilot at three months the price stays where it is", &MatchOptions::default());
    assert!(!m.matched, "{m:?}");
}

#[test]
fn frankenquote_with_a_short_piece_at_one_end_fails() {
    // a real sentence with three words from another turn stuck on: the score passes (the piece is
    // short), but those words sit 100+ characters away, not next to the span
    let text = "Dana Okafor: What is going on with the northwind renewal, is legal still holding it?\nLuis Ortega: They want the liability cap reworded before they sign anything.\nPriya Raman: Then we move the pilot start to June and keep the discount at five percent for the first quarter.";
    let quote = "we move the pilot start to June and keep the discount at five percent what is going on";
    let m = match_quote(text, quote, &MatchOptions::default());
    assert!(m.score >= MatchOptions::default().threshold && m.max_gap < MatchOptions::default().max_gap, "{m:?}");
    assert!(!m.matched && m.stitched, "{m:?}");
    let s = m.stray.as_ref().expect("stray words");
    assert_eq!(&quote[s.quote_start..s.quote_end], "what is going on");
    assert!(!s.first);
    assert_eq!(&text[s.text_start..s.text_end], "What is going on");
    // the same sentence quoted alone, or with the next words of the turn, is found
    for ok in ["we move the pilot start to June and keep the discount at five percent", "keep the discount at five percent for the first quarter"] {
        let m = match_quote(text, ok, &MatchOptions::default());
        assert!(m.matched && m.stray.is_none(), "{ok}: {m:?}");
    }
}

#[test]
fn edge_words_near_the_span_are_not_stitching() {
    // the quote drops the words before its last one; the alignment leaves that word out. A few
    // words away it is an ASR-style gap and the quote stands; `max_gap` (24) normalised chars or
    // more away, reaching it would be a stitch, and the quote is rejected like one
    let q = "we keep the discount at five percent for the pilot customers";
    let text = |between: &str| {
        format!("Priya Raman: we keep the discount at five percent for the pilot {between} customers. Luis Ortega: fine by me, we can revisit it in the autumn when the numbers are in.")
    };
    let near = match_quote(&text("and all other"), q, &MatchOptions::default());
    assert!(near.matched && near.stray.is_none(), "{near:?}");
    let far_text = text("and later for every one of the other regional");
    let far = match_quote(&far_text, q, &MatchOptions::default());
    assert!(!far.matched && far.stitched && far.max_gap < MatchOptions::default().max_gap, "{far:?}");
    let s = far.stray.expect("stray");
    assert_eq!((&q[s.quote_start..s.quote_end], &far_text[s.text_start..s.text_end]), ("customers", "customers"));
    // an edge word found nowhere else in the text (a typo) is left to the score
    let typo = match_quote(&far_text, "we keep the discount at five percent for the pilot custmrs", &MatchOptions::default());
    assert!(typo.stray.is_none(), "{typo:?}");
}

#[test]
fn edge_longer_than_the_text_in_tokens() {
    // one long token in the text, the quote's left-out edge made of more tokens than the text has
    for (text, quote) in [
        ("supercalifragilisticexpialidociousnessandmore", "supercalifragilisticexpialidociousnessandmore a b c d e"),
        ("x supercalifragilisticexpialidocious", "a b c supercalifragilisticexpialidocious"),
        ("abcdefghijklmnopqrstuvwxyzabcdefghij", "q r s t abcdefghijklmnopqrstuvwxyzabcdefghij u v w"),
    ] {
        let m = match_quote(text, quote, &MatchOptions::default());
        assert!(m.stray.is_none() && m.end <= text.len(), "{quote}: {m:?}");
    }
}

#[test]
fn emoji_combining_and_long_inputs() {
    let text = "Zoë 😀: the cafe\u{301} budget is fine 👍 and re\u{301}sume\u{301} review is Friday";
    let m = match_quote(text, "the café budget is fine and résumé review is friday", &MatchOptions::default());
    assert!(m.matched, "{m:?}");
    assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
    // quote longer than the chunk
    let m = match_quote("short text here", "short text here and a great deal more text that is not in the chunk at all", &MatchOptions::default());
    assert!(!m.matched);
    // only punctuation
    assert!(!match_quote("some text", "?!...", &MatchOptions::default()).matched);
    // 1 MB chunk: the quote is found at the end
    let mut big = "lorem ipsum dolor sit amet consectetur ".repeat(27_000);
    let at = big.len();
    big.push_str("and finally we agreed on twelve units per box");
    let m = match_quote(&big, "we agreed on twelve units per box", &MatchOptions::default());
    assert!(m.matched && m.start > at, "{m:?}");
}

#[test]
fn span_times_from_turns_and_words() {
    let chunks = common::pricing_chunks();
    let c = &chunks[0];
    let m = match_quote(&c.text, "Finance can live with that", &MatchOptions::default());
    let loc = locate(c, m.start, m.end);
    assert_eq!(loc.speaker.as_deref(), Some("Priya Raman"));
    assert_eq!(loc.time_source, "turn");
    let turn = &c.turns.as_ref().unwrap()[3];
    assert!(loc.time >= turn.start && loc.time <= turn.start + 1.0, "{} vs {}", loc.time, turn.start);
    // with word timings the word's own time wins
    let mut c2 = c.clone();
    c2.words = Some(vec![
        meetcite::Word { word: "Finance".into(), start: 1900.5, end: 1901.0, offset: None },
        meetcite::Word { word: "can".into(), start: 1901.0, end: 1901.2, offset: None },
    ]);
    let loc = locate(&c2, m.start, m.end);
    assert_eq!((loc.time, loc.time_source.as_str()), (1900.5, "words"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn verbatim_quote_matches_its_own_span(words in prop::collection::vec("[a-zé😀]{1,8}", 12..60), a in 0usize..40, len in 5usize..12) {
        let text = words.join(" ");
        let a = a.min(words.len() - len);
        let quote = words[a..a + len].join(" ");
        let m = match_quote(&text, &quote, &MatchOptions::default());
        prop_assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
        prop_assert!(m.score == 100.0, "{:?}", m);
        // the span text normalises to the quote (it may be an earlier identical occurrence)
        let span = &text[m.start..m.end];
        let mq = match_quote(span, &quote, &MatchOptions::default());
        prop_assert_eq!(mq.score, 100.0);
    }

    /// Every character boundary survives bytes -> encoding -> bytes, and the encoded offset is
    /// the length of the prefix as that encoding counts it (JS `length`, Python `len`).
    #[test]
    fn position_encodings_roundtrip(s in "\\PC{0,40}") {
        let ends: Vec<usize> = s.char_indices().map(|(b, _)| b).chain([s.len()]).collect();
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Chars] {
            let mut offs = ends.clone();
            let mut refs: Vec<&mut usize> = offs.iter_mut().rev().collect(); // unsorted on purpose
            enc.encode(&s, &mut refs);
            for (&b, &o) in ends.iter().zip(&offs) {
                let want = match enc {
                    PositionEncoding::Utf8 => b,
                    PositionEncoding::Utf16 => s[..b].encode_utf16().count(),
                    PositionEncoding::Chars => s[..b].chars().count(),
                };
                prop_assert_eq!(o, want);
            }
            let mut refs: Vec<&mut usize> = offs.iter_mut().collect();
            prop_assert!(enc.decode(&s, &mut refs).is_ok());
            prop_assert_eq!(&offs, &ends);
        }
    }
}
