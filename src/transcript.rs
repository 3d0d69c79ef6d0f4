//! Stage 0, transcripts in: speech-to-text output (WhisperX JSON, WebVTT in the Zoom and Teams
//! styles or without speakers, SRT, meetcite's own chunk JSON) -> timed segments -> speaker-turn
//! chunks with stable ids, turns and word timings, so a quote's span maps to the second.
//!
//! Times are seconds from the recording start. Every importer keeps every word: a WhisperX word
//! without times (digits often have none) gets them from its neighbours or its segment.

use crate::chunk::{Chunk, Turn, Word};
use serde::{Deserialize, Serialize};

/// One timed piece of speech: a WhisperX segment, a VTT/SRT cue.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// empty when the format carries no speaker
    pub speaker: String,
    pub start: f64,
    pub end: f64,
    pub text: String,
    /// word timings when the format has them (offsets are filled by the chunker)
    pub words: Vec<Word>,
}

/// The formats [`import`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    WhisperX,
    Vtt,
    Srt,
    /// meetcite's chunk JSON: passed through as it is
    Chunks,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::WhisperX => "whisperx",
            Format::Vtt => "vtt",
            Format::Srt => "srt",
            Format::Chunks => "chunks",
        }
    }

    pub fn from_name(s: &str) -> Option<Format> {
        Some(match s {
            "whisperx" => Format::WhisperX,
            "vtt" | "webvtt" => Format::Vtt,
            "srt" => Format::Srt,
            "chunks" => Format::Chunks,
            _ => return None,
        })
    }
}

/// A transcript that cannot be read. `code()` is stable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TranscriptError {
    #[error("not a transcript format meetcite reads (whisperx, vtt, srt, chunks): {hint}")]
    UnknownFormat { hint: String },
    #[error("{format} transcript, invalid at {path}: {message}")]
    Json { format: &'static str, path: String, message: String },
    #[error("{format} transcript, line {line}: {message}")]
    Cue { format: &'static str, line: usize, message: String },
    #[error("transcript has no speech (no segments or cues with text)")]
    Empty,
    #[error("chunk options: {0}")]
    Options(String),
}

impl TranscriptError {
    pub fn code(&self) -> &'static str {
        match self {
            TranscriptError::UnknownFormat { .. } => "transcript_format",
            TranscriptError::Json { .. } => "transcript_json",
            TranscriptError::Cue { .. } => "transcript_cue",
            TranscriptError::Empty => "transcript_empty",
            TranscriptError::Options(_) => "chunk_options",
        }
    }
}

/// Which format `text` is, from its first bytes (what `--format auto` does).
pub fn detect(text: &str) -> Result<Format, TranscriptError> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with("WEBVTT") {
        return Ok(Format::Vtt);
    }
    if t.starts_with('{') || t.starts_with('[') {
        let v: serde_json::Value = serde_json::from_str(t).map_err(|e| TranscriptError::Json {
            format: "json",
            path: format!("line {} column {}", e.line(), e.column()),
            message: e.to_string(),
        })?;
        if v.get("segments").is_some() || v.get("word_segments").is_some() {
            return Ok(Format::WhisperX);
        }
        if v.is_array() || v.get("chunks").is_some() {
            return Ok(Format::Chunks);
        }
        let keys: Vec<String> = v.as_object().map(|o| o.keys().take(6).cloned().collect()).unwrap_or_default();
        return Err(TranscriptError::UnknownFormat { hint: format!("JSON with keys {keys:?}; expected \"segments\" (WhisperX) or chunks") });
    }
    // SRT: a cue number, then a `-->` line with comma milliseconds
    let mut lines = t.lines().map(str::trim).filter(|l| !l.is_empty());
    if let (Some(a), Some(b)) = (lines.next(), lines.next()) {
        if a.chars().all(|c| c.is_ascii_digit()) && b.contains("-->") {
            return Ok(Format::Srt);
        }
    }
    let first: String = t.chars().take(40).collect();
    Err(TranscriptError::UnknownFormat { hint: format!("starts with {first:?}") })
}

/// Read a transcript into segments, in time order.
pub fn import(text: &str, format: Format) -> Result<Vec<Segment>, TranscriptError> {
    let segs = match format {
        Format::WhisperX => whisperx(text)?,
        Format::Vtt => cues(text, Format::Vtt)?,
        Format::Srt => cues(text, Format::Srt)?,
        Format::Chunks => return Err(TranscriptError::Options("chunk JSON is already chunked: read it with parse_chunks".into())),
    };
    if segs.iter().all(|s| s.text.trim().is_empty()) {
        return Err(TranscriptError::Empty);
    }
    Ok(segs)
}

// --- WhisperX ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct WxFile {
    #[serde(default)]
    segments: Vec<WxSegment>,
}

