use std::process::Command;

fn cli(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_meetcite")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn verify_markdown_without_nli_and_errors() {
    let (code, out, _) = cli(&[
        "verify",
        "--order",
        "date",
        "--no-nli",
        "--chunks",
        "tests/fixtures/pricing_chunks.json",
        "--answer",
        "tests/fixtures/pricing_answer.json",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("Pricing review, 3 May, 10:09, Priya Raman"));
    assert!(out.contains("S9 is not a source"));
    let (code, _, err) = cli(&["verify", "--chunks", "tests/fixtures/nope.json", "--answer", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("nope.json"));
    let (code, _, err) = cli(&["context", "--chunks", "tests/fixtures/pricing_chunks.json", "--order", "sideways"]);
    assert_eq!(code, 2);
    assert!(err.contains("--order"));
    // invalid UTF-8 input is an error, not a panic
    let dir = std::env::temp_dir().join(format!("meetcite-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, b"[\xff\xfe]").unwrap();
    let (code, _, err) = cli(&["context", "--chunks", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not valid UTF-8"), "{err}");
}

#[test]
fn match_command_reports_character_offsets() {
    let dir = std::env::temp_dir().join(format!("meetcite-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.jsonl");
    std::fs::write(&input, "{\"id\":\"a\",\"text\":\"😀 é: we agreed on ten percent\",\"quote\":\"agreed on 10%\"}\n").unwrap();
    let (code, out, err) = cli(&["match", "--input", input.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["matched"], true);
    assert_eq!((v["start"].as_u64(), v["end"].as_u64()), (Some(8), Some(29)));
}

#[test]
fn score_command_gives_the_support_score_as_verify_would() {
    let dir = std::env::temp_dir().join(format!("meetcite-score-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.jsonl");
    let premise = "Priya Raman: We can't do ten percent on a hundred seats. The pilot discount is now five percent.\\nDana Okafor: Fine, five percent it is.";
    std::fs::write(
        &input,
        format!(
            "{{\"id\":1,\"premise\":\"{premise}\",\"hypothesis\":\"The pilot discount is five percent.\"}}\n\
             {{\"id\":2,\"premise\":\"{premise}\",\"hypothesis\":\"The pilot discount is five percent.\",\"quote\":\"The pilot discount is now five percent.\"}}\n\
             {{\"id\":3,\"premise\":\"{premise}\",\"hypothesis\":\"The pilot discount is five percent.\",\"quote\":\"we never said this\"}}\n"
        ),
    )
    .unwrap();
    let (code, out, err) = cli(&["score", "--input", input.to_str().unwrap(), "--features"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    for r in &rows[..2] {
        let s = r["support"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
        assert_eq!(r["supported"], true, "{r}");
        assert!(r["parts"].as_array().unwrap().len() > 3);
        assert_eq!(r["features"].as_object().unwrap().len(), meetcite::support::FEATURES.len());
    }
    // with a quote it is verify's verdict; a quote that is not there is not supported
    assert_eq!(rows[1]["status"], "supported");
    // the quote pair, and the context pair unless the config's quote-first cascade decided on the
    // quote pair alone; --both-pairs always scores both, with the same verdict here
    let p = rows[1]["pairs"].as_u64().unwrap();
    assert!(p == 1 || p == 2, "{}", rows[1]);
    let (code, both, err) = cli(&["score", "--input", input.to_str().unwrap(), "--both-pairs"]);
    assert_eq!(code, 0, "{err}");
    let both: serde_json::Value = serde_json::from_str(both.lines().nth(1).unwrap()).unwrap();
    assert_eq!((&both["pairs"], &both["status"]), (&serde_json::json!(2), &serde_json::json!("supported")), "{both}");
    assert_eq!(rows[2]["supported"], false);
    assert!(rows[2]["support"].is_null());
    assert_eq!(rows[2]["reasons"][0]["code"], "quote_not_found");
    // a quote of the wrong type names the field
    std::fs::write(&input, "{\"premise\":\"a b c\",\"hypothesis\":\"x y z\",\"quote\":5}\n").unwrap();
    let (code, _, err) = cli(&["score", "--input", input.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("quote"), "{err}");
}

#[test]
fn chunk_command_reads_a_transcript_and_its_chunks_verify() {
    // the meeting's metadata, the same for `chunk` and for `verify --transcript`
    let meta = [
        "--meeting-id",
        "pricing-0503",
        "--title",
        "Pricing review",
        "--date",
        "2024-05-03",
        "--recording-url",
        "https://recordings.example.com/pricing-0503.mp4",
    ];
    let (code, out, err) = cli(&[&["chunk", "--transcript", "tests/fixtures/transcripts/teams.vtt"][..], &meta].concat());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("read as vtt (auto)"), "{err}");
    let chunks = meetcite::parse_chunks(&out).expect("the output is chunk JSON meetcite reads");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].speakers, vec!["Priya Raman", "Luis Vega"]);
    // and it goes straight into verify: the quote's time is its cue's second
    let dir = std::env::temp_dir().join(format!("meetcite-chunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("chunks.json"), &out).unwrap();
    std::fs::write(
        dir.join("answer.json"),
        r#"{"claims":[{"text":"The pilot stays at three months.","source":"S1","quote":"And the pilot stays at three months."}]}"#,
    )
    .unwrap();
    let (code, out, err) = cli(&[
        "verify",
        "--no-nli",
        "--chunks",
        dir.join("chunks.json").to_str().unwrap(),
        "--answer",
        dir.join("answer.json").to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Pricing review, 3 May, 10:17, Luis Vega"), "{out}");
    assert!(out.contains("pricing-0503.mp4"), "{out}");
    // the same in one step: verify reads the transcript itself (same chunk options)
    let answer = dir.join("answer.json");
    let (code, direct, err) = cli(&[
        &["verify", "--no-nli", "--transcript", "tests/fixtures/transcripts/teams.vtt", "--transcript-format", "vtt"][..],
        &meta,
        &["--answer", answer.to_str().unwrap(), "--format", "markdown"],
    ]
    .concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(direct, out);
    let (code, ctx, _) = cli(&["context", "--transcript", "tests/fixtures/transcripts/zoom.vtt", "--meeting-id", "z", "--date", "2024-05-03"]);
    assert_eq!(code, 0);
    assert!(ctx.contains("[S1]"), "{ctx}");
    let (code, _, err) = cli(&["context", "--transcript", "tests/fixtures/transcripts/zoom.vtt", "--chunks", "x.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("not both"), "{err}");
    // a broken file: the code, the format and the line
    std::fs::write(dir.join("bad.vtt"), "WEBVTT\n\n00:00:01.000 --> 00:00:0x.000\nhello\n").unwrap();
    let (code, _, err) = cli(&["chunk", "--transcript", dir.join("bad.vtt").to_str().unwrap(), "--meeting-id", "m"]);
    assert_eq!(code, 2);
    assert!(err.contains("[transcript_cue]") && err.contains("line 3"), "{err}");
    let (code, _, err) = cli(&["chunk", "--transcript", "tests/fixtures/transcripts/zoom.vtt", "--format", "docx", "--meeting-id", "m"]);
    assert_eq!(code, 2);
    assert!(err.contains("[chunk_options]") && err.contains("docx"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `verify --answer - --format jsonl`: each verdict is printed while the answer is still arriving
/// (the test waits for three verdicts before it sends the rest), and the last line is the report
/// `verify --format json` gives on the whole file.
#[test]
fn verify_streams_verdicts_from_stdin_as_jsonl() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;
    let args = ["verify", "--order", "date", "--chunks", "tests/fixtures/pricing_chunks.json", "--answer"];
    let mut child = Command::new(env!("CARGO_BIN_EXE_meetcite"))
        .args(args)
        .args(["-", "--format", "jsonl"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            tx.send(line.unwrap()).unwrap();
        }
    });
    let answer = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pricing_answer.json")).unwrap();
    // up to the end of the third claim's object, cut inside a multi-byte-free line
    let third = answer.match_indices("  }").nth(2).unwrap().0 + 3;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&answer.as_bytes()[..third]).unwrap();
    stdin.flush().unwrap();
    let mut lines: Vec<serde_json::Value> = Vec::new();
    while lines.len() < 3 {
        let l = rx.recv_timeout(Duration::from_secs(120)).expect("three verdicts before the answer ends");
        lines.push(serde_json::from_str(&l).unwrap());
    }
    assert!(lines.iter().all(|v| v["type"] == "claim"));
    assert_eq!(lines.iter().map(|v| v["claim"]["index"].as_u64().unwrap()).collect::<Vec<_>>(), vec![0, 1, 2]);
    stdin.write_all(&answer.as_bytes()[third..]).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
    lines.extend(rx.try_iter().map(|l| serde_json::from_str(&l).unwrap()));
    let claims = lines.iter().filter(|v| v["type"] == "claim").count();
    assert_eq!(claims, 6);
    assert!(lines.iter().any(|v| v["type"] == "update"), "the superseded April decision is an update at the end");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "report");
    let (code, whole, err) = cli(&[&args[..], &["tests/fixtures/pricing_answer.json"]].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(last["report"], serde_json::from_str::<serde_json::Value>(&whole).unwrap());
    // the same from a file, and stdin that is not UTF-8 is an error
    let (code, out, _) = cli(&[&args[..], &["tests/fixtures/pricing_answer.json", "--format", "jsonl", "--no-nli"]].concat());
    assert_eq!(code, 0);
    assert_eq!(out.lines().filter(|l| l.contains("\"type\":\"claim\"")).count(), 6);
    let mut child = Command::new(env!("CARGO_BIN_EXE_meetcite"))
        .args(args)
        .args(["-", "--format", "jsonl", "--no-nli"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"{\"claims\": [\xff]}").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not valid UTF-8 (byte 12)"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `chunk` on Google Meet entries: `--recording-start` sets second zero, `--speakers` names the
/// participants; a bad `--speakers` is an error that shows the expected shape.
#[test]
fn chunk_command_google_meet_with_recording_start_and_speaker_names() {
    let base = [
        "chunk",
        "--transcript",
        "tests/fixtures/transcripts/google_meet.json",
        "--meeting-id",
        "m1",
        "--date",
        "2024-04-12",
        "--recording-start",
        "2024-04-12T13:59:30Z",
    ];
    let names = r#"{"Participant p-dana":"Dana Okafor","Participant p-luis":"Luis Vega"}"#;
    let (code, out, err) = cli(&[&base[..], &["--speakers", names]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("read as google-meet (auto)"), "{err}");
    let chunks = meetcite::parse_chunks(&out).unwrap();
    assert_eq!(chunks[0].start, 33.5);
    assert_eq!(chunks[0].speakers, vec!["Dana Okafor", "Luis Vega", "Participant p-priya"]);
    let (code, _, err) = cli(&[&base[..], &["--speakers", "Dana"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--speakers must be a JSON object"), "{err}");
}

#[test]
fn several_transcripts_are_several_meetings() {
    // a Teams VTT of the May review and a Zoom VTT, each with its own metadata, in one verify call
    let answer = std::env::temp_dir().join(format!("meetcite-multi-{}.json", std::process::id()));
    std::fs::write(
        &answer,
        r#"{"claims":[{"text":"The pilot stays at three months.","source":"S1","quote":"And the pilot stays at three months."},
                      {"text":"Someone spoke in the other meeting.","source":"S2","quote":"QUOTE2"}]}"#
            .replace("QUOTE2", &first_zoom_words()),
    )
    .unwrap();
    let two = [
        "--transcript",
        "tests/fixtures/transcripts/teams.vtt",
        "--meeting-id",
        "pricing-0503",
        "--date",
        "2024-05-03",
        "--title",
        "Pricing review",
        "--transcript",
        "tests/fixtures/transcripts/zoom.vtt",
        "--meeting-id",
        "standup-0510",
        "--date",
        "2024-05-10",
        "--title",
        "Standup",
    ];
    let (code, ctx, err) = cli(&[&["context", "--order", "date"][..], &two].concat());
    assert_eq!(code, 0, "{err}");
    assert!(ctx.contains("Pricing review") && ctx.contains("Standup"), "{ctx}");
    assert!(err.contains("teams.vtt: read as vtt") && err.contains("zoom.vtt: read as vtt"), "{err}");
    let (code, out, err) = cli(&[&["verify", "--no-nli", "--order", "date", "--answer", answer.to_str().unwrap()][..], &two].concat());
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let meetings: Vec<&str> = report["claims"].as_array().unwrap().iter().map(|c| c["meeting_id"].as_str().unwrap_or("-")).collect();
    assert_eq!(meetings, ["pricing-0503", "standup-0510"], "{out}");
    // per-meeting options must pair up with the files
    let (code, _, err) = cli(&[
        "context",
        "--transcript",
        "tests/fixtures/transcripts/teams.vtt",
        "--transcript",
        "tests/fixtures/transcripts/zoom.vtt",
        "--meeting-id",
        "m",
        "--date",
        "2024-05-03",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--meeting-id is given 1 time(s) for 2 --transcript files"), "{err}");
    // a shared chunk setting may be given once for all
    let (code, _, err) = cli(&[&["context", "--max-words", "50"][..], &two].concat());
    assert_eq!(code, 0, "{err}");
    let (code, _, err) =
        cli(&["chunk", "--transcript", "tests/fixtures/transcripts/teams.vtt", "--transcript", "tests/fixtures/transcripts/zoom.vtt", "--meeting-id", "m"]);
    assert_eq!(code, 2);
    assert!(err.contains("one --transcript"), "{err}");
    std::fs::remove_file(&answer).ok();
}

/// The first cue's words of the Zoom fixture, without its `Name:` label.
fn first_zoom_words() -> String {
    let vtt = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/transcripts/zoom.vtt")).unwrap();
    let cue = vtt.lines().skip_while(|l| !l.contains("-->")).nth(1).unwrap();
    cue.split_once(": ").map(|(_, t)| t).unwrap_or(cue).to_string()
}

/// `meetcite graph` on the shipped model gives the shipped file back (its graph compiled again,
/// deterministically), says how much the graph adds, and refuses a missing `--out`.
#[test]
fn graph_command_recompiles_the_shipped_models_graph() {
    let dir = std::env::temp_dir().join(format!("meetcite-cli-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("model.onnx");
    let (code, stdout, err) = cli(&["graph", "--model", "models", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let shipped = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/models/nli-minilm-l6-int8.onnx")).unwrap();
    assert!(std::fs::read(&out).unwrap() == shipped, "the shipped file is not what `meetcite graph` makes of it today");
    let graph = v["graph_bytes"].as_u64().unwrap();
    assert!((20_000..200_000).contains(&graph), "{stdout}");
    assert_eq!(v["bytes"].as_u64().unwrap(), shipped.len() as u64);
    let (code, _, err) = cli(&["graph", "--model", "models"]);
    assert_eq!(code, 2);
    assert!(err.contains("--out"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
