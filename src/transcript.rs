//! Stage 0, transcripts in: speech-to-text output (WhisperX JSON, OpenAI `verbose_json` /
//! `diarized_json`, AssemblyAI and Deepgram JSON, Google Meet transcript entries, WebVTT in the
//! Zoom and Teams styles or without speakers, SRT, meetcite's own chunk JSON) -> timed segments -> speaker-turn
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
    /// OpenAI transcription `verbose_json` (segments, top-level word timings) or `diarized_json`
    /// (segments with speakers)
    OpenAi,
    /// AssemblyAI transcript JSON (`utterances` with speaker letters, or `words`); times in ms
    AssemblyAi,
    /// Deepgram `/listen` JSON (`results.utterances`, or the words of `results.channels`)
    Deepgram,
    /// Google Meet REST API transcript entries (`transcriptEntries[{participant, text, startTime,
    /// endTime}]`, or the array alone): RFC 3339 wall-clock times, made relative to
    /// [`ChunkOptions::recording_start`], else to the first entry
    GoogleMeet,
    Vtt,
    Srt,
    /// meetcite's chunk JSON: passed through as it is
    Chunks,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::WhisperX => "whisperx",
            Format::OpenAi => "openai",
            Format::AssemblyAi => "assemblyai",
            Format::Deepgram => "deepgram",
            Format::GoogleMeet => "google-meet",
            Format::Vtt => "vtt",
            Format::Srt => "srt",
            Format::Chunks => "chunks",
        }
    }

    pub fn from_name(s: &str) -> Option<Format> {
        Some(match s {
            "whisperx" => Format::WhisperX,
            "openai" => Format::OpenAi,
            "assemblyai" => Format::AssemblyAi,
            "deepgram" => Format::Deepgram,
            "google-meet" | "googlemeet" | "meet" => Format::GoogleMeet,
            "vtt" | "webvtt" => Format::Vtt,
            "srt" => Format::Srt,
            "chunks" => Format::Chunks,
            _ => return None,
        })
    }
}

/// Largest transcript read, in bytes: a 3-hour meeting as WhisperX JSON with word timings is about
/// 2 MB, so 64 MiB is some 90 hours of talk; past it the input is not a meeting transcript, and a
/// page would hold it several times over in memory while parsing.
pub const MAX_TRANSCRIPT_BYTES: usize = 64 * 1024 * 1024;

/// [`MAX_TRANSCRIPT_BYTES`]: checked before anything is parsed (`detect` parses JSON whole).
fn check_size(text: &str) -> Result<(), TranscriptError> {
    match text.len() {
        n if n > MAX_TRANSCRIPT_BYTES => Err(TranscriptError::TooLarge { size: n, limit: MAX_TRANSCRIPT_BYTES }),
        _ => Ok(()),
    }
}