#[derive(Deserialize)]
struct WxSegment {
    start: f64,
    end: f64,
    text: String,
    #[serde(default)]
    speaker: Option<String>,
    #[serde(default)]
    words: Vec<WxWord>,
}

#[derive(Deserialize)]
struct WxWord {
    word: String,
    #[serde(default)]
    start: Option<f64>,
    #[serde(default)]
    end: Option<f64>,
    #[serde(default)]
    speaker: Option<String>,
}

fn whisperx(text: &str) -> Result<Vec<Segment>, TranscriptError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let f: WxFile = serde_path_to_error::deserialize(de).map_err(|e| TranscriptError::Json {
        format: "whisperx",
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })?;
    let mut out = Vec::with_capacity(f.segments.len());
    for (i, s) in f.segments.into_iter().enumerate() {
        if !(s.start.is_finite() && s.end.is_finite() && s.start >= 0.0 && s.end >= s.start) {
            return Err(TranscriptError::Json {
                format: "whisperx",
                path: format!("segments[{i}]"),
                message: format!("times {}..{} are not a span", s.start, s.end),
            });
        }
        let speaker = s.speaker.clone().or_else(|| s.words.iter().find_map(|w| w.speaker.clone())).unwrap_or_default();
        out.push(Segment { speaker, start: s.start, end: s.end, text: s.text.trim().to_string(), words: fill_word_times(&s.words, s.start, s.end) });
    }
    out.sort_by(|a, b| a.start.total_cmp(&b.start));
    Ok(out)
}

/// Words without times (WhisperX leaves digits unaligned) take the end of the previous timed word
/// (or the segment start) and the start of the next (or the segment end): never dropped.
fn fill_word_times(words: &[WxWord], seg_start: f64, seg_end: f64) -> Vec<Word> {
    let n = words.len();
    let mut out = Vec::with_capacity(n);
    for (i, w) in words.iter().enumerate() {
        let prev_end = words[..i].iter().rev().find_map(|p| p.end.or(p.start)).unwrap_or(seg_start);
        let next_start = words[i + 1..].iter().find_map(|p| p.start.or(p.end)).unwrap_or(seg_end);
        let start = w.start.filter(|x| x.is_finite()).unwrap_or(prev_end);
        let end = w.end.filter(|x| x.is_finite()).unwrap_or(next_start.max(start));
        out.push(Word { word: w.word.trim().to_string(), start, end: end.max(start), offset: None });
    }
    out
}

// --- WebVTT and SRT ------------------------------------------------------------------------------

/// `hh:mm:ss.mmm`, `mm:ss.mmm` (VTT) or `hh:mm:ss,mmm` (SRT) -> seconds.
fn timestamp(s: &str) -> Option<f64> {
    let s = s.trim().replace(',', ".");
    let parts: Vec<&str> = s.split(':').collect();
    let (h, m, sec) = match parts.as_slice() {
        [h, m, sec] => (h.parse::<f64>().ok()?, m.parse::<f64>().ok()?, sec.parse::<f64>().ok()?),
        [m, sec] => (0.0, m.parse::<f64>().ok()?, sec.parse::<f64>().ok()?),
        _ => return None,
    };
    let t = h * 3600.0 + m * 60.0 + sec;
    (t.is_finite() && t >= 0.0 && m < 60.0 && sec < 60.0).then_some(t)
}

