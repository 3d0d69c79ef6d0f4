//! Shared bits of the plain-harness benches: result rows (JSON lines appended to `$BENCH_OUT`,
//! default `target/bench/results/native.jsonl`) and timing helpers. Rows are what
//! `bench/report.py` groups into the single side-by-side table.
#![allow(dead_code)]
use std::io::Write;
use std::time::Instant;

pub fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

pub fn out_path() -> String {
    std::env::var("BENCH_OUT").unwrap_or_else(|_| format!("{}/target/bench/results/native.jsonl", root()))
}

/// Append one result row and echo it to stdout.
pub fn emit(section: &str, case: &str, imp: &str, metric: &str, value: f64, unit: &str, note: &str) {
    let mut row = serde_json::json!({"section": section, "case": case, "impl": imp, "metric": metric, "value": value, "unit": unit});
    if !note.is_empty() {
        row["note"] = note.into();
    }
    let path = out_path();
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).expect("create results dir");
    }
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("open results file");
    writeln!(f, "{row}").expect("write result");
    println!("{section:<8} {case:<28} {imp:<34} {metric:<12} {value:>12.3} {unit}");
}

/// Median wall time in seconds of `runs` calls after `warm` warm-up calls.
pub fn median_secs(warm: usize, runs: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warm {
        f();
    }
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

/// Peak resident set size of this process so far (Linux `VmHWM`), in bytes.
pub fn peak_rss() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

pub fn read_jsonl(path: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl row"))
        .collect()
}
