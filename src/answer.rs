//! Stage 2: the answer parser. Tolerant of code fences and prose around the JSON, strict about
//! types; one malformed claim never loses the others.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Documented limits.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;
pub const MAX_CLAIMS: usize = 10_000;

/// Most `{source, quote}` pairs one claim may carry (its own plus `quotes`): each is aligned in
/// its source, so the bound keeps one claim's cost in line with a few claims'.
pub const MAX_QUOTES_PER_CLAIM: usize = 8;

/// A well-formed claim. `source` is the number `n` of `Sn`; `more_quotes` are the further
/// `{source, quote}` pairs of a claim drawn from several turns or meetings (the answer's
/// `"quotes"` array, less the pair in `source`/`quote`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Claim {
    pub index: usize,
    pub text: String,
    pub source: u32,
    pub quote: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_quotes: Vec<Cite>,
}

/// One more quote of a claim: the number `n` of `Sn` and the words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Cite {
    pub source: u32,
    pub quote: String,
}

/// A claim that could not be read; `index` is its position in `claims`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[error("claims[{index}].{field}: {problem}")]
pub struct ClaimError {
    pub index: usize,
    pub field: String,
    pub problem: String,
    /// The claim text, when it could be read.
    pub text: Option<String>,
    /// The raw source string, when it was a string.
    #[serde(rename = "source")]
    pub source_raw: Option<String>,
}

/// Defects of the answer as a whole.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    #[error("the answer contains no JSON object")]
    NoJson,
    #[error("the answer's JSON is malformed at line {line}, column {column}: {message}")]
    Malformed { line: usize, column: usize, message: String },
    #[error("the answer's JSON has no \"claims\" array{0}")]
    MissingClaims(String),
    #[error("\"claims\" must be an array, found {0}")]
    ClaimsNotArray(String),
    #[error("the answer is too large: {size} {what}, limit {limit}")]
    TooLarge { what: &'static str, size: usize, limit: usize },
}

