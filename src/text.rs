//! Text normalisation shared by the matcher, the attribution check and the history check:
//! a normalised token view of a string that remembers where each token came from.

use unicode_normalization::UnicodeNormalization;

/// One normalised token and the UTF-8 byte span in the original text it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub norm: String,
    pub start: usize,
    pub end: usize,
}

/// Words dropped before matching: hesitations that ASR keeps and LLM quotes leave out.
pub const FILLERS: &[&str] = &["um", "umm", "uh", "uhh", "er", "erm", "ah", "hmm", "hm", "mm", "mmm", "mhm", "uhm", "eh", "uh-huh"];

fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_mark(c)
}

/// Lower-case, accent-free form of one word (apostrophes inside words are dropped).
pub fn fold_word(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    fold_word_into(w, &mut out);
    out
}

/// [`fold_word`] of an ASCII word: NFKD is the identity on ASCII and there are no marks to drop,
/// so folding is lower-casing and dropping apostrophes.
fn fold_ascii(w: &str) -> impl Iterator<Item = char> + '_ {
    w.bytes().filter(|&b| b != b'\'').map(|b| char::from(b.to_ascii_lowercase()))
}

/// [`fold_word`] appended to `out` (no allocation when `out` has room).
pub fn fold_word_into(w: &str, out: &mut String) {
    if w.is_ascii() {
        out.extend(fold_ascii(w));
        return;
    }
    out.extend(w.nfkd().filter(|c| !is_mark(*c) && !matches!(c, '\'' | '\u{2019}')).flat_map(|c| c.to_lowercase()));
}

/// Byte spans of the raw word tokens (see [`raw_tokens`]), in order. One pass over the bytes,
/// decoding only non-ASCII chars (collecting the text's `char_indices` first cost an allocation of
/// 16 bytes per char and a second pass: a third of the matcher's time on a 100k-char chunk).
///
/// A text with a few non-ASCII chars (a curly quote, a dash, a no-break space: about one in a
/// thousand chars of the QMSum transcripts) is cut at ASCII whitespace into pieces: the pieces
/// without a non-ASCII byte take the byte tokenizer, the rest the char one. Whitespace ends every
/// token and no `{marker}` holds any, so a cut there changes no token.
fn raw_token_spans(text: &str, mut f: impl FnMut(usize, usize)) {
    for (a, b, ascii) in Pieces::new(text) {
        if ascii {
            for (s, e) in AsciiSpans::<false>::new(&text.as_bytes()[a..b]) {
                f(a + s, a + e);
            }
        } else {
            char_token_spans(&text[a..b], |s, e| f(a + s, a + e));
        }
    }
}

/// The pieces of [`raw_token_spans`]: `(start, end, ascii)` byte ranges that cover the text in
/// order, cut at ASCII whitespace, `ascii` when the piece has no non-ASCII byte. An ASCII text is
/// one piece.
struct Pieces<'a> {
    b: &'a [u8],
    at: usize,
    /// the non-ASCII piece that follows the ASCII piece just returned
    pending: Option<(usize, usize)>,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Pieces { b: text.as_bytes(), at: 0, pending: None }
    }
}

impl Iterator for Pieces<'_> {
    type Item = (usize, usize, bool);

    fn next(&mut self) -> Option<(usize, usize, bool)> {
        if let Some((a, e)) = self.pending.take() {
            self.at = e;
            return Some((a, e, false));
        }
        let (b, at) = (self.b, self.at);
        if at >= b.len() {
            return None;
        }
        let Some(p) = first_non_ascii(&b[at..]).map(|p| at + p) else {
            self.at = b.len();
            return Some((at, b.len(), true));
        };
        // the ASCII words before the word that holds the non-ASCII char, then that word
        let cut = b[at..p].iter().rposition(u8::is_ascii_whitespace).map_or(at, |i| at + i + 1);
        let end = b[p..].iter().position(u8::is_ascii_whitespace).map_or(b.len(), |i| p + i);
        if cut > at {
            self.pending = Some((cut, end));
            self.at = cut;
            return Some((at, cut, true));
        }
        self.at = end;
        Some((cut, end, false))
    }
}

/// Index of the first byte >= 0x80, eight bytes at a time (a byte loop cost as much as
/// tokenizing a short ASCII chunk's labels).
fn first_non_ascii(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    for w in b.chunks_exact(8) {
        if u64::from_ne_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        i += 8;
    }
    b[i..].iter().position(|&x| x >= 0x80).map(|p| i + p)
}

/// [`raw_token_spans`] decoding chars: the rules for any text.
fn char_token_spans(text: &str, mut f: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    // the char at byte `p` (a char boundary) and its length in bytes
    let at = |p: usize| -> (char, usize) {
        let b = bytes[p];
        if b < 0x80 {
            (b as char, 1)
        } else {
            let c = text[p..].chars().next().expect("p is a char boundary inside the text");
            (c, c.len_utf8())
        }
    };
    let mut i = 0;
    while i < n {
        // ASCII between words (spaces, punctuation other than a marker's brace): one byte test
        let b = bytes[i];
        if b < 0x80 && !b.is_ascii_alphanumeric() && b != b'{' {
            i += 1;
            continue;
        }
        let (c, l) = at(i);
        if c == '{' {
            // skip a short {marker}: at most 39 chars inside, no space or brace
            let (mut j, mut k) = (i + l, 1);
            while j < n && k < 40 {
                let (c2, l2) = at(j);
                if c2 == '}' || c2 == '{' || c2.is_whitespace() {
                    break;
                }
                j += l2;
                k += 1;
            }
            if j < n && bytes[j] == b'}' {
                i = j + 1;
                continue;
            }
            i += l;
            continue;
        }
        if !is_word_char(c) {
            i += l;
            continue;
        }
        let (mut j, mut prev) = (i + l, c);
        while j < n {
            let b = bytes[j];
            if b < 0x80 && b.is_ascii_alphanumeric() {
                prev = b as char;
                j += 1;
                continue;
            }
            let (c2, l2) = at(j);
            if is_word_char(c2) {
                prev = c2;
                j += l2;
                continue;
            }
            let next = (j + l2 < n).then(|| at(j + l2).0);
            let inner = next.is_some_and(is_word_char);
            if inner && matches!(c2, '\'' | '\u{2019}') {
                prev = c2;
                j += l2;
                continue;
            }
            if inner && matches!(c2, '.' | ',') && prev.is_ascii_digit() && next.is_some_and(|d| d.is_ascii_digit()) {
                prev = c2;
                j += l2;
                continue;
            }
            break;
        }
        f(i, j);
        i = j;
    }
}

