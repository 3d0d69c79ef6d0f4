//! Stage 3: the quote matcher. Semi-global Levenshtein alignment (Myers/Hyyrö bit-parallel,
//! multi-block) of the normalised quote inside the normalised chunk, then a banded traceback on
//! the winning window to recover the exact span, mapped back to UTF-8 offsets of the original.
//! Numbers in the quote must appear identically in the span; stitched quotes fail.

use crate::chunk::PositionEncoding;
use crate::context::Chunk;
use crate::text::{may_start_number, numbers, push_match_tokens, Token};
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
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
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

/// Result of aligning a quote inside a text. `start`/`end` are offsets into the text: UTF-8 bytes in
/// Rust, UTF-16 code units in JavaScript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
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
    /// Longest run of chunk characters the quote skipped inside the span (computed only when the
    /// score reaches the threshold; 0 otherwise).
    pub max_gap: usize,
    /// The quote's first or last words are not at the span but further away in the text (a
    /// stitched piece too short to drag the score below the threshold); see [`StrayEdge`].
    pub stray: Option<StrayEdge>,
    /// `max_gap` reached the `max_gap` option, or `stray` is set.
    pub stitched: bool,
    pub too_long: bool,
}

/// Words at one end of a quote that the alignment left out, found verbatim at least `max_gap`
/// normalised chars away from the span: `quote_start..quote_end` in the quote, and their nearest
/// such occurrence `text_start..text_end` in the text (same offset units as `start`/`end`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct StrayEdge {
    /// The words open the quote (otherwise they close it).
    pub first: bool,
    pub quote_start: usize,
    pub quote_end: usize,
    pub text_start: usize,
    pub text_end: usize,
}

impl QuoteMatch {
    fn none() -> Self {
        QuoteMatch {
            matched: false,
            score: 0.0,
            distance: 0,
            start: 0,
            end: 0,
            missing_numbers: vec![],
            max_gap: 0,
            stray: None,
            stitched: false,
            too_long: false,
        }
    }

    /// Convert every offset from UTF-8 bytes to `enc`: `start`, `end` and the stray words'
    /// place into `text`, the stray words' range into `quote`.
    pub fn encode(&mut self, enc: PositionEncoding, text: &str, quote: &str) {
        match &mut self.stray {
            Some(s) => {
                enc.encode(text, &mut [&mut self.start, &mut self.end, &mut s.text_start, &mut s.text_end]);
                enc.encode(quote, &mut [&mut s.quote_start, &mut s.quote_end]);
            }
            None => enc.encode(text, &mut [&mut self.start, &mut self.end]),
        }
    }
}

/// A normalised view: the normalised chars of the match tokens joined by single spaces, each
/// token's byte span in the original text and the index of its first char. Built without a
/// per-token allocation; [`View::tokens`] materialises [`Token`]s for a range on demand.
struct View {
    chars: Vec<char>,
    /// byte span of each token in the original text
    spans: Vec<(usize, usize)>,
    /// index in `chars` of each token's first char
    first: Vec<u32>,
}

impl View {
    const EMPTY: View = View { chars: Vec::new(), spans: Vec::new(), first: Vec::new() };

    fn new(text: &str) -> View {
        let mut v = View::EMPTY;
        v.fill(text);
        v
    }

    /// This view emptied and rebuilt for `text`, in the room it already has.
    fn fill(&mut self, text: &str) {
        self.chars.clear();
        self.spans.clear();
        self.first.clear();
        // about one token per 5 bytes of transcript: room for most texts without regrowing
        let toks = text.len() / 5 + 4;
        self.chars.reserve(text.len());
        self.spans.reserve(toks);
        self.first.reserve(toks);
        let (spans, first) = (&mut self.spans, &mut self.first);
        push_match_tokens(text, &mut self.chars, |start, end, f, _| {
            spans.push((start, end));
            first.push(f as u32);
        });
    }

    /// The token a char of the view belongs to; a joining space belongs to the token after it.
    /// A binary search over `first` (a per-char token table cost 4 bytes per char on every view
    /// for the two lookups an alignment makes).
    fn token_of(&self, pos: usize) -> usize {
        let after = self.first.partition_point(|&f| f as usize <= pos);
        if self.chars[pos] == ' ' {
            after
        } else {
            after - 1
        }
    }

    /// Tokens `range` (normalised text and byte spans).
    fn tokens(&self, range: std::ops::Range<usize>) -> Vec<Token> {
        range.map(|i| Token { norm: self.chars[token_chars(self, i)].iter().collect(), start: self.spans[i].0, end: self.spans[i].1 }).collect()
    }
}

/// Pattern bit masks for Myers' algorithm, one `u64` per 64-row block: for every ASCII char in a
/// table, for each distinct non-ASCII pattern char in a slot.
struct Peq {
    nb: usize,
    /// the masks of every ASCII char, `nb` per char (zeros for chars not in the pattern): the
    /// column loop reads an ASCII text char's masks with one load, no slot lookup
    ascii: Vec<u64>,
    /// slots of the non-ASCII pattern chars in `masks`
    index: HashMap<char, usize>,
    masks: Vec<u64>, // slot 0 = chars not in the pattern
}

impl Peq {
    fn new(pat: &[char]) -> Peq {
        let nb = pat.len().div_ceil(64);
        let mut p = Peq { nb, ascii: vec![0; 128 * nb], index: HashMap::new(), masks: vec![0; nb] };
        for (i, &c) in pat.iter().enumerate() {
            let bit = 1u64 << (i % 64);
            if (c as u32) < 128 {
                p.ascii[c as usize * nb + i / 64] |= bit;
                continue;
            }
            // non-ASCII chars (rare in transcripts) get a slot; the map (SipHash) is for them only
            let slot = *p.index.entry(c).or_insert_with(|| {
                p.masks.extend(std::iter::repeat_n(0, nb));
                p.masks.len() / nb - 1
            });
            p.masks[slot * nb + i / 64] |= bit;
        }
        p
    }

    /// The `nb` masks of text char `c`.
    #[inline(always)]
    fn eqs(&self, c: char) -> &[u64] {
        if (c as u32) < 128 {
            &self.ascii[c as usize * self.nb..][..self.nb]
        } else {
            self.non_ascii(c)
        }
    }

    /// The first block's mask of a text char, for the one-block column loops: a closure over the
    /// ASCII table sliced once, so the loops index it without a bounds check.
    #[inline(always)]
    fn first_block(&self) -> impl Fn(char) -> u64 + '_ {
        let table = &self.ascii[..128];
        move |c| if (c as u32) < 128 { table[c as usize] } else { self.non_ascii(c)[0] }
    }

    /// The masks of a non-ASCII char: out of line, so the hash lookup's code stays out of the
    /// column loops' registers.
    #[inline(never)]
    fn non_ascii(&self, c: char) -> &[u64] {
        &self.masks[self.index.get(&c).map_or(0, |&s| s * self.nb)..][..self.nb]
    }
}

/// One Hyyrö block step over a 64-row block: updates the block's vertical deltas (`pv`, `mv`)
/// for a column whose pattern-match mask is `eq`, given the horizontal delta entering the block
/// from above as two bits (`hp_in` = +1, `hn_in` = -1). Returns the horizontal delta vectors
/// before the shift (`ph`, `mh`): bit 63 carries into the next block, the pattern's last row
/// gives the column's score change. Branch-free, so the compiler can unroll a fixed number of
/// blocks into straight-line code.
#[inline(always)]
fn step(pv: &mut u64, mv: &mut u64, eq: u64, hp_in: u64, hn_in: u64) -> (u64, u64) {
    let xv = eq | *mv;
    let eq = eq | hn_in;
    let xh = (((eq & *pv).wrapping_add(*pv)) ^ *pv) | eq;
    let ph = *mv | !(xh | *pv);
    let mh = *pv & xh;
    let phs = (ph << 1) | hp_in;
    let mhs = (mh << 1) | hn_in;
    *pv = mhs | !(xv | phs);
    *mv = phs & xv;
    (ph, mh)
}

/// Blocks of the largest pattern ([`MAX_QUOTE_CHARS`]), so the column state lives on the stack.
const MAX_BLOCKS: usize = MAX_QUOTE_CHARS.div_ceil(64);

