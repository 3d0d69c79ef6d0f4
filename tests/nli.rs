//! The shipped model through both runtimes (meetcite's int8 encoder, the default for it, and
//! tract), pinned against onnxruntime's output on the same file.
use meetcite::nli::{NliModel, Runtime};
use meetcite::verify::{Entail, Status, VerifyOptions};

fn read(p: &str) -> Vec<u8> {
    std::fs::read(format!("{}/models/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn shipped() -> NliModel {
    NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), &read("config.json")).unwrap()
}

/// The shipped file carries its graph precompiled (`meetcite graph`, src/graph.rs): it must load
/// from it, score exactly as the ONNX nodes do, be what `meetcite graph` makes of it today, and
/// give way to the ONNX nodes when the config it was compiled for changes.
#[test]
fn shipped_model_loads_from_its_embedded_graph_and_scores_as_its_onnx_nodes() {
    use meetcite::graph::{strip, GraphUse};
    let (model, tok, cfg) = (read("nli-minilm-l6-int8.onnx"), read("tokenizer.json"), read("config.json"));
    // by default the shipped file runs on meetcite's encoder, which needs no graph
    let auto = NliModel::from_bytes(&model, &tok, &cfg).unwrap();
    assert_eq!((auto.runtime(), auto.graph()), ("meetcite-int8", &GraphUse::Unused));
    let tract = |bytes: &[u8], cfg: &[u8]| NliModel::load(bytes, &tok, cfg, Runtime::Tract).unwrap();
    let mut m = tract(&model, &cfg);
    assert_eq!(m.runtime(), "tract");
    assert_eq!(
        *m.graph(),
        GraphUse::Embedded,
        "the shipped model must carry its graph: cargo run --release --bin meetcite -- graph --out models/nli-minilm-l6-int8.onnx"
    );
    let bare = strip(&model).unwrap();
    assert!(bare.len() + 20_000 < model.len(), "{} vs {} bytes", bare.len(), model.len());
    let mut onnx = tract(&bare, &cfg);
    assert_eq!(*onnx.graph(), GraphUse::Onnx);
    let text = String::from_utf8(read("eval/parity_pairs.jsonl")).unwrap();
    let owned: Vec<(String, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (v["premise"].as_str().unwrap().to_string(), v["hypothesis"].as_str().unwrap().to_string()))
        .collect();
    let pairs: Vec<(&str, &str)> = owned.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
    // bit for bit, one pair per run and in batches of 4 (padded shapes)
    for batch in [1, 4] {
        m.batch_size = batch;
        onnx.batch_size = batch;
        assert_eq!(m.score(&pairs).unwrap(), onnx.score(&pairs).unwrap(), "batch {batch}");
    }
    // deterministic, and not stale: compiling the file again (its graph stripped first) gives it back
    assert!(
        NliModel::compile_graph(&model, &cfg).unwrap() == model,
        "models/nli-minilm-l6-int8.onnx's graph is not what `meetcite graph` makes today: re-run it"
    );
    // compiled for max_length 256: with another, the ONNX nodes are used, and the model says why
    let mut other: serde_json::Value = serde_json::from_slice(&cfg).unwrap();
    other["max_length"] = 128.into();
    let m2 = tract(&model, other.to_string().as_bytes());
    assert!(matches!(m2.graph(), GraphUse::Stale(why) if why.contains("another model file or config")), "{:?}", m2.graph());
    assert_eq!(m2.score(&pairs[..3]).unwrap(), tract(&bare, other.to_string().as_bytes()).score(&pairs[..3]).unwrap());
    // a truncated file is an error, not a panic
    assert!(strip(&model[..model.len() - 7]).is_none());
}

