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