/// Semi-global edit distance (the alignment may start anywhere in `text`) of a pattern (`peq`,
/// `m` chars) against `text` by Myers/Hyyrö bit-parallel columns: (best distance, leftmost index
/// where it ends, inclusive). With `store`, the vertical delta vectors (pv, mv) of every column
/// are appended to it.
fn myers(peq: &Peq, m: usize, text: &[char], store: Option<&mut Vec<u64>>) -> (usize, usize) {
    // quotes of up to 4 blocks (256 normalised chars, nearly all of them) get a loop the
    // compiler unrolls with the column state in registers; the search passes (no `store`) get
    // their own copy, since the stores' borrow of the state kept it in memory; longer quotes
    // share the generic loop
    match (peq.nb, store) {
        (1, None) => myers_fixed::<1, false>(peq, m, text, None),
        (2, None) => myers_fixed::<2, false>(peq, m, text, None),
        (3, None) => myers_fixed::<3, false>(peq, m, text, None),
        (4, None) => myers_fixed::<4, false>(peq, m, text, None),
        (1, store) => myers_fixed::<1, true>(peq, m, text, store),
        (2, store) => myers_fixed::<2, true>(peq, m, text, store),
        (3, store) => myers_fixed::<3, true>(peq, m, text, store),
        (4, store) => myers_fixed::<4, true>(peq, m, text, store),
        (_, store) => myers_any(peq, m, text, store),
    }
}

/// The column loop of [`myers`], shared by both forms: `pv` and `mv` hold each block's vertical
/// deltas, `eqs` gives a text char's masks.
#[inline(always)]
fn columns<'a>(
    nb: usize,
    (pv, mv): (&mut [u64], &mut [u64]),
    m: usize,
    text: &[char],
    eqs: impl Fn(char) -> &'a [u64],
    mut store: Option<&mut Vec<u64>>,
) -> (usize, usize) {
    let last = nb - 1;
    let last_shift = (m - 1) % 64;
    let mut score = m as i64;
    let (mut best, mut best_end) = (m as i64, 0usize);
    for (j, &c) in text.iter().enumerate() {
        let eqs = eqs(c);
        // row 0 is all zeros: no horizontal delta enters the first block
        let (mut hp, mut hn) = (0u64, 0u64);
        for b in 0..last {
            let (ph, mh) = step(&mut pv[b], &mut mv[b], eqs[b], hp, hn);
            hp = ph >> 63;
            hn = mh >> 63;
        }
        let (ph, mh) = step(&mut pv[last], &mut mv[last], eqs[last], hp, hn);
        score += ((ph >> last_shift) & 1) as i64 - ((mh >> last_shift) & 1) as i64;
        if let Some(st) = store.as_deref_mut() {
            st.extend_from_slice(pv);
            st.extend_from_slice(mv);
        }
        if score < best {
            best = score;
            best_end = j;
        }
    }
    (best as usize, best_end)
}

/// [`myers`] for `NB` blocks, known at compile time: the state is two `[u64; NB]`, and an ASCII
/// char's masks are read from the 128-entry table with no bounds check in the loop (`c < 128`
/// and the table's length prove every index in bounds).
/// `STORE == false` drops the stores from the loop (with them in it, the state spilled to memory).
/// Not inlined: inside [`myers`], with its eight copies, the loop kept the best score and its
/// end on the stack (a load and a store each per column).
#[inline(never)]
fn myers_fixed<const NB: usize, const STORE: bool>(peq: &Peq, m: usize, text: &[char], store: Option<&mut Vec<u64>>) -> (usize, usize) {
    debug_assert_eq!(peq.nb, NB);
    let store = if STORE { store } else { None };
    let table = &peq.ascii[..128 * NB];
    let (mut pv, mut mv) = ([u64::MAX; NB], [0u64; NB]);
    let eqs = |c: char| -> &[u64] {
        if (c as u32) < 128 {
            let at = c as usize * NB;
            &table[at..at + NB]
        } else {
            peq.non_ascii(c)
        }
    };
    columns(NB, (&mut pv, &mut mv), m, text, eqs, store)
}

/// [`myers`] for any number of blocks (up to [`MAX_BLOCKS`]).
fn myers_any(peq: &Peq, m: usize, text: &[char], store: Option<&mut Vec<u64>>) -> (usize, usize) {
    let nb = peq.nb;
    debug_assert!(nb <= MAX_BLOCKS);
    let (mut pv, mut mv) = ([u64::MAX; MAX_BLOCKS], [0u64; MAX_BLOCKS]);
    columns(nb, (&mut pv[..nb], &mut mv[..nb]), m, text, |c| peq.eqs(c), store)
}

/// The 0-100 score of an alignment at edit distance `dist` of an `m`-char quote.
fn score_of(dist: usize, m: usize) -> f64 {
    (100.0 * (1.0 - dist as f64 / m as f64)).max(0.0)
}

/// Length of the q-grams of [`candidate_ranges`].
const QGRAM: usize = 3;

/// q-gram positions per counting block of [`candidate_ranges`] (three sampled q-grams).
const QBLOCK: usize = 9;
// a block starts at a sampled position
const _: () = assert!(QBLOCK.is_multiple_of(QGRAM));

/// Quotes of at most this many normalised chars are searched whole. Measured on the scaling
/// cases (2,000-char chunk): a 10-word quote (63 chars, one block) 11.5 -> 9.2 us with the filter
/// (every q-gram counted), since after the probe it needs 46 of its 61 q-grams in a window (13 of
/// its ~22 sampled ones); a 5-word one (20 chars) needs 6 of 18 at the default threshold, which
/// most windows of transcript have, and gains nothing.
const QFILTER_MIN: usize = 32;

/// Where an alignment of `pat` with at most `k` edits can lie in `text`: merged char ranges, in
/// order, that hold every such alignment whole (`counts` from [`qgram_counts`]); `None` where the
/// filter cannot rule anything out.
///
/// The q-gram lemma ([`Grams::Every`]): an alignment with at most `k` edits keeps at least
/// `m - q + 1 - k q` of the pattern's q-grams intact, each at its own text position inside the
/// aligned span, and the span is at most `m + k` chars long. So every window of `m + k` text
/// chars that holds such a span has at least that many positions whose q-gram occurs in the
/// pattern.
///
/// Sampled q-grams ([`Grams::Sampled`]): only the text's q-grams at every `q`-th position are
/// counted, the text cut into consecutive q-grams, a third of the hashing. An alignment
/// with at most `k` edits spans at least `m - k` text chars, so at least `(m - k - q + 1) / q`
/// (rounded down) sampled positions start a q-gram inside it; an edit (a substituted or inserted
/// text char, or a pattern char missing between two text chars) touches the q-grams of at most
/// `q` consecutive positions, of which at most one is sampled; every sampled q-gram no edit
/// touches is a copy of `q` consecutive pattern chars. So a window of `m + k` text chars that
/// holds such a span has at least `need = (m - k - q + 1) / q - k` sampled positions whose
/// q-gram occurs in the pattern.
///
/// Either way, counting positions whose q-gram's hash is in the pattern's hash set only adds
/// positions (a collision), so no window with a passing alignment is dropped.
///
/// Hits are counted per block of `QBLOCK` q-gram positions, not per position: a span whose
/// q-grams start at position `a` has them all in blocks `a / QBLOCK ..= (a + w - 1) / QBLOCK`,
/// at most `nbw` blocks from its first, so a block whose `nbw`-block sum falls short of `need`
/// starts no passing span. The ranges grow by under a block on each side; the per-position
/// sliding window (with its byte per position) cost three times the hashing itself.
fn candidate_ranges(counts: &[u32], grams: Grams, m: usize, n: usize, k: usize) -> Option<Vec<(usize, usize)>> {
    let need = grams.need(m, k)?;
    let span = m + k;
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (bi, sum) in window_sums(counts, blocks_per_span(span)).enumerate() {
        if sum as usize >= need {
            // spans starting in this block: they start before its end and are at most `span` long
            let (a, e) = (bi * QBLOCK, ((bi + 1) * QBLOCK - 1 + span).min(n));
            match out.last_mut() {
                Some(r) if a <= r.1 => r.1 = r.1.max(e),
                _ => out.push((a, e)),
            }
        }
    }
    Some(out)
}