/// meetcite's encoder against tract (the graph's f32 maths, 7e-7 from onnxruntime) on held-out
/// QMSum pairs the parity file does not have: long transcript premises, people's claims. Its
/// activations are quantized to 15-16 bits a row, so its probabilities move in the fourth
/// decimal; the decisions must not move.
#[test]
fn int8_encoder_decides_as_tract_on_held_out_pairs() {
    let (model, tok, cfg) = (read("nli-minilm-l6-int8.onnx"), read("tokenizer.json"), read("config.json"));
    let enc = NliModel::from_bytes(&model, &tok, &cfg).unwrap();
    let tract = NliModel::load(&model, &tok, &cfg, Runtime::Tract).unwrap();
    assert_eq!((enc.runtime(), tract.runtime()), ("meetcite-int8", "tract"));
    let text = String::from_utf8(read("eval/qmsum_val_pairs.jsonl")).unwrap();
    let (mut d, mut n, mut spread) = (0f64, 0, (1f64, 0f64));
    for line in text.lines().step_by(12).take(60) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let pair = [(v["premise"].as_str().unwrap(), v["hypothesis"].as_str().unwrap())];
        let (a, b) = (enc.score(&pair).unwrap()[0], tract.score(&pair).unwrap()[0]);
        d = d.max((a.entailment - b.entailment).abs()).max((a.neutral - b.neutral).abs()).max((a.contradiction - b.contradiction).abs());
        assert_eq!(enc.supported(&a), tract.supported(&b), "{line}");
        spread = (spread.0.min(a.entailment), spread.1.max(a.entailment));
        n += 1;
    }
    eprintln!("int8 encoder vs tract: {n} held-out QMSum pairs, max |dp| {d:.2e}, entailment {:.3}..{:.3}", spread.0, spread.1);
    assert_eq!(n, 60);
    assert!(d < 1e-3, "max |dp| {d}");
    assert!(spread.1 - spread.0 > 0.5, "the pairs do not all score alike: {spread:?}");
}

#[test]
fn both_runtimes_match_onnxruntime_on_pinned_pairs_and_bad_files_fail_at_load() {
    let (model, tok, cfg) = (read("nli-minilm-l6-int8.onnx"), read("tokenizer.json"), read("config.json"));
    for runtime in [Runtime::Tract, Runtime::Auto] {
        let m = NliModel::load(&model, &tok, &cfg, runtime).unwrap();
        pinned_pairs(&m);
    }
    bad_files_and_the_pricing_example(&shipped());
}

fn pinned_pairs(m: &NliModel) {
    let text = String::from_utf8(read("eval/parity_pairs.jsonl")).unwrap();
    let mut max_diff: f64 = 0.0;
    let mut n = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let p = m.score(&[(v["premise"].as_str().unwrap(), v["hypothesis"].as_str().unwrap())]).unwrap()[0];
        let want: Vec<f64> = v["probs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        for (a, b) in [p.entailment, p.neutral, p.contradiction].iter().zip(&want) {
            max_diff = max_diff.max((a - b).abs());
        }
        let arg = |xs: &[f64]| xs.iter().enumerate().max_by(|a, b| a.1.partial_cmp(b.1).unwrap()).unwrap().0;
        let mut sorted = want.clone();
        sorted.sort_by(|a, b| b.partial_cmp(a).unwrap());
        if sorted[0] - sorted[1] > 0.01 {
            assert_eq!(arg(&[p.entailment, p.neutral, p.contradiction]), arg(&want), "{line}");
        }
        n += 1;
    }
    eprintln!("{} vs onnxruntime: {n} pairs, max abs diff {max_diff:.2e}", m.runtime());
    assert_eq!(n, 20);
    // `probs` is onnxruntime with graph optimisation off, i.e. the graph's own maths (int8 weights
    // dequantized to f32), which is what tract computes after folding the DequantizeLinear nodes.
    // Measured over 200 pairs (eval/results.json, parity_200): max 3.3e-6. onnxruntime's default
    // level fuses DequantizeLinear+MatMul into int8 kernels and drifts by up to 0.037 from both.
    // meetcite's encoder quantizes activations to 15-16 bits: 7.8e-5 on these pairs.
    assert!(max_diff < 1e-4, "max diff {max_diff}");
    // batching gives the same numbers as one at a time
    let pairs =
        [("Dana: we agreed on ten percent.", "They agreed on ten percent."), ("The room was empty and quiet for the whole afternoon.", "Nobody was there.")];
    let b = m.score(&pairs).unwrap();
    let one = m.score(&pairs[1..]).unwrap();
    assert!((b[1].entailment - one[0].entailment).abs() < 1e-4);
}

