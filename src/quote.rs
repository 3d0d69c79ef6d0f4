//! Stage 3: the quote matcher. Semi-global Levenshtein alignment (Myers/Hyyrö bit-parallel,
//! multi-block) of the normalised quote inside the normalised chunk, then a banded traceback on
//! the winning window to recover the exact span, mapped back to UTF-8 offsets of the original.
//! Numbers in the quote must appear identically in the span; stitched quotes fail.

use crate::context::Chunk;
use crate::text::{match_tokens, numbers, Token};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Default acceptance threshold on the 0-100 score. Tuned on QMSum *train*-derived pairs
/// (`tests/fixtures/quotes_tune.jsonl`, see `tests/fixtures/make_fixtures.py`): balanced
/// accuracy there is 0.99 from 78 to 80, 0.987 at 82 and 0.984 at 85; 80 is the middle of the plateau.
pub const DEFAULT_THRESHOLD: f64 = 80.0;
/// A run of at least this many skipped chunk characters inside an alignment marks a stitched quote.
pub const DEFAULT_MAX_GAP: usize = 24;
/// Quotes longer than this (normalised characters) are not aligned.
pub const MAX_QUOTE_CHARS: usize = 1500;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchOptions {
    pub threshold: f64,
    pub max_gap: usize,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions { threshold: DEFAULT_THRESHOLD, max_gap: DEFAULT_MAX_GAP }
    }
}

/// Result of aligning a quote inside a text. Offsets are UTF-8 bytes into the text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuoteMatch {
    /// Score above threshold, numbers equal, not stitched.
    pub matched: bool,
    /// 0-100: `100 * (1 - distance / quote_length)` on the normalised view.
    pub score: f64,
    pub distance: usize,
    pub start: usize,
    pub end: usize,
    /// Numbers of the quote that the span lacks (canonical form, e.g. `"10%"`).
    pub missing_numbers: Vec<String>,
    /// Longest run of chunk characters the quote skipped inside the span.
    pub max_gap: usize,
    pub stitched: bool,
    pub too_long: bool,
}

impl QuoteMatch {
    fn none() -> Self {
        QuoteMatch { matched: false, score: 0.0, distance: 0, start: 0, end: 0, missing_numbers: vec![], max_gap: 0, stitched: false, too_long: false }
    }
}

/// A normalised view: chars of the tokens joined by single spaces, each char mapped to a token.
struct View {
    chars: Vec<char>,
    tok: Vec<u32>,
    tokens: Vec<Token>,
}

fn view(text: &str) -> View {
    let tokens = match_tokens(text);
    let mut chars = Vec::with_capacity(text.len());
    let mut tok = Vec::with_capacity(text.len());
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            chars.push(' ');
            tok.push(i as u32);
        }
        for c in t.norm.chars() {
            chars.push(c);
            tok.push(i as u32);
        }
    }
    View { chars, tok, tokens }
}

/// One Hyyrö block step; returns the horizontal delta at `out_bit`.
#[inline(always)]
fn step(pv: &mut u64, mv: &mut u64, mut eq: u64, hin: i32, out_bit: u64) -> i32 {
    let xv = eq | *mv;
    if hin < 0 {
        eq |= 1;
    }
    let xh = (((eq & *pv).wrapping_add(*pv)) ^ *pv) | eq;
    let mut ph = *mv | !(xh | *pv);
    let mut mh = *pv & xh;
    let hout = if ph & out_bit != 0 { 1 } else if mh & out_bit != 0 { -1 } else { 0 };
    ph <<= 1;
    mh <<= 1;
    if hin < 0 {
        mh |= 1;
    } else if hin > 0 {
        ph |= 1;
    }
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    hout
}

/// Semi-global edit distance of `pat` in `text`: (best distance, leftmost end index inclusive).
fn myers_search(pat: &[char], text: &[char]) -> (usize, usize) {
    let m = pat.len();
    let nb = m.div_ceil(64);
    // peq: per distinct pattern char, one mask per block
    let mut index: HashMap<char, usize> = HashMap::new();
    let mut ascii = [usize::MAX; 128];
    let mut peq: Vec<u64> = vec![0; nb]; // slot 0 = chars not in pattern
    for (i, &c) in pat.iter().enumerate() {
        let slot = *index.entry(c).or_insert_with(|| {
            peq.extend(std::iter::repeat_n(0, nb));
            peq.len() / nb - 1
        });
        if (c as u32) < 128 {
            ascii[c as usize] = slot;
        }
        peq[slot * nb + i / 64] |= 1u64 << (i % 64);
    }
    let last_bit = 1u64 << ((m - 1) % 64);
    let mut pv = vec![u64::MAX; nb];
    let mut mv = vec![0u64; nb];
    let mut score = m as i64;
    let (mut best, mut best_end) = (m as i64, 0usize);
    for (j, &c) in text.iter().enumerate() {
        let slot = if (c as u32) < 128 { ascii[c as usize] } else { index.get(&c).copied().unwrap_or(usize::MAX) };
        let base = if slot == usize::MAX { 0 } else { slot * nb };
        let mut h = 0;
        for b in 0..nb {
            let out_bit = if b + 1 == nb { last_bit } else { 1u64 << 63 };
            h = step(&mut pv[b], &mut mv[b], peq[base + b], h, out_bit);
        }
        score += h as i64;
        if score < best {
            best = score;
            best_end = j;
        }
    }
    (best as usize, best_end)
}

