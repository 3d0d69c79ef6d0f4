//! Import + chunk of a 3-hour meeting (about 30k words, 4 speakers) natively: WhisperX JSON with
//! word timings and a Teams-style WebVTT, beside the floor of parsing the same JSON into a
//! `serde_json::Value`. Writes the two files to target/bench/ so `bench/peers.py transcript` reads
//! the same bytes (webvtt-py and a json.load + grouping loop, what a user would write instead).
//! `cargo bench --bench transcript`
mod common;
use common::*;
use meetcite::transcript::{chunk_transcript, ChunkOptions};
use std::hint::black_box;

/// A deterministic 3-hour meeting: 1,800 segments of 8-25 words, speakers taking turns unevenly.
fn meeting() -> (String, String) {
    let vocab = [
        "we", "agreed", "on", "the", "pilot", "discount", "ten", "percent", "for", "three", "months", "and", "then", "review", "it", "in", "May", "finance",
        "can", "live", "with", "that", "I", "think", "so",
    ];
    let speakers = ["Dana Okafor", "Luis Vega", "Priya Raman", "Sam Lee"];
    let mut seed: u64 = 0x2545F4914F6CDD1D;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut segments, mut cues) = (Vec::new(), String::from("WEBVTT\n\n"));
    let mut t = 0.0f64;
    let mut who = 0usize;
    for i in 0..1800 {
        if rnd(3) == 0 {
            who = (who + 1 + rnd(3) as usize) % 4;
        }
        let n = 8 + rnd(18) as usize;
        let start = t;
        let mut words = Vec::new();
        let mut text = Vec::new();
        for k in 0..n {
            let w = if k + 1 == n { format!("{}.", vocab[rnd(25) as usize]) } else { vocab[rnd(25) as usize].to_string() };
            words.push(serde_json::json!({"word": w, "start": (t * 1000.0).round() / 1000.0, "end": ((t + 0.25) * 1000.0).round() / 1000.0, "score": 0.9}));
            text.push(w);
            t += 0.3;
        }
        let text = text.join(" ");
        let ts = |s: f64| format!("{:02}:{:02}:{:06.3}", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64, s % 60.0);
        cues.push_str(&format!("{i:08x}-0000-4000-8000-000000000000/{i}\n{} --> {}\n<v {}>{text}</v>\n\n", ts(start), ts(t), speakers[who]));
        segments.push(serde_json::json!({"start": start, "end": t, "text": text, "speaker": format!("SPEAKER_{who:02}"), "words": words}));
        t += 0.7;
    }
    (serde_json::json!({ "segments": segments }).to_string(), cues)
}

fn main() {
    let (json, vtt) = meeting();
    let dir = format!("{}/target/bench", root());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(format!("{dir}/transcript_3h.json"), &json).unwrap();
    std::fs::write(format!("{dir}/transcript_3h.vtt"), &vtt).unwrap();
    let words = json.matches("\"word\"").count();
    let opts = ChunkOptions { meeting_id: "m".into(), date: "2024-04-12".into(), ..Default::default() };
    for (case, text, format) in [("whisperx 3h", &json, "whisperx"), ("vtt 3h", &vtt, "vtt")] {
        let mut chunks = 0;
        let s = median_secs(2, 10, || {
            chunks = black_box(chunk_transcript(black_box(text), Some(format), &opts).unwrap()).chunks.len();
        });
        let note = format!("{words} words, {} KB, {chunks} chunks of <= 200 words", text.len() / 1000);
        emit("transcript", &format!("import + chunk {case}"), "meetcite native", "ms", s * 1e3, "ms", &note);
        let s = median_secs(2, 10, || {
            black_box(chunk_transcript(black_box(text), None, &opts).unwrap());
        });
        let how = if format == "vtt" { "detect reads the first line" } else { "detect parses the JSON once more" };
        emit("transcript", &format!("import + chunk {case}"), "meetcite native, format auto", "ms", s * 1e3, "ms", how);
    }
    let s = median_secs(2, 10, || {
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&json)).unwrap());
    });
    emit("transcript", "import + chunk whisperx 3h", "serde_json::Value parse only (floor)", "ms", s * 1e3, "ms", "the JSON alone, nothing imported");
}
