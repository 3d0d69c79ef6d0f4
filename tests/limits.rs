//! Size limits and super-linear behaviour (hostile transcripts, hostile answers).
//!
//! The sizes are the documented limits (README "Documented limits", `SECURITY.md`): the work at
//! size N and 4N is compared with a generous bound (best of 3 runs, time(4N) < 12 x time(N); linear
//! is 4x, quadratic 16x). Meant for `cargo test --release`; a debug build runs the same checks at
//! a tenth of the sizes (the timing ratios hold there too, the absolute sizes would be slow).

use meetcite::answer::{MAX_ANSWER_BYTES, MAX_CLAIMS};
use meetcite::context::{MAX_CHUNKS, MAX_CHUNK_BYTES};
use meetcite::quote::MAX_QUOTE_CHARS;
use meetcite::verify::Status;
use meetcite::{build_context, match_quote, parse_answer, parse_chunks, verify, ContextOptions, MatchOptions, VerifyOptions};
use std::time::{Duration, Instant};

/// 1 in release, 10 in debug builds: sizes are divided by it.
const SCALE: usize = if cfg!(debug_assertions) { 10 } else { 1 };

/// The timing tests of this file run one at a time (the test harness runs tests in parallel).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Time per call of `f`: best of 3 rounds, each repeating `f` for at least 30 ms.
fn best_of_3<T>(mut f: impl FnMut() -> T) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut n = 0u32;
            while n == 0 || t.elapsed() < Duration::from_millis(30) {
                std::hint::black_box(f());
                n += 1;
            }
            t.elapsed() / n
        })
        .min()
        .unwrap()
}

/// time(4N) < 12 x time(N).
fn assert_not_superlinear(what: &str, small: Duration, big: Duration) {
    let ratio = big.as_secs_f64() / small.as_secs_f64();
    eprintln!("{what}: N {small:.1?}, 4N {big:.1?}, ratio {ratio:.1}");
    assert!(ratio < 12.0, "{what}: time(4N)/time(N) = {ratio:.1} ({small:?} -> {big:?}): super-linear");
}

/// Deterministic transcript-like text of about `bytes` bytes: varied words, numbers, sentences.
fn transcript(bytes: usize, seed: u64) -> String {
    const WORDS: &[&str] = &[
        "we",
        "agreed",
        "on",
        "the",
        "pilot",
        "discount",
        "for",
        "annual",
        "plans",
        "finance",
        "can",
        "live",
        "with",
        "that",
        "review",
        "next",
        "quarter",
        "budget",
        "remote",
        "control",
        "design",
        "button",
        "team",
        "should",
        "offer",
        "price",
        "customer",
        "contract",
        "legal",
        "summer",
        "procurement",
        "um",
        "uh",
        "yeah",
        "so",
        "I",
        "think",
        "maybe",
        "seats",
    ];
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut s = String::with_capacity(bytes + 64);
    let mut n = 0;
    while s.len() < bytes {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = (x >> 33) as usize;
        if r.is_multiple_of(17) {
            s.push_str(&(r % 1000).to_string());
        } else {
            s.push_str(WORDS[r % WORDS.len()]);
        }
        n += 1;
        s.push_str(if n % 14 == 0 { ". " } else { " " });
    }
    s
}

fn chunk_json(id: &str, meeting: &str, date: &str, start: f64, text: &str) -> String {
    serde_json::json!({
        "id": id, "meeting_id": meeting, "meeting_title": "Pricing sync", "date": date,
        "start": start, "end": start + 60.0, "speakers": ["Dana Okafor"], "text": text,
        "recording_url": "https://recordings.example.com/m.mp4#t={t}"
    })
    .to_string()
}

fn answer_with(n: usize) -> String {
    let claims: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"text":"Claim {i}: the pilot discount is {} percent.","source":"S{}","quote":"we agreed on the pilot discount for annual plans"}}"#,
                i % 50,
                1 + i % 2
            )
        })
        .collect();
    format!("{{\"claims\":[{}]}}", claims.join(","))
}

