//! Transcripts in: WhisperX JSON, Teams and Zoom WebVTT, SRT -> chunks -> a verified answer whose
//! citation time is the quoted words' second.
use meetcite::transcript::{chunk_segments, detect, import, ChunkOptions, Format, Segment};
use meetcite::{build_context, verify, ContextOptions, Status, VerifyOptions};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/transcripts/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn opts(id: &str) -> ChunkOptions {
    ChunkOptions { meeting_id: id.into(), title: "Pricing sync".into(), date: "2024-04-12".into(), ..Default::default() }
}

#[test]
fn formats_are_detected() {
    assert_eq!(detect(&fixture("whisperx.json")).unwrap(), Format::WhisperX);
    assert_eq!(detect(&fixture("teams.vtt")).unwrap(), Format::Vtt);
    assert_eq!(detect(&fixture("zoom.vtt")).unwrap(), Format::Vtt);
    assert_eq!(detect(&fixture("plain.srt")).unwrap(), Format::Srt);
    assert_eq!(detect("[]").unwrap(), Format::Chunks);
    assert_eq!(detect(&fixture("openai.json")).unwrap(), Format::OpenAi);
    assert_eq!(detect(&fixture("assemblyai.json")).unwrap(), Format::AssemblyAi);
    assert_eq!(detect(&fixture("assemblyai_words.json")).unwrap(), Format::AssemblyAi);
    assert_eq!(detect(&fixture("deepgram.json")).unwrap(), Format::Deepgram);
    assert_eq!(detect(&fixture("deepgram_words.json")).unwrap(), Format::Deepgram);
    let e = detect("{\"results\": {}}").unwrap_err();
    assert_eq!(e.code(), "transcript_format");
    assert!(e.to_string().contains("results"), "{e}");
    assert_eq!(detect("hello there").unwrap_err().code(), "transcript_format");
}

#[test]
fn whisperx_words_without_times_are_kept_and_timed() {
    let segs = import(&fixture("whisperx.json"), Format::WhisperX).unwrap();
    assert_eq!(segs.len(), 3);
    let ten = segs[1].words.iter().find(|w| w.word == "10").expect("the unaligned digit is kept");
    // between "a" (ends 1808.7) and "percent" (starts 1809.4)
    assert_eq!((ten.start, ten.end), (1808.7, 1809.4));
    let chunks = chunk_segments(&segs, &opts("pricing-0412")).unwrap();
    assert_eq!(chunks.len(), 1);
    let c = &chunks[0];
    // one turn per speaker run: SPEAKER_00's two segments are one turn
    let turns = c.turns.as_ref().unwrap();
    assert_eq!(turns.iter().map(|t| t.speaker.as_str()).collect::<Vec<_>>(), vec!["SPEAKER_00", "SPEAKER_01"]);
    assert_eq!(&c.text[turns[1].text_start..turns[1].text_end], "Finance can live with that.");
    assert!(c.text.starts_with("SPEAKER_00: I talked to their procurement team. We should offer a 10 percent"));
    // every word is there with its offset into the chunk text
    let words = c.words.as_ref().unwrap();
    assert_eq!(words.len(), 21);
    for w in words {
        let o = w.offset.expect("offset found");
        assert_eq!(&c.text[o..o + w.word.len()], w.word);
    }
    assert_eq!((c.start, c.end), (1805.2, 1822.5));
    // stable ids: same input and options, same ids
    assert_eq!(c.id, "pricing-0412-1805200");
    assert_eq!(chunk_segments(&segs, &opts("pricing-0412")).unwrap(), chunks);
}

#[test]
fn teams_vtt_unclosed_voices_out_of_order_notes_and_settings() {
    let segs = import(&fixture("teams.vtt"), Format::Vtt).unwrap();
    let got: Vec<(&str, f64, &str)> = segs.iter().map(|s| (s.speaker.as_str(), s.start, s.text.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("Priya Raman", 609.0, "The pilot discount is now five percent."),
            ("Luis Vega", 617.0, "And the pilot stays at three months."),
            ("Luis Vega", 621.0, "Finance signed off & legal too."),
        ]
    );
    let zoom = import(&fixture("zoom.vtt"), Format::Vtt).unwrap();
    assert_eq!(zoom.iter().map(|s| s.speaker.as_str()).collect::<Vec<_>>(), vec!["Dana Okafor", "Luis Vega"]);
    assert_eq!(zoom[1].text, "I think ten percent is fine.");
    let srt = import(&fixture("plain.srt"), Format::Srt).unwrap();
    assert_eq!(srt.len(), 2);
    assert_eq!((srt[1].start, srt[1].end, srt[1].speaker.as_str()), (3.6, 6.0, ""));
}