impl AnswerError {
    pub fn code(&self) -> &'static str {
        match self {
            AnswerError::NoJson => "no_json",
            AnswerError::Malformed { .. } => "malformed_json",
            AnswerError::MissingClaims(_) => "missing_claims",
            AnswerError::ClaimsNotArray(_) => "claims_not_array",
            AnswerError::TooLarge { .. } => "too_large",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ParsedAnswer {
    pub claims: Vec<Claim>,
    pub errors: Vec<ClaimError>,
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Read `"S2"`, `"[S2]"`, `"s2"`, `" S2 "`; anything else is an error message.
pub fn parse_source(raw: &str) -> Result<u32, String> {
    let t = raw.trim();
    let t = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(t).trim();
    let digits = t.strip_prefix('S').or_else(|| t.strip_prefix('s')).ok_or_else(|| format!("{raw:?} is not a source label like \"S2\""))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 6 {
        return Err(format!("{raw:?} is not a source label like \"S2\""));
    }
    match digits.parse::<u32>() {
        Ok(0) | Err(_) => Err(format!("{raw:?}: sources are numbered from S1")),
        Ok(n) => Ok(n),
    }
}

/// Locate the JSON object in the text: inside a ```json fence if there is one, else the first
/// `{` that starts a complete JSON object; objects with a `"claims"` key first.
fn find_json(text: &str) -> Result<Value, AnswerError> {
    let mut candidates: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("```") {
        let after = &rest[p + 3..];
        // The info string (`json`) runs to the end of the line, but only when the line ends before
        // the next fence: searching the whole rest for a newline made many fences on one line
        // quadratic.
        let line = after.find("```").map_or(after, |e| &after[..e]);
        let body_start = line.find('\n').map(|n| n + 1).unwrap_or(0);
        let body = &after[body_start..];
        match body.find("```") {
            Some(e) => {
                candidates.push(&body[..e]);
                rest = &body[e + 3..];
            }
            None => {
                candidates.push(body);
                break;
            }
        }
    }
    candidates.push(text);
    // The first object with a "claims" key wins; failing that, the first object. An object
    // without one is skipped whole: `{}` in the prose before the answer, or a claim object that a
    // "fence" cut out of the answer when a quoted transcript contains ``` (a fuzzing find: the
    // whole answer was lost as `missing_claims`).
    let mut first_err: Option<AnswerError> = None;
    let mut first_obj: Option<Value> = None;
    for cand in candidates {
        let mut offset = 0;
        while let Some(p) = cand[offset..].find('{') {
            let start = offset + p;
            let mut it = serde_json::Deserializer::from_str(&cand[start..]).into_iter::<Value>();
            match it.next() {
                Some(Ok(v @ Value::Object(_))) => {
                    if v.get("claims").is_some() {
                        return Ok(v);
                    }
                    offset = start + it.byte_offset().max(1);
                    first_obj.get_or_insert(v);
                    continue;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) if first_err.is_none() => {
                    // line/column relative to the whole answer
                    let base = cand.as_ptr() as usize - text.as_ptr() as usize + start;
                    let before = &text[..base];
                    let line0 = before.matches('\n').count();
                    let col0 = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0);
                    let (line, column) = if e.line() <= 1 { (line0 + 1, col0 + e.column()) } else { (line0 + e.line(), e.column()) };
                    first_err = Some(AnswerError::Malformed { line, column, message: e.to_string() });
                }
                Some(Err(_)) => {}
                None => {}
            }
            offset = start + 1;
            if first_err.is_some() {
                break;
            }
        }
    }
    match first_obj {
        Some(v) => Ok(v),
        None => Err(first_err.unwrap_or(AnswerError::NoJson)),
    }
}

/// Parse an LLM answer.
pub fn parse_answer(text: &str) -> Result<ParsedAnswer, AnswerError> {
    if text.len() > MAX_ANSWER_BYTES {
        return Err(AnswerError::TooLarge { what: "bytes", size: text.len(), limit: MAX_ANSWER_BYTES });
    }
    // a broken surrogate pair in one claim must not lose the whole answer
    let text = crate::context::replace_lone_surrogate_escapes(text);
    let v = find_json(&text)?;
    let obj = v.as_object().expect("find_json returns objects");
    let claims = match obj.get("claims") {
        None => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).take(5).collect();
            return Err(AnswerError::MissingClaims(if keys.is_empty() { String::new() } else { format!(" (found keys: {})", keys.join(", ")) }));
        }
        Some(Value::Array(a)) => a,
        Some(other) => return Err(AnswerError::ClaimsNotArray(kind(other))),
    };
    if claims.len() > MAX_CLAIMS {
        return Err(AnswerError::TooLarge { what: "claims", size: claims.len(), limit: MAX_CLAIMS });
    }
    let mut out = ParsedAnswer { claims: Vec::new(), errors: Vec::new() };
    for (index, c) in claims.iter().enumerate() {
        match read_claim(index, c) {
            Ok(c) => out.claims.push(c),
            Err(e) => out.errors.push(e),
        }
    }
    Ok(out)
}