/// Full DP with free start on `window` (which must end at the alignment's end); returns
/// (distance, start index in window, longest run of skipped window chars).
fn traceback(pat: &[char], window: &[char]) -> (usize, usize, usize) {
    let m = pat.len();
    let w = window.len();
    let cols = w + 1;
    let mut d = vec![0u32; (m + 1) * cols];
    for i in 1..=m {
        d[i * cols] = i as u32;
        for j in 1..=w {
            let sub = d[(i - 1) * cols + j - 1] + u32::from(pat[i - 1] != window[j - 1]);
            let up = d[(i - 1) * cols + j] + 1;
            let left = d[i * cols + j - 1] + 1;
            d[i * cols + j] = sub.min(up).min(left);
        }
    }
    let dist = d[m * cols + w] as usize;
    let (mut i, mut j) = (m, w);
    let (mut gap, mut max_gap) = (0usize, 0usize);
    while i > 0 {
        let cur = d[i * cols + j];
        if j > 0 && cur == d[(i - 1) * cols + j - 1] + u32::from(pat[i - 1] != window[j - 1]) {
            i -= 1;
            j -= 1;
            gap = 0;
        } else if cur == d[(i - 1) * cols + j] + 1 {
            i -= 1;
            gap = 0;
        } else {
            j -= 1;
            gap += 1;
            max_gap = max_gap.max(gap);
        }
    }
    (dist, j, max_gap)
}

/// Does the span's number `s` satisfy the quote's number `q`? Equal, or the quote left out the
/// span's percent sign.
fn number_ok(q: &str, s: &str) -> bool {
    q == s || (!q.ends_with('%') && s.strip_suffix('%') == Some(q))
}

/// Align `quote` inside `text`.
pub fn match_quote(text: &str, quote: &str, opts: &MatchOptions) -> QuoteMatch {
    let q = view(quote);
    let t = view(text);
    let m = q.chars.len();
    if m == 0 || t.chars.is_empty() {
        return QuoteMatch::none();
    }
    if m > MAX_QUOTE_CHARS {
        return QuoteMatch { too_long: true, ..QuoteMatch::none() };
    }
    let (dist, end) = myers_search(&q.chars, &t.chars);
    let wstart = (end + 1).saturating_sub(m + dist);
    let (dist2, rel_start, max_gap) = traceback(&q.chars, &t.chars[wstart..=end]);
    debug_assert_eq!(dist, dist2);
    let mut s = wstart + rel_start;
    let mut e = end;
    while s < e && t.chars[s] == ' ' {
        s += 1;
    }
    while e > s && t.chars[e] == ' ' {
        e -= 1;
    }
    let (ft, lt) = (t.tok[s] as usize, t.tok[e] as usize);
    let score = (100.0 * (1.0 - dist as f64 / m as f64)).max(0.0);
    // numbers: every number in the quote must be in the span (a token of slack on the right for
    // a trailing "percent")
    let qn = numbers(&q.tokens);
    let span_tokens = &t.tokens[ft..(lt + 2).min(t.tokens.len())];
    let sn = numbers(span_tokens);
    let mut pool: Vec<&str> = sn.iter().filter(|n| n.first_token <= lt - ft).map(|n| n.value.as_str()).collect();
    let mut missing = Vec::new();
    for n in &qn {
        match pool.iter().position(|s| number_ok(&n.value, s)) {
            Some(p) => {
                pool.remove(p);
            }
            None => missing.push(n.value.clone()),
        }
    }
    let stitched = max_gap >= opts.max_gap;
    QuoteMatch {
        matched: score >= opts.threshold && missing.is_empty() && !stitched,
        score: (score * 10.0).round() / 10.0,
        distance: dist,
        start: t.tokens[ft].start,
        end: t.tokens[lt].end,
        missing_numbers: missing,
        max_gap,
        stitched,
        too_long: false,
    }
}