/// For each block, the sum of the `nbw` counts from it on (fewer at the end), in block order.
fn window_sums(counts: &[u32], nbw: usize) -> impl Iterator<Item = u32> + '_ {
    let mut sum: u32 = counts[..nbw.min(counts.len())].iter().sum();
    (0..counts.len()).map(move |bi| {
        let at = sum;
        // slide: block `bi` leaves, block `bi + nbw` (if any) enters
        sum -= counts[bi];
        if let Some(&c) = counts.get(bi + nbw) {
            sum += c;
        }
        at
    })
}

/// Blocks of `QBLOCK` q-gram positions that the q-grams of one `span`-char window can touch.
fn blocks_per_span(span: usize) -> usize {
    let w = span + 1 - QGRAM;
    (QBLOCK + w - 2) / QBLOCK + 1
}

/// Which of the text's q-grams [`qgram_counts`] counts (see [`candidate_ranges`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Grams {
    /// the q-gram at every position
    Every,
    /// the q-grams at every `QGRAM`-th position
    Sampled,
}

impl Grams {
    /// Hits a window must hold for an alignment with at most `k` edits (see
    /// [`candidate_ranges`]); `None` where no window can be ruled out.
    fn need(self, m: usize, k: usize) -> Option<usize> {
        match self {
            Grams::Every => (m + 1).checked_sub(QGRAM + k * QGRAM),
            Grams::Sampled => ((m + 1).checked_sub(k + QGRAM)? / QGRAM).checked_sub(k),
        }
        .filter(|&x| x > 0)
    }

    /// The q-grams to count for a quote whose best alignment has at most `k` edits. Sampling
    /// hashes a third of the positions, but an edit costs a sampled window the same one hit as it
    /// costs three of a full window's positions, and the span's slack costs it `k / q` more: its
    /// bar falls from `(m - 3k - 2) / (m + k)` of a window's positions to `(m - 4k - 2) / (m + k)`.
    /// Sampled while that bar is at least 0.4 (`k` up to about `m / 7`): on the scaling cases a
    /// quote with 21 edits in 119 chars let so much of a 30,000-char chunk through the sampled
    /// filter that its match took 100 -> 180 us, while 3-12 edits in 63-115 chars gained 5-10 %.
    fn for_edits(m: usize, k: usize) -> Grams {
        match Grams::Sampled.need(m, k) {
            Some(need) if 5 * QGRAM * need >= 2 * (m + k) => Grams::Sampled,
            _ => Grams::Every,
        }
    }
}

/// Per block of `QBLOCK` text positions, how many of the sampled q-grams starting there
/// ([`Grams::Sampled`]) hash into the set of `pat`'s q-grams (see [`candidate_ranges`]); `None`
/// where the filter does not pay for itself. One table lookup per three text chars against the
/// ~40 operations of a two-block Myers column; on transcript text 3-15 % of a long chunk
/// survives for quotes of 5-20 words. Returned with the pattern's set, which [`add_unsampled`]
/// takes to make them [`Grams::Every`]'s counts.
fn qgram_counts(pat: &[char], text: &[char], k: usize) -> Option<(QgramSet, Vec<u32>)> {
    let (m, n) = (pat.len(), text.len());
    // Measured on the scaling cases (BENCHMARKS.md): on texts under ~8 spans too much of the
    // text survives the filter, and a short quote's few q-grams rule little out (QFILTER_MIN);
    // both are searched whole.
    if m <= QFILTER_MIN || n < 8 * (m + k) {
        return None;
    }
    let set = QgramSet::new(pat);
    let counts = qgram_blocks(text, 0).map(|b| set.hits(b)).collect();
    Some((set, counts))
}

/// `counts` from [`qgram_counts`] with the q-grams at the positions sampling skipped added:
/// the hits of every position, each hashed once in all (`set`: the pattern's, from
/// [`qgram_counts`]).
fn add_unsampled(set: &QgramSet, text: &[char], counts: &mut [u32]) {
    for offset in 1..QGRAM {
        for (c, b) in counts.iter_mut().zip(qgram_blocks(text, offset)) {
            *c += set.hits(b);
        }
    }
}

/// For each block of `QBLOCK` q-gram positions, the chars of its q-grams at the positions
/// `offset`, `offset + q`, .. from the block's start (the last block's up to position
/// `n - q`), cut into consecutive q-grams by [`QgramSet::hits`].
fn qgram_blocks(text: &[char], offset: usize) -> impl Iterator<Item = &[char]> {
    let nq = text.len() + 1 - QGRAM;
    (0..nq.div_ceil(QBLOCK)).map(move |bi| {
        let a = bi * QBLOCK;
        &text[a + offset..(a + QBLOCK).min(nq) + QGRAM - 1]
    })
}

/// The hashes of a pattern's q-grams, as a 4,096-bit set.
struct QgramSet([u64; 64]);

impl QgramSet {
    fn new(pat: &[char]) -> QgramSet {
        let mut set = QgramSet([0; 64]);
        for g in pat.windows(QGRAM) {
            let h = Self::hash(g);
            set.0[h / 64] |= 1 << (h % 64);
        }
        set
    }

    #[inline(always)]
    fn hash(g: &[char]) -> usize {
        let x = (g[0] as u32) ^ (g[1] as u32).rotate_left(11) ^ (g[2] as u32).rotate_left(22);
        (x.wrapping_mul(0x9E37_79B1) >> 20) as usize
    }

    /// How many of the consecutive q-grams of `chars` (a remainder under q chars left out) are
    /// in the set; `chunks_exact` keeps the loop free of bounds checks.
    #[inline(always)]
    fn hits(&self, chars: &[char]) -> u32 {
        chars
            .chunks_exact(QGRAM)
            .map(|g| {
                let h = Self::hash(g);
                ((self.0[h / 64] >> (h % 64)) & 1) as u32
            })
            .sum()
    }
}

/// An upper bound on the best distance of `pat` in `text`: the distance of the best alignment
/// inside the window of `span` chars where the most q-grams hit (`counts` from
/// [`qgram_counts`]). A near-verbatim quote is found there, and its small distance lets
/// [`candidate_ranges`] demand nearly all of the pattern's q-grams, which little of the rest of
/// the text has.
fn probe(peq: &Peq, m: usize, text: &[char], counts: &[u32], span: usize) -> usize {
    let nbw = blocks_per_span(span);
    // the first block with the largest sum (block 0 when no q-gram hits)
    let (mut best, mut at) = (0, 0);
    for (bi, sum) in window_sums(counts, nbw).enumerate() {
        if sum > best {
            (best, at) = (sum, bi);
        }
    }
    let a = at * QBLOCK;
    myers(peq, m, &text[a..(a + nbw * QBLOCK + QGRAM - 1).min(text.len())], None).0
}

/// The largest edit distance whose score still reaches `threshold` (the score falls by `100 / m`
/// per edit); `None` when not even an exact copy passes.
fn max_passing(m: usize, threshold: f64) -> Option<usize> {
    if score_of(0, m) < threshold {
        return None;
    }
    let mut k = ((m as f64) * (100.0 - threshold) / 100.0).clamp(0.0, m as f64) as usize;
    while k > 0 && score_of(k, m) < threshold {
        k -= 1;
    }
    while k < m && score_of(k + 1, m) >= threshold {
        k += 1;
    }
    Some(k)
}