fn bad_files_and_the_pricing_example(m: &NliModel) {
    // bad files: clear errors at load time
    let tok = read("tokenizer.json");
    let cfg = read("config.json");
    let onnx = read("nli-minilm-l6-int8.onnx");
    let e = NliModel::from_bytes(&onnx[..onnx.len() / 2], &tok, &cfg).unwrap_err();
    assert_eq!(e.code(), "model", "{e}");
    let e = NliModel::from_bytes(b"not an onnx file at all", &tok, &cfg).unwrap_err();
    assert_eq!(e.code(), "model");
    // a wrong URL answered by a web page, and an empty download, say so
    let html = b"\n<!DOCTYPE html><html><head><title>Not found</title></head></html>";
    let e = NliModel::from_bytes(html, &tok, &cfg).unwrap_err();
    assert_eq!(e.code(), "model");
    assert!(e.to_string().contains("got HTML, not an ONNX file"), "{e}");
    let e = NliModel::from_bytes(&onnx, html, &cfg).unwrap_err();
    assert_eq!(e.code(), "tokenizer");
    assert!(e.to_string().contains("got HTML"), "{e}");
    let e = NliModel::from_bytes(&onnx, &tok, b"").unwrap_err();
    assert_eq!(e.code(), "model_config");
    assert!(e.to_string().contains("empty"), "{e}");
    let bad_cfg = String::from_utf8(cfg.clone()).unwrap().replace("\"neutral\"", "\"maybe\"");
    let e = NliModel::from_bytes(&onnx, &tok, bad_cfg.as_bytes()).unwrap_err();
    assert_eq!(e.code(), "model_config");
    assert!(e.to_string().contains("maybe"));
    let e = NliModel::from_bytes(&onnx, b"{\"version\": 1}", &cfg).unwrap_err();
    assert_eq!(e.code(), "tokenizer");
    // a tokenizer with more tokens than the model's embedding table
    let mut t: serde_json::Value = serde_json::from_slice(&tok).unwrap();
    let vocab = t["model"]["vocab"].as_object_mut().unwrap();
    for i in 0..40_000 {
        vocab.insert(format!("extra{i}"), serde_json::json!(30_522 + i));
    }
    let e = NliModel::from_bytes(&onnx, serde_json::to_vec(&t).unwrap().as_slice(), &cfg).unwrap_err();
    assert_eq!(e.code(), "tokenizer_mismatch", "{e}");

    // end to end on the pricing scenario with the model
    let chunks =
        meetcite::parse_chunks(&std::fs::read_to_string(format!("{}/tests/fixtures/pricing_chunks.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
    let ctx = meetcite::build_context(&chunks, &meetcite::ContextOptions { order: meetcite::Order::Date, ..Default::default() });
    let answer = std::fs::read_to_string(format!("{}/tests/fixtures/pricing_answer.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let r = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(m as &dyn Entail), ..Default::default() }).unwrap();
    assert!(r.nli_used);
    assert!(r.claims.iter().all(|c| c.status != Status::Supported || c.nli.is_some()));
    // the deterministic checks still hold with the model in the loop
    assert_eq!(r.claims[1].status, Status::Flagged);
    assert_eq!(r.claims[2].status, Status::Flagged);
    assert_eq!(r.claims[5].status, Status::UnknownSource);
    // a too-long claim is a typed error, never a truncated claim
    let long = "word ".repeat(400);
    assert_eq!(m.score(&[("premise", long.as_str())]).unwrap_err().code(), "claim_too_long");
}

/// A worker pool's way of verifying: list the pairs (`nli_plan`), score them elsewhere, verify
/// with the scores (`Precomputed`). The report must equal a plain verify, and the plan must be
/// exactly the pairs the plain verify scores in its main pass.
#[test]
fn planned_and_precomputed_scores_give_the_same_report() {
    use meetcite::verify::{nli_plan, Precomputed, ScoredPair};
    let m = shipped();
    let root = env!("CARGO_MANIFEST_DIR");
    for (chunks, answer) in [("pricing_chunks.json", "pricing_answer.json"), ("qmsum_chunks.json", "qmsum_answer.json")] {
        let chunks = meetcite::parse_chunks(&std::fs::read_to_string(format!("{root}/tests/fixtures/{chunks}")).unwrap()).unwrap();
        let ctx = meetcite::build_context(&chunks, &meetcite::ContextOptions { order: meetcite::Order::Date, ..Default::default() });
        let answer = std::fs::read_to_string(format!("{root}/tests/fixtures/{answer}")).unwrap();
        // both pairs of every claim in one plan (the quote-first cascade's rounds: the test below)
        let plain = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(&m), both_pairs: true, ..Default::default() }).unwrap();
        let plan = nli_plan(&answer, &ctx.sources, &VerifyOptions { nli: Some(&m), both_pairs: true, ..Default::default() }).unwrap();
        assert!(!plan.is_empty());
        // score the plan "in another worker"
        let refs: Vec<(&str, &str)> = plan.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
        let probs = m.score(&refs).unwrap();
        let scores = plan.iter().zip(probs).map(|((p, h), probs)| ScoredPair { premise: p.clone(), hypothesis: h.clone(), probs });
        let counting = Counting(&m, Default::default());
        let pre = Precomputed::new(&counting, scores);
        let pooled = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(&pre), both_pairs: true, ..Default::default() }).unwrap();
        assert_eq!(serde_json::to_value(&plain).unwrap(), serde_json::to_value(&pooled).unwrap());
        // the coordinator scored at most the history check's extra pairs itself
        let plain_pairs = plan.len();
        assert!(counting.1.borrow().len() < plain_pairs, "{} of {plain_pairs}", counting.1.borrow().len());
    }
}

/// `premise_tokens` caps the context premise: every planned premise fits the budget.
#[test]
fn premise_token_budget_caps_context_premises() {
    let m = shipped();
    let root = env!("CARGO_MANIFEST_DIR");
    let chunks = meetcite::parse_chunks(&std::fs::read_to_string(format!("{root}/tests/fixtures/qmsum_chunks.json")).unwrap()).unwrap();
    let ctx = meetcite::build_context(&chunks, &meetcite::ContextOptions { order: meetcite::Order::Date, ..Default::default() });
    let answer = std::fs::read_to_string(format!("{root}/tests/fixtures/qmsum_answer.json")).unwrap();
    // both pairs, so the context premises are in the plan whatever the model's cascade decides
    let long = meetcite::verify::nli_plan(&answer, &ctx.sources, &VerifyOptions { nli: Some(&m), both_pairs: true, ..Default::default() }).unwrap();
    let short = meetcite::verify::nli_plan(&answer, &ctx.sources, &VerifyOptions { nli: Some(&m), premise_tokens: 96, both_pairs: true, ..Default::default() })
        .unwrap();
    assert_eq!(long.len(), short.len());
    let longest = |v: &[(String, String)]| v.iter().map(|(p, _)| m.count_tokens(p)).max().unwrap();
    assert!(longest(&long) > 96, "the fixture's premises should exceed the budget without it");
    // a premise is whole turns, so a single turn longer than the budget may still exceed it;
    // the context premises of this fixture all shrink
    assert!(longest(&short) < longest(&long));
    for ((pl, _), (ps, _)) in long.iter().zip(&short) {
        assert!(m.count_tokens(ps) <= m.count_tokens(pl));
    }
}

/// The shipped model with its support config's quote-first cascade set to `margin` (the first
/// pass reuses the two-pair weights: what it decides is not the point here, which pairs are).
fn cascading(margin: f64) -> NliModel {
    let mut cfg: serde_json::Value = serde_json::from_slice(&read("config.json")).unwrap();
    let s = cfg["support"].clone();
    cfg["support"]["quote_first"] = serde_json::json!({"weights": s["weights"], "bias": s["bias"], "threshold": s["threshold"], "margin": margin});
    NliModel::from_bytes(&read("nli-minilm-l6-int8.onnx"), &read("tokenizer.json"), cfg.to_string().as_bytes()).unwrap()
}

/// Counts the pairs it scores (a model behind it does the scoring).
struct Counting<'a>(&'a NliModel, std::cell::RefCell<Vec<(String, String)>>);
impl Entail for Counting<'_> {
    fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<meetcite::verify::Probs>, meetcite::verify::EntailError> {
        self.1.borrow_mut().extend(pairs.iter().map(|(p, h)| (p.to_string(), h.to_string())));
        self.0.score_pairs(pairs)
    }
    fn thresholds(&self) -> meetcite::verify::Thresholds {
        Entail::thresholds(self.0)
    }
    fn count_tokens(&self, t: &str) -> usize {
        Entail::count_tokens(self.0, t)
    }
    fn max_length(&self) -> usize {
        Entail::max_length(self.0)
    }
    fn support(&self) -> &meetcite::support::SupportConfig {
        Entail::support(self.0)
    }
}