/// Where a span sits in its chunk: speaker(s) and time of its first word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub speaker: Option<String>,
    /// All speakers whose turns the span touches.
    pub speakers: Vec<String>,
    pub turn: Option<usize>,
    /// Seconds from the start of the recording.
    pub time: f64,
    /// `words`, `turn` or `chunk`: how `time` was obtained.
    pub time_source: String,
    /// The text of the turn(s) around the span (the whole chunk when there are no turns).
    pub turn_start: usize,
    pub turn_end: usize,
}

fn interpolate(t0: f64, t1: f64, a: usize, b: usize, x: usize) -> f64 {
    if b <= a {
        return t0;
    }
    let f = (x.saturating_sub(a)) as f64 / (b - a) as f64;
    t0 + f.clamp(0.0, 1.0) * (t1 - t0)
}

/// Locate a byte span of `chunk.text`.
pub fn locate(chunk: &Chunk, start: usize, end: usize) -> Location {
    let turns = chunk.turns.as_deref().unwrap_or(&[]);
    let turn = turns
        .iter()
        .position(|t| t.text_start <= start && start < t.text_end)
        .or_else(|| turns.iter().rposition(|t| t.text_start <= start));
    let speakers: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for t in turns.iter().filter(|t| t.text_start < end.max(start + 1) && t.text_end > start) {
            if !v.contains(&t.speaker) {
                v.push(t.speaker.clone());
            }
        }
        if v.is_empty() && turns.is_empty() && chunk.speakers.len() == 1 {
            v.push(chunk.speakers[0].clone());
        }
        v
    };
    let speaker = match turn {
        Some(i) => Some(turns[i].speaker.clone()),
        None => speakers.first().cloned(),
    };
    let words = chunk.word_offsets();
    let (time, source) = if let Some(&(_, t)) = words.iter().rev().find(|(o, _)| *o <= start).or(words.first()) {
        (t, "words")
    } else if let Some(i) = turn {
        let tr = &turns[i];
        (interpolate(tr.start, tr.end, tr.text_start, tr.text_end, start), "turn")
    } else {
        (interpolate(chunk.start, chunk.end, 0, chunk.text.len(), start), "chunk")
    };
    let (turn_start, turn_end) = match turn {
        Some(i) => {
            let last = turns.iter().rposition(|t| t.text_start < end).unwrap_or(i).max(i);
            (turns[i].text_start, turns[last].text_end)
        }
        None => (0, chunk.text.len()),
    };
    Location { speaker, speakers, turn, time, time_source: source.into(), turn_start, turn_end }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(pat: &[char], text: &[char]) -> usize {
        let mut prev: Vec<usize> = (0..=pat.len()).collect();
        let mut best = pat.len();
        for &c in text {
            let mut cur = vec![0; pat.len() + 1];
            for i in 1..=pat.len() {
                cur[i] = (prev[i - 1] + usize::from(pat[i - 1] != c)).min(prev[i] + 1).min(cur[i - 1] + 1);
            }
            best = best.min(cur[pat.len()]);
            prev = cur;
        }
        best
    }

    #[test]
    fn myers_equals_naive_dp_across_block_sizes() {
        let text: Vec<char> = "the quick brown fox jumps over the lazy dog and then some more words follow here to make a long text for testing purposes with many characters in it".chars().collect();
        for (a, b) in [(4, 30), (10, 80), (0, 70), (20, 150), (3, 140)] {
            let mut pat: Vec<char> = text[a..b.min(text.len())].to_vec();
            pat[2] = 'x';
            if pat.len() > 66 {
                pat.remove(65);
            }
            assert_eq!(myers_search(&pat, &text).0, naive(&pat, &text), "{a}..{b}");
        }
    }

    #[test]
    fn verbatim_quote_gets_its_span() {
        let text = "Dana: We agreed on a ten percent discount for the pilot. Luis: Fine by me.";
        let m = match_quote(text, "a ten percent discount", &MatchOptions::default());
        assert!(m.matched);
        assert_eq!(&text[m.start..m.end], "a ten percent discount");
        assert_eq!(m.score, 100.0);
    }

    #[test]
    fn altered_number_fails() {
        let text = "Dana: We agreed on a ten percent discount for the pilot.";
        let m = match_quote(text, "a fifteen percent discount", &MatchOptions::default());
        assert!(!m.matched);
        assert_eq!(m.missing_numbers, vec!["15%"]);
    }
}