/// [`myers`] of the quote over the whole text, the same (distance, leftmost end) computed on the
/// [`candidate_ranges`] only when the best alignment passes `threshold`. Exact: an end whose
/// best alignment passes lies in a range that holds that alignment whole, where a fresh
/// semi-global pass gets the same distance for it; no range gives any end a lower distance than
/// the whole text does. A quote that passes nowhere in the ranges gets the full pass, so its
/// (failing) score is exact too.
fn search(peq: &Peq, pat: &[char], text: &[char], threshold: f64) -> (usize, usize, Option<Columns>) {
    let m = pat.len();
    if let Some((k, (set, mut counts))) = max_passing(m, threshold).and_then(|k| qgram_counts(pat, text, k).map(|c| (k, c))) {
        // the best distance is at most the probe's (a real alignment): the ranges need only
        // hold the alignments within that many edits, fewer than `k` for a close quote
        let k = k.min(probe(peq, m, text, &counts, m + k));
        let grams = Grams::for_edits(m, k);
        if grams == Grams::Every {
            add_unsampled(&set, text, &mut counts);
        }
        if let Some(ranges) = candidate_ranges(&counts, grams, m, text.len(), k) {
            let mut best = (usize::MAX, 0);
            let (mut kept, mut spare) = (None, Vec::new());
            for (a, b) in ranges {
                // a short range (most hold one match) keeps its columns for [`trace`]: a store
                // per column here saves the traceback a pass of its own over the match
                let short = b - a <= KEEP_RANGE * m;
                let (d, j) = if short {
                    spare.clear();
                    spare.reserve((b - a) * 2 * peq.nb);
                    myers(peq, m, &text[a..b], Some(&mut spare))
                } else {
                    scan(peq, m, &text[a..b])
                };
                if d < best.0 {
                    best = (d, a + j);
                    kept = short.then(|| Columns { from: a, deltas: std::mem::take(&mut spare) });
                }
            }
            // exact for any `k`: the ranges hold every alignment with at most `k` edits
            if best.0 <= k {
                return (best.0, best.1, kept);
            }
        }
    }
    let (d, j) = scan(peq, m, text);
    (d, j, None)
}

/// Candidate ranges of at most this many quote lengths keep their Myers columns (see
/// [`search`]). A range around one match is about `m + k` chars plus two counting blocks; the
/// cap keeps the columns stored within `3m`, against the `m + dist` (at most `2m`) of
/// [`trace`]'s own pass, so a range the filter let grow long does not store megabytes.
const KEEP_RANGE: usize = 3;

/// The stored columns (vertical deltas, see [`myers`]'s `store`) of a semi-global pass over
/// `text[from..]`, from the first char on.
struct Columns {
    from: usize,
    deltas: Vec<u64>,
}

/// The semi-global [`myers`] of the quote over `text`, in three lanes of one word or in two
/// chains where that pays.
fn scan(peq: &Peq, m: usize, text: &[char]) -> (usize, usize) {
    if m < LANE && text.len() >= LANES_MIN * m {
        return myers_lanes(peq, m, text);
    }
    if peq.nb == 1 && text.len() >= 8 * m {
        return myers_halves(peq, m, text);
    }
    myers(peq, m, text, None)
}

/// Bits per lane of [`myers_lanes`]: three lanes in a `u64`, each for a pattern of under
/// `LANE` chars (the addition's carry out of a lane's `m` rows lands in its spare bits).
const LANE: usize = 21;

/// [`myers_lanes`] for texts of at least this many pattern lengths: each lane after the first
/// starts `2m` columns early, and on shorter texts that overlap eats the gain.
const LANES_MIN: usize = 12;

/// Bit 0 of each of the three lanes.
const LANE_LOW: u64 = 1 | 1 << LANE | 1 << (2 * LANE);

/// The semi-global [`myers`] of a pattern of under [`LANE`] chars over a long text, as three
/// column chains packed into the lanes of one `u64`, over three consecutive parts of the text
/// (each after the first starting `2m` chars early, exact as in [`myers_halves`]): one Hyyrö step
/// advances all three. A short quote fills a third of the word a one-block pass spends on
/// it, and its column costs what a full block's does; here a step costs three lookups and a few
/// masks more, for three columns. Exact: a lane's `m` rows keep the spare bits above them empty
/// in `pv`, so `(eq & pv) + pv` carries at most into the lane's own bit `m`; the shifted
/// horizontal deltas and the new `pv` are masked back to the rows (row 0 to a delta of 0). The
/// last row's scores are three 21-bit counters in one word (each stays in `0..=m`, so no lane
/// borrows from the next), and a per-lane compare through a guard bit finds the columns where
/// one improves (rare, out of line).
#[inline(never)]
fn myers_lanes(peq: &Peq, m: usize, text: &[char]) -> (usize, usize) {
    debug_assert!(peq.nb == 1 && (1..LANE).contains(&m) && text.len() >= 6 * m);
    let (len, starts) = lane_layout(text.len(), m);
    let eq = peq.first_block();
    let rows = ((1u64 << m) - 1) * LANE_LOW;
    let inner = rows & !LANE_LOW;
    let guard = LANE_LOW << (LANE - 1);
    let last = m - 1;
    let (mut pv, mut mv) = (rows, 0u64);
    let (mut score, mut best) = (m as u64 * LANE_LOW, m as u64 * LANE_LOW);
    let mut ends = [0usize; 3];
    let (a, b, c) = (&text[..len], &text[starts[1]..starts[1] + len], &text[starts[2]..starts[2] + len]);
    for (j, ((&ca, &cb), &cc)) in a.iter().zip(b).zip(c).enumerate() {
        let e = eq(ca) | eq(cb) << LANE | eq(cc) << (2 * LANE);
        let xv = e | mv;
        let xh = (((e & pv).wrapping_add(pv)) ^ pv) | e;
        let ph = mv | !(xh | pv);
        let mh = pv & xh;
        score = score + ((ph >> last) & LANE_LOW) - ((mh >> last) & LANE_LOW);
        // row 0 of each lane takes a horizontal delta of 0 (semi-global), not the top bit of
        // the lane below: the shifted deltas keep rows 1..m of each lane only
        let phs = (ph << 1) & inner;
        let mhs = (mh << 1) & inner;
        pv = (mhs | !(xv | phs)) & rows;
        mv = phs & xv;
        // a lane's guard bit survives `(best | guard) - score - 1` where its score < its best
        let better = ((best | guard) - (score + LANE_LOW)) & guard;
        if better != 0 {
            improve(&mut best, &mut ends, score, better, j);
        }
    }
    // the last lane alone over the chars left (0-2)
    let lane = |x: u64, l: usize| x >> (l * LANE) & ((1 << LANE) - 1);
    let mut tail = Chain { pv: lane(pv, 2) | !((1u64 << m) - 1), mv: lane(mv, 2), score: lane(score, 2) as i64, best: lane(best, 2) as i64, end: ends[2] };
    for (j, &ch) in text.iter().enumerate().skip(starts[2] + len) {
        tail.column(eq(ch), last, j - starts[2]);
    }
    let found = [(lane(best, 0), ends[0]), (lane(best, 1), starts[1] + ends[1]), (tail.best as u64, starts[2] + tail.end)];
    let (d, e) = found.into_iter().min().expect("three lanes");
    (d as usize, e)
}

/// The columns and the starts of [`myers_lanes`]'s three lanes over `n` chars for a pattern of
/// `m`: [0, len), [len - 2m, 2 len - 2m), [2 len - 4m, 3 len - 4m), the last ending at most 2
/// chars before `n` (the rest is the last lane's alone).
fn lane_layout(n: usize, m: usize) -> (usize, [usize; 3]) {
    let len = (n + 4 * m) / 3;
    (len, [0, len - 2 * m, 2 * len - 4 * m])
}

/// The lanes of `better` (their guard bits) take `score` as their best, ending at column `j`.
#[cold]
fn improve(best: &mut u64, ends: &mut [usize; 3], score: u64, better: u64, j: usize) {
    for (l, end) in ends.iter_mut().enumerate() {
        if better >> (l * LANE + LANE - 1) & 1 == 1 {
            let mask = ((1u64 << LANE) - 1) << (l * LANE);
            *best = (*best & !mask) | (score & mask);
            *end = j;
        }
    }
}