/// One element of the `claims` array, at position `index`: a claim, or what is wrong with it.
fn read_claim(index: usize, c: &Value) -> Result<Claim, ClaimError> {
    let err = |field: &str, problem: String, text: Option<String>, source: Option<String>| ClaimError {
        index,
        field: field.into(),
        problem,
        text,
        source_raw: source,
    };
    let Some(o) = c.as_object() else {
        return Err(err("", format!("expected an object, found {}", kind(c)), None, None));
    };
    let get_str = |field: &str| -> Result<String, String> {
        match o.get(field) {
            None => Err("missing".into()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!("expected a string, found {}", kind(other))),
        }
    };
    let text = get_str("text");
    let text_ok = text.as_ref().ok().cloned();
    let text = match text {
        Ok(t) if t.trim().is_empty() => return Err(err("text", "is empty".into(), None, get_str("source").ok())),
        Ok(t) => t,
        Err(p) => return Err(err("text", p, None, get_str("source").ok())),
    };
    // several quotes: `"quotes": [{"source", "quote"}, ..]`, beside or instead of the claim's own
    // `source`/`quote` (which, when absent, are the first of the list); `[]` is no further quote
    // (what a schema that lists every property as required makes an LLM write)
    let mut cites = match o.get("quotes") {
        None => Vec::new(),
        Some(Value::Array(a)) if a.len() > MAX_QUOTES_PER_CLAIM => {
            return Err(err("quotes", format!("has {} quotes, at most {MAX_QUOTES_PER_CLAIM} per claim", a.len()), text_ok, None))
        }
        Some(Value::Array(a)) => {
            let mut v = Vec::with_capacity(a.len());
            for (k, q) in a.iter().enumerate() {
                let Some(qo) = q.as_object() else {
                    return Err(err(&format!("quotes[{k}]"), format!("expected an object, found {}", kind(q)), text_ok, None));
                };
                let (src, quote) = read_pair(|f| qo.get(f)).map_err(|(f, p, raw)| err(&format!("quotes[{k}].{f}"), p, text_ok.clone(), raw))?;
                v.push(Cite { source: src, quote });
            }
            v
        }
        Some(other) => return Err(err("quotes", format!("expected an array, found {}", kind(other)), text_ok, None)),
    };
    let (source, quote) = if cites.is_empty() || o.contains_key("source") || o.contains_key("quote") {
        read_pair(|f| o.get(f)).map_err(|(f, p, raw)| err(f, p, text_ok.clone(), raw))?
    } else {
        let first = cites.remove(0);
        (first.source, first.quote)
    };
    // the pair repeated in the list is one quote, not two
    cites.retain(|c| !(c.source == source && c.quote == quote));
    if cites.len() >= MAX_QUOTES_PER_CLAIM {
        return Err(err("quotes", format!("has {} quotes besides the claim's own, at most {} in all", cites.len(), MAX_QUOTES_PER_CLAIM), text_ok, None));
    }
    Ok(Claim { index, text, source, quote, more_quotes: cites })
}

/// A `{source, quote}` pair read by `get`: the source number and the quote, or the field at
/// fault, the problem and the raw source string when it was one.
fn read_pair<'v>(get: impl Fn(&str) -> Option<&'v Value>) -> Result<(u32, String), (&'static str, String, Option<String>)> {
    let string = |field: &str| -> Result<String, String> {
        match get(field) {
            None => Err("missing".into()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!("expected a string, found {}", kind(other))),
        }
    };
    let raw = string("source");
    let src_ok = raw.as_ref().ok().cloned();
    let source = raw.and_then(|s| parse_source(&s)).map_err(|p| ("source", p, src_ok.clone()))?;
    match string("quote") {
        Ok(q) if q.trim().is_empty() => Err(("quote", "is empty".into(), src_ok)),
        Ok(q) => Ok((source, q)),
        Err(p) => Err(("quote", p, src_ok)),
    }
}

/// Finds the elements of the `"claims"` array in an answer that is still arriving, each as soon
/// as it is complete, in one pass over the text however it is split (each byte is looked at
/// once): a lenient JSON lexer that follows the first top-level object with a `"claims"` key,
/// skipping prose, code fences and objects without that key before it. Each element is then
/// read by the same rules as [`parse_answer`]'s, so for the usual answer (one JSON object, in a
/// fence or not) the claims it yields are the ones `parse_answer` reads from the whole text. It
/// decides nothing on its own: a stream's final report still comes from `parse_answer` over the
/// whole text (see `stream::StreamVerifier`), which also reports any defect this skips.
#[derive(Debug, Clone, Default)]
pub struct ClaimScanner {
    /// bytes of the text looked at so far
    pos: usize,
    /// open `{` / `[` of the object followed; empty: in prose
    stack: Vec<u8>,
    in_str: bool,
    escaped: bool,
    str_start: usize,
    /// in the followed object, the next string at its top level is a key
    expect_key: bool,
    /// the last key at the followed object's top level (raw, as written)
    key: Option<(usize, usize)>,
    /// inside the `"claims"` array, and where its current element starts
    in_claims: bool,
    element: Option<usize>,
    next_index: usize,
    /// the claims array closed, or the followed object turned out malformed: nothing more comes
    done: bool,
}

