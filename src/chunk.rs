//! The data model: chunks (a retrieved piece of a transcript, its turns and word timings), how
//! they are read from JSON and validated, and how offsets into their text are counted.
//!
//! Offsets inside this crate are UTF-8 bytes. Callers count differently: JavaScript strings
//! index UTF-16 code units, Python strings and the CLI's `match` output count Unicode scalar
//! values. [`PositionEncoding`] converts between them (as tokenizers' `offset_type` and ruff's
//! `PositionEncoding` do), in one pass over the text for any number of offsets.

use serde::{Deserialize, Serialize};

/// One speaker turn inside a chunk. `text_start`/`text_end` are offsets into the chunk text: UTF-8
/// bytes in Rust and in JSON files, UTF-16 code units in JavaScript objects ([`PositionEncoding`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Turn {
    pub speaker: String,
    pub start: f64,
    pub end: f64,
    pub text_start: usize,
    pub text_end: usize,
}

/// A word with its timing (WhisperX style). `offset` (into the chunk text, counted like the turn
/// offsets) is found by sequential search when absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Word {
    pub word: String,
    pub start: f64,
    pub end: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
}

/// A retrieved transcript chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Chunk {
    pub id: String,
    pub meeting_id: String,
    pub meeting_title: String,
    /// ISO `YYYY-MM-DD`.
    pub date: String,
    pub start: f64,
    pub end: f64,
    #[serde(default)]
    pub speakers: Vec<String>,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<Turn>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Vec<Word>>,
    /// Who may see this chunk; `None` means everyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acl: Option<Vec<String>>,
    /// Retrieval relevance (higher is stronger); absent means "retrieval order".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// Defects of input data (chunks, context files).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("invalid JSON at {path}: {message}")]
    Json { path: String, message: String },
    #[error("chunk {index} ({id}): {message}")]
    InvalidChunk { index: usize, id: String, message: String },
    #[error("duplicate chunk id {id:?} (chunks {first} and {second}) with different content")]
    DuplicateId { id: String, first: usize, second: usize },
    #[error("input too large: {what} is {size}, limit {limit}")]
    TooLarge { what: String, size: usize, limit: usize },
}

impl InputError {
    pub fn code(&self) -> &'static str {
        match self {
            InputError::Json { .. } => "invalid_json",
            InputError::InvalidChunk { .. } => "invalid_chunk",
            InputError::DuplicateId { .. } => "duplicate_id",
            InputError::TooLarge { .. } => "too_large",
        }
    }
}

/// Documented limits.
pub const MAX_CHUNK_BYTES: usize = 16 * 1024 * 1024;
pub const MAX_CHUNKS: usize = 10_000;

/// Replace JSON escapes of lone UTF-16 surrogates (`"\ud800"`, a `\udc00` without its high half)
/// by `\ufffd`, which has the same length, so error positions do not move. `JSON.stringify` and
/// Python's `json.dumps` write such escapes for strings with a broken surrogate pair (a truncated
/// emoji), and serde_json rejects them: one broken character would lose the whole answer or chunk
/// list. wasm-bindgen makes the same replacement for raw lone surrogates in JS strings.
pub fn replace_lone_surrogate_escapes(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains("\\u") {
        return std::borrow::Cow::Borrowed(json);
    }
    let b = json.as_bytes();
    let hex4 = |i: usize| -> Option<u32> {
        let h = b.get(i..i + 4)?;
        h.iter().all(u8::is_ascii_hexdigit).then(|| h.iter().fold(0, |v, &c| v * 16 + (c as char).to_digit(16).unwrap()))
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match (b[i + 1], hex4(i + 2)) {
            (b'u', Some(u)) if (0xD800..0xDC00).contains(&u) => {
                let low = b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') && hex4(i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l));
                if low {
                    i += 12;
                    continue;
                }
                out.get_or_insert_with(|| b.to_vec())[i..i + 6].copy_from_slice(b"\\ufffd");
                i += 6;
            }
            (b'u', Some(u)) if (0xDC00..0xE000).contains(&u) => {
                out.get_or_insert_with(|| b.to_vec())[i..i + 6].copy_from_slice(b"\\ufffd");
                i += 6;
            }
            (b'u', Some(_)) => i += 6,
            _ => i += 2, // any other escape, including `\\`
        }
    }
    match out {
        // only ASCII was replaced by ASCII
        Some(v) => std::borrow::Cow::Owned(String::from_utf8(v).expect("still UTF-8")),
        None => std::borrow::Cow::Borrowed(json),
    }
}

/// Parse JSON into `T`, reporting the field path of the first defect. Lone surrogate escapes
/// become U+FFFD first ([`replace_lone_surrogate_escapes`]).
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, InputError> {
    let json = replace_lone_surrogate_escapes(json);
    let de = &mut serde_json::Deserializer::from_str(&json);
    serde_path_to_error::deserialize(de).map_err(|e| InputError::Json { path: e.path().to_string(), message: e.inner().to_string() })
}