#[test]
fn broken_files_name_the_place() {
    let e = import("WEBVTT\n\n00:00:01.000 --> 00:00:0x.000\nhello\n", Format::Vtt).unwrap_err();
    assert_eq!((e.code(), e.to_string().contains("line 3")), ("transcript_cue", true), "{e}");
    let e = import("WEBVTT\n\n00:00:05.000 --> 00:00:01.000\nhello\n", Format::Vtt).unwrap_err();
    assert!(e.to_string().contains("before it starts"), "{e}");
    let e = import("{\"segments\": [{\"start\": 1, \"end\": 2, \"text\": 5}]}", Format::WhisperX).unwrap_err();
    assert_eq!(e.code(), "transcript_json");
    assert!(e.to_string().contains("segments[0].text"), "{e}");
    assert_eq!(import("WEBVTT\n", Format::Vtt).unwrap_err().code(), "transcript_empty");
    assert_eq!(chunk_segments(&import(&fixture("zoom.vtt"), Format::Vtt).unwrap(), &ChunkOptions::default()).unwrap_err().code(), "chunk_options");
}

#[test]
fn budget_and_overlap() {
    let segs = import(&fixture("teams.vtt"), Format::Vtt).unwrap();
    // 7 + 7 + 6 words: a budget of 8 gives one turn per chunk (Luis's two cues would pass it)
    let small = ChunkOptions { max_words: 8, ..opts("m") };
    let c = chunk_segments(&segs, &small).unwrap();
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|c| c.text.split_whitespace().count() <= 8 + 2), "budget counts the words, the label is extra");
    // one turn of overlap: each chunk starts with the last turn of the one before
    let talk: Vec<Segment> = (0..4)
        .map(|i| Segment {
            speaker: ["Ana", "Ben"][i % 2].into(),
            start: 10.0 * i as f64,
            end: 10.0 * i as f64 + 9.0,
            text: format!("turn {i} has five words"),
            words: vec![],
        })
        .collect();
    let ov = chunk_segments(&talk, &ChunkOptions { max_words: 10, overlap_turns: 1, ..opts("m") }).unwrap();
    let starts: Vec<Vec<f64>> = ov.iter().map(|c| c.turns.as_ref().unwrap().iter().map(|t| t.start).collect()).collect();
    assert_eq!(starts, vec![vec![0.0, 10.0], vec![10.0, 20.0], vec![20.0, 30.0]]);
    // ids are unique and stable
    let ids: std::collections::HashSet<_> = ov.iter().map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), ov.len());
    // an overlap as large as a chunk still moves forward
    let big = chunk_segments(&talk, &ChunkOptions { max_words: 10, overlap_turns: 5, ..opts("m") }).unwrap();
    assert_eq!(big.len(), 3);
}

/// From a WhisperX file to a verified claim whose citation points at the quoted words' second.
#[test]
fn transcript_to_verified_citation() {
    let segs = import(&fixture("whisperx.json"), Format::WhisperX).unwrap();
    let chunks = chunk_segments(&segs, &ChunkOptions { recording_url: Some("https://rec.example.com/p.mp4".into()), ..opts("pricing-0412") }).unwrap();
    let ctx = build_context(&chunks, &ContextOptions::default());
    let answer = r#"{"claims":[{"text":"Finance can live with it.","source":"S1","quote":"Finance can live with that."}]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    let c = &r.claims[0];
    assert_eq!(c.status, Status::Supported, "{c:?}");
    assert_eq!(c.speaker.as_deref(), Some("SPEAKER_01"));
    // "Finance" starts at 1819.0 s: the word timing, not the chunk start (1805.2)
    assert_eq!(c.time, Some(1819.0));
    assert_eq!(c.link.as_ref().unwrap().seconds, 1819);
}

// The vendor files below are written by hand in the shapes the vendors document (AssemblyAI
// transcript with and without speaker labels, Deepgram /listen with and without utterances, OpenAI
// verbose_json with word timestamps); each carries the same pricing talk with known times.

/// Speakers, segment texts and the time of a word, for a vendor file.
fn read(name: &str, format: Format) -> Vec<Segment> {
    let segs = import(&fixture(name), format).unwrap();
    assert!(segs.windows(2).all(|w| w[0].start <= w[1].start), "in time order");
    segs
}

