//! Stage 6b: deep links, HTML and Markdown. Every string that came from a transcript, a title, a
//! speaker or an LLM answer is escaped; recording URLs must be http(s).

use crate::report::{ClaimVerdict, Report, Status};
// deep links moved to the report; their old paths keep working
pub use crate::report::{day_month, deep_link, safe_url, url_at, DeepLink};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(default)]
pub struct RenderOptions {
    /// Show flagged claims (with their warnings); the `drop` policy already removed them.
    pub hide_flagged: bool,
}

/// HTML-escape text (also safe inside double- and single-quoted attributes).
pub fn escape_html(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '`' => o.push_str("&#96;"),
            _ => o.push(c),
        }
    }
    o
}

/// Escape Markdown inline syntax (and HTML) in text.
pub fn escape_md(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' => {
                o.push('\\');
                o.push(c);
            }
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '\n' | '\r' => o.push(' '),
            _ => o.push(c),
        }
    }
    o
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Supported => "supported",
        Status::Flagged => "flagged",
        Status::UnknownSource => "unknown source",
        Status::Unparsable => "unparsable",
    }
}

/// Where the claim's misattributed quotes are: its own quote's place, then its further quotes'.
fn found_in(c: &ClaimVerdict) -> impl Iterator<Item = &crate::report::FoundIn> {
    c.found_in.iter().chain(c.more_quotes.iter().filter_map(|q| q.found_in.as_ref()))
}

fn warnings(c: &ClaimVerdict) -> Vec<String> {
    c.reasons.iter().map(|r| r.message.clone()).collect()
}

/// ` <a ...>[label]</a>`: a deep link as a citation (`class`), the quoted words as its title. The
/// URL is checked again here: a report can come from elsewhere (JS, a file) than `verify`.
fn html_link(l: &DeepLink, words: &str, class: &str, prefix: &str) -> String {
    let title = escape_html(&format!("\u{201c}{words}\u{201d}"));
    let attrs = format!("class=\"{class}\" data-meeting=\"{}\" data-seconds=\"{}\" title=\"{}\"", escape_html(&l.meeting_id), l.seconds, title);
    let text = escape_html(&format!("{prefix}{}", l.label));
    match l.url.as_deref().filter(|u| safe_url(u)) {
        Some(u) => format!(" <a {attrs} href=\"{}\" rel=\"noopener noreferrer\">[{text}]</a>", escape_html(u)),
        None => format!(" <a {attrs} href=\"#\" role=\"button\">[{text}]</a>"),
    }
}

/// ` [label](<url>)`, or the label in escaped brackets when there is no safe URL.
fn md_link(l: &DeepLink, prefix: &str) -> String {
    let text = escape_md(&format!("{prefix}{}", l.label));
    match l.url.as_deref().filter(|u| safe_url(u)) {
        Some(u) => format!(" [{text}](<{}>)", u.replace('>', "%3E").replace(' ', "%20")),
        None => format!(" \\[{text}\\]"),
    }
}

/// Render a report as an HTML fragment.
pub fn render_html(report: &Report, opts: &RenderOptions) -> String {
    let mut h = String::from("<div class=\"meetcite-report\">\n");
    if report.abstain {
        h.push_str(&format!("<p class=\"meetcite-abstain\">{}</p>\n", escape_html(&report.abstain_message)));
    }
    h.push_str("<ol class=\"meetcite-claims\">\n");
    for c in &report.claims {
        if opts.hide_flagged && c.status != Status::Supported {
            continue;
        }
        let cls = status_word(c.status).replace(' ', "-");
        h.push_str(&format!("<li class=\"meetcite-claim meetcite-{cls}\" data-status=\"{cls}\"><span class=\"meetcite-text\">{}</span>", escape_html(&c.text)));
        if let Some(l) = &c.link {
            h.push_str(&html_link(l, c.matched_text.as_deref().unwrap_or(&c.quote), "meetcite-cite", ""));
        } else if let Some(s) = &c.source {
            h.push_str(&format!(" <span class=\"meetcite-source\">[{}]</span>", escape_html(s)));
        }
        // a claim drawn from several places: one citation per quote
        for q in &c.more_quotes {
            match &q.link {
                Some(l) => h.push_str(&html_link(l, q.matched_text.as_deref().unwrap_or(&q.quote), "meetcite-cite", "")),
                None => h.push_str(&format!(" <span class=\"meetcite-source\">[{}]</span>", escape_html(&q.source))),
            }
        }
        if c.status != Status::Supported {
            let w = warnings(c);
            let badge = if w.is_empty() { status_word(c.status).to_string() } else { w.join("; ") };
            h.push_str(&format!(
                " <span class=\"meetcite-badge meetcite-warn\" title=\"{}\">\u{26a0} {}</span>",
                escape_html(&badge),
                escape_html(status_word(c.status))
            ));
        }
        // a misattributed quote: a link to where the words really are
        for f in found_in(c) {
            h.push_str(&html_link(&f.link, &f.matched_text, "meetcite-found", "found in "));
        }
        h.push_str("</li>\n");
    }
    h.push_str("</ol>\n</div>\n");
    h
}

/// Render a report as Markdown.
pub fn render_markdown(report: &Report, opts: &RenderOptions) -> String {
    let mut m = String::new();
    if report.abstain {
        m.push_str(&format!("> {}\n\n", escape_md(&report.abstain_message)));
    }
    let mut n = 0;
    for c in &report.claims {
        if opts.hide_flagged && c.status != Status::Supported {
            continue;
        }
        n += 1;
        m.push_str(&format!("{n}. {}", escape_md(&c.text)));
        for l in c.link.iter().chain(c.more_quotes.iter().filter_map(|q| q.link.as_ref())) {
            m.push_str(&md_link(l, ""));
        }
        if c.status != Status::Supported {
            m.push_str(&format!(" \u{26a0} *{}*", escape_md(&warnings(c).join("; "))));
        }
        for f in found_in(c) {
            m.push_str(&md_link(&f.link, "found in "));
        }
        m.push('\n');
    }
    m
}