/// Parse chunks: a JSON array, or an object with a `chunks` array. Every chunk is validated.
pub fn parse_chunks(json: &str) -> Result<Vec<Chunk>, InputError> {
    parse_chunks_in(json, PositionEncoding::Utf8)
}

/// The chunks of a JSON array or `{"chunks": [...]}`, not yet validated.
fn read_chunks(json: &str) -> Result<Vec<Chunk>, InputError> {
    #[derive(Deserialize)]
    struct Wrapped {
        chunks: Vec<Chunk>,
    }
    Ok(if json.trim_start().starts_with('[') { from_json::<Vec<Chunk>>(json)? } else { from_json::<Wrapped>(json)?.chunks })
}

pub(crate) fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    match (num(&d[0..4]), num(&d[5..7]), num(&d[8..10])) {
        (Some(_), Some(m), Some(day)) => (1..=12).contains(&m) && (1..=31).contains(&day),
        _ => false,
    }
}

impl Chunk {
    /// Check one chunk; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.id.trim().is_empty() {
            return Err("id is empty".into());
        }
        if !valid_date(&self.date) {
            return Err(format!("date {:?} is not YYYY-MM-DD", self.date));
        }
        if !self.start.is_finite() || !self.end.is_finite() || self.start < 0.0 {
            return Err(format!("start/end must be finite and non-negative (got {} / {})", self.start, self.end));
        }
        if self.end < self.start {
            return Err(format!("end {} is before start {}", self.end, self.start));
        }
        if self.text.trim().is_empty() {
            return Err("text is empty".into());
        }
        if self.text.len() > MAX_CHUNK_BYTES {
            return Err(format!("text is {} bytes, limit {MAX_CHUNK_BYTES}", self.text.len()));
        }
        if let Some(turns) = &self.turns {
            for (i, t) in turns.iter().enumerate() {
                if t.text_start > t.text_end || t.text_end > self.text.len() {
                    return Err(format!("turns[{i}]: offsets {}..{} outside text of {} bytes", t.text_start, t.text_end, self.text.len()));
                }
                if !self.text.is_char_boundary(t.text_start) || !self.text.is_char_boundary(t.text_end) {
                    return Err(format!("turns[{i}]: offsets {}..{} not on character boundaries", t.text_start, t.text_end));
                }
                if !t.start.is_finite() || !t.end.is_finite() || t.start < 0.0 || t.end < t.start {
                    return Err(format!("turns[{i}]: bad times {} / {}", t.start, t.end));
                }
            }
        }
        if let Some(words) = &self.words {
            for (i, w) in words.iter().enumerate() {
                if !w.start.is_finite() || !w.end.is_finite() || w.start < 0.0 || w.end < w.start {
                    return Err(format!("words[{i}]: bad times {} / {}", w.start, w.end));
                }
                if let Some(o) = w.offset {
                    if o > self.text.len() || !self.text.is_char_boundary(o) {
                        return Err(format!("words[{i}]: offset {o} not a character boundary of the text"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Can `viewer` see this chunk? No ACL: everyone. An ACL and no viewer: nobody.
    pub fn visible_to(&self, viewer: Option<&str>) -> bool {
        match (&self.acl, viewer) {
            (None, _) => true,
            (Some(acl), Some(v)) => acl.iter().any(|a| a == v),
            (Some(_), None) => false,
        }
    }

    /// Byte offsets of each word: given, or found by sequential case-insensitive search.
    pub fn word_offsets(&self) -> Vec<(usize, f64)> {
        let Some(words) = &self.words else { return Vec::new() };
        let lower = self.text.to_lowercase();
        let same_len = lower.len() == self.text.len();
        let mut cursor = 0;
        let mut out = Vec::with_capacity(words.len());
        for w in words {
            if let Some(o) = w.offset {
                out.push((o, w.start));
                cursor = o;
                continue;
            }
            let needle = w.word.trim().to_lowercase();
            if needle.is_empty() || !same_len {
                continue;
            }
            if let Some(p) = lower[cursor..].find(&needle) {
                let o = cursor + p;
                out.push((o, w.start));
                cursor = o + needle.len();
            }
        }
        out
    }
}

fn validate_chunks(chunks: &[Chunk]) -> Result<(), InputError> {
    if chunks.len() > MAX_CHUNKS {
        return Err(InputError::TooLarge { what: "chunk count".into(), size: chunks.len(), limit: MAX_CHUNKS });
    }
    for (i, c) in chunks.iter().enumerate() {
        c.validate().map_err(|message| InputError::InvalidChunk { index: i, id: c.id.clone(), message })?;
    }
    let mut seen: std::collections::HashMap<&str, usize> = Default::default();
    for (i, c) in chunks.iter().enumerate() {
        if let Some(&j) = seen.get(c.id.as_str()) {
            if chunks[j] != *c {
                return Err(InputError::DuplicateId { id: c.id.clone(), first: j, second: i });
            }
        } else {
            seen.insert(&c.id, i);
        }
    }
    Ok(())
}

/// How offsets into a text are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
pub enum PositionEncoding {
    /// UTF-8 bytes (Rust `str` indices, the JSON file format).
    #[default]
    #[serde(rename = "utf-8")]
    Utf8,
    /// UTF-16 code units (JavaScript string indices).
    #[serde(rename = "utf-16")]
    Utf16,
    /// Unicode scalar values (Python string indices).
    #[serde(rename = "chars")]
    Chars,
}

impl PositionEncoding {
    fn units(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Chars => 1,
        }
    }

    /// Convert UTF-8 byte offsets into `text` to this encoding, in place. Offsets past the end
    /// clamp to the end; offsets inside a character round down to its start.
    pub fn encode(self, text: &str, offsets: &mut [&mut usize]) {
        if self == PositionEncoding::Utf8 {
            for o in offsets.iter_mut() {
                let mut b = (**o).min(text.len());
                while !text.is_char_boundary(b) {
                    b -= 1;
                }
                **o = b;
            }
            return;
        }
        // this direction has no error case
        let _ = self.walk(text, offsets, true);
    }

    /// Convert offsets in this encoding to UTF-8 bytes, in place. An offset past the end, or one
    /// that is not on a character boundary (inside a UTF-8 sequence, between the halves of a
    /// surrogate pair), is an error naming that offset.
    pub fn decode(self, text: &str, offsets: &mut [&mut usize]) -> Result<(), usize> {
        if self == PositionEncoding::Utf8 {
            return match offsets.iter().find(|o| !text.is_char_boundary(***o)) {
                Some(bad) => Err(**bad),
                None => Ok(()),
            };
        }
        self.walk(text, offsets, false)
    }

    /// One UTF-8 byte offset converted to this encoding.
    pub fn encode_offset(self, text: &str, byte: usize) -> usize {
        let mut o = byte;
        self.encode(text, &mut [&mut o]);
        o
    }

    /// One pass over the string for all offsets (sorted first).
    fn walk(self, text: &str, offsets: &mut [&mut usize], from_bytes: bool) -> Result<(), usize> {
        // over the ASCII prefix, bytes, UTF-16 units and characters coincide: those offsets stay
        let ascii = text.bytes().position(|b| !b.is_ascii()).unwrap_or(text.len());
        let mut order: Vec<usize> = (0..offsets.len()).filter(|&i| *offsets[i] > ascii).collect();
        if order.is_empty() {
            return Ok(());
        }
        order.sort_by_key(|&i| *offsets[i]);
        let mut results: Vec<usize> = offsets.iter().map(|o| **o).collect();
        let mut k = 0;
        let (mut b, mut u) = (ascii, ascii);
        for c in text[ascii..].chars() {
            if k == order.len() {
                break;
            }
            let (cb, cu) = (c.len_utf8(), self.units(c));
            while k < order.len() {
                let want = *offsets[order[k]];
                let (here, step) = if from_bytes { (b, cb) } else { (u, cu) };
                if want >= here + step {
                    break;
                }
                if want != here && !from_bytes {
                    return Err(want); // inside a character
                }
                results[order[k]] = if from_bytes { u } else { b };
                k += 1;
            }
            b += cb;
            u += cu;
        }
        while k < order.len() {
            let want = *offsets[order[k]];
            if !from_bytes && want > u {
                return Err(want);
            }
            results[order[k]] = if from_bytes { u } else { b };
            k += 1;
        }
        for (o, r) in offsets.iter_mut().zip(results) {
            **o = r;
        }
        Ok(())
    }
}

impl Chunk {
    /// Every offset into the text: turn boundaries and word offsets.
    fn offsets_mut(&mut self) -> Vec<&mut usize> {
        let mut offs: Vec<&mut usize> = Vec::new();
        for t in self.turns.iter_mut().flatten() {
            offs.push(&mut t.text_start);
            offs.push(&mut t.text_end);
        }
        for w in self.words.iter_mut().flatten() {
            if let Some(o) = w.offset.as_mut() {
                offs.push(o);
            }
        }
        offs
    }

    /// Express the chunk's offsets (UTF-8 bytes) in `enc`.
    pub fn encode_offsets(&mut self, enc: PositionEncoding) {
        let text = std::mem::take(&mut self.text);
        enc.encode(&text, &mut self.offsets_mut());
        self.text = text;
    }

    /// Read the chunk's offsets, given in `enc`, back as UTF-8 bytes.
    pub fn decode_offsets(&mut self, enc: PositionEncoding) -> Result<(), String> {
        let text = std::mem::take(&mut self.text);
        let r = enc.decode(&text, &mut self.offsets_mut());
        self.text = text;
        r.map_err(|bad| match enc {
            PositionEncoding::Utf16 => format!("offset {bad} is not a UTF-16 boundary of the text (past the end or inside a surrogate pair)"),
            PositionEncoding::Chars => format!("offset {bad} is past the end of the text ({} characters)", self.text.chars().count()),
            PositionEncoding::Utf8 => format!("offset {bad} is not a character boundary of the text"),
        })
    }
}

/// [`parse_chunks`] for chunks whose offsets are counted in `enc` (JSON written by a JavaScript
/// program from its strings: UTF-16). The offsets are converted to UTF-8 bytes, then every chunk
/// is validated.
pub fn parse_chunks_in(json: &str, enc: PositionEncoding) -> Result<Vec<Chunk>, InputError> {
    let mut chunks = read_chunks(json)?;
    if enc != PositionEncoding::Utf8 {
        for (i, c) in chunks.iter_mut().enumerate() {
            c.decode_offsets(enc).map_err(|message| InputError::InvalidChunk { index: i, id: c.id.clone(), message })?;
        }
    }
    validate_chunks(&chunks)?;
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    #[test]
    fn encodings_both_ways() {
        let t = "a😀é\u{301}b 🎉x";
        for enc in [Utf8, Utf16, Chars] {
            for (b, _) in t.char_indices().chain(std::iter::once((t.len(), ' '))) {
                let want = match enc {
                    Utf8 => b,
                    Utf16 => t[..b].encode_utf16().count(),
                    Chars => t[..b].chars().count(),
                };
                let (mut x, mut end) = (b, t.len());
                enc.encode(t, &mut [&mut x, &mut end]);
                assert_eq!(x, want, "{enc:?} {b}");
                assert_eq!(end, enc.encode_offset(t, t.len()));
                let mut back = x;
                enc.decode(t, &mut [&mut back]).unwrap();
                assert_eq!(back, b, "{enc:?}");
            }
        }
        // inside the surrogate pair of 😀 (units 1..3), inside its UTF-8 bytes, past the end
        assert_eq!(Utf16.decode(t, &mut [&mut 2]), Err(2));
        assert_eq!(Utf8.decode(t, &mut [&mut 2]), Err(2));
        assert_eq!(Utf16.decode(t, &mut [&mut 99]), Err(99));
        assert_eq!(Chars.decode(t, &mut [&mut 99]), Err(99));
        // bytes inside a character round down; unsorted input keeps its order
        assert_eq!(Utf16.encode_offset(t, 3), 1);
        let (mut a, mut b) = (t.len(), 0);
        Utf16.encode(t, &mut [&mut a, &mut b]);
        assert_eq!((a, b), (t.encode_utf16().count(), 0));
    }

    #[test]
    fn chunks_in_utf16() {
        let text = "Dana: 🎉 yes. Luis: ok.";
        let luis16 = text[..text.find("Luis").unwrap()].encode_utf16().count();
        let json = |s: usize| {
            format!(
                r#"[{{"id":"c","meeting_id":"m","meeting_title":"T","date":"2024-01-02","start":0,"end":9,"text":"{text}",
                "turns":[{{"speaker":"Dana","start":0,"end":1,"text_start":0,"text_end":{s}}},{{"speaker":"Luis","start":1,"end":2,"text_start":{s},"text_end":{}}}]}}]"#,
                text.encode_utf16().count()
            )
        };
        let c = &parse_chunks_in(&json(luis16), PositionEncoding::Utf16).unwrap()[0];
        let turns = c.turns.as_ref().unwrap();
        assert_eq!(&c.text[turns[1].text_start..turns[1].text_end], "Luis: ok.");
        // the same numbers read as UTF-8 bytes cut the turns in the wrong place
        let as_bytes = &parse_chunks(&json(luis16)).unwrap()[0];
        let t = &as_bytes.turns.as_ref().unwrap()[1];
        assert_ne!(&as_bytes.text[t.text_start..t.text_end], "Luis: ok.");
        // a UTF-16 offset inside the surrogate pair names the chunk
        let inside = text[..text.find('🎉').unwrap()].encode_utf16().count() + 1;
        let e = parse_chunks_in(&json(inside), PositionEncoding::Utf16).unwrap_err();
        assert_eq!(e.code(), "invalid_chunk");
        assert!(e.to_string().contains("surrogate"), "{e}");
        // and back: encode gives the JS offsets
        let mut c = c.clone();
        c.encode_offsets(PositionEncoding::Utf16);
        assert_eq!(c.turns.as_ref().unwrap()[1].text_start, luis16);
    }
}
