//! Quote matcher, native: throughput and accuracy on the labelled QMSum-derived cases
//! (`tests/fixtures/quotes_test.jsonl`, the same cases the rapidfuzz peer runs in bench/peers.py),
//! and the scaling curves (chunk length 100 to 100k chars, quote length 5 to 40 words).
//! The scaling inputs are written to `target/bench/scaling_cases.jsonl` so the peer runs the same.
//! Run: `cargo bench --bench matcher` (bench/run runs everything).
mod common;
use common::*;
use meetcite::quote::{match_quote, MatchOptions};
use std::hint::black_box;
use std::io::Write;

const REP: usize = 20;

fn main() {
    let cases = read_jsonl(&format!("{}/tests/fixtures/quotes_test.jsonl", root()));
    let opts = MatchOptions::default();
    let pairs: Vec<(&str, &str, bool)> =
        cases.iter().map(|c| (c["text"].as_str().unwrap(), c["quote"].as_str().unwrap(), c["label"].as_bool().unwrap())).collect();

    // accuracy (one pass) and throughput (REP passes, best of 3 to damp the other core's noise)
    let pred: Vec<bool> = pairs.iter().map(|(t, q, _)| match_quote(t, q, &opts).matched).collect();
    let (mut tp, mut p, mut tn, mut n) = (0.0, 0.0, 0.0, 0.0);
    for ((_, _, label), m) in pairs.iter().zip(&pred) {
        if *label {
            p += 1.0;
            tp += f64::from(u8::from(*m));
        } else {
            n += 1.0;
            tn += f64::from(u8::from(!*m));
        }
    }
    let case = "quotes_test x20";
    let imp = "meetcite native";
    emit("matcher", case, imp, "tpr", tp / p, "", "");
    emit("matcher", case, imp, "tnr", tn / n, "", "");
    emit("matcher", case, imp, "bal_acc", (tp / p + tn / n) / 2.0, "", "");
    let secs = (0..3)
        .map(|_| {
            let s = std::time::Instant::now();
            for _ in 0..REP {
                for (t, q, _) in &pairs {
                    black_box(match_quote(black_box(t), black_box(q), &opts));
                }
            }
            s.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    emit("matcher", case, imp, "pairs_per_s", (REP * pairs.len()) as f64 / secs, "pairs/s", &format!("{} cases, in-process, best of 3", pairs.len()));

    // scaling: a long transcript made of all quote-case texts, cut to length; the quote is a
    // noisy copy (one word dropped, one misspelt) of words near the end of the cut.
    let corpus: String = {
        let mut seen = std::collections::HashSet::new();
        let mut s = String::new();
        for (t, _, _) in &pairs {
            if seen.insert(*t) {
                s.push_str(t);
                s.push('\n');
            }
        }
        while s.len() < 110_000 {
            s = s.repeat(2);
        }
        s
    };
    let cut = |n: usize| -> &str {
        let mut e = n.min(corpus.len());
        while !corpus.is_char_boundary(e) {
            e -= 1;
        }
        &corpus[..e]
    };
    let noisy_quote = |text: &str, words: usize| -> String {
        let ws: Vec<&str> = text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric) && !w.ends_with(':')).collect();
        let end = ws.len().saturating_sub(3);
        let start = end.saturating_sub(words);
        let mut q: Vec<String> = ws[start..end].iter().map(|s| s.to_string()).collect();
        if q.len() > 4 {
            q.remove(q.len() / 2);
            let w = &mut q[1];
            if w.len() > 3 {
                w.insert(1, 'x');
            }
        }
        q.join(" ")
    };
    let mut scaling = Vec::new();
    for len in [100usize, 300, 1_000, 3_000, 10_000, 30_000, 100_000] {
        scaling.push((format!("chunk {len} chars, quote 20 words"), cut(len).to_string(), noisy_quote(cut(len), 20)));
    }
    for words in [5usize, 10, 20, 40, 80] {
        scaling.push((format!("chunk 2000 chars, quote {words} words"), cut(2000).to_string(), noisy_quote(cut(2000), words)));
    }
    let path = format!("{}/target/bench/scaling_cases.jsonl", root());
    std::fs::create_dir_all(format!("{}/target/bench", root())).unwrap();
    let mut f = std::fs::File::create(&path).unwrap();
    for (case, text, quote) in &scaling {
        writeln!(f, "{}", serde_json::json!({"case": case, "text": text, "quote": quote})).unwrap();
        let runs = (2_000_000 / text.len().max(1000)).clamp(5, 2000);
        let s = median_secs(2, 5, || {
            for _ in 0..runs {
                black_box(match_quote(black_box(text), black_box(quote), &opts));
            }
        });
        let m = match_quote(text, quote, &opts);
        emit("scaling", case, imp, "us_per_match", s / runs as f64 * 1e6, "us", if m.matched { "" } else { "NOT MATCHED" });
    }
}