#[test]
fn assemblyai_utterances_in_milliseconds_become_seconds() {
    let segs = read("assemblyai.json", Format::AssemblyAi);
    let who: Vec<(&str, f64)> = segs.iter().map(|s| (s.speaker.as_str(), s.start)).collect();
    assert_eq!(who, vec![("Speaker A", 1805.2), ("Speaker B", 1812.4), ("Speaker C", 1819.0)]);
    assert_eq!(segs[2].text, "Finance can live with that.");
    assert_eq!(segs[2].words[0].word, "Finance");
    assert_eq!(segs[2].words[0].start, 1819.0);
    // without speaker labels: the words, one segment per sentence, no speaker
    let plain = read("assemblyai_words.json", Format::AssemblyAi);
    assert_eq!(plain.len(), 4, "{plain:?}");
    assert!(plain.iter().all(|s| s.speaker.is_empty()));
    assert_eq!(plain[1].text, "I think we should offer a ten percent discount for the pilot.");
    assert_eq!(plain.iter().map(|s| s.words.len()).sum::<usize>(), 36, "every word kept");
}

#[test]
fn deepgram_utterances_or_diarized_words() {
    let segs = read("deepgram.json", Format::Deepgram);
    let who: Vec<&str> = segs.iter().map(|s| s.speaker.as_str()).collect();
    assert_eq!(who, vec!["Speaker 0", "Speaker 1", "Speaker 2"]);
    assert_eq!(segs[0].text, "The pilot discount is now five percent.");
    // punctuated words, as the transcript shows them
    assert_eq!(segs[0].words.last().unwrap().word, "percent.");
    // no utterances: words grouped by speaker and sentence, same speakers and texts
    let words = read("deepgram_words.json", Format::Deepgram);
    assert_eq!(words.iter().map(|s| s.speaker.as_str()).collect::<Vec<_>>(), vec!["Speaker 0", "Speaker 1", "Speaker 1", "Speaker 2"]);
    assert_eq!(words[1].text, "Fine, five percent it is.");
    assert_eq!(words[3].text, segs[2].text);
    let chunks = chunk_segments(&words, &opts("pricing-0503")).unwrap();
    assert_eq!(chunks[0].turns.as_ref().unwrap().len(), 3, "Speaker 1's two sentences are one turn");
}

#[test]
fn openai_verbose_json_word_timings_go_to_their_segments() {
    let segs = read("openai.json", Format::OpenAi);
    assert_eq!(segs.len(), 3);
    assert!(segs.iter().all(|s| s.speaker.is_empty()));
    assert_eq!(segs.iter().map(|s| s.words.len()).collect::<Vec<_>>(), vec![18, 13, 5]);
    assert_eq!((segs[2].words[0].word.as_str(), segs[2].words[0].start), ("Finance", 1819.0));
}