/// A transcript that cannot be read. `code()` is stable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TranscriptError {
    #[error("not a transcript format meetcite reads (whisperx, openai, assemblyai, deepgram, google-meet, vtt, srt, chunks): {hint}")]
    UnknownFormat { hint: String },
    #[error("{format} transcript, invalid at {path}: {message}")]
    Json { format: &'static str, path: String, message: String },
    #[error("{format} transcript, line {line}: {message}")]
    Cue { format: &'static str, line: usize, message: String },
    #[error("transcript has no speech (no segments or cues with text)")]
    Empty,
    #[error("the transcript is too large: {size} bytes, limit {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("chunk options: {0}")]
    Options(String),
    /// chunk JSON passed through: the chunk reader's own error and code (`invalid_json`, ...)
    #[error(transparent)]
    Chunks(#[from] crate::chunk::InputError),
}

impl TranscriptError {
    pub fn code(&self) -> &'static str {
        match self {
            TranscriptError::UnknownFormat { .. } => "transcript_format",
            TranscriptError::Json { .. } => "transcript_json",
            TranscriptError::Cue { .. } => "transcript_cue",
            TranscriptError::Empty => "transcript_empty",
            TranscriptError::TooLarge { .. } => "too_large",
            TranscriptError::Options(_) => "chunk_options",
            TranscriptError::Chunks(e) => e.code(),
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
        if v.get("results").is_some_and(|r| r.get("channels").is_some() || r.get("utterances").is_some()) {
            return Ok(Format::Deepgram);
        }
        if v.get("utterances").is_some() || (v.get("words").is_some() && (v.get("audio_url").is_some() || v.get("audio_duration").is_some())) {
            return Ok(Format::AssemblyAi);
        }
        // OpenAI's verbose_json says what task it was; diarized_json segments have a "type"
        let openai_segment = v.get("segments").and_then(|s| s.get(0)).is_some_and(|s| s.get("type").is_some() || s.get("seek").is_some());
        if v.get("task").is_some() || openai_segment {
            return Ok(Format::OpenAi);
        }
        if v.get("segments").is_some() || v.get("word_segments").is_some() {
            return Ok(Format::WhisperX);
        }
        // Meet entries: a list response, or its array alone (each entry has participant and startTime)
        let meet_entry = |e: &serde_json::Value| e.get("startTime").is_some() && (e.get("participant").is_some() || e.get("text").is_some());
        if v.get("transcriptEntries").is_some() || v.as_array().and_then(|a| a.first()).is_some_and(meet_entry) {
            return Ok(Format::GoogleMeet);
        }
        if v.is_array() || v.get("chunks").is_some() {
            return Ok(Format::Chunks);
        }
        let keys: Vec<String> = v.as_object().map(|o| o.keys().take(6).cloned().collect()).unwrap_or_default();
        return Err(TranscriptError::UnknownFormat {
            hint: format!(
                "JSON with keys {keys:?}; expected \"segments\" (WhisperX, OpenAI), \"utterances\"/\"words\" (AssemblyAI), \"results\" (Deepgram), \"transcriptEntries\" (Google Meet) or chunks"
            ),
        });
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

/// Read a transcript into segments, in time order (Google Meet times relative to its first entry).
pub fn import(text: &str, format: Format) -> Result<Vec<Segment>, TranscriptError> {
    import_with(text, format, None)
}

/// [`import`], with the recording's start as an RFC 3339 time: Google Meet's wall-clock times
/// become seconds from it (other formats are already relative to the recording).
pub fn import_with(text: &str, format: Format, recording_start: Option<&str>) -> Result<Vec<Segment>, TranscriptError> {
    import_inner(text, format, recording_start, &mut Vec::new())
}

/// What an import or the chunker repaired, so nothing is changed silently: `code` is stable
/// (`words_without_times`, `out_of_order`, `empty_segments`, `segments_split`, `words_not_placed`),
/// `count` how many, `message` for people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Warning {
    pub code: String,
    pub count: usize,
    pub message: String,
}

fn warn(out: &mut Vec<Warning>, code: &str, count: usize, message: String) {
    if count > 0 {
        out.push(Warning { code: code.into(), count, message });
    }
}

fn import_inner(text: &str, format: Format, recording_start: Option<&str>, warnings: &mut Vec<Warning>) -> Result<Vec<Segment>, TranscriptError> {
    check_size(text)?;
    let mut segs = match format {
        Format::GoogleMeet => google_meet(text, recording_start)?,
        Format::WhisperX => whisperx(text, "whisperx", warnings)?,
        Format::OpenAi => whisperx(text, "openai", warnings)?,
        Format::AssemblyAi => assemblyai(text)?,
        Format::Deepgram => deepgram(text)?,
        Format::Vtt => cues(text, Format::Vtt)?,
        Format::Srt => cues(text, Format::Srt)?,
        Format::Chunks => return Err(TranscriptError::Options("chunk JSON is already chunked: read it with parse_chunks".into())),
    };
    if segs.iter().all(|s| s.text.trim().is_empty()) {
        return Err(TranscriptError::Empty);
    }
    // in time order (Teams cues, Meet entries and vendor lists can arrive out of order); a stable
    // sort keeps the file's order among equal starts
    let late = segs.windows(2).filter(|w| w[1].start < w[0].start).count();
    segs.sort_by(|a, b| a.start.total_cmp(&b.start));
    warn(warnings, "out_of_order", late, format!("{late} segments or cues started before the one above them; sorted by start time"));
    let empty = segs.iter().filter(|s| s.text.trim().is_empty()).count();
    warn(warnings, "empty_segments", empty, format!("{empty} segments or cues had no text and were left out"));
    Ok(segs)
}

// --- WhisperX ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct WxFile {
    #[serde(default)]
    segments: Vec<WxSegment>,
    /// OpenAI verbose_json: the word timings of the whole file, beside the segments
    #[serde(default)]
    words: Vec<WxWord>,
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

/// A JSON transcript into `T`, errors with the JSON path.
fn from_json<T: serde::de::DeserializeOwned>(text: &str, format: &'static str) -> Result<T, TranscriptError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| TranscriptError::Json { format, path: e.path().to_string(), message: e.inner().to_string() })
}

/// Start and end must be a span of non-negative seconds.
fn check_span(format: &'static str, path: impl FnOnce() -> String, start: f64, end: f64) -> Result<(), TranscriptError> {
    if start.is_finite() && end.is_finite() && start >= 0.0 && end >= start {
        Ok(())
    } else {
        Err(TranscriptError::Json { format, path: path(), message: format!("times {start}..{end} are not a span") })
    }
}

/// WhisperX, and OpenAI's verbose_json / diarized_json (the same segment shape; OpenAI's word
/// timings are a top-level list, handed to the segment they fall in).
fn whisperx(text: &str, format: &'static str, warnings: &mut Vec<Warning>) -> Result<Vec<Segment>, TranscriptError> {
    let mut f: WxFile = from_json(text, format)?;
    if !f.words.is_empty() && f.segments.iter().all(|s| s.words.is_empty()) {
        let mut words = std::mem::take(&mut f.words).into_iter().peekable();
        let starts: Vec<f64> = f.segments.iter().map(|s| s.start).collect();
        for (i, s) in f.segments.iter_mut().enumerate() {
            // a word belongs to the last segment that starts at or before its start
            let next_start = starts.get(i + 1).copied().unwrap_or(f64::INFINITY);
            while let Some(w) = words.next_if(|w| w.start.unwrap_or(s.start) < next_start) {
                s.words.push(w);
            }
        }
    }
    let untimed = f.segments.iter().flat_map(|s| &s.words).filter(|w| !w.start.is_some_and(f64::is_finite) || !w.end.is_some_and(f64::is_finite)).count();
    warn(warnings, "words_without_times", untimed, format!("{untimed} words had no times; they got their neighbours' (or their segment's)"));
    let mut out = Vec::with_capacity(f.segments.len());
    for (i, s) in f.segments.into_iter().enumerate() {
        check_span(format, || format!("segments[{i}]"), s.start, s.end)?;
        let speaker = s.speaker.clone().or_else(|| s.words.iter().find_map(|w| w.speaker.clone())).unwrap_or_default();
        out.push(Segment { speaker, start: s.start, end: s.end, text: s.text.trim().to_string(), words: fill_word_times(&s.words, s.start, s.end) });
    }
    Ok(out)
}

// --- AssemblyAI and Deepgram ----------------------------------------------------------------------

/// One word of a vendor's JSON, in seconds, with its speaker label (empty when none).
struct TimedWord {
    text: String,
    start: f64,
    end: f64,
    speaker: String,
}

impl TimedWord {
    fn word(&self) -> Word {
        Word { word: self.text.trim().to_string(), start: self.start, end: self.end, offset: None }
    }
}

/// Words without utterances -> one segment per sentence, a new one at each speaker change (the
/// chunker joins a speaker's sentences into turns and cuts long turns between them).
fn segments_from_words(words: Vec<TimedWord>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut open = false;
    for w in words {
        if w.text.trim().is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(s) if open && s.speaker == w.speaker => {
                s.text.push(' ');
                s.text.push_str(w.text.trim());
                s.end = s.end.max(w.end);
                s.words.push(w.word());
            }
            _ => out.push(Segment { speaker: w.speaker.clone(), start: w.start, end: w.end, text: w.text.trim().to_string(), words: vec![w.word()] }),
        }
        open = !w.text.trim_end_matches(['"', '\'', ')']).ends_with(['.', '?', '!']);
    }
    out
}

#[derive(Deserialize)]
struct AaiFile {
    #[serde(default)]
    utterances: Option<Vec<AaiUtterance>>,
    #[serde(default)]
    words: Option<Vec<AaiWord>>,
}

#[derive(Deserialize)]
struct AaiUtterance {
    start: f64,
    end: f64,
    text: String,
    #[serde(default)]
    speaker: Option<String>,
    #[serde(default)]
    words: Vec<AaiWord>,
}

#[derive(Deserialize)]
struct AaiWord {
    text: String,
    start: f64,
    end: f64,
    #[serde(default)]
    speaker: Option<String>,
}

/// AssemblyAI labels speakers "A", "B", ...: "Speaker A" reads as a name in the transcript.
fn aai_speaker(s: &Option<String>) -> String {
    match s.as_deref().map(str::trim) {
        Some(x) if x.len() <= 2 && !x.is_empty() => format!("Speaker {x}"),
        Some(x) => x.to_string(),
        None => String::new(),
    }
}

/// AssemblyAI: `utterances` (speaker diarization on) or else `words`; times in milliseconds.
fn assemblyai(text: &str) -> Result<Vec<Segment>, TranscriptError> {
    let f: AaiFile = from_json(text, "assemblyai")?;
    let ms = |x: f64| x / 1000.0;
    let words = |ws: &[AaiWord], path: &dyn Fn(usize) -> String| -> Result<Vec<TimedWord>, TranscriptError> {
        ws.iter()
            .enumerate()
            .map(|(k, w)| {
                check_span("assemblyai", || path(k), w.start, w.end)?;
                Ok(TimedWord { text: w.text.clone(), start: ms(w.start), end: ms(w.end), speaker: aai_speaker(&w.speaker) })
            })
            .collect()
    };
    let mut out = Vec::new();
    match f.utterances.filter(|u| !u.is_empty()) {
        Some(us) => {
            for (i, u) in us.iter().enumerate() {
                check_span("assemblyai", || format!("utterances[{i}]"), u.start, u.end)?;
                let ws = words(&u.words, &|k| format!("utterances[{i}].words[{k}]"))?;
                out.push(Segment {
                    speaker: aai_speaker(&u.speaker),
                    start: ms(u.start),
                    end: ms(u.end),
                    text: u.text.trim().to_string(),
                    words: ws.iter().map(TimedWord::word).collect(),
                });
            }
        }
        None => out = segments_from_words(words(f.words.as_deref().unwrap_or_default(), &|k| format!("words[{k}]"))?),
    }
    Ok(out)
}

#[derive(Deserialize)]
struct DgFile {
    results: DgResults,
}

#[derive(Deserialize)]
struct DgResults {
    #[serde(default)]
    utterances: Option<Vec<DgUtterance>>,
    #[serde(default)]
    channels: Vec<DgChannel>,
}

#[derive(Deserialize)]
struct DgChannel {
    #[serde(default)]
    alternatives: Vec<DgAlternative>,
}

#[derive(Deserialize)]
struct DgAlternative {
    #[serde(default)]
    words: Vec<DgWord>,
}

#[derive(Deserialize)]
struct DgUtterance {
    start: f64,
    end: f64,
    transcript: String,
    #[serde(default)]
    speaker: Option<u32>,
    #[serde(default)]
    channel: Option<u32>,
    #[serde(default)]
    words: Vec<DgWord>,
}

#[derive(Deserialize)]
struct DgWord {
    word: String,
    start: f64,
    end: f64,
    #[serde(default)]
    punctuated_word: Option<String>,
    #[serde(default)]
    speaker: Option<u32>,
}

/// Deepgram speakers are numbers from 0; a multichannel file without diarization has channels.
fn dg_speaker(speaker: Option<u32>, channel: Option<u32>, channels: usize) -> String {
    match (speaker, channel) {
        (Some(s), _) => format!("Speaker {s}"),
        (None, Some(c)) if channels > 1 => format!("Channel {c}"),
        _ => String::new(),
    }
}

/// Deepgram: `results.utterances` (utterances=true) or else the words of each channel's first
/// alternative (with smart_format/punctuate: `punctuated_word`); times in seconds.
fn deepgram(text: &str) -> Result<Vec<Segment>, TranscriptError> {
    let f: DgFile = from_json(text, "deepgram")?;
    let channels = f.results.channels.len();
    let word = |w: &DgWord, speaker: String, path: &dyn Fn() -> String| -> Result<TimedWord, TranscriptError> {
        check_span("deepgram", path, w.start, w.end)?;
        Ok(TimedWord { text: w.punctuated_word.clone().unwrap_or_else(|| w.word.clone()), start: w.start, end: w.end, speaker })
    };
    let mut out = Vec::new();
    match f.results.utterances.filter(|u| !u.is_empty()) {
        Some(us) => {
            for (i, u) in us.iter().enumerate() {
                check_span("deepgram", || format!("results.utterances[{i}]"), u.start, u.end)?;
                let speaker = dg_speaker(u.speaker, u.channel, channels);
                let mut words = Vec::with_capacity(u.words.len());
                for (k, w) in u.words.iter().enumerate() {
                    let tw = word(w, speaker.clone(), &|| format!("results.utterances[{i}].words[{k}]"))?;
                    words.push(tw.word());
                }
                out.push(Segment { speaker, start: u.start, end: u.end, text: u.transcript.trim().to_string(), words });
            }
        }
        None => {
            let mut words = Vec::new();
            for (c, ch) in f.results.channels.iter().enumerate() {
                let Some(alt) = ch.alternatives.first() else { continue };
                for (k, w) in alt.words.iter().enumerate() {
                    let speaker = dg_speaker(w.speaker, Some(c as u32), channels);
                    words.push(word(w, speaker, &|| format!("results.channels[{c}].alternatives[0].words[{k}]"))?);
                }
            }
            // channels interleave in time
            words.sort_by(|a, b| a.start.total_cmp(&b.start));
            out = segments_from_words(words);
        }
    }
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

// --- Google Meet ---------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MeetEntry {
    #[serde(default)]
    participant: String,
    #[serde(default)]
    text: String,
    start_time: String,
    end_time: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MeetFile {
    List {
        #[serde(rename = "transcriptEntries")]
        entries: Vec<MeetEntry>,
    },
    Entries(Vec<MeetEntry>),
}

/// Seconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time (`2024-04-12T14:30:05.25Z`,
/// `+02:00` offsets, `t` or a space as separator, any number of fraction digits). Written here
/// rather than taken from `time`/`jiff`/`chrono`: this one shape is all that is read, and the
/// wasm file stays small.
pub fn rfc3339_seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d, h, mi, se) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > days_in[(mo - 1) as usize] || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0.0;
    if b.get(i) == Some(&b'.') {
        let from = i + 1;
        i = from;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac = format!("0.{}", s.get(from..i).filter(|f| !f.is_empty())?).parse().ok()?;
    }
    let offset = match *b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if b.len() == i + 6 && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            if sign == b'+' {
                oh * 3600 + om * 60
            } else {
                -(oh * 3600 + om * 60)
            }
        }
        _ => return None,
    };
    // days from the civil date (H. Hinnant's algorithm)
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * ((mo + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + se - offset) as f64 + frac)
}