/// `true` for the ASCII letters and digits: one load in place of the three range tests of
/// `u8::is_ascii_alphanumeric` on the matcher's per-byte path (the table took a tenth off
/// building a long chunk's view).
static ALNUM: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

#[inline(always)]
fn alnum(b: u8) -> bool {
    ALNUM[usize::from(b)]
}

/// `byte` in all eight bytes of a word.
const fn splat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// The high bit of each byte.
const HIGH: u64 = splat(0x80);

/// High bit set in each byte of `x` that lies in `lo..=hi`; every byte of `x` below 0x80 (so no
/// sum carries into the next byte).
#[inline(always)]
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    (x + splat(0x80 - lo)) & !(x + splat(0x7f - hi)) & HIGH
}

/// High bit set in each byte of the eight that is an ASCII letter or digit.
#[inline(always)]
fn alnum_bytes(w: u64) -> u64 {
    let x = w & !HIGH;
    (in_range(x, b'0', b'9') | in_range(x | splat(0x20), b'a', b'z')) & !w
}

/// The end of the run of ASCII letters and digits from `j`: the first index at or after `j`
/// whose byte is not one, or `b.len()`. Eight bytes a step (a word of transcript is mostly
/// found in one): the byte loop's exit, taken once per word after a run of a different length
/// each time, was where `perf` put most of the samples of building a long chunk's view.
#[inline(always)]
fn alnum_run_end(b: &[u8], mut j: usize) -> usize {
    while let Some(w) = b.get(j..j + 8) {
        let stop = !alnum_bytes(u64::from_le_bytes(w.try_into().expect("8 bytes"))) & HIGH;
        if stop != 0 {
            return j + (stop.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && alnum(b[j]) {
        j += 1;
    }
    j
}

/// High bit set in each zero byte of `v` below its lowest zero byte, and in that one: exact up to
/// the first zero (a borrow may flag bytes above it, which callers that take the lowest set bit
/// never read).
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(splat(1)) & !v & HIGH
}

/// The first index at or after `i` whose byte starts a word, a `{marker}` or a line, or
/// `b.len()`: what the tokeniser skips between words (mostly one space), eight bytes a step.
#[inline(always)]
fn next_stop(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let stop = alnum_bytes(x) | zero_bytes(x ^ splat(b'{')) | zero_bytes(x ^ splat(b'\n'));
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !(alnum(b[i]) || matches!(b[i], b'{' | b'\n')) {
        i += 1;
    }
    i
}

/// The eight bytes of `w` with ASCII capitals lower-cased (other bytes as they are).
#[inline(always)]
fn lower_bytes(w: u64) -> u64 {
    w | (in_range(w & !HIGH, b'A', b'Z') & !w) >> 2
}

/// An ASCII word of at most 8 bytes as the little-endian `u64` of its bytes, zeros after it; no
/// word byte is zero, so two words are equal exactly when their packed forms are.
const fn pack(word: &[u8]) -> u64 {
    let mut x = 0u64;
    let mut i = 0;
    while i < word.len() && i < 8 {
        x |= (word[i] as u64) << (8 * i);
        i += 1;
    }
    x
}

/// Multiplier of [`filler_slot`], found by trying: it sends the 15 packed [`FILLERS`] to 15
/// different slots of 32 (the table below fails to compile otherwise).
const FILLER_HASH: u64 = 0xda71_1448_96c8_da19;

/// Slot of a packed word in [`PACKED_FILLERS`].
#[inline(always)]
const fn filler_slot(word: u64) -> usize {
    (word.wrapping_mul(FILLER_HASH) >> 59) as usize
}

/// Each packed filler (each is ASCII and at most 6 bytes) at its [`filler_slot`], zero in the
/// other slots (no packed word is zero): a word is a filler when its slot holds it, one load and
/// one compare where the 15 compares cost more than the branches they replaced.
const PACKED_FILLERS: [u64; 32] = {
    let mut t = [0u64; 32];
    let mut i = 0;
    while i < FILLERS.len() {
        let w = pack(FILLERS[i].as_bytes());
        assert!(t[filler_slot(w)] == 0, "two fillers share a slot: pick another FILLER_HASH");
        t[filler_slot(w)] = w;
        i += 1;
    }
    t
};

/// The packed form of a view word (see [`pack`]), or `u64::MAX`, which no packed word equals,
/// for one longer than 8 chars or with a non-ASCII char.
fn pack_chars(word: &[char]) -> u64 {
    if word.len() > 8 || !word.iter().all(char::is_ascii) {
        return u64::MAX;
    }
    word.iter().enumerate().fold(0, |x, (i, &c)| x | (c as u64) << (8 * i))
}

/// `u8::to_ascii_lowercase` as a table: one load per byte of the word copied into the view (the
/// compare, set, shift and or of the arithmetic form, for words too short to vectorise).
static LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    t
};

/// [`raw_token_spans`] of an ASCII text: the same rules on bytes, with no char decoding and no
/// lookahead closure (most transcripts are ASCII; this is about a third faster on them). An
/// iterator, so that a hot caller keeps the token's work in its own loop (a callback stayed an
/// out-of-line call per token, with its spills). After each item, `apostrophe` tells whether
/// that token kept an inner `'`.
///
/// With `LABELS`, each line's speaker label (see [`speaker_label_ranges`]) is skipped where the
/// pass reaches the line: a label is a line's head up to its colon, and no token crosses a colon
/// or a newline. Only for a run of whole lines (a label may begin in one piece and end in the
/// next).
struct AsciiSpans<'a, const LABELS: bool> {
    b: &'a [u8],
    i: usize,
    apostrophe: bool,
}

impl<'a, const LABELS: bool> AsciiSpans<'a, LABELS> {
    fn new(b: &'a [u8]) -> Self {
        let i = if LABELS { after_label(b, 0) } else { 0 };
        AsciiSpans { b, i, apostrophe: false }
    }
}

