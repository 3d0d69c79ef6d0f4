//! Checks shared by the fuzz targets: the rendered HTML and Markdown are structurally safe
//! whatever the transcript or the answer contained, and reports are internally consistent.
#![allow(dead_code)]

use meetcite::render::safe_url;
use meetcite::verify::{Report, Status};
use meetcite::{Source, VerifyOptions};

/// Tags and attributes `render_html` writes; anything else means an injection.
const TAGS: &[&str] = &["div", "p", "ol", "li", "span", "a"];
const ATTRS: &[&str] = &["class", "data-status", "data-meeting", "data-seconds", "title", "href", "rel", "role"];

/// Parse the fragment with a strict tokenizer: only known tags and attributes, every attribute
/// double-quoted with no raw quote or angle bracket inside, no `on*` attribute, every `href` http(s)
/// or `#`, no `<` or `>` in text.
pub fn check_html(html: &str) {
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        assert!(!rest[..lt].contains('>'), "raw '>' in text: {html}");
        rest = &rest[lt + 1..];
        let name_len = rest.find(|c: char| c == ' ' || c == '>').unwrap_or_else(|| panic!("unterminated tag: {html}"));
        let name = rest[..name_len].strip_prefix('/').unwrap_or(&rest[..name_len]);
        assert!(TAGS.contains(&name), "unexpected tag <{name}> in {html}");
        rest = &rest[name_len..];
        loop {
            rest = rest.trim_start_matches(' ');
            if let Some(r) = rest.strip_prefix('>') {
                rest = r;
                break;
            }
            let eq = rest.find("=\"").unwrap_or_else(|| panic!("malformed attribute near {rest:?}"));
            let attr = &rest[..eq];
            assert!(ATTRS.contains(&attr), "unexpected attribute {attr:?} in {html}");
            rest = &rest[eq + 2..];
            let close = rest.find('"').unwrap_or_else(|| panic!("unterminated attribute value: {html}"));
            let value = &rest[..close];
            assert!(!value.contains('<') && !value.contains('>') && !value.contains('\''), "raw markup in attribute: {value:?}");
            if attr == "href" {
                let url = value.replace("&amp;", "&");
                assert!(url == "#" || safe_url(&url), "unsafe href {value:?}");
            }
            rest = &rest[close + 1..];
        }
    }
    assert!(!rest.contains('>'), "raw '>' in text: {html}");
}

/// Markdown: every `<` opens a link target `](<...>)` whose URL is http(s); no raw HTML.
pub fn check_markdown(md: &str) {
    let mut rest = md;
    while let Some(lt) = rest.find('<') {
        assert!(rest[..lt].ends_with("]("), "raw '<' in markdown: {md}");
        let after = &rest[lt + 1..];
        let gt = after.find('>').unwrap_or_else(|| panic!("unterminated link target: {md}"));
        let url = &after[..gt];
        assert!(safe_url(url), "unsafe link target {url:?}");
        assert!(after[gt + 1..].starts_with(')'), "link target not closed: {md}");
        rest = &after[gt + 1..];
    }
}