/// The semi-global [`myers`] of a one-block pattern over a long text as two column chains in
/// one loop, over `text[..s]` and `text[s - 2m..]`: a column's step is a chain of ~11 dependent
/// operations, so one chain leaves the core waiting. Exact: an alignment spans at most `2m`
/// chars (`m` pattern chars, at most `m` edits), so every end from `s` on has its best
/// alignment inside the second part, and an end before `s` gets no lower value there than in
/// the whole text; the first part sees every end before `s` exactly.
#[inline(never)]
fn myers_halves(peq: &Peq, m: usize, text: &[char]) -> (usize, usize) {
    debug_assert!(peq.nb == 1 && text.len() >= 4 * m);
    let s = text.len() / 2;
    let (a, b) = (&text[..s], &text[s - 2 * m..]);
    let eq = peq.first_block();
    let last = (m - 1) % 64;
    let (mut x, mut y) = (Chain::new(m), Chain::new(m));
    for (j, (&ca, &cb)) in a.iter().zip(b).enumerate() {
        x.column(eq(ca), last, j);
        y.column(eq(cb), last, j);
    }
    // the second part is the longer by up to 2m + 1 chars
    for (j, &cb) in b.iter().enumerate().skip(a.len()) {
        y.column(eq(cb), last, j);
    }
    if x.best <= y.best {
        (x.best as usize, x.end)
    } else {
        (y.best as usize, s - 2 * m + y.end)
    }
}

/// One semi-global column chain of a one-block pattern: its vertical deltas, the score of its
/// last row and the best score so far with its (leftmost) column.
struct Chain {
    pv: u64,
    mv: u64,
    score: i64,
    best: i64,
    end: usize,
}

impl Chain {
    fn new(m: usize) -> Chain {
        Chain { pv: u64::MAX, mv: 0, score: m as i64, best: m as i64, end: 0 }
    }

    /// Column `j`, whose text char has the pattern mask `eq`; `last` is the pattern's last row.
    #[inline(always)]
    fn column(&mut self, eq: u64, last: usize, j: usize) {
        let (ph, mh) = step(&mut self.pv, &mut self.mv, eq, 0, 0);
        self.score += ((ph >> last) & 1) as i64 - ((mh >> last) & 1) as i64;
        if self.score < self.best {
            (self.best, self.end) = (self.score, j);
        }
    }
}

/// Semi-global edit distance of `pat` in `text`: (best distance, leftmost end index inclusive).
#[cfg(test)]
fn myers_search(pat: &[char], text: &[char]) -> (usize, usize) {
    myers(&Peq::new(pat), pat.len(), text, None)
}

/// Start of the shortest alignment of `pat` that ends at `text[end]` with distance `dist`, by a
/// plain DP of the reversed pattern over the text read backwards from `end` (row 0 is `0, 1, 2,
/// ..`: the alignment must end at `end`): the first column whose last row is `dist`. The
/// reference for [`trace`]'s start.
#[cfg(test)]
fn align_start(pat: &[char], text: &[char], end: usize, dist: usize) -> usize {
    let m = pat.len();
    let from = (end + 1).saturating_sub(m + dist);
    let mut col: Vec<usize> = (0..=m).collect();
    for (j, &c) in text[from..=end].iter().rev().enumerate() {
        let mut diag = col[0];
        col[0] = j + 1;
        for (i, &p) in pat.iter().rev().enumerate() {
            let up = col[i + 1];
            col[i + 1] = (diag + usize::from(p != c)).min(up + 1).min(col[i] + 1);
            diag = up;
        }
        if col[m] == dist {
            return end - j;
        }
    }
    panic!("no alignment of distance {dist} ends at {end}")
}

/// The alignment of `pat` that ends at `text[end]` with the best distance `dist` ([`search`]'s
/// result), in one pass: (start, longest run of skipped text chars), and which chars of `pat` it
/// matches exactly (`hit`, one flag per pattern char, written here).
///
/// A semi-global Myers pass over the `m + dist` chars up to `end` (no alignment with `dist`
/// edits is longer) keeps every column's delta vectors; the traceback from `(m, end)` reads
/// `D[i][j] = popcount(pv_j below i) - popcount(mv_j below i)` (row 0 is all zeros) from them
/// and takes, of the steps that keep the distance, a quote-only char first, then the diagonal,
/// then a skipped text char. That is the rightmost optimal path: optimal paths that cross can
/// swap their tails, so the path that always turns towards the top right bounds them all, and it
/// reaches row 0 at the largest start, the shortest alignment. (Before, a reversed pass found
/// that start and a second, anchored pass from it traced the alignment: two passes and a second
/// pattern table for one.) O((m + dist) * m / 64) for the pass and the walk.
///
/// With `kept`, the walk reads the columns [`search`]'s range scan stored instead (the range that
/// holds the match, from its first char): the same walk, since every alignment of `dist` edits
/// ending at `end` lies whole in that range and is at most `m + dist` long, so on every cell of
/// such a path both passes hold the same `D` (a cheaper way to a cell would make a cheaper
/// alignment), and a cell off them satisfies the walk's test in neither.
fn trace(peq: &Peq, pat: &[char], text: &[char], end: usize, dist: usize, kept: Option<Columns>, hit: &mut [bool]) -> (usize, usize) {
    let (m, nb) = (pat.len(), peq.nb);
    debug_assert_eq!(hit.len(), m);
    let (from, cols) = match kept {
        Some(c) => (c.from, c.deltas),
        None => {
            let from = (end + 1).saturating_sub(m + dist);
            let mut cols: Vec<u64> = Vec::with_capacity((end + 1 - from) * 2 * nb);
            myers(peq, m, &text[from..=end], Some(&mut cols));
            (from, cols)
        }
    };
    let span = &text[from..=end];
    let n = span.len();
    let col = |j: usize| &cols[(j - 1) * 2 * nb..j * 2 * nb];
    // D[i][j], j >= 1
    let d = |i: usize, j: usize| -> i64 {
        let (pv, mv) = col(j).split_at(nb);
        let mut v = 0;
        let (full, rest) = (i / 64, i % 64);
        for b in 0..full {
            v += i64::from(pv[b].count_ones()) - i64::from(mv[b].count_ones());
        }
        if rest > 0 {
            let mask = (1u64 << rest) - 1;
            v += i64::from((pv[full] & mask).count_ones()) - i64::from((mv[full] & mask).count_ones());
        }
        v
    };
    // D[i][j] - D[i - 1][j], i >= 1 (column 0 is 0, 1, 2, ..)
    let vd = |i: usize, j: usize| -> i64 {
        if j == 0 {
            return 1;
        }
        let (r, b) = ((i - 1) / 64, (i - 1) % 64);
        let c = col(j);
        ((c[r] >> b) & 1) as i64 - ((c[nb + r] >> b) & 1) as i64
    };
    // the walk carries D[i][j]: a step up or left gets its new value from one delta, a match
    // keeps it, and only a mismatch costs a popcount sum
    let (mut i, mut j) = (m, n);
    let mut cur = dist as i64;
    debug_assert_eq!(d(m, n), cur);
    let (mut gap, mut max_gap) = (0usize, 0usize);
    while i > 0 {
        if vd(i, j) == 1 {
            // D[i][j] == D[i - 1][j] + 1: a quote char the text lacks
            cur -= 1;
            i -= 1;
            gap = 0;
            continue;
        }
        if pat[i - 1] == span[j - 1] {
            // an exact match is always optimal: D[i - 1][j - 1] == D[i][j], as the cells
            // beside it differ from it by at most one (no popcount for most steps)
            i -= 1;
            j -= 1;
            hit[i] = true;
            gap = 0;
            continue;
        }
        let diag = match (i, j) {
            (1, _) => 0,
            (_, 1) => (i - 1) as i64,
            _ => d(i - 1, j - 1),
        };
        if cur == diag + 1 {
            i -= 1;
            j -= 1;
            gap = 0;
            cur = diag;
        } else {
            // D[i][j - 1] = D[i - 1][j - 1] + its vertical delta
            cur = diag + vd(i, j - 1);
            j -= 1;
            gap += 1;
            max_gap = max_gap.max(gap);
        }
    }
    (from + j, max_gap)
}

/// Does the span's number `s` satisfy the quote's number `q`? Equal, or the quote left out the
/// span's percent sign.
fn number_ok(q: &str, s: &str) -> bool {
    q == s || (!q.ends_with('%') && s.strip_suffix('%') == Some(q))
}

/// A text prepared for matching several quotes: its normalised view is built once (verifying
/// an answer whose claims cite the same chunk normalises that chunk once, not once per claim).
pub struct Haystack {
    view: View,
}

impl Haystack {
    pub fn new(text: &str) -> Haystack {
        Haystack { view: View::new(text) }
    }