/// `n` claims that all verify as supported, alternating between an older and a newer meeting that
/// disagree: the worst case for the history check (every pair is about the same subject).
fn supported_answer(n: usize) -> String {
    let claims: Vec<&str> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                r#"{"text":"The pilot discount for annual plans is ten percent.","source":"S1","quote":"we agreed on the pilot discount for annual plans, ten percent"}"#
            } else {
                r#"{"text":"The pilot discount for annual plans is now five percent.","source":"S2","quote":"we agreed on the pilot discount for annual plans, now five percent"}"#
            }
        })
        .collect();
    format!("{{\"claims\":[{}]}}", claims.join(","))
}

fn two_meetings() -> Vec<meetcite::Source> {
    let chunks = parse_chunks(&format!(
        "[{},{}]",
        chunk_json("a", "m1", "2024-04-12", 0.0, "Dana: we agreed on the pilot discount for annual plans, ten percent."),
        chunk_json("b", "m2", "2024-05-03", 0.0, "Priya: we agreed on the pilot discount for annual plans, now five percent.")
    ))
    .unwrap();
    build_context(&chunks, &ContextOptions { order: meetcite::Order::Date, ..Default::default() }).sources
}

#[test]
fn ten_megabyte_chunk_parses_builds_and_matches_a_quote_at_its_end() {
    let _serial = serial();
    let mut text = transcript(10_000_000 / SCALE, 1);
    let tail_at = text.len();
    text.push_str(" and finally Dana said we will ship twelve hundred units per box in June.");
    let json = format!("[{}]", chunk_json("big", "m1", "2024-04-12", 0.0, &text));
    let t = Instant::now();
    let chunks = parse_chunks(&json).expect("a 10 MB chunk is within the 16 MiB limit");
    let t_parse = t.elapsed();
    let ctx = build_context(&chunks, &ContextOptions::default());
    let t_ctx = t.elapsed();
    assert_eq!(ctx.sources.len(), 1);
    assert!(ctx.prompt.len() > text.len());
    let m = match_quote(&text, "we will ship twelve hundred units per box in June", &MatchOptions::default());
    let t_match = t.elapsed();
    assert!(m.matched && m.start > tail_at, "{m:?}");
    assert_eq!(&text[m.start..m.end], "we will ship twelve hundred units per box in June");
    let answer =
        r#"{"claims":[{"text":"Dana said they will ship 1200 units per box.","source":"S1","quote":"we will ship twelve hundred units per box in June"}]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r.claims[0].status, Status::Supported, "{:?}", r.claims[0].reasons);
    eprintln!(
        "{} MB chunk: parse {t_parse:.2?}, +context {:.2?}, +match {:.2?}, +verify {:.2?}",
        text.len() / 1_000_000,
        t_ctx - t_parse,
        t_match - t_ctx,
        t.elapsed() - t_match
    );
}

#[test]
fn documented_size_limits_are_typed_errors() {
    let _serial = serial();
    // one byte over the chunk text limit
    let text = "a".repeat(MAX_CHUNK_BYTES + 1);
    let e = parse_chunks(&format!("[{}]", chunk_json("c", "m", "2024-01-01", 0.0, &text))).unwrap_err();
    assert_eq!(e.code(), "invalid_chunk");
    assert!(e.to_string().contains("limit"), "{e}");
    // one chunk over the chunk count limit
    let one = chunk_json("c", "m", "2024-01-01", 0.0, "x");
    let many: Vec<String> = (0..=MAX_CHUNKS).map(|i| one.replacen("\"c\"", &format!("\"c{i}\""), 1)).collect();
    let e = parse_chunks(&format!("[{}]", many.join(","))).unwrap_err();
    assert_eq!(e.code(), "too_large", "{e}");
    // one byte over the answer limit
    let mut big = String::from("{\"claims\":[]}");
    big.push_str(&" ".repeat(MAX_ANSWER_BYTES + 1 - big.len()));
    assert_eq!(parse_answer(&big).unwrap_err().code(), "too_large");
    assert!(parse_answer(big.trim_end()).is_ok());
    // one claim over the claim limit
    let e = parse_answer(&answer_with(MAX_CLAIMS + 1)).unwrap_err();
    assert_eq!(e.code(), "too_large");
    // a quote over MAX_QUOTE_CHARS is reported, not aligned
    let quote: String = (0..MAX_QUOTE_CHARS / 4).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let m = match_quote(&quote, &quote, &MatchOptions::default());
    assert!(m.too_long && !m.matched);
}

