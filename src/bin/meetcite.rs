//! `meetcite` command line: context, verify, match, score. Errors go to stderr, exit code 2.

use meetcite::chunk::PositionEncoding;
use meetcite::context::{from_json, Context, ContextOptions, Order, Source};
use meetcite::nli::{NliConfig, NliModel};
use meetcite::quote::{match_quote, MatchOptions};
use meetcite::support::FEATURES;
use meetcite::verify::{score_premise, Entail, Policy, VerifyOptions};
use meetcite::{build_context, parse_chunks, render_html, render_markdown, RenderOptions};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage:
  meetcite context (--chunks FILE | --transcript FILE [chunk options, --transcript-format F])
                   [--order relevance|date] [--viewer ID] [--max-tokens N] [--question TEXT]
                   --transcript repeats: one file per meeting, each meeting option (--meeting-id,
                   --title, --date, --recording-url, --recording-start, --speakers) once per file
  meetcite verify  (--chunks FILE | --transcript FILE [chunk options, --transcript-format F] | --context FILE)
                   [--order ..] [--viewer ..] [--max-tokens ..] --answer FILE|-
                   [--policy drop|warn|feedback] [--format json|jsonl|markdown|html] [--no-nli] [--model DIR]
                   [--premise-tokens N] [--both-pairs]   --answer - reads stdin; --format jsonl prints
                   each claim's verdict as soon as its JSON object has arrived, then {\"type\":\"report\",..}
                   --both-pairs: score both NLI pairs of every quoted claim (no quote-first cascade)
  meetcite chunk   --transcript FILE --meeting-id ID [--format auto|whisperx|openai|assemblyai|deepgram|google-meet|vtt|srt|chunks]
                   [--title T] [--date YYYY-MM-DD] [--recording-url URL] [--max-words N]
                   [--overlap-turns K] [--recording-start RFC3339] [--speakers '{\"A\":\"Dana Okafor\"}']
                   speech-to-text output -> chunk JSON (stdout)
  meetcite match   --input FILE.jsonl            lines {id,text,quote} -> {id,matched,score,start,end}
  meetcite score   --input FILE.jsonl [--model DIR] [--features] [--premise-tokens N] [--both-pairs] [--pair]
                   lines {id,premise,hypothesis[,quote]} -> {id,support,supported,parts,entailment,..}
                   (as verify judges a claim citing the premise; without a quote, the premise's
                   best-covering windows are scored). --pair: only the model's probabilities for
                   exactly that pair (no cleaning, no windows; for parity checks)
  meetcite graph   [--model DIR] --out FILE.onnx
                   the model file with its graph precompiled into it (tract's NNEF form, in the
                   ONNX metadata; weights untouched): loads skip building the graph. Checked:
                   the new file must load from that graph and score as the old one does
  MEETCITE_RUNTIME=tract runs the model on tract (default auto: meetcite's int8 encoder for the
                   weight-only int8 BERT files it recognises, the shipped one included)";