    /// Length of the normalised text in chars (what one alignment pass walks).
    pub fn len(&self) -> usize {
        self.view.chars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.view.chars.is_empty()
    }

    /// Align `quote` inside the prepared text; same result as [`match_quote`] on that text.
    pub fn match_quote(&self, quote: &str, opts: &MatchOptions) -> QuoteMatch {
        match quote_view(quote) {
            Ok(q) => align(&q, &self.view, opts),
            Err(none) => none,
        }
    }
}

/// The quote's view, or the result for a quote that cannot match (empty, too long).
fn quote_view(quote: &str) -> Result<View, QuoteMatch> {
    let q = View::new(quote);
    match q.chars.len() {
        0 => Err(QuoteMatch::none()),
        m if m > MAX_QUOTE_CHARS => Err(QuoteMatch { too_long: true, ..QuoteMatch::none() }),
        _ => Ok(q),
    }
}

thread_local! {
    /// The text's view of [`match_quote`], kept for the thread's next call. A long chunk's view
    /// is ~8 bytes per text byte (chars and token tables); allocated afresh on each call, the
    /// allocator handed those pages back to the system at the free and each call faulted them
    /// in again: 106 page faults, most of the 0.65 ms of building a 100,000-char chunk's view
    /// natively. (wasm memory is never handed back; there the reuse only saves the `malloc`s.)
    static TEXT_VIEW: std::cell::RefCell<View> = const { std::cell::RefCell::new(View::EMPTY) };
}

/// A kept view larger than this many chars (16 MB of tables) is dropped after the call, so a
/// thread does not hold an outsized text's room for good.
const KEEP_VIEW_CHARS: usize = 1 << 21;

/// Align `quote` inside `text`.
pub fn match_quote(text: &str, quote: &str, opts: &MatchOptions) -> QuoteMatch {
    match quote_view(quote) {
        // the text is normalised only for a quote that can match
        Ok(q) => TEXT_VIEW.with(|kept| match kept.try_borrow_mut() {
            Ok(mut t) => {
                t.fill(text);
                let m = align(&q, &t, opts);
                if t.chars.capacity() > KEEP_VIEW_CHARS {
                    *t = View::EMPTY;
                }
                m
            }
            // a call from inside a call (none today): a view of its own
            Err(_) => align(&q, &View::new(text), opts),
        }),
        Err(none) => none,
    }
}

fn align(q: &View, t: &View, opts: &MatchOptions) -> QuoteMatch {
    let m = q.chars.len();
    if t.chars.is_empty() {
        return QuoteMatch::none();
    }
    let peq = Peq::new(&q.chars);
    let (dist, end, kept) = search(&peq, &q.chars, &t.chars, opts.threshold);
    let score = score_of(dist, m);
    let mut hit = vec![false; m];
    let (start, gap) = trace(&peq, &q.chars, &t.chars, end, dist, kept, &mut hit);
    // the stitched-quote checks read the alignment of quotes that pass the score only
    let max_gap = if score >= opts.threshold { gap } else { 0 };
    let mut s = start;
    let mut e = end;
    while s < e && t.chars[s] == ' ' {
        s += 1;
    }
    while e > s && t.chars[e] == ' ' {
        e -= 1;
    }
    let (ft, lt) = (t.token_of(s), t.token_of(e));
    // numbers: every number in the quote must be in the span (a token of slack on the right for
    // a trailing "percent")
    // most quotes hold no number: their tokens are not built at all
    let qn = if (0..q.spans.len()).any(|i| may_start_number(&q.chars[token_chars(q, i)])) { numbers(&q.tokens(0..q.spans.len())) } else { Vec::new() };
    let mut missing = Vec::new();
    if !qn.is_empty() {
        let span_tokens = t.tokens(ft..(lt + 2).min(t.spans.len()));
        let sn = numbers(&span_tokens);
        let mut pool: Vec<&str> = sn.iter().filter(|n| n.first_token <= lt - ft).map(|n| n.value.as_str()).collect();
        for n in &qn {
            match pool.iter().position(|s| number_ok(&n.value, s)) {
                Some(p) => {
                    pool.remove(p);
                }
                None => missing.push(n.value.clone()),
            }
        }
    }
    let stray = if score >= opts.threshold && max_gap < opts.max_gap { stray_edge(q, t, &hit, ft, lt, opts.max_gap) } else { None };
    let stitched = max_gap >= opts.max_gap || stray.is_some();
    QuoteMatch {
        matched: score >= opts.threshold && missing.is_empty() && !stitched,
        score: (score * 10.0).round() / 10.0,
        distance: dist,
        start: t.spans[ft].0,
        end: t.spans[lt].1,
        missing_numbers: missing,
        max_gap,
        stray,
        stitched,
        too_long: false,
    }
}

/// Chars of token `i` of a view (without the joining space).
fn token_chars(v: &View, i: usize) -> std::ops::Range<usize> {
    let a = v.first[i] as usize;
    a..v.first.get(i + 1).map_or(v.chars.len(), |&f| f as usize - 1)
}