impl<const LABELS: bool> Iterator for AsciiSpans<'_, LABELS> {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        let (b, n) = (self.b, self.b.len());
        let mut i = self.i;
        loop {
            // bytes other than these three kinds are skipped one by one below: jump past them
            i = next_stop(b, i);
            if i >= n {
                break;
            }
            let c = b[i];
            if !alnum(c) {
                if c == b'{' {
                    // a short {marker}: at most 39 chars inside, no space or brace
                    let (mut j, mut k) = (i + 1, 1);
                    while j < n && k < 40 && !matches!(b[j], b'}' | b'{') && !char::from(b[j]).is_whitespace() {
                        j += 1;
                        k += 1;
                    }
                    if j < n && b[j] == b'}' {
                        i = j + 1;
                        continue;
                    }
                }
                i += 1;
                if LABELS && c == b'\n' {
                    i = after_label(b, i);
                }
                continue;
            }
            self.apostrophe = false;
            let mut j = alnum_run_end(b, i + 1);
            // `'` inside a word; `.` or `,` between digits (the byte before `j` is alphanumeric).
            // The byte at `j` is read first: it is mostly a space, a well-predicted exit, where
            // whether the byte after it starts a word is not.
            while j + 1 < n {
                match b[j] {
                    b'\'' if alnum(b[j + 1]) => self.apostrophe = true,
                    b'.' | b',' if b[j - 1].is_ascii_digit() && b[j + 1].is_ascii_digit() => {}
                    _ => break,
                }
                j = alnum_run_end(b, j + 2);
            }
            self.i = j;
            return Some((i, j));
        }
        self.i = n;
        None
    }
}

/// Where tokenising resumes after the line starting at `at`: past its speaker label, if any.
fn after_label(b: &[u8], at: usize) -> usize {
    // [`label_head`] on bytes (every byte is a char boundary in ASCII); the head may run past
    // the line's end, where the newline ends the label rule
    match ascii_label(&b[at..b.len().min(at + ROLE_HEAD)]) {
        Some(Some(colon)) => at + colon + 1,
        _ => at,
    }
}

/// Raw word tokens: maximal runs of word characters, with `'` and `’` kept inside a word and
/// `.`/`,` kept between digits (so `2.5` and `10,000` are one token). `{...}` markers such as
/// `{disfmarker}` are skipped whole.
pub fn raw_tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    raw_token_spans(text, |start, end| {
        let norm = fold_word(&text[start..end]);
        if !norm.is_empty() {
            out.push(Token { norm, start, end });
        }
    });
    out
}

/// Bytes at a line's start where a speaker label may be (see [`label_head`]).
const LABEL_HEAD: usize = 48;

/// The longest role of a `Name (Role):` label, in bytes.
const ROLE_MAX: usize = 80;

/// Bytes at a line's start that hold any label, a role included (a role's `(` within
/// [`LABEL_HEAD`] bytes, its `)` and the colon within [`ROLE_MAX`] + 2 bytes after it).
const ROLE_HEAD: usize = LABEL_HEAD + ROLE_MAX + 2;

/// Where a speaker label may be: the first [`LABEL_HEAD`] bytes of `s` (cut at a char
/// boundary). A label is a short name; a colon further in belongs to the sentence.
pub fn label_head(s: &str) -> &str {
    head(s, LABEL_HEAD)
}

/// The first `max` bytes of `s`, cut back to a char boundary.
fn head(s: &str, max: usize) -> &str {
    let mut cut = s.len().min(max);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// The characters a speaker label is made of: letters, digits, spaces, `.`, `-`, `'`.
pub fn label_chars(label: &str) -> bool {
    label.chars().all(label_char)
}

/// One char of [`label_chars`] (also the byte test of [`ascii_label`], so both read one set).
fn label_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, ' ' | '.' | '-' | '\'')
}

/// Byte ranges of speaker labels at line starts (`Project Manager: `, `Dana Okafor: `): one to
/// four words, the first capitalised, followed by a colon, within [`LABEL_HEAD`] bytes. The name
/// may carry a role in parentheses before the colon, as meeting apps and parliament records
/// write them (`Dana Okafor (She/Her): `, `Hon. Bill Blair (Minister of Public Safety and
/// Emergency Preparedness): `): ` (`, then 1 to [`ROLE_MAX`] bytes with no `(`, `)` or colon,
/// then `):`, the `(` within [`LABEL_HEAD`] bytes. Quotes that span turns leave them out.
pub fn speaker_label_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        line_label(line, line_start, &mut out);
        line_start += line.len() + 1;
    }
    out
}

/// The label of one line (no newline in it) that starts at `line_start`, if it has one.
fn line_label(line: &str, line_start: usize, out: &mut Vec<(usize, usize)>) {
    let b = line.as_bytes();
    match ascii_label(&b[..b.len().min(ROLE_HEAD)]) {
        Some(Some(colon)) => out.push((line_start, line_start + colon + 1)),
        Some(None) => {}
        None => general_label(line, line_start, out),
    }
}

/// The label rule of [`speaker_label_ranges`] in one pass over an ASCII head: `Some(Some(colon))`
/// for a label, `Some(None)` for none (no colon, or a byte no label holds before it), `None` where
/// a non-ASCII byte comes first and the general rule decides. This runs once per turn of every
/// chunk the matcher reads; the find / `label_chars` / word-count passes were 4-7 % of a match.
fn ascii_label(head: &[u8]) -> Option<Option<usize>> {
    let (mut words, mut after_space, mut upper_first) = (0, true, false);
    let name = |words: usize, upper_first: bool| (1..=4).contains(&words) && upper_first;
    for (i, &b) in head.iter().enumerate() {
        if i == LABEL_HEAD {
            // a colon further in belongs to the sentence
            return Some(None);
        }
        match b {
            b':' => return Some(name(words, upper_first).then_some(i)),
            b'(' if after_space && name(words, upper_first) => return ascii_role(head, i),
            0x80.. => return None,
            b' ' => after_space = true,
            _ if label_char(char::from(b)) => {
                if after_space {
                    // a word starts; the first one decides the capital
                    words += 1;
                    if words == 1 {
                        upper_first = b.is_ascii_uppercase();
                    }
                }
                after_space = false;
            }
            _ => return Some(None),
        }
    }
    Some(None)
}