fn cues(text: &str, format: Format) -> Result<Vec<Segment>, TranscriptError> {
    let fname = format.name();
    let lines: Vec<&str> = text.trim_start_matches('\u{feff}').lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    if format == Format::Vtt {
        if !lines.first().is_some_and(|l| l.trim_start().starts_with("WEBVTT")) {
            return Err(TranscriptError::Cue { format: fname, line: 1, message: "a WebVTT file starts with \"WEBVTT\"".into() });
        }
        i = 1;
    }
    while i < lines.len() {
        let line = lines[i].trim();
        // VTT blocks that are not cues
        if line.is_empty() || line.starts_with("NOTE") || line.starts_with("STYLE") || line.starts_with("REGION") {
            if !line.is_empty() {
                while i < lines.len() && !lines[i].trim().is_empty() {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        // optional cue identifier (SRT: the number; Teams: a GUID-like id) before the timing line
        let timing_at = if line.contains("-->") { i } else { i + 1 };
        let Some(timing) = lines.get(timing_at).map(|l| l.trim()) else {
            return Err(TranscriptError::Cue { format: fname, line: i + 1, message: format!("cue {line:?} has no timing line") });
        };
        let Some((a, b)) = timing.split_once("-->") else {
            return Err(TranscriptError::Cue { format: fname, line: timing_at + 1, message: format!("expected \"start --> end\", got {timing:?}") });
        };
        let b = b.split_whitespace().next().unwrap_or(""); // VTT cue settings follow the end time
        let (Some(start), Some(end)) = (timestamp(a), timestamp(b)) else {
            return Err(TranscriptError::Cue { format: fname, line: timing_at + 1, message: format!("bad timestamp in {timing:?}") });
        };
        if end < start {
            return Err(TranscriptError::Cue { format: fname, line: timing_at + 1, message: format!("cue ends ({end}) before it starts ({start})") });
        }
        let mut j = timing_at + 1;
        let mut payload = Vec::new();
        while j < lines.len() && !lines[j].trim().is_empty() {
            payload.push(lines[j].trim());
            j += 1;
        }
        let (speaker, text) = cue_text(&payload.join(" "));
        if !text.is_empty() {
            out.push(Segment { speaker, start, end, text, words: Vec::new() });
        }
        i = j;
    }
    // Teams can write cues out of order
    out.sort_by(|a, b| a.start.total_cmp(&b.start));
    Ok(out)
}

/// Speaker and plain text of a cue payload: Teams `<v Name>text</v>` (closing tag optional),
/// Zoom `Name: text`; other tags (`<c>`, `<b>`, timestamps) removed, entities decoded.
fn cue_text(payload: &str) -> (String, String) {
    let mut speaker = String::new();
    let mut text = String::new();
    let mut rest = payload;
    while let Some(lt) = rest.find('<') {
        text.push_str(&rest[..lt]);
        let Some(gt) = rest[lt..].find('>') else {
            text.push_str(&rest[lt..]);
            rest = "";
            break;
        };
        let tag = &rest[lt + 1..lt + gt];
        if let Some(name) = tag.strip_prefix("v ").or_else(|| tag.strip_prefix("v.").and_then(|t| t.split_once(' ').map(|x| x.1))) {
            if speaker.is_empty() {
                speaker = name.trim().to_string();
            }
        }
        rest = &rest[lt + gt + 1..];
    }
    text.push_str(rest);
    let text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&nbsp;", " ");
    let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if speaker.is_empty() {
        // Zoom: "Name: text" (a name of one to four words, no sentence punctuation)
        if let Some((name, said)) = text.split_once(": ") {
            let words = name.split_whitespace().count();
            if (1..=4).contains(&words) && !name.contains(['.', '?', '!', ',']) && name.chars().next().is_some_and(char::is_uppercase) {
                speaker = name.trim().to_string();
                text = said.trim().to_string();
            }
        }
    }
    (speaker, text)
}

// --- the chunker ---------------------------------------------------------------------------------

/// Meeting metadata and size budget for [`chunk_segments`] (JSON: snake_case, every field optional
/// but `meeting_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
#[serde(default)]
pub struct ChunkOptions {
    pub meeting_id: String,
    pub title: String,
    /// ISO `YYYY-MM-DD`
    pub date: String,
    pub recording_url: Option<String>,
    pub acl: Option<Vec<String>>,
    /// words per chunk (whole turns up to it; a longer turn is split between its segments)
    pub max_words: usize,
    /// turns repeated at the start of the next chunk
    pub overlap_turns: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        // ~200 words: about 260 tokens, one NLI premise at max_length 256 once the header and
        // claim are counted, and a retrieval unit of one or two minutes of talk
        ChunkOptions { meeting_id: String::new(), title: String::new(), date: String::new(), recording_url: None, acl: None, max_words: 200, overlap_turns: 0 }
    }
}

/// One speaker turn (consecutive segments of one speaker), possibly a piece of a long one.
struct TurnPiece {
    speaker: String,
    segs: Vec<Segment>,
    words: usize,
}

fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Segments -> chunks of whole speaker turns, `Speaker: text` lines, with turns and word timings.
/// Chunk ids are `{meeting_id}-{start in ms}`: the same transcript and options give the same ids.
pub fn chunk_segments(segs: &[Segment], opts: &ChunkOptions) -> Result<Vec<Chunk>, TranscriptError> {
    if opts.meeting_id.trim().is_empty() {
        return Err(TranscriptError::Options("meeting_id is required".into()));
    }
    if opts.max_words == 0 {
        return Err(TranscriptError::Options("max_words must be at least 1".into()));
    }
    // turns: consecutive segments of one speaker, cut where a turn would pass the budget
    let mut turns: Vec<TurnPiece> = Vec::new();
    for s in segs.iter().filter(|s| !s.text.trim().is_empty()) {
        let n = word_count(&s.text);
        match turns.last_mut() {
            Some(t) if t.speaker == s.speaker && t.words + n <= opts.max_words => {
                t.words += n;
                t.segs.push(s.clone());
            }
            _ => turns.push(TurnPiece { speaker: s.speaker.clone(), segs: vec![s.clone()], words: n }),
        }
    }
    if turns.is_empty() {
        return Err(TranscriptError::Empty);
    }
    // chunks: whole turns up to the budget, with `overlap_turns` turns carried over
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut lo = 0;
    while lo < turns.len() {
        let mut hi = lo;
        let mut words = 0;
        while hi < turns.len() && (hi == lo || words + turns[hi].words <= opts.max_words) {
            words += turns[hi].words;
            hi += 1;
        }
        groups.push(lo..hi);
        if hi >= turns.len() {
            break;
        }
        // never step back to where this chunk began (no endless loop on a large overlap)
        lo = hi.saturating_sub(opts.overlap_turns).max(lo + 1);
    }
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let mut text = String::new();
        let mut ct = Vec::new();
        let mut cw = Vec::new();
        let mut speakers: Vec<String> = Vec::new();
        for t in &turns[g.clone()] {
            if !text.is_empty() {
                text.push('\n');
            }
            if !t.speaker.is_empty() {
                text.push_str(&t.speaker);
                text.push_str(": ");
                if !speakers.contains(&t.speaker) {
                    speakers.push(t.speaker.clone());
                }
            }
            let text_start = text.len();
            for (k, s) in t.segs.iter().enumerate() {
                if k > 0 {
                    text.push(' ');
                }
                let seg_at = text.len();
                text.push_str(s.text.trim());
                // word offsets: each word found in order inside its segment's text
                let mut cursor = seg_at;
                for w in &s.words {
                    let offset = (!w.word.is_empty()).then(|| text[cursor..].find(w.word.as_str()).map(|p| cursor + p)).flatten();
                    if let Some(o) = offset {
                        cursor = o + w.word.len();
                    }
                    cw.push(Word { word: w.word.clone(), start: w.start, end: w.end, offset });
                }
            }
            let (start, end) = (t.segs[0].start, t.segs.iter().map(|s| s.end).fold(f64::MIN, f64::max));
            ct.push(Turn { speaker: t.speaker.clone(), start, end, text_start, text_end: text.len() });
        }
        let start = ct.first().map(|t| t.start).unwrap_or(0.0);
        let end = ct.iter().map(|t| t.end).fold(start, f64::max);
        out.push(Chunk {
            id: format!("{}-{}", opts.meeting_id, (start * 1000.0).round() as u64),
            meeting_id: opts.meeting_id.clone(),
            meeting_title: opts.title.clone(),
            date: opts.date.clone(),
            start,
            end,
            speakers,
            text,
            recording_url: opts.recording_url.clone(),
            turns: Some(ct),
            words: (!cw.is_empty()).then_some(cw),
            acl: opts.acl.clone(),
            score: None,
        });
    }
    Ok(out)
}

/// A transcript read and chunked: the format used and the chunks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Chunked {
    /// `whisperx`, `vtt`, `srt` or `chunks`
    pub format: String,
    pub chunks: Vec<Chunk>,
}