/// A participant's name as a speaker: a Meet resource name (`conferenceRecords/../participants/p1`)
/// becomes `Participant p1` (map it to a person with [`ChunkOptions::speakers`]).
fn meet_speaker(p: &str) -> String {
    match p.trim().rsplit_once("/participants/") {
        Some((_, id)) => format!("Participant {id}"),
        None => p.trim().to_string(),
    }
}

fn google_meet(text: &str, recording_start: Option<&str>) -> Result<Vec<Segment>, TranscriptError> {
    const F: &str = "google-meet";
    let (entries, at) = match from_json::<MeetFile>(text, F)? {
        MeetFile::List { entries } => (entries, "transcriptEntries"),
        MeetFile::Entries(entries) => (entries, ""),
    };
    let path = |i: usize, field: &str| format!("{at}[{i}].{field}");
    let mut times = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let t = |v: &str, field: &str| {
            rfc3339_seconds(v).ok_or_else(|| TranscriptError::Json { format: F, path: path(i, field), message: format!("{v:?} is not an RFC 3339 time") })
        };
        times.push((t(&e.start_time, "startTime")?, t(&e.end_time, "endTime")?));
    }
    let zero = match recording_start {
        Some(r) => rfc3339_seconds(r).ok_or_else(|| TranscriptError::Options(format!("recording_start {r:?} is not an RFC 3339 time")))?,
        None => times.iter().map(|t| t.0).fold(f64::INFINITY, f64::min),
    };
    let mut out = Vec::with_capacity(entries.len());
    for (i, (e, (s, t))) in entries.into_iter().zip(times).enumerate() {
        let (start, end) = (s - zero, t - zero);
        if start < 0.0 {
            return Err(TranscriptError::Json { format: F, path: path(i, "startTime"), message: format!("{} is before the recording start", e.start_time) });
        }
        check_span(F, || path(i, "endTime"), start, end)?;
        out.push(Segment { speaker: meet_speaker(&e.participant), start, end, text: e.text.trim().to_string(), words: Vec::new() });
    }
    Ok(out)
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
    /// words per chunk (whole turns up to it; a longer turn is split between its segments, and a
    /// longer segment at its sentence ends, each piece with its own word timings)
    pub max_words: usize,
    /// turns repeated at the start of the next chunk
    pub overlap_turns: usize,
    /// the recording's start, RFC 3339 (Google Meet's times are wall-clock): without it, times
    /// count from the first entry
    pub recording_start: Option<String>,
    /// speaker labels of the transcript -> names (`{"A": "Dana Okafor"}`, `{"Speaker 0": ..}`,
    /// `{"Participant p1": ..}`): names are what claims mention and what the speaker check compares
    pub speakers: Option<std::collections::BTreeMap<String, String>>,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        // ~200 words: about 260 tokens, one NLI premise at max_length 256 once the header and
        // claim are counted, and a retrieval unit of one or two minutes of talk
        ChunkOptions {
            meeting_id: String::new(),
            title: String::new(),
            date: String::new(),
            recording_url: None,
            acl: None,
            max_words: 200,
            overlap_turns: 0,
            recording_start: None,
            speakers: None,
        }
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