/// The role of an ASCII `Name (Role):` label whose `(` is at `open`: the colon's index, `None`
/// where a non-ASCII byte comes first (see [`ascii_label`]).
fn ascii_role(head: &[u8], open: usize) -> Option<Option<usize>> {
    for (j, &b) in head.iter().enumerate().skip(open + 1) {
        match b {
            b')' => return Some((j > open + 1 && j - open - 1 <= ROLE_MAX && head.get(j + 1) == Some(&b':')).then_some(j + 1)),
            b'(' | b':' | b'\n' => return Some(None),
            0x80.. => return None,
            _ => {}
        }
    }
    Some(None)
}

/// [`speaker_label_ranges`]'s rule on one line with any chars.
fn general_label(line: &str, line_start: usize, out: &mut Vec<(usize, usize)>) {
    let Some(colon) = head(line, ROLE_HEAD).find(':') else { return };
    let label = &line[..colon];
    let head = label_head(line).len();
    let ok = (colon < head && label_name(label))
        || label
            .strip_suffix(')')
            .and_then(|l| l.split_once(" ("))
            .is_some_and(|(name, role)| name.len() + 1 < head && label_name(name) && (1..=ROLE_MAX).contains(&role.len()) && !role.contains(['(', ')']));
    if ok {
        out.push((line_start, line_start + colon + 1));
    }
}

/// A label's name: [`label_chars`], one to four words, the first capitalised.
fn label_name(name: &str) -> bool {
    // no `split_whitespace` (a Unicode test per char was 10 % of matching a 2,000-char chunk):
    // a name passing `label_chars` has no whitespace but ' ', so its words are counted on bytes
    label_chars(name) && {
        let b = name.as_bytes();
        let words = (0..b.len()).filter(|&i| b[i] != b' ' && (i == 0 || b[i - 1] == b' ')).count();
        (1..=4).contains(&words) && name.trim_start_matches(' ').chars().next().is_some_and(char::is_uppercase)
    }
}

/// The tokens of [`match_tokens`] as a stream `(start, end, norm)`, without allocating per
/// token.
pub fn visit_match_tokens(text: &str, mut f: impl FnMut(usize, usize, &str)) {
    let (mut buf, mut word) = (Vec::new(), String::new());
    push_match_tokens(text, &mut buf, |start, end, _, norm| {
        word.clear();
        word.extend(norm);
        f(start, end, &word);
    });
}

/// The match tokens of `text` written into `out` (empty on entry): their folded chars joined by
/// single spaces. `token(start, end, first, norm)` gets each token's byte span, the index in
/// `out` of its first char and its chars. This is the matcher's hot path: an ASCII word is
/// lower-cased straight into `out` and compared there with the fillers and the previous token (a
/// `String` per word, copied again into the view, was two thirds of a match on a 2,000-char chunk).
pub(crate) fn push_match_tokens(text: &str, out: &mut Vec<char>, mut token: impl FnMut(usize, usize, usize, &[char])) {
    debug_assert!(out.is_empty());
    // Runs of whole ASCII lines (all of most transcripts) skip each line's speaker label where
    // the pass reaches the line: a label pass over the text before tokenising and a label lookup
    // per token were a fifth of building a 2,000-char chunk's view. A line with a non-ASCII char
    // finds its label first and takes the pieces. No token crosses a newline, so lines are
    // independent but for the repeat check, which `st` carries.
    let mut st = TokenState { labels: Vec::new(), li: 0, prev: 0..0, prev_word: u64::MAX, scratch: String::new() };
    let (b, n) = (text.as_bytes(), text.len());
    let mut at = 0; // a line start
    loop {
        let non_ascii = first_non_ascii(&b[at..]).map(|p| at + p);
        let ascii_end = non_ascii.map_or(n, |p| b[at..p].iter().rposition(|&x| x == b'\n').map_or(at, |i| at + i + 1));
        let mut spans = AsciiSpans::<true>::new(&b[at..ascii_end]);
        while let Some((start, end)) = spans.next() {
            take_ascii(&mut st, text, out, at + start, at + end, spans.apostrophe, &mut token);
        }
        let Some(p) = non_ascii else { return };
        let (ls, le) = (ascii_end, b[p..].iter().position(|&x| x == b'\n').map_or(n, |i| p + i));
        st.labels.clear();
        st.li = 0;
        line_label(&text[ls..le], ls, &mut st.labels);
        for (a, e, ascii) in Pieces::new(&text[ls..le]) {
            let (a, e) = (ls + a, ls + e);
            if ascii {
                let mut spans = AsciiSpans::<false>::new(&b[a..e]);
                while let Some((start, end)) = spans.next() {
                    take_ascii(&mut st, text, out, a + start, a + end, spans.apostrophe, &mut token);
                }
            } else {
                char_token_spans(&text[a..e], |start, end| take_token(&mut st, text, out, a + start, a + end, None, &mut token));
            }
        }
        if le == n {
            return;
        }
        at = le + 1;
    }
}

/// What [`take_token`] carries from one raw token to the next.
struct TokenState {
    labels: Vec<(usize, usize)>,
    li: usize,
    /// chars of the last token taken from the text (not the `%` -> "percent" ones)
    prev: std::ops::Range<usize>,
    /// that token packed (see [`pack_chars`])
    prev_word: u64,
    scratch: String,
}

/// Is the token `start..end` inside a speaker label of `st.labels` (tokens come in text order)?
#[inline(always)]
fn in_label(st: &mut TokenState, start: usize, end: usize) -> bool {
    let labels = &st.labels;
    while st.li < labels.len() && labels[st.li].1 <= start {
        st.li += 1;
    }
    st.li < labels.len() && labels[st.li].0 <= start && end <= labels[st.li].1
}

/// An ASCII token from the byte tokeniser (`apostrophe`: it holds a `'`) into the view, by
/// [`take_short`] where it qualifies.
#[inline(always)]
fn take_ascii(
    st: &mut TokenState,
    text: &str,
    out: &mut Vec<char>,
    start: usize,
    end: usize,
    apostrophe: bool,
    token: &mut impl FnMut(usize, usize, usize, &[char]),
) {
    if !apostrophe && end - start <= 8 && start + 8 <= text.len() {
        take_short(st, text.as_bytes(), out, start, end, token);
    } else {
        take_token(st, text, out, start, end, Some(apostrophe), token);
    }
}

