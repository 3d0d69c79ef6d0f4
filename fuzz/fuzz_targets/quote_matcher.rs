//! `text \0 quote` (UTF-8-lossy): `match_quote` never panics, its span is a char-boundary slice of
//! the text, its score is 0..=100, and an exact piece of the text's normalised view is found with
//! score 100 (the contract of the semi-global alignment).
//!
//! A raw verbatim slice is only tested when its normalised view is a substring of the text's: the
//! normaliser's context rules (speaker labels at line starts, fillers, collapsed repeats) can
//! legitimately normalise a slice cut mid-word or mid-label differently from the whole text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use meetcite::quote::{locate, match_quote, MatchOptions, QuoteMatch, MAX_QUOTE_CHARS};
use meetcite::text::match_tokens;
use meetcite::Chunk;

fn norm(s: &str) -> String {
    match_tokens(s).into_iter().map(|t| t.norm).collect::<Vec<_>>().join(" ")
}

fn check(text: &str, quote: &str, m: &QuoteMatch) {
    assert!(m.start <= m.end && m.end <= text.len(), "{m:?}");
    assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end), "{m:?}");
    assert!(m.score.is_finite() && (0.0..=100.0).contains(&m.score), "{m:?}");
    assert!(!m.matched || (m.score >= MatchOptions::default().threshold && m.missing_numbers.is_empty() && !m.stitched));
    // stray edge words: char-boundary slices of the quote and of the text, the same words
    if let Some(s) = &m.stray {
        assert!(m.stitched && s.quote_start < s.quote_end && s.text_start < s.text_end, "{m:?}");
        let (q, t) = (quote.get(s.quote_start..s.quote_end), text.get(s.text_start..s.text_end));
        assert!(q.is_some() && t.is_some(), "{m:?}");
        assert_eq!(norm(q.unwrap()), norm(t.unwrap()), "{m:?}");
    }
}

/// The quote is an exact piece of the text's normalised view: distance 0, score 100.
fn check_exact(text: &str, quote: &str, ntext: &str) {
    let nq = norm(quote);
    if nq.is_empty() || nq.chars().count() > MAX_QUOTE_CHARS || !ntext.contains(&nq) {
        return;
    }
    let m = match_quote(text, quote, &MatchOptions::default());
    check(text, quote, &m);
    assert!(m.distance == 0 && m.score == 100.0, "exact piece {nq:?} of {ntext:?}: {m:?}");
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fuzz_target!(|data: &[u8]| {
    let (t, q) = match data.iter().position(|&b| b == 0) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (data, &[][..]),
    };
    let text = String::from_utf8_lossy(t);
    let quote = String::from_utf8_lossy(q);
    let opts = MatchOptions::default();
    let m = match_quote(&text, &quote, &opts);
    check(&text, &quote, &m);
    let ntext = norm(&text);
    check_exact(&text, &quote, &ntext);
    // a slice of the text chosen by the quote's first bytes
    if q.len() >= 4 && !text.is_empty() {
        let a = floor_boundary(&text, u16::from_le_bytes([q[0], q[1]]) as usize % (text.len() + 1));
        let b = floor_boundary(&text, u16::from_le_bytes([q[2], q[3]]) as usize % (text.len() + 1));
        let slice = &text[a.min(b)..a.max(b)];
        check_exact(&text, slice, &ntext);
    }
    // span -> speaker/time never panics and stays inside the chunk's time range
    if !text.trim().is_empty() {
        let chunk = Chunk {
            id: "c".into(),
            meeting_id: "m".into(),
            meeting_title: "t".into(),
            date: "2024-01-01".into(),
            start: 10.0,
            end: 70.0,
            speakers: vec!["Dana".into()],
            text: text.to_string(),
            recording_url: None,
            turns: None,
            words: None,
            acl: None,
            score: None,
        };
        let loc = locate(&chunk, m.start, m.end);
        assert!((10.0..=70.0).contains(&loc.time), "{loc:?}");
        assert!(loc.turn_start <= loc.turn_end && loc.turn_end <= text.len());
    }
});