/// Where each word is in `text`: found in order, each after the one before (a word not found, or
/// empty, is `None` and moves nothing).
fn word_offsets(text: &str, words: &[Word]) -> Vec<Option<usize>> {
    let mut cursor = 0;
    words
        .iter()
        .map(|w| {
            let at = (!w.word.is_empty()).then(|| text[cursor..].find(w.word.as_str()).map(|p| cursor + p)).flatten();
            if let Some(o) = at {
                cursor = o + w.word.len();
            }
            at
        })
        .collect()
}

/// Byte ranges of `text`'s sentences (each ends after `.`, `?`, `!` or `…` followed by a space,
/// closing quotes and brackets included), covering the text.
fn sentence_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '?' | '!' | '…') {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if matches!(d, '"' | '\'' | ')' | ']' | '”' | '’' | '.' | '?' | '!') {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            if chars.peek().is_some_and(|&(_, d)| d.is_whitespace()) {
                out.push((from, end));
                from = end;
            }
        }
    }
    if from < text.len() {
        out.push((from, text.len()));
    }
    out
}

/// A segment longer than `max_words` -> pieces of whole sentences up to the budget (a longer
/// sentence: pieces of `max_words` words), each with its own words and times. A piece's times are
/// its words' (the words are found in order in the text, as the chunker places them); a piece
/// without timed words gets times in proportion to its place in the text. No word is dropped.
fn split_long(s: &Segment, max_words: usize) -> Vec<Segment> {
    let text = s.text.trim();
    if word_count(text) <= max_words {
        return vec![s.clone()];
    }
    // cut points: sentence ends, and inside an over-long sentence every `max_words` words
    let mut units: Vec<(usize, usize)> = Vec::new();
    for (a, b) in sentence_ranges(text) {
        let words: Vec<(usize, usize)> = text[a..b]
            .split_whitespace()
            .map(|w| {
                let off = w.as_ptr() as usize - text.as_ptr() as usize;
                (off, off + w.len())
            })
            .collect();
        for part in words.chunks(max_words) {
            units.push((part[0].0, part[part.len() - 1].1));
        }
    }
    // pack whole units up to the budget
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut n = 0;
    for (a, b) in units {
        let k = word_count(&text[a..b]);
        match pieces.last_mut() {
            Some(p) if n + k <= max_words => {
                p.1 = b;
                n += k;
            }
            _ => {
                pieces.push((a, b));
                n = k;
            }
        }
    }
    // each word to the piece its text is in (a word not found stays with the one before it)
    let mut last = 0;
    let owner: Vec<usize> = word_offsets(text, &s.words)
        .into_iter()
        .map(|at| {
            if let Some(at) = at {
                last = pieces.iter().rposition(|&(a, _)| a <= at).unwrap_or(0);
            }
            last
        })
        .collect();
    let dur = s.end - s.start;
    let len = text.len().max(1) as f64;
    pieces
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| {
            let words: Vec<Word> = s.words.iter().zip(&owner).filter(|(_, &o)| o == k).map(|(w, _)| w.clone()).collect();
            let (start, end) = match (words.first(), words.last()) {
                (Some(f), Some(l)) => (f.start, l.end.max(f.start)),
                _ => (s.start + dur * a as f64 / len, s.start + dur * b as f64 / len),
            };
            Segment { speaker: s.speaker.clone(), start, end, text: text[a..b].trim().to_string(), words }
        })
        .collect()
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
    // every chunk carries the meeting's date (deep links, the history check): without one the
    // chunks would be refused later, by whoever reads them
    if !crate::chunk::valid_date(&opts.date) {
        return Err(TranscriptError::Options(format!("date must be the meeting's date as YYYY-MM-DD, got {:?}", opts.date)));
    }
    // turns: consecutive segments of one speaker, cut where a turn would pass the budget
    let mut turns: Vec<TurnPiece> = Vec::new();
    let pieces: Vec<Segment> = segs.iter().filter(|s| !s.text.trim().is_empty()).flat_map(|s| split_long(s, opts.max_words)).collect();
    for s in &pieces {
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
                for (w, at) in s.words.iter().zip(word_offsets(&text[seg_at..], &s.words)) {
                    cw.push(Word { word: w.word.clone(), start: w.start, end: w.end, offset: at.map(|o| seg_at + o) });
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
    /// `whisperx`, `openai`, `assemblyai`, `deepgram`, `google-meet`, `vtt`, `srt` or `chunks`
    pub format: String,
    pub chunks: Vec<Chunk>,
    /// what was repaired on the way (empty when nothing was)
    pub warnings: Vec<Warning>,
}

/// Read a transcript (`format`: a [`Format::name`], or `None`/`"auto"` to detect it) and chunk it;
/// chunk JSON passes through as it is. What the CLI's `chunk` and JS `chunkTranscript` call.
pub fn chunk_transcript(text: &str, format: Option<&str>, opts: &ChunkOptions) -> Result<Chunked, TranscriptError> {
    check_size(text)?;
    let format = match format.unwrap_or("auto") {
        "auto" => detect(text)?,
        name => Format::from_name(name).ok_or_else(|| {
            TranscriptError::Options(format!("format {name:?}: one of auto, whisperx, openai, assemblyai, deepgram, google-meet, vtt, srt, chunks"))
        })?,
    };
    let mut warnings = Vec::new();
    let chunks = if format == Format::Chunks {
        crate::chunk::parse_chunks(text)?
    } else {
        let mut segs = import_inner(text, format, opts.recording_start.as_deref(), &mut warnings)?;
        if let Some(names) = &opts.speakers {
            for s in &mut segs {
                if let Some(n) = names.get(&s.speaker) {
                    s.speaker = n.clone();
                }
            }
        }
        let long = segs.iter().filter(|s| word_count(&s.text) > opts.max_words).count();
        warn(&mut warnings, "segments_split", long, format!("{long} segments were longer than {} words and were split at sentence ends", opts.max_words));
        let chunks = chunk_segments(&segs, opts)?;
        let lost = chunks.iter().flat_map(|c| c.words.iter().flatten()).filter(|w| w.offset.is_none()).count();
        warn(&mut warnings, "words_not_placed", lost, format!("{lost} word timings did not match the text; they are kept without an offset"));
        chunks
    };
    Ok(Chunked { format: format.name().into(), chunks, warnings })
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
    fn sentences() {
        let t = "Is it 3.5 percent? Yes. \"Fine.\" (Really!) Done";
        let got: Vec<&str> = sentence_ranges(t).into_iter().map(|(a, b)| &t[a..b]).collect();
        assert_eq!(got, vec!["Is it 3.5 percent?", " Yes.", " \"Fine.\"", " (Really!)", " Done"]);
        assert_eq!(sentence_ranges("no end"), vec![(0, 6)]);
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        // 2024-04-12T14:30:05Z = 1712932205 (date -d ... +%s)
        assert_eq!(rfc3339_seconds("2024-04-12T14:30:05Z"), Some(1_712_932_205.0));
        assert_eq!(rfc3339_seconds("2024-04-12T16:30:05.25+02:00"), Some(1_712_932_205.25));
        assert_eq!(rfc3339_seconds("2024-04-12t09:30:05.250000000-05:00"), Some(1_712_932_205.25));
        assert_eq!(rfc3339_seconds("2024-02-29 00:00:00z"), Some(1_709_164_800.0));
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-04-12T14:30:05",
            "2024-04-12T24:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-04-12T14:30:05.Z",
            "12/04/2024 14:30",
            "2024-04-12T14:30:05+2:00",
            "",
        ] {
            assert_eq!(rfc3339_seconds(bad), None, "{bad}");
        }
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