#[test]
fn every_vendor_file_gives_a_citation_at_the_quoted_second() {
    for (name, quote, second) in [
        ("assemblyai.json", "Finance can live with that.", 1819),
        ("assemblyai_words.json", "Finance can live with that.", 1819),
        ("openai.json", "Finance can live with that.", 1819),
        ("deepgram.json", "And the pilot stays at three months.", 618),
        ("deepgram_words.json", "And the pilot stays at three months.", 618),
    ] {
        let chunked = meetcite::transcript::chunk_transcript(&fixture(name), None, &opts("m")).unwrap();
        let ctx = build_context(&chunked.chunks, &ContextOptions::default());
        let answer = format!(r#"{{"claims":[{{"text":"x","source":"S1","quote":"{quote}"}}]}}"#);
        let r = verify(&answer, &ctx.sources, &VerifyOptions::default()).unwrap();
        let c = &r.claims[0];
        assert_eq!(c.status, Status::Supported, "{name}: {c:?}");
        assert_eq!((c.time_source.as_deref(), c.link.as_ref().unwrap().seconds), (Some("words"), second), "{name}");
    }
}

#[test]
fn vendor_files_with_bad_times_name_the_place() {
    let e = import(r#"{"utterances":[{"speaker":"A","start":5000,"end":1000,"text":"hi","words":[]}]}"#, Format::AssemblyAi).unwrap_err();
    assert_eq!(e.code(), "transcript_json");
    assert!(e.to_string().contains("utterances[0]"), "{e}");
    let e = import(r#"{"results":{"channels":[{"alternatives":[{"words":[{"word":"hi","start":"x","end":1}]}]}]}}"#, Format::Deepgram).unwrap_err();
    assert!(e.to_string().contains("results.channels[0].alternatives[0].words[0].start"), "{e}");
    // chunk JSON passed through keeps the chunk reader's own code
    let e = meetcite::transcript::chunk_transcript("[{\"id\": 5}]", None, &opts("m")).unwrap_err();
    assert_eq!(e.code(), "invalid_json", "{e}");
}

/// Google Meet transcript entries: RFC 3339 wall-clock times (Z and +02:00 alike) become seconds
/// from the recording start (given, else the first entry), entries arrive out of order, resource
/// names of participants become `Participant <id>` unless `speakers` names them, and a quoted
/// sentence is cited at its entry's second.
#[test]
fn google_meet_entries_relative_to_the_recording_start() {
    let text = fixture("google_meet.json");
    assert_eq!(detect(&text).unwrap(), Format::GoogleMeet);
    let segs = import(&text, Format::GoogleMeet).unwrap();
    // relative to the first entry (14:00:03.5Z); the +02:00 entry is 14:00:21Z
    let got: Vec<(String, f64)> = segs.iter().map(|s| (s.speaker.clone(), s.start)).collect();
    assert_eq!(
        got,
        vec![("Participant p-dana".into(), 0.0), ("Participant p-dana".into(), 3.5), ("Participant p-luis".into(), 11.5), ("Participant p-priya".into(), 17.5)]
    );
    // relative to the recording start, names from the options
    let mut o = opts("m");
    o.recording_start = Some("2024-04-12T15:59:30+02:00".into()); // 13:59:30Z
    o.speakers = Some(
        [("Participant p-dana", "Dana Okafor"), ("Participant p-luis", "Luis Vega"), ("Participant p-priya", "Priya Raman")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    );
    let chunked = meetcite::transcript::chunk_transcript(&text, Some("google-meet"), &o).unwrap();
    assert_eq!(chunked.format, "google-meet");
    let c = &chunked.chunks[0];
    assert_eq!(c.speakers, vec!["Dana Okafor", "Luis Vega", "Priya Raman"]);
    assert_eq!(c.start, 33.5);
    assert!(c.text.starts_with("Dana Okafor: Okay, let's start with the Northwind pilot. I think we should offer"), "{}", c.text);
    let ctx = build_context(&chunked.chunks, &ContextOptions::default());
    let answer = r#"{"claims":[{"text":"Luis Vega said finance can live with it.","source":"S1","quote":"Finance can live with that"},
        {"text":"Priya Raman said they agreed on ten percent.","source":"S1","quote":"we agreed: ten percent for three months"}]}"#;
    let r = verify(answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!(r.claims.iter().map(|c| c.status).collect::<Vec<_>>(), vec![Status::Supported, Status::Supported]);
    assert_eq!((r.claims[0].link.as_ref().unwrap().seconds, r.claims[1].link.as_ref().unwrap().seconds), (45, 51));
    assert_eq!(r.claims[1].speaker.as_deref(), Some("Priya Raman"));
    // the array alone is read too
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let bare = serde_json::to_string(&v["transcriptEntries"]).unwrap();
    assert_eq!(detect(&bare).unwrap(), Format::GoogleMeet);
    assert_eq!(import(&bare, Format::GoogleMeet).unwrap(), segs);
    // errors name the place
    let e = import(&text.replace("2024-04-12T14:00:15.000Z", "yesterday"), Format::GoogleMeet).unwrap_err();
    assert_eq!(e.code(), "transcript_json");
    assert!(e.to_string().contains("transcriptEntries[1].startTime") && e.to_string().contains("RFC 3339"), "{e}");
    o.recording_start = Some("2024-04-12T14:00:10Z".into());
    let e = meetcite::transcript::chunk_transcript(&text, None, &o).unwrap_err();
    assert!(e.to_string().contains("transcriptEntries[0].startTime") && e.to_string().contains("before the recording start"), "{e}");
    o.recording_start = Some("noon".into());
    assert_eq!(meetcite::transcript::chunk_transcript(&text, None, &o).unwrap_err().code(), "chunk_options");
}

/// Chunks always carry a valid meeting date: the chunker refuses options without one, before any
/// chunk reaches a reader that would refuse it later.
#[test]
fn chunk_options_need_the_meeting_date() {
    let segs = import(&fixture("teams.vtt"), Format::Vtt).unwrap();
    for date in ["", "12/04/2024", "2024-13-01"] {
        let e = chunk_segments(&segs, &ChunkOptions { date: date.into(), ..opts("m") }).unwrap_err();
        assert_eq!(e.code(), "chunk_options");
        assert!(e.to_string().contains("YYYY-MM-DD"), "{e}");
    }
}

/// One speaker talking for minutes in one segment (a monologue the speech-to-text service did
/// not cut): the chunker splits it at sentence ends within the budget, keeps every word with its
/// time, and a quote from the third sentence is cited at its own second, not the segment's start.
#[test]
fn an_over_long_segment_is_split_at_sentence_ends_with_its_word_times() {
    use meetcite::Word;
    // 3 sentences of 40 words, 0.5 s a word, starting at 100 s; then one 130-word sentence
    let mut text = String::new();
    let mut words = Vec::new();
    let mut t = 100.0;
    for (s, n) in [(0, 40), (1, 40), (2, 40), (3, 130)] {
        for k in 0..n {
            let w = if k + 1 == n { format!("s{s}w{k}.") } else { format!("s{s}w{k}") };
            text.push_str(&w);
            text.push(' ');
            words.push(Word { word: w, start: t, end: t + 0.4, offset: None });
            t += 0.5;
        }
    }
    let seg = Segment { speaker: "Dana Okafor".into(), start: 100.0, end: t, text: text.trim().into(), words };
    let chunks = chunk_segments(std::slice::from_ref(&seg), &ChunkOptions { max_words: 100, ..opts("m") }).unwrap();
    // sentences 0-1 (80 words; the third would pass 100), sentence 2, then the 130-word sentence in 100 + 30
    let sizes: Vec<usize> = chunks.iter().map(|c| c.text.split_whitespace().count() - 2).collect();
    assert_eq!(sizes, vec![80, 40, 100, 30]);
    assert!(chunks.iter().all(|c| c.text.starts_with("Dana Okafor: ")));
    assert!(chunks[0].text.ends_with("s1w39."));
    assert_eq!(chunks[1].start, 140.0, "the third sentence starts at its first word's time");
    assert!(chunks.windows(2).all(|w| w[0].end <= w[1].start));
    // no word lost, each placed in its chunk's text
    let all: Vec<&Word> = chunks.iter().flat_map(|c| c.words.as_ref().unwrap()).collect();
    assert_eq!(all.len(), 250);
    for c in &chunks {
        for w in c.words.as_ref().unwrap() {
            let o = w.offset.expect("every word found in its chunk");
            assert_eq!(&c.text[o..o + w.word.len()], w.word);
        }
    }
    let ctx = build_context(&chunks, &ContextOptions::default());
    let label = &ctx.sources.iter().find(|s| s.chunk.id == chunks[1].id).unwrap().label;
    let answer = format!(r#"{{"claims":[{{"text":"x","source":"{label}","quote":"s2w10 s2w11 s2w12 s2w13"}}]}}"#);
    let r = verify(&answer, &ctx.sources, &VerifyOptions::default()).unwrap();
    assert_eq!((r.claims[0].status, r.claims[0].time), (Status::Supported, Some(145.0)));
    // without word timings the pieces get times in proportion to their place in the text
    let bare = Segment { words: vec![], ..seg };
    let chunks = chunk_segments(std::slice::from_ref(&bare), &ChunkOptions { max_words: 100, ..opts("m") }).unwrap();
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks[0].start, 100.0);
    assert!(chunks.windows(2).all(|w| w[0].end <= w[1].start + 1e-9 && w[0].start < w[1].start));
    assert!((chunks[3].end - t).abs() < 1e-9);
}

mod chunker_properties {
    use super::*;
    use meetcite::Word;
    use proptest::prelude::*;

    /// Segments in time order: a few speakers, 1-60 words each, each word timed.
    fn segments() -> impl Strategy<Value = Vec<Segment>> {
        prop::collection::vec((0usize..3, 1usize..60, any::<bool>(), 0.0f64..3.0), 1..25).prop_map(|specs| {
            let mut t = 0.0;
            let mut n = 0;
            specs
                .into_iter()
                .map(|(who, len, sentences, pause)| {
                    t += pause;
                    let start = t;
                    let mut words = Vec::new();
                    let mut text = Vec::new();
                    for k in 0..len {
                        // unique words, so a word's place in a chunk is unambiguous; some sentence ends
                        let w = if sentences && k % 7 == 6 { format!("w{n}.") } else { format!("w{n}") };
                        n += 1;
                        words.push(Word { word: w.clone(), start: t, end: t + 0.3, offset: None });
                        text.push(w);
                        t += 0.4;
                    }
                    Segment { speaker: ["Ana", "Ben", "Cy"][who].into(), start, end: t, text: text.join(" "), words }
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_word_once_sizes_within_budget_ids_stable_times_monotone(segs in segments(), max_words in 3usize..80, overlap in 0usize..3) {
            let o = ChunkOptions { max_words, overlap_turns: overlap, ..opts("m") };
            let chunks = chunk_segments(&segs, &o).unwrap();
            prop_assert_eq!(&chunks, &chunk_segments(&segs, &o).unwrap(), "same input and options, same chunks");
            let ids: std::collections::HashSet<_> = chunks.iter().map(|c| &c.id).collect();
            prop_assert_eq!(ids.len(), chunks.len(), "unique ids");
            let total: usize = segs.iter().map(|s| s.words.len()).sum();
            let mut seen = std::collections::HashMap::new();
            for c in &chunks {
                let turns = c.turns.as_ref().unwrap();
                // the words of the chunk's turns, labels excluded
                let words: usize = turns.iter().map(|t| c.text[t.text_start..t.text_end].split_whitespace().count()).sum();
                // a chunk over the budget holds one turn piece, and a piece is at most the budget
                prop_assert!(words <= max_words || turns.len() == 1, "{} words in {} turns", words, turns.len());
                prop_assert!(turns.iter().all(|t| c.text[t.text_start..t.text_end].split_whitespace().count() <= max_words));
                prop_assert!(c.start <= c.end && turns.windows(2).all(|w| w[0].start <= w[1].start));
                for w in c.words.as_ref().unwrap() {
                    let at = w.offset.expect("every word placed");
                    prop_assert_eq!(&c.text[at..at + w.word.len()], w.word.as_str());
                    *seen.entry(w.word.clone()).or_insert(0usize) += 1;
                }
            }
            prop_assert!(chunks.windows(2).all(|w| w[0].start < w[1].start), "chunks in time order");
            // every word is in a chunk; without overlap, in exactly one
            prop_assert_eq!(seen.len(), total);
            if overlap == 0 {
                prop_assert!(seen.values().all(|&n| n == 1));
            }
        }
    }
}

/// What an import repaired is said, never done silently: untimed WhisperX words, Teams cues out
/// of order, an over-long segment split; a clean file has no warnings.
#[test]
fn repairs_are_reported_as_warnings() {
    use meetcite::transcript::chunk_transcript;
    let codes = |name: &str, o: &ChunkOptions| -> Vec<(String, usize)> {
        chunk_transcript(&fixture(name), None, o).unwrap().warnings.into_iter().map(|w| (w.code, w.count)).collect()
    };
    let v: serde_json::Value = serde_json::from_str(&fixture("whisperx.json")).unwrap();
    let untimed = v["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["words"].as_array().unwrap())
        .filter(|w| w.get("start").is_none() || w.get("end").is_none())
        .count();
    assert!(untimed >= 1);
    let wx = codes("whisperx.json", &opts("m"));
    assert!(wx.contains(&("words_without_times".to_string(), untimed)), "{wx:?}");
    let teams = codes("teams.vtt", &opts("m"));
    assert!(teams.iter().any(|(c, _)| c == "out_of_order"), "{teams:?}");
    let split = codes("zoom.vtt", &ChunkOptions { max_words: 3, ..opts("m") });
    assert!(split.iter().any(|(c, _)| c == "segments_split"), "{split:?}");
    assert_eq!(codes("plain.srt", &opts("m")), vec![]);
    // and the CLI says them on stderr
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_meetcite"))
        .args(["chunk", "--transcript", "tests/fixtures/transcripts/teams.vtt", "--meeting-id", "m", "--date", "2024-05-03"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning [out_of_order]"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The documented size limit: a larger input is a `too_large` error before anything is parsed.
#[test]
fn transcripts_past_the_size_limit_are_refused() {
    use meetcite::transcript::{chunk_transcript, MAX_TRANSCRIPT_BYTES};
    let mut big = String::from("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n");
    big.push_str(&"x".repeat(MAX_TRANSCRIPT_BYTES));
    let e = chunk_transcript(&big, None, &opts("m")).unwrap_err();
    assert_eq!(e.code(), "too_large");
    assert!(e.to_string().contains(&MAX_TRANSCRIPT_BYTES.to_string()), "{e}");
    assert_eq!(import(&big, Format::Vtt).unwrap_err().code(), "too_large");
}