/// A frankenquote whose stitched piece is short: the alignment passed with no long skip inside
/// it, but the quote's first or last words are not at the matched place (under half of each
/// word's chars aligned exactly), do not occur in or within `max_gap` chars of the span, and do
/// occur verbatim further away in the text. Had the alignment reached them, it would have skipped
/// `max_gap` chars or more: the same rule as a skip inside the span. Edge words that are near the
/// span (a dropped word between, ASR noise) or nowhere in the text (a typo) are left to the score.
/// Returns the byte ranges of those words in the quote and of their nearest occurrence.
fn stray_edge(q: &View, t: &View, hit: &[bool], ft: usize, lt: usize, max_gap: usize) -> Option<StrayEdge> {
    let n = q.first.len();
    let present = |i: usize| {
        let r = token_chars(q, i);
        2 * hit[r.clone()].iter().filter(|&&h| h).count() >= r.len()
    };
    let fp = (0..n).find(|&i| present(i))?;
    let lp = (0..n).rev().find(|&i| present(i))?;
    let (span_a, span_b) = (t.first[ft] as usize, token_chars(t, lt).end);
    for (lo, hi) in [(0, fp), (lp + 1, n)] {
        if lo == hi {
            continue;
        }
        let pat = &q.chars[q.first[lo] as usize..token_chars(q, hi - 1).end];
        let len = hi - lo;
        // (chars between the occurrence and the span, occurrence) of the nearest occurrence
        let mut nearest: Option<(usize, usize)> = None;
        // the text may have fewer tokens than the edge (one long word aligned to many short ones)
        for k in 0..(t.first.len() + 1).saturating_sub(len) {
            let a = t.first[k] as usize;
            let b = a + pat.len();
            if b > t.chars.len() || &t.chars[a..b] != pat || (b < t.chars.len() && t.chars[b] != ' ') {
                continue;
            }
            // chars strictly between, not counting the joining space; an occurrence that overlaps
            // the span is at the matched place (the alignment only paired its chars elsewhere)
            let dist = if b <= span_a {
                span_a.saturating_sub(b + 1)
            } else if a >= span_b {
                a.saturating_sub(span_b + 1)
            } else {
                0
            };
            if nearest.is_none_or(|(d, _)| dist < d) {
                nearest = Some((dist, k));
            }
        }
        match nearest {
            Some((dist, k)) if dist >= max_gap => {
                let (quote_start, quote_end) = (q.spans[lo].0, q.spans[hi - 1].1);
                return Some(StrayEdge { first: lo == 0, quote_start, quote_end, text_start: t.spans[k].0, text_end: t.spans[k + len - 1].1 });
            }
            _ => {}
        }
    }
    None
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
    let turn = turns.iter().position(|t| t.text_start <= start && start < t.text_end).or_else(|| turns.iter().rposition(|t| t.text_start <= start));
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
            // turns may come out of text order: the union of both ends' turns, never inverted
            let (a, b) = (&turns[i], &turns[last]);
            (a.text_start.min(b.text_start), a.text_end.max(b.text_end))
        }
        None => (0, chunk.text.len()),
    };
    Location { speaker, speakers, turn, time, time_source: source.into(), turn_start, turn_end }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(pat: &[char], text: &[char]) -> usize {
        naive_ends(pat, text).into_iter().fold(pat.len(), usize::min)
    }

    /// The semi-global distance of `pat` for each end in `text` (plain DP).
    fn naive_ends(pat: &[char], text: &[char]) -> Vec<usize> {
        let mut prev: Vec<usize> = (0..=pat.len()).collect();
        let mut ends = Vec::with_capacity(text.len());
        for &c in text {
            let mut cur = vec![0; pat.len() + 1];
            for i in 1..=pat.len() {
                cur[i] = (prev[i - 1] + usize::from(pat[i - 1] != c)).min(prev[i] + 1).min(cur[i - 1] + 1);
            }
            ends.push(cur[pat.len()]);
            prev = cur;
        }
        ends
    }

    const WORDS: &[&str] = &[
        "the", "pilot", "discount", "is", "now", "five", "percent", "and", "we", "agreed", "on", "three", "months", "so", "team", "price", "ok", "dana",
        "said", "ten", "café", "naïve", "straße", "日本",
    ];

    /// A word text of `40 + rnd(2000)` words and a quote of 3-200 chars copied from it with 0-40 %
    /// edits (a substituted letter, a dropped char, a non-ASCII char, an inserted `q`), or made up.
    fn text_and_quote(rnd: &mut impl FnMut(usize) -> usize, round: usize) -> (Vec<char>, Vec<char>) {
        let words: Vec<&str> = (0..40 + rnd(2000)).map(|_| WORDS[rnd(WORDS.len())]).collect();
        let mut text: Vec<char> = words.join(" ").chars().collect();
        if round.is_multiple_of(3) {
            // a repeated passage: equal distances at two ends
            let piece = text[..text.len() / 3].to_vec();
            text.extend(std::iter::once(' ').chain(piece));
        }
        let qlen = (3 + rnd(200)).min(text.len());
        let from = rnd(text.len() - qlen + 1);
        let mut pat: Vec<char> = if round % 5 == 4 { (0..qlen).map(|_| char::from(b'a' + rnd(26) as u8)).collect() } else { text[from..from + qlen].to_vec() };
        for _ in 0..rnd(pat.len() * 2 / 5 + 1) {
            let i = rnd(pat.len());
            match rnd(4) {
                0 => pat[i] = char::from(b'a' + rnd(26) as u8),
                1 if pat.len() > 3 => {
                    pat.remove(i);
                }
                // a non-ASCII char the text may not hold (the masks' slot 0)
                2 => pat[i] = 'ø',
                _ => pat.insert(i, 'q'),
            }
        }
        (text, pat)
    }

    /// The filter's lemma, both ways of counting: every alignment with at most `k` edits (the
    /// shortest one at each end whose plain-DP distance is at most `k`) lies whole inside one of
    /// the candidate ranges.
    #[test]
    fn every_alignment_within_k_lies_in_a_range() {
        let mut rnd = xorshift(0x5DEE_CE66_D1CE_4E5B);
        let mut checked = [0usize; 2];
        for round in 0..200 {
            let (text, pat) = text_and_quote(&mut rnd, round);
            let m = pat.len();
            let ends = naive_ends(&pat, &text);
            for (g, grams) in [Grams::Every, Grams::Sampled].into_iter().enumerate() {
                for k in [0, m / 20, m / 10, m / 7, m / 5] {
                    let Some((set, mut counts)) = qgram_counts(&pat, &text, k) else { continue };
                    if grams == Grams::Every {
                        add_unsampled(&set, &text, &mut counts);
                    }
                    let Some(ranges) = candidate_ranges(&counts, grams, m, text.len(), k) else { continue };
                    for (j, &d) in ends.iter().enumerate().filter(|&(_, &d)| d <= k) {
                        let start = align_start(&pat, &text, j, d);
                        assert!(ranges.iter().any(|&(a, b)| a <= start && j < b), "round {round} {grams:?} k {k} end {j} start {start}");
                        checked[g] += 1;
                    }
                }
            }
        }
        assert!(checked.iter().all(|&c| c > 1000), "{checked:?}");
    }

    /// A xorshift generator from `seed`: `rnd(n)` is in `0..n`.
    fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    /// The q-gram filter changes nothing: on random word texts with repeats (ties between ends),
    /// quotes copied with 0-40 % edits or made up, and thresholds from 0 to 100, `search` gives
    /// the full pass's distance and leftmost end.
    #[test]
    fn filtered_search_equals_the_full_pass() {
        let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
        let (mut filtered, mut cases, mut with_columns) = (0, 0, 0);
        for round in 0..300 {
            let (text, pat) = text_and_quote(&mut rnd, round);
            let peq = Peq::new(&pat);
            let full = myers(&peq, pat.len(), &text, None);
            for threshold in [0.0, 50.0, 70.0, 80.0, 90.0, 100.0] {
                cases += 1;
                let k = max_passing(pat.len(), threshold);
                filtered += usize::from(k.and_then(|k| qgram_counts(&pat, &text, k)).is_some());
                let (d, end, kept) = search(&peq, &pat, &text, threshold);
                assert_eq!((d, end), full, "round {round} threshold {threshold}");
                // the range's kept columns give the traceback of its own pass
                if kept.is_some() {
                    with_columns += 1;
                    let (mut a, mut b) = (vec![false; pat.len()], vec![false; pat.len()]);
                    let own = trace(&peq, &pat, &text, end, d, None, &mut a);
                    assert_eq!((trace(&peq, &pat, &text, end, d, kept, &mut b), b), (own, a), "round {round} threshold {threshold}");
                }
                if let Some(k) = k {
                    assert!(score_of(k, pat.len()) >= threshold && (k == pat.len() || score_of(k + 1, pat.len()) < threshold));
                }
            }
        }
        // the filter must actually have run on a good share of the cases, and kept columns
        assert!(filtered * 4 > cases, "{filtered} of {cases}");
        assert!(with_columns * 20 > cases, "{with_columns} of {cases}");
    }

    /// A random text of `n` chars over 2 to 7 letters and a copy of `m` of its chars starting up
    /// to `2m` before or after `point`: in every third round copied again elsewhere in the text (a
    /// tie), in every second edited at one char (`ø`, which the text lacks, every fourth round).
    fn planted(rnd: &mut impl FnMut(usize) -> usize, round: usize, m: usize, n: usize, point: usize) -> (Vec<char>, Vec<char>) {
        let alphabet = 2 + rnd(6);
        let mut text: Vec<char> = (0..n).map(|_| char::from(b'a' + rnd(alphabet) as u8)).collect();
        let at = (point + rnd(4 * m)).saturating_sub(2 * m).min(n - m);
        let mut pat = text[at..at + m].to_vec();
        if round.is_multiple_of(3) {
            let other = rnd(n - m + 1);
            text[other..other + m].copy_from_slice(&pat);
        }
        if round.is_multiple_of(2) {
            let i = rnd(m);
            pat[i] = if round.is_multiple_of(4) { 'ø' } else { 'z' };
        }
        (text, pat)
    }

    /// The two-chain scan gives the one-chain pass's distance and leftmost end, for quotes that
    /// straddle the split, sit near it on either side, or occur twice (a tie across the halves).
    #[test]
    fn halves_equal_one_chain() {
        let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..3000 {
            let m = 1 + rnd(64);
            let n = 8 * m + rnd(400);
            let (text, pat) = planted(&mut rnd, round, m, n, n / 2);
            let peq = Peq::new(&pat);
            assert_eq!(myers_halves(&peq, m, &text), myers(&peq, m, &text, None), "round {round}");
        }
    }

    /// The three-lane scan gives the one-chain pass's distance and leftmost end: quotes of 1-20
    /// chars in texts of 12 to ~40 quote lengths, placed at the lanes' seams (in either lane's
    /// overlap), in the last lane's tail, twice (a tie across lanes), with a non-ASCII char.
    #[test]
    fn lanes_equal_one_chain() {
        let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
        for round in 0..6000 {
            let m = 1 + rnd(LANE - 1);
            let n = LANES_MIN * m + rnd(30 * m + 50);
            let (len, starts) = lane_layout(n, m);
            let seams = [starts[1], len, starts[2], starts[1] + len, n - m];
            let seam = seams[rnd(seams.len())];
            let (mut text, pat) = planted(&mut rnd, round, m, n, seam);
            if round % 7 == 0 {
                text[rnd(n)] = 'ø';
            }
            let peq = Peq::new(&pat);
            let want = myers(&peq, m, &text, None);
            assert_eq!(myers_lanes(&peq, m, &text), want, "round {round}: m {m} n {n}");
            assert_eq!(want.0, naive(&pat, &text), "round {round}");
        }
    }

    #[test]
    fn myers_equals_naive_dp_across_block_sizes() {
        let text: Vec<char> = "the quick brown fox jumps over the lazy dog and then some naïve café words follow here to make a long text for testing purposes with many characters in it".chars().collect();
        for (a, b) in [(4, 30), (10, 80), (0, 70), (20, 150), (3, 140)] {
            let mut pat: Vec<char> = text[a..b.min(text.len())].to_vec();
            pat[2] = 'x';
            if pat.len() > 66 {
                pat.remove(65);
            }
            assert_eq!(myers_search(&pat, &text).0, naive(&pat, &text), "{a}..{b}");
        }
        // 5 and 6 blocks: the loop whose block count is not a compile-time constant
        let long: Vec<char> = text.iter().chain(&text).chain(&text).copied().collect();
        for (a, b) in [(20, 330), (5, 400)] {
            let mut pat: Vec<char> = long[a..b].to_vec();
            pat[100] = 'x';
            pat.remove(250);
            assert!(pat.len().div_ceil(64) > 4);
            assert_eq!(myers_search(&pat, &long).0, naive(&pat, &long), "{a}..{b}");
        }
    }

    fn global(pat: &[char], text: &[char]) -> usize {
        let mut prev: Vec<usize> = (0..=text.len()).collect();
        for i in 1..=pat.len() {
            let mut cur = vec![i; text.len() + 1];
            for j in 1..=text.len() {
                cur[j] = (prev[j - 1] + usize::from(pat[i - 1] != text[j - 1])).min(prev[j] + 1).min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[text.len()]
    }

    /// Reference: longest skipped run on the full (unbanded) DP with the same traceback order.
    /// [`trace`] on a full semi-global DP matrix over the same window: the start, the longest
    /// skipped run and the exact matches of the rightmost optimal path.
    fn trace_full(pat: &[char], text: &[char], end: usize, dist: usize) -> (usize, usize, Vec<bool>) {
        let from = (end + 1).saturating_sub(pat.len() + dist);
        let span = &text[from..=end];
        let (m, n) = (pat.len(), span.len());
        let mut d = vec![vec![0usize; n + 1]; m + 1];
        for i in 1..=m {
            d[i][0] = i;
            for j in 1..=n {
                d[i][j] = (d[i - 1][j - 1] + usize::from(pat[i - 1] != span[j - 1])).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            }
        }
        assert_eq!(d[m][n], dist);
        let (mut i, mut j, mut gap, mut best) = (m, n, 0, 0);
        let mut hit = vec![false; m];
        while i > 0 {
            if d[i][j] == d[i - 1][j] + 1 {
                (i, gap) = (i - 1, 0);
            } else if j > 0 && d[i][j] == d[i - 1][j - 1] + usize::from(pat[i - 1] != span[j - 1]) {
                (i, j, gap) = (i - 1, j - 1, 0);
                hit[i] = pat[i] == span[j];
            } else {
                j -= 1;
                gap += 1;
                best = best.max(gap);
            }
        }
        (from + j, best, hit)
    }

    #[test]
    fn start_and_gap_agree_with_full_dp() {
        let text: Vec<char> = "so we said the pilot discount is ten percent and then later we moved it to five percent for the whole team of the northwind account, which everyone agreed on at the end of the call after a long and winding discussion about budgets".chars().collect();
        let mut seed = 7u64;
        let mut rnd = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..300 {
            let a = rnd(text.len() - 10);
            let b = (a + 5 + rnd(90)).min(text.len());
            let mut pat: Vec<char> = text[a..b].to_vec();
            for _ in 0..rnd(6) {
                let p = rnd(pat.len());
                match rnd(3) {
                    0 => pat[p] = 'z',
                    1 if pat.len() > 3 => {
                        pat.remove(p);
                    }
                    _ => pat.insert(p, 'q'),
                }
            }
            if rnd(4) == 0 && b + 40 < text.len() {
                pat.extend_from_slice(&text[b + 30..b + 40]); // stitched
            }
            let (dist, end) = myers_search(&pat, &text);
            let mut hit = vec![false; pat.len()];
            let (start, gap) = trace(&Peq::new(&pat), &pat, &text, end, dist, None, &mut hit);
            // the traceback's start is the shortest alignment's (the reversed pass's)
            assert_eq!(start, align_start(&pat, &text, end, dist));
            assert_eq!(global(&pat, &text[start..=end]), dist);
            assert_eq!((start, gap, hit), trace_full(&pat, &text, end, dist));
        }
        // word texts with repeated passages and quotes of up to 200 chars (one to four blocks,
        // non-ASCII chars), and small alphabets, where optimal paths tie everywhere
        let mut rnd = xorshift(0x7ace);
        for round in 0..600 {
            let (text, pat) = if round % 2 == 0 {
                text_and_quote(&mut rnd, round)
            } else {
                let (m, n) = (2 + rnd(199), 400 + rnd(400));
                let point = rnd(n);
                planted(&mut rnd, round, m, n, point)
            };
            let (dist, end) = myers_search(&pat, &text);
            let mut hit = vec![false; pat.len()];
            let (start, gap) = trace(&Peq::new(&pat), &pat, &text, end, dist, None, &mut hit);
            assert_eq!(start, align_start(&pat, &text, end, dist), "round {round}");
            assert_eq!((start, gap, hit), trace_full(&pat, &text, end, dist), "round {round}");
        }
    }

    /// The view is the match tokens joined by single spaces, each token's first char and span
    /// recorded (texts from the pieces the token rules care about, ASCII and not).
    #[test]
    fn view_is_the_match_tokens_joined() {
        let mut seed = 5u64;
        for _ in 0..2000 {
            let text = crate::text::tests::random_text(&mut seed);
            let v = View::new(&text);
            let toks = crate::text::match_tokens(&text);
            let joined: Vec<char> = toks.iter().map(|t| t.norm.as_str()).collect::<Vec<_>>().join(" ").chars().collect();
            assert_eq!(v.chars, joined, "{text:?}");
            assert_eq!(v.spans, toks.iter().map(|t| (t.start, t.end)).collect::<Vec<_>>());
            assert_eq!(v.tokens(0..v.spans.len()), toks);
            for (p, &c) in v.chars.iter().enumerate() {
                let t = v.token_of(p);
                let (a, b) = (v.first[t] as usize, v.first[t] as usize + toks[t].norm.chars().count());
                assert!(if c == ' ' { p + 1 == a } else { (a..b).contains(&p) }, "{text:?} char {p}");
            }
        }
    }

    /// `match_quote` reuses one kept view per thread: a call after a longer or an outsized text
    /// gets the same result as a fresh view of its own text.
    #[test]
    fn kept_view_gives_a_fresh_views_result() {
        let mut seed = 5u64;
        let opts = MatchOptions::default();
        let outsized = "Dana: the pilot stays at three months. ".repeat(KEEP_VIEW_CHARS / 30);
        let mut texts: Vec<String> = (0..300).map(|_| crate::text::tests::random_text(&mut seed)).collect();
        texts.insert(100, outsized);
        texts.insert(200, "Luis: we agreed on a ten percent discount for the pilot\n".repeat(200));
        for (i, text) in texts.iter().enumerate() {
            // a quote from the text's own words (a window of up to six), or from the text before
            let from = if i % 3 == 0 && i > 0 { &texts[i - 1] } else { text };
            let words: Vec<&str> = from.split_whitespace().collect();
            let a = words.len().saturating_sub(6) / 2;
            let quote = words[a..words.len().min(a + 6)].join(" ");
            assert_eq!(match_quote(text, &quote, &opts), Haystack::new(text).match_quote(&quote, &opts), "{i}: {quote:?}");
        }
        assert!(TEXT_VIEW.with(|v| v.borrow().chars.capacity()) <= KEEP_VIEW_CHARS);
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