impl ClaimScanner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Look at what `text` gained since the last call (`text` is the whole answer so far and only
    /// grows) and return the elements of the claims array completed in it, in order.
    pub fn scan(&mut self, text: &str) -> Vec<Result<Claim, ClaimError>> {
        let mut out = Vec::new();
        let bytes = text.as_bytes();
        while self.pos < bytes.len() && !self.done {
            let i = self.pos;
            let b = bytes[i];
            self.pos += 1;
            if self.in_str {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_str = false;
                    if self.stack.len() == 1 && self.expect_key {
                        self.key = Some((self.str_start, i));
                        self.expect_key = false;
                    }
                }
                continue;
            }
            if self.stack.is_empty() {
                if b == b'{' {
                    self.stack.push(b);
                    self.expect_key = true;
                    self.key = None;
                }
                continue;
            }
            if self.in_claims && self.stack.len() == 2 && self.element.is_none() && !b.is_ascii_whitespace() && b != b',' && b != b']' {
                self.element = Some(i);
            }
            match b {
                b'"' => {
                    self.in_str = true;
                    self.str_start = i + 1;
                }
                b'[' if self.stack.len() == 1 && !self.expect_key && self.key.map(|(s, e)| &text[s..e]) == Some("claims") => {
                    self.stack.push(b);
                    self.in_claims = true;
                }
                b'{' | b'[' => self.stack.push(b),
                b'}' | b']' => {
                    let open = if b == b'}' { b'{' } else { b'[' };
                    if self.stack.last() != Some(&open) {
                        // not JSON after all: stop; the final parse says what is wrong
                        self.done = true;
                        break;
                    }
                    self.stack.pop();
                    if self.in_claims && self.stack.len() == 2 {
                        // an object (or array) element closed
                        if let Some(s) = self.element.take() {
                            self.emit(&text[s..=i], &mut out);
                        }
                    } else if self.in_claims && self.stack.len() == 1 {
                        // the claims array closed; a scalar element before `]` is complete
                        if let Some(s) = self.element.take() {
                            self.emit(&text[s..i], &mut out);
                        }
                        self.done = true;
                    } else if self.stack.is_empty() {
                        // an object without "claims" (an example in the prose): skipped whole
                        self.key = None;
                    }
                }
                b',' => {
                    if self.stack.len() == 1 {
                        self.expect_key = true;
                    } else if self.in_claims && self.stack.len() == 2 {
                        if let Some(s) = self.element.take() {
                            self.emit(&text[s..i], &mut out);
                        }
                    }
                }
                b':' if self.stack.len() == 1 => self.expect_key = false,
                _ => {}
            }
        }
        out
    }

    fn emit(&mut self, element: &str, out: &mut Vec<Result<Claim, ClaimError>>) {
        if self.next_index >= MAX_CLAIMS {
            self.done = true;
            return;
        }
        let element = crate::context::replace_lone_surrogate_escapes(element.trim_end());
        match serde_json::from_str::<Value>(&element) {
            Ok(v) => {
                out.push(read_claim(self.next_index, &v));
                self.next_index += 1;
            }
            // malformed JSON: the whole answer is (the final parse reports where)
            Err(_) => self.done = true,
        }
    }
}