/// [`take_token`] of an ASCII word `b[start..end]` of 1 to 8 bytes with no apostrophe and 8
/// bytes of text from its start, with no branch that depends on the
/// word: it is loaded, lower-cased and compared with the fillers and the previous token as one
/// `u64`, and written as 8 chars of which the view keeps its own. With the eight-byte scans
/// this took a 100,000-char chunk's match from ~650 to ~430 us (BENCHMARKS.md); a short chunk
/// matched again and again in a loop gained nothing (a few percent slower: more instructions),
/// because there the branch predictor has learnt the chunk's words, which it cannot do on text it
/// has not seen.
#[inline(always)]
fn take_short(st: &mut TokenState, b: &[u8], out: &mut Vec<char>, start: usize, end: usize, token: &mut impl FnMut(usize, usize, usize, &[char])) {
    if in_label(st, start, end) {
        return;
    }
    let len = end - start;
    let w = u64::from_le_bytes(b[start..start + 8].try_into().expect("8 bytes"));
    let word = lower_bytes(w) & (u64::MAX >> (64 - 8 * len));
    if (PACKED_FILLERS[filler_slot(word)] == word) | (word == st.prev_word) {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    let first = out.len();
    out.extend_from_slice(&word.to_le_bytes().map(char::from));
    out.truncate(first + len);
    st.prev = first..first + len;
    st.prev_word = word;
    token(start, end, first, &out[first..]);
    if b.get(end) == Some(&b'%') {
        push_percent(out, end, token);
    }
}

/// The token "percent" for the `%` at byte `at`, right after a number.
#[inline(always)]
fn push_percent(out: &mut Vec<char>, at: usize, token: &mut impl FnMut(usize, usize, usize, &[char])) {
    out.push(' ');
    let first = out.len();
    out.extend("percent".chars());
    token(at, at + 1, first, &out[first..]);
}

/// One raw token `text[start..end]` into the view: dropped inside a speaker label, folded into
/// `out`, dropped again as a filler or a repeat, else reported to `token`. `ascii_apostrophe`:
/// the token is ASCII and whether it holds a `'` (known to the byte tokenizer), `None` when the
/// caller does not know.
#[inline(always)]
fn take_token(
    st: &mut TokenState,
    text: &str,
    out: &mut Vec<char>,
    start: usize,
    end: usize,
    ascii_apostrophe: Option<bool>,
    token: &mut impl FnMut(usize, usize, usize, &[char]),
) {
    if in_label(st, start, end) {
        return;
    }
    let before = out.len();
    if before > 0 {
        out.push(' ');
    }
    let first = out.len();
    match ascii_apostrophe {
        // an exact-size copy the compiler widens and lower-cases in bulk; sliced as bytes, since
        // the byte tokenizer's spans are ASCII (a `str` slice tests both ends for char boundaries)
        Some(false) => out.extend(text.as_bytes()[start..end].iter().map(|&b| char::from(LOWER[usize::from(b)]))),
        _ => {
            let raw = &text[start..end];
            if ascii_apostrophe.is_some() || raw.is_ascii() {
                out.extend(fold_ascii(raw));
            } else {
                st.scratch.clear();
                fold_word_into(raw, &mut st.scratch);
                out.extend(st.scratch.chars());
            }
        }
    }
    let word = &out[first..];
    // every filler has 2 to 6 chars, starts with one of these letters and has one of the others
    // second: most words fail this before the list is read
    let filler = (2..=6).contains(&word.len())
        && matches!(word[0], 'u' | 'e' | 'a' | 'h' | 'm')
        && matches!(word[1], 'm' | 'h' | 'r')
        && FILLERS.iter().any(|f| f.len() == word.len() && f.bytes().zip(word).all(|(x, &y)| char::from(x) == y));
    if word.is_empty() || filler || *word == out[st.prev.clone()] {
        out.truncate(before);
        return;
    }
    st.prev = first..out.len();
    st.prev_word = pack_chars(&out[first..]);
    token(start, end, first, &out[first..]);
    // a `%` right after a number becomes the token "percent"
    if text.as_bytes().get(end) == Some(&b'%') {
        push_percent(out, end, token);
    }
}

/// Tokens for matching: raw tokens minus fillers and speaker labels, with immediate repetitions collapsed
/// ("the the" -> "the"), and `%` kept as the word "percent".
pub fn match_tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    visit_match_tokens(text, |start, end, norm| out.push(Token { norm: norm.to_string(), start, end }));
    out
}