struct Args {
    cmd: String,
    /// the last value of each `--key`
    opts: HashMap<String, String>,
    /// every value of each `--key`, in order (`--transcript` and its per-meeting options repeat)
    all: HashMap<String, Vec<String>>,
    flags: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().ok_or_else(|| USAGE.to_string())?;
    if cmd == "-h" || cmd == "--help" {
        return Err(USAGE.to_string());
    }
    let mut opts = HashMap::new();
    let mut all: HashMap<String, Vec<String>> = HashMap::new();
    let mut flags = Vec::new();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-nli" | "--help" | "--features" | "--pair" | "--both-pairs" => flags.push(a),
            s if s.starts_with("--") => {
                let v = it.next().ok_or_else(|| format!("{s} needs a value"))?;
                all.entry(s[2..].to_string()).or_default().push(v.clone());
                opts.insert(s[2..].to_string(), v);
            }
            other => return Err(format!("unexpected argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Args { cmd, opts, all, flags })
}

fn read(path: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| format!("{path}: not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()))
}

fn model_dir(a: &Args) -> PathBuf {
    a.opts.get("model").map(PathBuf::from).unwrap_or_else(|| {
        let local = Path::new("models");
        if local.join("config.json").exists() {
            local.to_path_buf()
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
        }
    })
}

/// The bytes of a model's files: the model, its tokenizer, its config.
type ModelFiles = (Vec<u8>, Vec<u8>, Vec<u8>);

/// The bytes of the model, tokenizer and config files `DIR/config.json` names.
fn model_files(dir: &Path) -> Result<ModelFiles, String> {
    let cfg_bytes = std::fs::read(dir.join("config.json")).map_err(|e| format!("{}: {e}", dir.join("config.json").display()))?;
    let cfg: NliConfig = serde_json::from_slice(&cfg_bytes).map_err(|e| format!("config.json: {e}"))?;
    let model_path = dir.join(cfg.model_file.as_deref().unwrap_or("model.onnx"));
    let tok_path = dir.join(cfg.tokenizer_file.as_deref().unwrap_or("tokenizer.json"));
    let model = std::fs::read(&model_path).map_err(|e| format!("{}: {e}", model_path.display()))?;
    let tok = std::fs::read(&tok_path).map_err(|e| format!("{}: {e}", tok_path.display()))?;
    Ok((model, tok, cfg_bytes))
}

/// Load the model described by `DIR/config.json`, on the runtime `MEETCITE_RUNTIME` names (`auto`,
/// the default: meetcite's int8 encoder for the files it takes; `tract`: tract always, e.g. to
/// reproduce the model card's tract parity numbers).
fn load_model(dir: &Path) -> Result<NliModel, String> {
    let (model, tok, cfg_bytes) = model_files(dir)?;
    let runtime = match std::env::var("MEETCITE_RUNTIME") {
        Ok(name) if !name.is_empty() => name.parse().map_err(|e| format!("MEETCITE_RUNTIME: {e}"))?,
        _ => meetcite::nli::Runtime::Auto,
    };
    NliModel::load(&model, &tok, &cfg_bytes, runtime).map_err(|e| format!("[{}] {e}", e.code()))
}

fn context_from(a: &Args) -> Result<Context, String> {
    if let Some(p) = a.opts.get("context") {
        return from_json::<Context>(&read(p)?).map_err(|e| format!("{p}: {e}"));
    }
    let chunks = match (a.opts.get("chunks"), a.opts.get("transcript")) {
        (Some(path), None) => parse_chunks(&read(path)?).map_err(|e| format!("{path}: [{}] {e}", e.code()))?,
        // `--format` is verify's output format: the transcript's is `--transcript-format`
        // several --transcript files are several meetings, each with its own metadata options
        (None, Some(_)) => {
            let paths = &a.all["transcript"];
            let mut chunks = Vec::new();
            for (k, path) in paths.iter().enumerate() {
                chunks.extend(transcript_chunks(a, path, "transcript-format", (k, paths.len()))?);
            }
            chunks
        }
        (Some(_), Some(_)) => return Err("give --chunks or --transcript, not both".into()),
        (None, None) => return Err("--chunks FILE, --transcript FILE or --context FILE is required".into()),
    };
    let order = match a.opts.get("order").map(String::as_str) {
        None | Some("relevance") => Order::Relevance,
        Some("date") => Order::Date,
        Some(o) => return Err(format!("--order must be relevance or date, not {o:?}")),
    };
    let max_tokens = match a.opts.get("max-tokens") {
        None => None,
        Some(n) => Some(n.parse::<usize>().map_err(|_| format!("--max-tokens must be a number, not {n:?}"))?),
    };
    let opts = ContextOptions { order, viewer: a.opts.get("viewer").cloned(), max_tokens, question: a.opts.get("question").cloned() };
    Ok(build_context(&chunks, &opts))
}

/// A transcript file read and chunked with the `chunk` options (`format_key`: the option that
/// names its format); says on stderr which format `auto` chose.
/// The value of `--key` for the `k`-th of `n` transcripts: given once per transcript (in the order
/// of the `--transcript` options) or not at all; a setting that is not about one meeting
/// (`shared`: chunk sizes, the format) may also be given once for all.
fn per_meeting(a: &Args, key: &str, (k, n): (usize, usize), shared: bool) -> Result<Option<String>, String> {
    match a.all.get(key).map(Vec::as_slice).unwrap_or(&[]) {
        [] => Ok(None),
        [one] if n == 1 || shared => Ok(Some(one.clone())),
        vals if vals.len() == n => Ok(Some(vals[k].clone())),
        vals => Err(format!(
            "--{key} is given {} time(s) for {n} --transcript files: give it once per transcript, in the same order{}",
            vals.len(),
            if shared { " (or once for all)" } else { "" }
        )),
    }
}

fn transcript_chunks(a: &Args, path: &str, format_key: &str, at: (usize, usize)) -> Result<Vec<meetcite::Chunk>, String> {
    use meetcite::transcript::{chunk_transcript, ChunkOptions};
    let text = read(path)?;
    let get = |key: &str| per_meeting(a, key, at, false);
    let number = |key: &str, default: usize| parse_whole(key, per_meeting(a, key, at, true)?.as_deref(), default);
    let format = per_meeting(a, format_key, at, true)?.unwrap_or_else(|| "auto".into());
    let d = ChunkOptions::default();
    let opts = ChunkOptions {
        meeting_id: get("meeting-id")?.unwrap_or_default(),
        title: get("title")?.unwrap_or_default(),
        date: get("date")?.unwrap_or_default(),
        recording_url: get("recording-url")?,
        acl: None,
        max_words: number("max-words", d.max_words)?,
        overlap_turns: number("overlap-turns", d.overlap_turns)?,
        recording_start: get("recording-start")?,
        speakers: match get("speakers")? {
            None => None,
            Some(j) => Some(
                serde_json::from_str(&j).map_err(|e| format!("--speakers must be a JSON object of label to name, like '{{\"A\":\"Dana Okafor\"}}': {e}"))?,
            ),
        },
    };
    let out = chunk_transcript(&text, Some(&format), &opts).map_err(|e| format!("[{}] {path}: {e}", e.code()))?;
    if format == "auto" {
        eprintln!("meetcite: {path}: read as {} (auto)", out.format);
    }
    for w in &out.warnings {
        eprintln!("meetcite: {path}: warning [{}]: {}", w.code, w.message);
    }
    Ok(out.chunks)
}

/// `--key N`, or `default` when absent.
fn whole_number(a: &Args, key: &str, default: usize) -> Result<usize, String> {
    parse_whole(key, a.opts.get(key).map(String::as_str), default)
}

/// The value `n` of `--key` as a whole number, or `default` when there is none.
fn parse_whole(key: &str, n: Option<&str>, default: usize) -> Result<usize, String> {
    match n {
        None => Ok(default),
        Some(n) => n.parse::<usize>().map_err(|_| format!("--{key} must be a whole number, not {n:?}")),
    }
}

fn premise_tokens(a: &Args) -> Result<usize, String> {
    whole_number(a, "premise-tokens", 0)
}

fn print_json(v: &impl serde::Serialize) -> Result<(), String> {
    let s = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    println!("{s}");
    Ok(())
}

fn jsonl(path: &str, mut f: impl FnMut(serde_json::Value) -> Result<serde_json::Value, String>) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let out = std::io::stdout();
    let mut out = out.lock();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        let r = f(v).map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        writeln!(out, "{r}").map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn field<'a>(v: &'a serde_json::Value, k: &str) -> Result<&'a str, String> {
    v.get(k).and_then(|x| x.as_str()).ok_or_else(|| format!("field {k:?} missing or not a string"))
}

/// A serialisable value as one line of JSON (`line` above takes events and the report alike).
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("reports serialise")
        }
    }
}

