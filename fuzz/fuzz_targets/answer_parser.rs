//! Arbitrary bytes as an LLM answer: `parse_answer` never panics, its result is consistent, and
//! `verify` + `render_html`/`render_markdown` against the pricing fixture stay safe.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use meetcite::verify::Policy;
use meetcite::{build_context, parse_answer, parse_chunks, verify, ContextOptions, Order, Source, VerifyOptions};
use std::sync::OnceLock;

fn sources() -> &'static [Source] {
    static S: OnceLock<Vec<Source>> = OnceLock::new();
    S.get_or_init(|| {
        let chunks = parse_chunks(include_str!("../../tests/fixtures/pricing_chunks.json")).unwrap();
        build_context(&chunks, &ContextOptions { order: Order::Date, ..Default::default() }).sources
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let policy = [Policy::Warn, Policy::Drop, Policy::Feedback][data.len() % 3];
    let opts = VerifyOptions { policy, ..Default::default() };
    match parse_answer(&text) {
        Ok(p) => {
            for w in p.claims.windows(2) {
                assert!(w[0].index < w[1].index);
            }
            for w in p.errors.windows(2) {
                assert!(w[0].index < w[1].index);
            }
            for c in &p.claims {
                assert!(c.source >= 1 && !c.text.trim().is_empty() && !c.quote.trim().is_empty());
                assert!(p.errors.iter().all(|e| e.index != c.index));
            }
            for e in &p.errors {
                let _ = e.to_string();
            }
            let r = verify(&text, sources(), &opts).expect("an answer that parses verifies");
            assert_eq!(r.claims.len() + r.dropped.len(), p.claims.len() + p.errors.len());
            common::check_report(&r, sources(), &opts);
        }
        Err(e) => {
            assert!(!e.code().is_empty() && !e.to_string().is_empty());
            let v = verify(&text, sources(), &opts).expect_err("verify fails like parse_answer");
            assert_eq!(v.code(), e.code());
        }
    }
});