const SMALL: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: &[&str] = &["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

fn word_value(w: &str) -> Option<u64> {
    if let Some(i) = SMALL.iter().position(|s| *s == w) {
        return Some(i as u64);
    }
    TENS.iter().position(|s| !s.is_empty() && *s == w).map(|i| i as u64 * 10)
}

fn scale_value(w: &str) -> Option<u64> {
    match w {
        "hundred" => Some(100),
        "thousand" | "k" => Some(1_000),
        "million" | "m" => Some(1_000_000),
        "billion" | "bn" => Some(1_000_000_000),
        _ => None,
    }
}

/// Whether a normalised word can start a number of [`numbers`]: a digit first, or a number or
/// scale word, or "half". A quote none of whose words can start one has no numbers, so the
/// matcher skips building its tokens (a `String` per word, a tenth of matching a short chunk in
/// allocator calls). Every such word is at most 9 ASCII chars and starts with one of the letters
/// below (a test checks both against the word lists).
pub(crate) fn may_start_number(word: &[char]) -> bool {
    let Some(&c) = word.first() else { return false };
    if c.is_ascii_digit() {
        return true;
    }
    if word.len() > 9 || !matches!(c, 'z' | 'o' | 't' | 'f' | 's' | 'e' | 'n' | 'h' | 'm' | 'b') {
        return false;
    }
    let mut buf = [0u8; 9];
    for (b, &ch) in buf.iter_mut().zip(word) {
        if !ch.is_ascii() {
            return false;
        }
        *b = ch as u8;
    }
    let w = std::str::from_utf8(&buf[..word.len()]).unwrap_or("");
    matches!(w, "half" | "hundred" | "thousand" | "million" | "billion") || word_value(w).is_some()
}

/// A number found in text, in canonical form (`"10%"`, `"2.5"`, `"1500"`), with its token range.
#[derive(Debug, Clone, PartialEq)]
pub struct Number {
    pub value: String,
    pub first_token: usize,
    pub last_token: usize,
}

fn canon_digits(s: &str) -> Option<String> {
    let s: String = s.chars().filter(|c| *c != ',').collect();
    let v: f64 = s.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    let mut out = format!("{v}");
    if out.contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    Some(out)
}

/// Numbers in a token sequence: digit tokens (`10`, `2.5`, `10,000`, `5k`), number words
/// (`twenty five`, `two hundred`), `half`, each followed optionally by `percent`/`per cent`.
/// "a"/"an"/"one" alone are not treated as numbers (too common as articles).
pub fn numbers(tokens: &[Token]) -> Vec<Number> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let w = tokens[i].norm.as_str();
        let start = i;
        let mut value: Option<String> = None;
        if w.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let (digits, suffix) = w.split_at(w.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(w.len()));
            if let Some(mut v) = canon_digits(digits) {
                match suffix {
                    "k" => v = canon_digits(&format!("{}", v.parse::<f64>().unwrap_or(0.0) * 1e3)).unwrap_or(v),
                    "m" => v = canon_digits(&format!("{}", v.parse::<f64>().unwrap_or(0.0) * 1e6)).unwrap_or(v),
                    _ => {}
                }
                value = Some(v);
                i += 1;
                if i < tokens.len() {
                    if let Some(s) = scale_value(&tokens[i].norm) {
                        let v = value.as_ref().unwrap().parse::<f64>().unwrap_or(0.0) * s as f64;
                        value = canon_digits(&format!("{v}"));
                        i += 1;
                    }
                }
            } else {
                i += 1;
            }
        } else if w == "half" {
            value = Some("0.5".into());
            i += 1;
        } else if word_value(w).is_some() && w != "one" {
            let mut total: u64 = 0;
            let mut current: u64 = 0;
            while i < tokens.len() {
                let t = tokens[i].norm.as_str();
                if let Some(v) = word_value(t) {
                    current += v;
                } else if let Some(s) = scale_value(t) {
                    if s == 100 {
                        current = current.max(1) * 100;
                    } else {
                        total += current.max(1) * s;
                        current = 0;
                    }
                } else if t == "and" && i + 1 < tokens.len() && word_value(&tokens[i + 1].norm).is_some() && current >= 100 {
                    // "two hundred and five"
                } else {
                    break;
                }
                i += 1;
            }
            value = Some((total + current).to_string());
        } else if (w == "one" && i + 1 < tokens.len() && (scale_value(&tokens[i + 1].norm).is_some() || tokens[i + 1].norm == "percent"))
            || matches!(w, "hundred" | "thousand" | "million" | "billion")
        {
            // "one hundred", and a scale word with no number before it ("a thousand buttons"):
            // without this "a hundred" and "a thousand" both read as no number, and a quote
            // that changed one into the other passed the number check
            let mut v: u64 = 1;
            if w == "one" {
                i += 1;
            }
            while i < tokens.len() {
                match scale_value(&tokens[i].norm) {
                    Some(s) => v *= s,
                    None => break,
                }
                i += 1;
            }
            value = Some(v.to_string());
        } else {
            i += 1;
        }
        if let Some(mut v) = value {
            if i < tokens.len() && tokens[i].norm == "percent" {
                v.push('%');
                i += 1;
            } else if i + 1 < tokens.len() && tokens[i].norm == "per" && tokens[i + 1].norm == "cent" {
                v.push('%');
                i += 2;
            }
            out.push(Number { value: v, first_token: start, last_token: i - 1 });
        }
    }
    out
}

/// Numbers of a plain string, canonical values only.
pub fn number_values(text: &str) -> Vec<String> {
    numbers(&match_tokens(text)).into_iter().map(|n| n.value).collect()
}

/// Content words (lower-case, no stop words, no numbers), for "same subject" tests.
pub fn content_words(text: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "for", "with", "at", "by", "from", "is", "are", "was", "were", "be", "been", "it", "its",
        "this", "that", "these", "those", "we", "you", "they", "he", "she", "i", "our", "your", "their", "will", "would", "should", "could", "can", "have",
        "has", "had", "do", "does", "did", "not", "no", "so", "as", "if", "then", "than", "there", "about", "into", "also", "just", "all", "any", "said",
        "says", "say", "agreed", "decided", "team", "meeting", "percent",
    ];
    let toks = match_tokens(text);
    toks.into_iter()
        .map(|t| t.norm)
        .filter(|w| w.len() > 2 && !STOP.contains(&w.as_str()) && !w.chars().next().unwrap().is_ascii_digit() && word_value(w).is_none())
        .collect()
}