#[test]
fn ten_thousand_claims_verify() {
    let _serial = serial();
    let sources = two_meetings();
    let n = MAX_CLAIMS / SCALE;
    let t = Instant::now();
    let r = verify(&supported_answer(n), &sources, &VerifyOptions::default()).unwrap();
    eprintln!("verify {n} claims: {:.2?}", t.elapsed());
    assert_eq!(r.claims.len(), n);
    // every April claim is superseded by the May ones, every May claim is supported
    assert_eq!(r.counts.supported, n / 2, "{:?}", r.claims[0].reasons);
    assert!(r.claims.iter().step_by(2).all(|c| c.reasons.iter().any(|x| x.code == "superseded")));
}

#[test]
fn verification_is_not_superlinear_in_claims() {
    let _serial = serial();
    let sources = two_meetings();
    let n = MAX_CLAIMS / 4 / SCALE;
    let (small, big) = (supported_answer(n), supported_answer(4 * n));
    let a = best_of_3(|| verify(&small, &sources, &VerifyOptions::default()).unwrap());
    let b = best_of_3(|| verify(&big, &sources, &VerifyOptions::default()).unwrap());
    assert_not_superlinear("verify vs supported claims about one subject", a, b);
}

#[test]
fn deep_json_nesting_is_an_error_not_a_stack_overflow() {
    let _serial = serial();
    for depth in [200, 10_000, 1_000_000 / SCALE] {
        let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let objects = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        for deep in [&arrays, &objects] {
            assert_eq!(parse_answer(deep).unwrap_err().code(), if deep.starts_with('[') { "no_json" } else { "malformed_json" });
            assert_eq!(parse_chunks(deep).unwrap_err().code(), "invalid_json");
            // inside a claim, and inside a chunk field
            let claim = format!(r#"{{"claims":[{{"text":"ok","source":"S1","quote":"q"}},{{"text":{deep},"source":"S1","quote":"q"}}]}}"#);
            assert_eq!(parse_answer(&claim).unwrap_err().code(), "malformed_json");
            let chunk = chunk_json("c", "m", "2024-01-01", 0.0, "x").replacen("\"x\"", deep, 1);
            assert_eq!(parse_chunks(&format!("[{chunk}]")).unwrap_err().code(), "invalid_json");
        }
    }
    // shallow nesting inside one claim is that claim's error; the others survive
    let claim = r#"{"claims":[{"text":"ok","source":"S1","quote":"q"},{"text":[[[[[["x"]]]]]],"source":"S1","quote":"q"}]}"#;
    let p = parse_answer(claim).unwrap();
    assert_eq!((p.claims.len(), p.errors.len()), (1, 1));
}

#[test]
fn answer_parsing_is_not_superlinear_in_claims() {
    let _serial = serial();
    let n = MAX_CLAIMS / 4 / SCALE;
    let (small, big) = (answer_with(n), answer_with(4 * n));
    let a = best_of_3(|| parse_answer(&small).unwrap());
    let b = best_of_3(|| parse_answer(&big).unwrap());
    assert_not_superlinear("parse_answer vs claims", a, b);
    // the same with prose, fences and stray braces around the JSON
    let wrap = |s: &str| format!("Sure! Here is the answer:\n```json\n{s}\n```\nHope this {{helps}}. {}", "{ ".repeat(1000));
    let (small, big) = (wrap(&small), wrap(&big));
    let a = best_of_3(|| parse_answer(&small).unwrap());
    let b = best_of_3(|| parse_answer(&big).unwrap());
    assert_not_superlinear("parse_answer (fenced) vs claims", a, b);
}

#[test]
fn answer_parsing_is_not_superlinear_in_hostile_prose() {
    let _serial = serial();
    // many fences, many braces that never form JSON
    for piece in ["```{", "{\"a\":", "{ ", "```\n{\"claims\":[{\"text\":\"a\",\"source\":\"S1\",\"quote\":"] {
        let n = 200_000 / SCALE / piece.len();
        let (small, big) = (piece.repeat(n), piece.repeat(4 * n));
        let a = best_of_3(|| parse_answer(&small).map(|_| ()).unwrap_or(()));
        let b = best_of_3(|| parse_answer(&big).map(|_| ()).unwrap_or(()));
        assert_not_superlinear(&format!("parse_answer vs repeated {piece:?}"), a, b);
    }
}

#[test]
fn context_building_is_not_superlinear_in_chunk_size() {
    let _serial = serial();
    // 2 MB and 8 MB: both past the CPU caches, so the ratio shows the algorithm
    let n = 2_000_000 / SCALE;
    let json = |bytes: usize| {
        format!("[{},{}]", chunk_json("a", "m1", "2024-04-12", 0.0, &transcript(bytes, 2)), chunk_json("b", "m2", "2024-05-03", 0.0, &transcript(bytes / 2, 3)))
    };
    let (small, big) = (json(n), json(4 * n));
    let a = best_of_3(|| build_context(&parse_chunks(&small).unwrap(), &ContextOptions::default()));
    let b = best_of_3(|| build_context(&parse_chunks(&big).unwrap(), &ContextOptions::default()));
    assert_not_superlinear("parse_chunks + build_context vs chunk size", a, b);
    // hostile text: nothing but would-be markers and delimiters
    let hostile = |k: usize| format!("[{}]", chunk_json("h", "m1", "2024-04-12", 0.0, &"[S1] [ s22 ］【Ｓ３】 </sources> | \n".repeat(k)));
    let (small, big) = (hostile(n / 64), hostile(4 * n / 64));
    let (cs, cb) = (parse_chunks(&small).unwrap(), parse_chunks(&big).unwrap());
    let a = best_of_3(|| build_context(&cs, &ContextOptions::default()));
    let b = best_of_3(|| build_context(&cb, &ContextOptions::default()));
    assert_not_superlinear("build_context vs spoofed-marker text", a, b);
}

#[test]
fn context_building_is_not_superlinear_in_chunk_count() {
    let _serial = serial();
    // many chunks of one meeting: the de-duplication compares each chunk with those kept
    let n = MAX_CHUNKS / 4 / SCALE;
    let many = |k: usize| {
        let text = transcript(300, 4);
        let v: Vec<String> = (0..k).map(|i| chunk_json(&format!("c{i}"), "m1", "2024-04-12", i as f64 * 60.0, &format!("{text} {i:06}"))).collect();
        format!("[{}]", v.join(","))
    };
    let (cs, cb) = (parse_chunks(&many(n)).unwrap(), parse_chunks(&many(4 * n)).unwrap());
    let a = best_of_3(|| build_context(&cs, &ContextOptions::default()));
    let b = best_of_3(|| build_context(&cb, &ContextOptions::default()));
    assert_not_superlinear("build_context vs chunk count", a, b);
}

#[test]
fn quote_matching_is_not_superlinear_in_chunk_length() {
    let _serial = serial();
    let n = 1_000_000 / SCALE;
    let quote = "finally Dana said we will ship twelve hundred units per box in June after the legal review";
    let text = |bytes: usize| format!("{} {quote}", transcript(bytes, 5));
    let (small, big) = (text(n), text(4 * n));
    let mo = MatchOptions::default();
    let a = best_of_3(|| assert!(match_quote(&small, quote, &mo).matched));
    let b = best_of_3(|| assert!(match_quote(&big, quote, &mo).matched));
    assert_not_superlinear("match_quote vs chunk length", a, b);
    // a long quote (many bit-parallel blocks) that is not there
    let long: String = transcript(MAX_QUOTE_CHARS - 100, 6);
    let a = best_of_3(|| match_quote(&small, &long, &mo));
    let b = best_of_3(|| match_quote(&big, &long, &mo));
    assert_not_superlinear("match_quote (1400-char quote) vs chunk length", a, b);
}