/// Read a transcript (`format`: a [`Format::name`], or `None`/`"auto"` to detect it) and chunk it;
/// chunk JSON passes through as it is. What the CLI's `chunk` and JS `chunkTranscript` call.
pub fn chunk_transcript(text: &str, format: Option<&str>, opts: &ChunkOptions) -> Result<Chunked, TranscriptError> {
    let format = match format.unwrap_or("auto") {
        "auto" => detect(text)?,
        name => Format::from_name(name).ok_or_else(|| TranscriptError::Options(format!("format {name:?}: one of auto, whisperx, vtt, srt, chunks")))?,
    };
    let chunks = if format == Format::Chunks {
        crate::chunk::parse_chunks(text).map_err(|e| TranscriptError::Json { format: "chunks", path: e.code().into(), message: e.to_string() })?
    } else {
        chunk_segments(&import(text, format)?, opts)?
    };
    Ok(Chunked { format: format.name().into(), chunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp("00:01:02.500"), Some(62.5));
        assert_eq!(timestamp("01:02.5"), Some(62.5));
        assert_eq!(timestamp("01:00:00,250"), Some(3600.25));
        assert_eq!(timestamp("1:75:00.0"), None);
        assert_eq!(timestamp("abc"), None);
    }

    #[test]
    fn cue_payloads() {
        assert_eq!(cue_text("<v Dana Okafor>Ten percent.</v>"), ("Dana Okafor".into(), "Ten percent.".into()));
        assert_eq!(cue_text("<v Dana Okafor>Ten percent, unclosed"), ("Dana Okafor".into(), "Ten percent, unclosed".into()));
        assert_eq!(cue_text("Luis Vega: Fine by me."), ("Luis Vega".into(), "Fine by me.".into()));
        assert_eq!(cue_text("<c.yellow>no</c> speaker &amp; tags"), (String::new(), "no speaker & tags".into()));
        // a sentence with a colon is not a speaker label
        assert_eq!(cue_text("the plan is this: ten percent").0, "");
    }
}