/// A report agrees with itself and with the sources it was verified against.
pub fn check_report(r: &Report, sources: &[Source], opts: &VerifyOptions) {
    let all: Vec<_> = r.claims.iter().chain(&r.dropped).collect();
    let mut idx: Vec<usize> = all.iter().map(|c| c.index).collect();
    idx.sort_unstable();
    idx.dedup();
    assert_eq!(idx.len(), all.len(), "claim indices are unique");
    let c = &r.counts;
    assert_eq!(c.supported + c.flagged + c.unknown_source + c.unparsable, all.len());
    assert_eq!(r.abstain, c.supported == 0);
    for v in &all {
        if v.status == Status::UnknownSource {
            // a claim citing a source the viewer may not see leaks nothing about it
            assert!(v.chunk_id.is_none() && v.meeting_title.is_none() && v.span.is_none() && v.link.is_none());
            let n = v.source.as_deref().and_then(|s| meetcite::answer::parse_source(s).ok()).expect("unknown source has a label");
            assert!(meetcite::context::lookup(sources, n).is_none());
        }
        if let Some((a, b)) = v.span {
            let src = sources.iter().find(|s| Some(&s.chunk.id) == v.chunk_id.as_ref()).expect("span has a chunk");
            let t = &src.chunk.text;
            assert!(a <= b && b <= t.len() && t.is_char_boundary(a) && t.is_char_boundary(b), "span {a}..{b}");
            assert_eq!(v.matched_text.as_deref(), Some(&t[a..b]));
        }
        if let Some(f) = &v.found_in {
            // a misattributed quote points into another source of this context (never a hidden
            // one: hidden chunks are not in `sources`), at a real span, and is flagged
            assert_eq!(v.status, Status::Flagged);
            assert!(v.reasons.iter().any(|r| r.code == "misattributed"));
            let src = sources.iter().find(|s| s.label == f.source).expect("found_in names a source of the context");
            assert_eq!(src.chunk.id, f.chunk_id);
            assert_ne!(Some(f.source.as_str()), v.source.as_deref(), "found in another source than the cited one");
            let t = &src.chunk.text;
            let (a, b) = f.span;
            assert!(a <= b && b <= t.len() && t.is_char_boundary(a) && t.is_char_boundary(b), "found span {a}..{b}");
            assert_eq!(f.matched_text, t[a..b]);
            assert!(f.quote_score >= opts.matching.threshold);
            if let Some(u) = &f.link.url {
                assert!(safe_url(u), "unsafe link {u:?}");
            }
        }
        if let Some(q) = v.quote_score {
            assert!((0.0..=100.0).contains(&q), "score {q}");
        }
        if let Some(l) = &v.link {
            if let Some(u) = &l.url {
                assert!(safe_url(u), "unsafe link {u:?}");
            }
        }
        if v.status == Status::Supported {
            assert!(v.reasons.is_empty() && v.quote_score.is_some_and(|s| s >= opts.matching.threshold));
            assert!(v.more_quotes.iter().all(|q| q.found), "a supported claim has every quote found");
        }
        // a claim's further quotes: real spans in sources of this context, places in other
        // sources of it; one citing a source the viewer may not see leaks nothing about it
        for q in &v.more_quotes {
            match q.chunk_id.as_ref() {
                None => assert!(q.span.is_none() && q.link.is_none() && q.meeting_title.is_none() && q.found_in.is_none() && !q.found),
                Some(id) => {
                    let src = sources.iter().find(|s| &s.chunk.id == id).expect("a further quote's chunk is in the context");
                    if let Some((a, b)) = q.span {
                        let t = &src.chunk.text;
                        assert!(a <= b && b <= t.len() && t.is_char_boundary(a) && t.is_char_boundary(b), "span {a}..{b}");
                        assert_eq!(q.matched_text.as_deref(), Some(&t[a..b]));
                    }
                    if let Some(f) = &q.found_in {
                        assert!(sources.iter().any(|s| s.label == f.source && s.chunk.id == f.chunk_id));
                        assert!(v.reasons.iter().any(|r| r.code == "misattributed" && r.quote.is_some()));
                    }
                }
            }
            if !q.found {
                assert_ne!(v.status, Status::Supported);
            }
            for u in q.link.iter().filter_map(|l| l.url.as_ref()).chain(q.found_in.iter().filter_map(|f| f.link.url.as_ref())) {
                assert!(safe_url(u), "unsafe link {u:?}");
            }
        }
    }
    for hide in [false, true] {
        let o = meetcite::RenderOptions { hide_flagged: hide };
        check_html(&meetcite::render_html(r, &o));
        check_markdown(&meetcite::render_markdown(r, &o));
    }
}