/// `mm:ss`, or `h:mm:ss` from an hour on.
pub fn clock(seconds: f64) -> String {
    let s = if seconds.is_finite() && seconds > 0.0 { seconds.floor() as u64 } else { 0 };
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A random text made of the pieces the token rules care about: labels, markers, fillers,
    /// repeats, apostrophes, digit separators, `%`, curly quotes, accents, combining marks.
    pub(crate) fn random_text(seed: &mut u64) -> String {
        const PIECES: &[&str] = &[
            "a",
            "B",
            "7",
            "0",
            "'",
            ".",
            ",",
            "%",
            "{",
            "}",
            " ",
            "  ",
            "\n",
            "\t",
            "\u{b}",
            ":",
            "-",
            "um",
            "Uh",
            "mhm",
            "the",
            "the ",
            "Dana: ",
            "Project Manager: ",
            "{disfmarker}",
            "{vocalsound} ",
            "it's",
            "10,000",
            "2.5",
            "ten percent",
            "don't",
            "x'",
            "'y",
            "1.",
            "Hmm",
            "internationally",
            "Q3REVENUE2026",
            "\u{2019}",
            "it\u{2019}s",
            "caf\u{e9}",
            "Caf\u{e9}",
            "e\u{301}",
            "\u{301}",
            "\u{d6}laf: ",
            "Stra\u{df}e",
            "\u{fb01}",
            "{\u{e9}}",
        ];
        let mut rnd = |n: usize| {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (*seed >> 33) as usize % n
        };
        // half the texts ASCII only (they take the byte tokenizer), the PIECES before the first non-ASCII one
        let ascii = PIECES.iter().position(|p| !p.is_ascii()).unwrap_or(PIECES.len());
        let pool = if rnd(2) == 0 { &PIECES[..ascii] } else { PIECES };
        (0..rnd(40)).map(|_| pool[rnd(pool.len())]).collect()
    }

    /// `take_token` rejects a word as a filler only after a cheap test of its length and first
    /// letter; every filler must pass that test.
    #[test]
    fn fillers_pass_the_quick_test() {
        for f in FILLERS {
            let c: Vec<char> = f.chars().collect();
            assert!((2..=6).contains(&c.len()) && matches!(c[0], 'u' | 'e' | 'a' | 'h' | 'm') && matches!(c[1], 'm' | 'h' | 'r'), "{f}");
            // the short-word path finds each filler in its slot
            let w = pack(f.as_bytes());
            assert!(f.is_ascii() && f.len() <= 8 && PACKED_FILLERS[filler_slot(w)] == w, "{f}");
        }
        assert_eq!(PACKED_FILLERS.iter().filter(|&&w| w != 0).count(), FILLERS.len());
    }

    /// `may_start_number` holds for every word a number can start with, and for some word of
    /// every text in which `numbers` finds one.
    #[test]
    fn number_starts_pass_the_quick_test() {
        let chars = |w: &str| -> Vec<char> { w.chars().collect() };
        for w in SMALL.iter().chain(TENS).filter(|w| !w.is_empty()).chain(&["half", "hundred", "thousand", "million", "billion", "7", "2.5", "10k"]) {
            assert!(may_start_number(&chars(w)), "{w}");
        }
        for w in ["", "the", "often", "seventh", "teens", "nineteens", "hal", "m", "k", "percent"] {
            assert!(!may_start_number(&chars(w)), "{w}");
        }
        let texts = [
            "a ten percent discount for two hundred and five seats",
            "one hundred and a thousand buttons, half of them at 2.5 or 10k",
            "we said the pilot runs for three months",
            "no numbers here at all",
        ];
        for t in texts {
            let toks = match_tokens(t);
            if !numbers(&toks).is_empty() {
                assert!(toks.iter().any(|tok| may_start_number(&chars(&tok.norm))), "{t}");
            }
        }
        for line in std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quotes_test.jsonl")).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for key in ["text", "quote"] {
                let toks = match_tokens(v[key].as_str().unwrap());
                let any = toks.iter().any(|tok| may_start_number(&chars(&tok.norm)));
                assert!(numbers(&toks).is_empty() || any, "{}", v[key]);
            }
        }
    }

    /// The eight-byte scan ends a run of letters and digits where the byte loop does, for every
    /// byte value at every place in the word and for runs across the word's edge.
    #[test]
    fn alnum_runs_end_where_the_byte_loop_ends_them() {
        let plain = |b: &[u8], j: usize| (j..b.len()).find(|&i| !b[i].is_ascii_alphanumeric()).unwrap_or(b.len());
        for stop in 0..=255u8 {
            for len in 0..20 {
                for at in 0..len {
                    let mut b = vec![b'a'; len];
                    b[at] = stop;
                    for j in 0..=len {
                        assert_eq!(alnum_run_end(&b, j), plain(&b, j), "{stop} {len} {at} {j}");
                    }
                }
            }
        }
        let b = b"Zz09az AZ@[`{/:";
        for j in 0..=b.len() {
            assert_eq!(alnum_run_end(b, j), plain(b, j), "{j}");
        }
    }

    /// Speaker labels counted on bytes are the labels of the plain rule (`split_whitespace`).
    #[test]
    fn speaker_labels_follow_the_rule() {
        let plain = |text: &str| -> Vec<(usize, usize)> {
            let (mut out, mut line_start) = (Vec::new(), 0);
            let name = |n: &str| {
                let words: Vec<&str> = n.split_whitespace().collect();
                (1..=4).contains(&words.len()) && words[0].chars().next().is_some_and(char::is_uppercase) && label_chars(n)
            };
            for line in text.split('\n') {
                let head: String = line.char_indices().take_while(|&(i, c)| i + c.len_utf8() <= ROLE_HEAD).map(|(_, c)| c).collect();
                if let Some(colon) = head.find(':') {
                    let label = &line[..colon];
                    let plain = colon < label_head(line).len() && name(label);
                    // `Name (Role):`: the `(` inside the label head, a role of 1 to ROLE_MAX bytes
                    let role = label.ends_with(')')
                        && label.find(" (").is_some_and(|p| {
                            let role = &label[p + 2..label.len() - 1];
                            p + 1 < label_head(line).len() && name(&label[..p]) && (1..=ROLE_MAX).contains(&role.len()) && !role.contains(['(', ')'])
                        });
                    if plain || role {
                        out.push((line_start, line_start + colon + 1));
                    }
                }
                line_start += line.len() + 1;
            }
            out
        };
        let mut seed = 5u64;
        let mut labelled = 0;
        for _ in 0..5000 {
            let text = random_text(&mut seed);
            let want = plain(&text);
            labelled += usize::from(!want.is_empty());
            assert_eq!(speaker_label_ranges(&text), want, "{text:?}");
        }
        for text in [
            "  Dana Okafor : hi",
            "A B C D E: no",
            "A B C D: yes",
            "dana: no",
            " Ólaf: yes",
            "x\nProject  Manager: ok",
            "Dr. Ana-Maria O'Neil: yes",
            ".Dana: no",
            "-Dana: no",
            "Dana\t: no",
            "Ana 2: yes",
            "2 Ana: no",
            "Dana, Luis: no",
            "Luis Dána: yes",
            "Dana: é then: more",
            ":",
            " : ",
            "Hon. Bill Blair (Minister of Public Safety and Emergency Preparedness): Mr. Chair, I",
            "x\nDana Okafor (She/Her): ok",
            "Dána Okafor (Gäst): yes",
            "Dana (Gäst: no",
            "Dana (x) (y): no",
            "Dana (a (b)): no",
            "Dana (): no",
            "Dana(x): no",
            "dana (x): no",
            "A B C D E (x): no",
            "Dana (x) : no",
            "Dana (x:y): no",
            "Dana (x)",
            "Dana (x)\nLuis: yes",
            " (x): no",
            &format!("Dana ({}): yes", "r".repeat(ROLE_MAX)),
            &format!("Dana ({}): no", "r".repeat(ROLE_MAX + 1)),
            &format!("Dána ({}é): no", "r".repeat(ROLE_MAX - 1)),
            &format!("{} (x): no", "N".repeat(LABEL_HEAD - 1)),
            &format!("{} (x): yes", "N".repeat(LABEL_HEAD - 2)),
            &format!("{}é (x): yes", "N".repeat(LABEL_HEAD - 4)),
        ] {
            assert_eq!(speaker_label_ranges(text), plain(text), "{text:?}");
            // and the case's own word for it
            if text.ends_with(": yes") || text.ends_with(": no") {
                assert_eq!(!plain(text).is_empty(), text.ends_with(": yes"), "{text:?}");
            }
        }
        assert!(labelled > 500, "{labelled}");
    }

    /// Cutting a text at ASCII whitespace into byte-tokenized and char-tokenized pieces gives the
    /// char tokenizer's spans for the whole text.
    #[test]
    fn pieces_tokenize_as_the_whole_text() {
        let mut seed = 11u64;
        let mut mixed = 0;
        for _ in 0..5000 {
            let text = random_text(&mut seed);
            mixed += usize::from(!text.is_ascii() && text.bytes().any(|b| b.is_ascii_whitespace()));
            let (mut got, mut want) = (Vec::new(), Vec::new());
            raw_token_spans(&text, |s, e| got.push((s, e)));
            char_token_spans(&text, |s, e| want.push((s, e)));
            assert_eq!(got, want, "{text:?}");
        }
        assert!(mixed > 1000, "{mixed}");
    }

    /// The match-token rules written plainly (the fused hot path must give the same tokens):
    /// raw tokens, minus speaker labels, fillers and immediate repeats, `%` as "percent".
    #[test]
    fn match_tokens_follow_the_rules() {
        let mut seed = 3u64;
        for i in 0..6000 {
            // every other text is several lines, ASCII and not mixed: runs of ASCII lines and
            // lines with a non-ASCII char take different paths
            let text = if i % 2 == 0 { random_text(&mut seed) } else { (0..4).map(|_| random_text(&mut seed)).collect::<Vec<_>>().join("\n") };
            let labels = speaker_label_ranges(&text);
            let mut want: Vec<Token> = Vec::new();
            let mut prev = String::new();
            for t in raw_tokens(&text) {
                if labels.iter().any(|&(a, b)| a <= t.start && t.end <= b) || FILLERS.contains(&t.norm.as_str()) || t.norm == prev {
                    continue;
                }
                prev = t.norm.clone();
                let end = t.end;
                want.push(t);
                if text[end..].starts_with('%') {
                    want.push(Token { norm: "percent".into(), start: end, end: end + 1 });
                }
            }
            assert_eq!(match_tokens(&text), want, "{text:?}");
        }
    }

    #[test]
    fn label_head_cuts_at_a_char_boundary_and_labels_end_within_it() {
        // 47 ASCII bytes then a 2-byte char: the cut falls inside it and steps back
        let s = format!("{}é: rest", "a".repeat(47));
        assert_eq!(label_head(&s).len(), 47);
        assert_eq!(label_head("Dana: ok"), "Dana: ok");
        assert!(label_chars("Dr. Ana-Maria O'Neil 2") && !label_chars("Dana, then"));
        // a colon past the head is prose, not a label
        let long = format!("{} said this: yes", "Word ".repeat(10));
        assert!(speaker_label_ranges(&long).is_empty());
        assert_eq!(speaker_label_ranges("Dana Okafor: ten\nLuis: ok"), vec![(0, 12), (17, 22)]);
    }

    /// A `Name (Role):` label is left out of the match tokens, on ASCII lines (the byte pass) and
    /// on lines with other chars (the char pass) alike.
    #[test]
    fn labels_with_a_role_are_not_matched() {
        for (text, want) in [
            ("The Chair: Ms. Falk.\nHon. Bill Blair (Minister of Public Safety and Emergency Preparedness): Mr. Chair, I want", "ms falk mr chair i want"),
            ("Dana Okafor (She/Her): ten percent\nLuis (Gäst): okay", "ten percent okay"),
            ("Dana (laughs) then: no label", "dana laughs then no label"),
        ] {
            let got: Vec<String> = match_tokens(text).into_iter().map(|t| t.norm).collect();
            assert_eq!(got.join(" "), want, "{text:?}");
        }
    }

    #[test]
    fn numbers_words_digits_percent() {
        assert_eq!(number_values("a ten percent discount"), vec!["10%"]);
        assert_eq!(number_values("a 10% discount"), vec!["10%"]);
        assert_eq!(number_values("twenty five units and 2.50 each"), vec!["25", "2.5"]);
        assert_eq!(number_values("two hundred and five"), vec!["205"]);
        assert_eq!(number_values("like a thousand buttons"), vec!["1000"]);
        assert_eq!(number_values("a hundred thousand users, one hundred"), vec!["100000", "100"]);
        assert!(number_values("I'm at the m").is_empty());
        assert_eq!(number_values("10,000 users, 5k seats"), vec!["10000", "5000"]);
        assert_eq!(number_values("one of them"), Vec::<String>::new());
        assert_eq!(number_values("twelve per cent"), vec!["12%"]);
    }

    #[test]
    fn tokens_drop_markers_fillers_repeats() {
        let t: Vec<String> = match_tokens("Um {disfmarker} the the price, uh, is OK").into_iter().map(|t| t.norm).collect();
        assert_eq!(t, vec!["the", "price", "is", "ok"]);
        let t: Vec<String> = match_tokens("Don’t café").into_iter().map(|t| t.norm).collect();
        assert_eq!(t, vec!["dont", "cafe"]);
    }

    #[test]
    fn raw_token_edges() {
        let spans = |t: &str| raw_tokens(t).into_iter().map(|k| (k.start, k.end)).collect::<Vec<_>>();
        // separators stay inside numbers and words only between the right chars
        assert_eq!(spans("10,000 2.5 a.b it's 'x' 😀é"), vec![(0, 6), (7, 10), (11, 12), (13, 14), (15, 19), (21, 22), (28, 30)]);
        // a {marker} is skipped whole up to 39 chars inside; a longer one is read as words
        let inside = |k: usize| format!("a {{{}}} b", "x".repeat(k));
        assert_eq!(spans(&inside(39)).len(), 2);
        assert_eq!(spans(&inside(40)).len(), 3);
        assert_eq!(spans("{open b"), vec![(1, 5), (6, 7)]);
    }
}