/// Read `r` as it arrives (a pipe gives what the writer has flushed) and hand each piece of text
/// to `f`; a UTF-8 character cut between two reads waits for its last bytes.
fn read_pieces(mut r: impl std::io::Read, f: &mut dyn FnMut(&str) -> Result<(), String>) -> Result<(), String> {
    let mut buf = [0u8; 8192];
    let mut pending: Vec<u8> = Vec::new();
    let mut offset = 0usize;
    loop {
        let n = match r.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        if n == 0 {
            return match pending.is_empty() {
                true => Ok(()),
                false => Err(format!("not valid UTF-8 (byte {offset}): the input ends inside a character")),
            };
        }
        pending.extend_from_slice(&buf[..n]);
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => return Err(format!("not valid UTF-8 (byte {})", offset + e.valid_up_to())),
        };
        if valid > 0 {
            f(std::str::from_utf8(&pending[..valid]).expect("checked above"))?;
            offset += valid;
            pending.drain(..valid);
        }
    }
}

fn run() -> Result<(), String> {
    let a = parse_args()?;
    match a.cmd.as_str() {
        "context" => print_json(&context_from(&a)?),
        "verify" => {
            let ctx = context_from(&a)?;
            let answer_path = a.opts.get("answer").ok_or("--answer FILE is required (- for stdin)")?;
            let policy = match a.opts.get("policy").map(String::as_str) {
                None | Some("warn") => Policy::Warn,
                Some("drop") => Policy::Drop,
                Some("feedback") => Policy::Feedback,
                Some(p) => return Err(format!("--policy must be drop, warn or feedback, not {p:?}")),
            };
            let format = a.opts.get("format").map(String::as_str).unwrap_or("json");
            if !["json", "jsonl", "markdown", "md", "html"].contains(&format) {
                return Err(format!("--format must be json, jsonl, markdown or html, not {format:?}"));
            }
            let model = if a.flags.iter().any(|f| f == "--no-nli") { None } else { Some(load_model(&model_dir(&a))?) };
            let premise_tokens = premise_tokens(&a)?;
            let both_pairs = a.flags.iter().any(|f| f == "--both-pairs");
            let opts = VerifyOptions { policy, matching: MatchOptions::default(), nli: model.as_ref().map(|m| m as &dyn Entail), premise_tokens, both_pairs };
            let name = if answer_path == "-" { "stdin" } else { answer_path.as_str() };
            if format == "jsonl" {
                // one line per verdict as soon as its claim is complete, then the end's events and
                // the report: `{"type":"claim"|"update"|"retract",..}`, `{"type":"report","report":..}`
                let sources = ctx.sources;
                let err = |e: meetcite::verify::VerifyError| format!("{name}: [{}] {e}", e.code());
                let out = std::io::stdout();
                let line = |v: &dyn erased::Json| -> Result<(), String> {
                    let mut o = out.lock();
                    writeln!(o, "{}", v.json()).and_then(|_| o.flush()).map_err(|e| format!("stdout: {e}"))
                };
                let mut stream = meetcite::StreamVerifier::with_optional_model(sources, meetcite::StreamOptions::from(&opts), opts.nli);
                let mut on_piece = |piece: &str| -> Result<(), String> {
                    for ev in stream.push(piece).map_err(err)? {
                        line(&ev)?;
                    }
                    Ok(())
                };
                if answer_path == "-" {
                    read_pieces(std::io::stdin().lock(), &mut on_piece).map_err(|e| format!("stdin: {e}"))?;
                } else {
                    on_piece(&read(answer_path)?)?;
                }
                let end = stream.finish().map_err(err)?;
                for ev in &end.events {
                    line(ev)?;
                }
                return line(&serde_json::json!({"type": "report", "report": end.report}));
            }
            let answer = if answer_path == "-" {
                let mut all = String::new();
                read_pieces(std::io::stdin().lock(), &mut |p| {
                    all.push_str(p);
                    Ok(())
                })
                .map_err(|e| format!("stdin: {e}"))?;
                all
            } else {
                read(answer_path)?
            };
            let sources: &[Source] = &ctx.sources;
            let report = meetcite::verify(&answer, sources, &opts).map_err(|e| format!("{name}: [{}] {e}", e.code()))?;
            match format {
                "markdown" | "md" => {
                    print!("{}", render_markdown(&report, &RenderOptions::default()));
                    Ok(())
                }
                "html" => {
                    print!("{}", render_html(&report, &RenderOptions::default()));
                    Ok(())
                }
                _ => print_json(&report),
            }
        }
        "chunk" => {
            let path = a.opts.get("transcript").ok_or("--transcript FILE is required")?;
            if a.all["transcript"].len() > 1 {
                return Err("chunk reads one --transcript (context and verify take several, one per meeting)".into());
            }
            print_json(&transcript_chunks(&a, path, "format", (0, 1))?)
        }
        "match" => {
            let input = a.opts.get("input").ok_or("--input FILE.jsonl is required")?;
            let mo = MatchOptions::default();
            jsonl(input, |v| {
                let text = field(&v, "text")?;
                let quote = field(&v, "quote")?;
                let mut m = match_quote(text, quote, &mo);
                m.encode(PositionEncoding::Chars, text, quote);
                Ok(serde_json::json!({
                    "id": v.get("id").cloned().unwrap_or(serde_json::Value::Null),
                    "matched": m.matched, "score": m.score,
                    "start": m.start, "end": m.end,
                    "missing_numbers": m.missing_numbers,
                    "stitched": m.stitched, "stray": m.stray,
                }))
            })
        }
        "score" => {
            let input = a.opts.get("input").ok_or("--input FILE.jsonl is required")?;
            let model = load_model(&model_dir(&a))?;
            let with_features = a.flags.iter().any(|f| f == "--features");
            let premise_tokens = premise_tokens(&a)?;
            let both_pairs = a.flags.iter().any(|f| f == "--both-pairs");
            let opts = VerifyOptions { nli: Some(&model as &dyn Entail), premise_tokens, both_pairs, ..Default::default() };
            if a.flags.iter().any(|f| f == "--pair") {
                // the raw model on the raw pair: what other runtimes compute for the same input
                return jsonl(input, |v| {
                    let pair = (field(&v, "premise")?, field(&v, "hypothesis")?);
                    let p = model.score(&[pair]).map_err(|e| format!("[{}] {e}", e.code()))?[0];
                    Ok(serde_json::json!({
                        "id": v.get("id").cloned().unwrap_or(serde_json::Value::Null),
                        "entailment": p.entailment, "neutral": p.neutral, "contradiction": p.contradiction,
                        "nli_supported": model.supported(&p),
                    }))
                });
            }
            jsonl(input, |v| {
                let quote = match v.get("quote") {
                    None | Some(serde_json::Value::Null) => None,
                    Some(q) => Some(q.as_str().ok_or("field \"quote\" is not a string")?),
                };
                let r = score_premise(field(&v, "premise")?, field(&v, "hypothesis")?, quote, &model, &opts).map_err(|e| format!("[{}] {e}", e.code()))?;
                let p = r.probs;
                let mut out = serde_json::json!({
                    "id": v.get("id").cloned().unwrap_or(serde_json::Value::Null),
                    "entailment": p.entailment, "neutral": p.neutral, "contradiction": p.contradiction,
                    "support": r.support.as_ref().map(|s| s.score),
                    "supported": r.support.as_ref().is_some_and(|s| s.supported),
                    "nli_supported": model.supported(&p),
                    "parts": r.support.as_ref().map(|s| s.parts.clone()).unwrap_or_default(),
                    "pairs": r.pairs,
                });
                if let Some(verdict) = &r.verdict {
                    out["reasons"] = serde_json::to_value(&verdict.reasons).map_err(|e| e.to_string())?;
                    out["status"] = serde_json::to_value(verdict.status).map_err(|e| e.to_string())?;
                    // each scored pair's probabilities (context and quote premise), for fitting and analysis
                    out["nli"] = serde_json::to_value(&verdict.nli).map_err(|e| e.to_string())?;
                }
                if with_features {
                    out["features"] =
                        FEATURES.iter().zip(&r.features).map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>().into();
                }
                Ok(out)
            })
        }
        "graph" => {
            let out = a.opts.get("out").ok_or("--out FILE.onnx is required")?;
            let (model, tok, cfg_bytes) = model_files(&model_dir(&a))?;
            let err = |e: meetcite::nli::NliError| format!("[{}] {e}", e.code());
            let compiled = NliModel::compile_graph(&model, &cfg_bytes).map_err(err)?;
            // the new file must load from its graph and score exactly as the ONNX graph does
            let time = |bytes: &[u8]| -> Result<(NliModel, f64), String> {
                let t = std::time::Instant::now();
                // the graph is tract's: load on tract whatever the default runtime for the file
                let m = NliModel::load(bytes, &tok, &cfg_bytes, meetcite::nli::Runtime::Tract).map_err(err)?;
                Ok((m, t.elapsed().as_secs_f64() * 1e3))
            };
            // the ONNX path: the file without any graph it carried
            let bare = meetcite::graph::strip(&model).ok_or("the model file is not a protobuf message")?;
            let (old, old_ms) = time(&bare)?;
            let (new, new_ms) = time(&compiled)?;
            if *new.graph() != meetcite::graph::GraphUse::Embedded {
                return Err(format!("the compiled file did not load from its graph: {:?}", new.graph()));
            }
            let pairs = [
                ("Dana Okafor: I think we should offer a ten percent discount for the pilot.", "The team agreed on a ten percent discount."),
                ("And the pilot stays at three months.", "The pilot runs for three months."),
                ("The meeting started.", "A meeting started."),
            ];
            let (want, got) = (old.score(&pairs).map_err(err)?, new.score(&pairs).map_err(err)?);
            if want != got {
                return Err(format!("the compiled graph scores differently: {want:?} vs {got:?}"));
            }
            std::fs::write(out, &compiled).map_err(|e| format!("{out}: {e}"))?;
            print_json(&serde_json::json!({
                "out": out, "bytes": compiled.len(), "graph_bytes": compiled.len() - bare.len(),
                "load_ms": {"onnx_graph": old_ms, "embedded_graph": new_ms},
            }))
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("meetcite: {e}");
            ExitCode::from(2)
        }
    }
}