/// The quote-first cascade: the quote pair of every quoted claim first, the context pair only
/// for the claims whose first-pass score lands within the margin of its threshold; those get the
/// two-pair score, exactly as without the cascade. `both_pairs` turns it off. A pool's rounds of
/// plans (quote pairs, then the open context pairs, then nothing) give the plain report.
#[test]
fn quote_first_cascade_scores_the_context_pair_only_for_open_claims() {
    use meetcite::verify::{nli_plan, Precomputed, ScoredPair};
    let root = env!("CARGO_MANIFEST_DIR");
    let chunks = meetcite::parse_chunks(&std::fs::read_to_string(format!("{root}/tests/fixtures/pricing_chunks.json")).unwrap()).unwrap();
    let ctx = meetcite::build_context(&chunks, &Default::default());
    let answer = std::fs::read_to_string(format!("{root}/tests/fixtures/pricing_answer.json")).unwrap();
    let plain = shipped();
    let counted = |m: &NliModel, both_pairs: bool| {
        let c = Counting(m, Default::default());
        let r = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(&c), both_pairs, ..Default::default() }).unwrap();
        (r, c.1.into_inner())
    };
    let (two, two_pairs) = counted(&plain, true);
    let quoted: Vec<_> = two.claims.iter().filter(|c| c.nli.is_some()).collect();
    assert!(quoted.len() >= 3, "the fixture has quoted claims");
    assert!(quoted.iter().all(|c| c.nli.as_ref().unwrap().context.is_some()));
    let n = quoted.len();

    // margin 0: the quote pair decides every claim, no context pair is scored
    let (r0, p0) = counted(&cascading(0.0), false);
    assert_eq!(p0.len(), n, "{p0:?}");
    assert!(r0.claims.iter().filter_map(|c| c.nli.as_ref()).all(|s| s.context.is_none()));
    // a margin wider than any score's distance to the threshold: every claim is open, and the
    // report is the two-pair one (same pairs, quote pairs first)
    let (r1, p1) = counted(&cascading(0.99), false);
    assert_eq!(p1.len(), 2 * n);
    // scored in two batches instead of one: the same probabilities up to float noise
    for (a, b) in r1.claims.iter().zip(&two.claims) {
        assert_eq!((a.status, a.support.as_ref().map(|s| s.supported)), (b.status, b.support.as_ref().map(|s| s.supported)));
        let (sa, sb) = (a.support.as_ref().map_or(0.0, |s| s.score), b.support.as_ref().map_or(0.0, |s| s.score));
        assert!((sa - sb).abs() <= 1e-3, "{sa} vs {sb}");
        if let (Some(x), Some(y)) = (&a.nli, &b.nli) {
            let (xc, yc) = (x.context.unwrap(), y.context.unwrap());
            assert!((xc.entailment - yc.entailment).abs() < 1e-4 && (x.quote.entailment - y.quote.entailment).abs() < 1e-4);
        }
    }
    let set = |v: &[(String, String)]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    assert_eq!(set(&p1), set(&two_pairs));
    // both_pairs: no cascade
    let (rb, pb) = counted(&cascading(0.0), true);
    assert_eq!(pb.len(), 2 * n);
    assert_eq!(serde_json::to_value(&rb).unwrap(), serde_json::to_value(&two).unwrap());

    // a margin that leaves some claims open: their verdicts are the two-pair ones, the others'
    // are the first pass's
    let first = cascading(0.0);
    let q = first.support_config().quote_first.clone().unwrap();
    let dist: Vec<f64> = r0.claims.iter().filter_map(|c| c.support.as_ref()).map(|s| (s.score - q.threshold).abs()).collect();
    let mut sorted = dist.clone();
    sorted.sort_by(f64::total_cmp);
    let margin = (sorted[0] + sorted[1]) / 2.0;
    assert!(sorted[1] > sorted[0], "two claims at the same distance: {sorted:?}");
    let mid = cascading(margin);
    let (rm, pm) = counted(&mid, false);
    let open = dist.iter().filter(|&&d| d < margin).count();
    assert_eq!(open, 1);
    assert_eq!(pm.len(), n + open);
    for ((c, c0), c2) in rm.claims.iter().zip(&r0.claims).zip(&two.claims) {
        match c.nli.as_ref().map(|s| s.context.is_some()) {
            Some(true) => {
                assert_eq!((c.status, c.support.as_ref().map(|s| s.supported)), (c2.status, c2.support.as_ref().map(|s| s.supported)));
                assert!((c.support.as_ref().unwrap().score - c2.support.as_ref().unwrap().score).abs() <= 1e-3);
            }
            Some(false) => assert_eq!((&c.support, &c.status), (&c0.support, &c0.status)),
            None => {}
        }
    }

    // the pool's rounds: quote pairs, then the open context pair, then nothing
    let mut scores: Vec<ScoredPair> = Vec::new();
    let mut rounds = Vec::new();
    loop {
        let pre = Precomputed::new(&mid, scores.clone());
        let plan = nli_plan(&answer, &ctx.sources, &VerifyOptions { nli: Some(&pre), ..Default::default() }).unwrap();
        if plan.is_empty() {
            break;
        }
        rounds.push(plan.len());
        let refs: Vec<(&str, &str)> = plan.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
        let probs = mid.score(&refs).unwrap();
        scores.extend(plan.into_iter().zip(probs).map(|((premise, hypothesis), probs)| ScoredPair { premise, hypothesis, probs }));
        assert!(rounds.len() <= 2, "{rounds:?}");
    }
    assert_eq!(rounds, vec![n, open]);
    let pre = Precomputed::new(&mid, scores);
    let pooled = meetcite::verify(&answer, &ctx.sources, &VerifyOptions { nli: Some(&pre), ..Default::default() }).unwrap();
    assert_eq!(serde_json::to_value(&pooled).unwrap(), serde_json::to_value(&rm).unwrap());
}
