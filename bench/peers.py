"""The peers, measured on the same inputs as the native Rust benches, written as result rows
(JSON lines, appended to $BENCH_OUT, default target/bench/results/peers.jsonl):
  - rapidfuzz `fuzz.partial_ratio_alignment` (default_process, accept at score >= 90) on
    tests/fixtures/quotes_test.jsonl x20 and on the scaling cases target/bench/scaling_cases.jsonl
    (written by `cargo bench --bench matcher`, so run that first);
  - onnxruntime (Python) on the shipped int8 model, its f32 twin and the dynamic-int8 variant, tokenize (HF `tokenizers`,
    the same tokenizer.json) + infer, batch 1 and 8 at 128 and 256 tokens
    (bench/fixtures/nli_pairs.json), 1 thread and the default thread count; load time; peak RSS
    (one subprocess per model);
  - transcripts: the 3-hour meeting `cargo bench --bench transcript` writes to target/bench/
    (WhisperX JSON and Teams-style VTT), read with json.load / webvtt-py and grouped into
    speaker turns and 200-word chunks with word offsets by a plain loop: what a user would write.
  - families: onnxruntime (1 thread, default optimisations) on each base-size family model of
    target/bench/families (tests/families/build.py --base), the same int8 file and the same pairs as
    `cargo bench --bench families`: load, batch 1 at 128 tokens, batch 8 at 256 tokens.
Usage: python3 bench/peers.py [matcher|nli|nli-one MODEL|transcript|families]"""
import json, os, resource, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("BENCH_OUT", os.path.join(ROOT, "target/bench/results/peers.jsonl"))
MODELS = {"int8": os.path.join(ROOT, "models/nli-minilm-l6-int8.onnx"),
          "f32": os.path.join(ROOT, "target/bench/models/nli-minilm-l6-f32.onnx"),
          "dynint8": os.path.join(ROOT, "target/bench/models/nli-minilm-l6-dynint8.onnx")}


def emit(section, case, impl, metric, value, unit, note=""):
    row = {"section": section, "case": case, "impl": impl, "metric": metric, "value": value, "unit": unit}
    if note:
        row["note"] = note
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(f"{section:<8} {case:<28} {impl:<34} {metric:<12} {value:>12.3f} {unit}")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def matcher():
    from rapidfuzz import fuzz, utils
    import rapidfuzz
    imp = "rapidfuzz partial_ratio_alignment"
    cases = [json.loads(l) for l in open(os.path.join(ROOT, "tests/fixtures/quotes_test.jsonl"))]
    pred = [fuzz.partial_ratio_alignment(c["quote"], c["text"], processor=utils.default_process).score >= 90 for c in cases]
    P = [p for p, c in zip(pred, cases) if c["label"]]
    N = [p for p, c in zip(pred, cases) if not c["label"]]
    tpr, tnr = sum(P) / len(P), sum(not x for x in N) / len(N)
    case = "quotes_test x20"
    emit("matcher", case, imp, "tpr", tpr, "")
    emit("matcher", case, imp, "tnr", tnr, "")
    emit("matcher", case, imp, "bal_acc", (tpr + tnr) / 2, "")
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(20):
            for c in cases:
                fuzz.partial_ratio_alignment(c["quote"], c["text"], processor=utils.default_process)
        best = min(best, time.perf_counter() - t)
    emit("matcher", case, imp, "pairs_per_s", 20 * len(cases) / best, "pairs/s", f"rapidfuzz {rapidfuzz.__version__}, threshold 90, best of 3")
    path = os.path.join(ROOT, "target/bench/scaling_cases.jsonl")
    for c in (json.loads(l) for l in open(path)):
        runs = max(5, min(2000, 2_000_000 // max(1000, len(c["text"]))))
        ts = []
        for k in range(7):
            t = time.perf_counter()
            for _ in range(runs):
                r = fuzz.partial_ratio_alignment(c["quote"], c["text"], processor=utils.default_process)
            if k >= 2:
                ts.append(time.perf_counter() - t)
        emit("scaling", c["case"], imp, "us_per_match", median(ts) / runs * 1e6, "us", "" if r.score >= 90 else "NOT MATCHED")


def nli_one(kind):
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(ROOT, "models/tokenizer.json"))
    tok.enable_truncation(256, strategy="only_first")
    sets = json.load(open(os.path.join(ROOT, "bench/fixtures/nli_pairs.json")))["sets"]
    data = open(MODELS[kind], "rb").read()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for threads, imp in [(1, "onnxruntime 1 thread (python)"), (0, f"onnxruntime {os.cpu_count()} threads (python)")]:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        t = time.perf_counter()
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        emit("nli", f"{kind} load", imp, "ms", (time.perf_counter() - t) * 1e3, "ms", f"onnxruntime {ort.__version__}, from bytes in memory")
        names = [i.name for i in sess.get_inputs()]
        for T in ("128", "256"):
            pairs = sets[T]
            for b in (1, 8):
                batch = pairs[:b]

                def run():
                    encs = tok.encode_batch([(p["premise"], p["hypothesis"]) for p in batch])
                    L = max(len(e.ids) for e in encs)
                    ids = np.zeros((b, L), np.int64); mask = np.zeros((b, L), np.int64); tt = np.zeros((b, L), np.int64)
                    for r, e in enumerate(encs):
                        n = len(e.ids)
                        ids[r, :n] = e.ids; mask[r, :n] = e.attention_mask; tt[r, :n] = e.type_ids
                    assert L == int(T), L
                    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt}
                    return sess.run(None, {k: feed[k] for k in names})
                for _ in range(2):
                    run()
                ts = []
                for _ in range(10 if b * int(T) > 8 * 128 else 20):
                    t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
                emit("nli", f"{kind} b{b} t{T}", imp, "ms", median(ts) * 1e3, "ms", "tokenize + infer")
        del sess
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    emit("nli", f"{kind} load", "onnxruntime 1 thread (python)", "peak_rss_mb", rss / 1e6, "MB", f"process peak (both sessions, one at a time); {rss0 / 1e6:.0f} MB before load")


def chunk_turns(segs, max_words=200):
    """(speaker, text, words) segments -> chunks of whole turns up to max_words, with each word's
    offset found in the chunk text (what meetcite's chunker returns)."""
    turns = []
    for sp, text, words in segs:
        n = len(text.split())
        if turns and turns[-1][0] == sp and turns[-1][2] + n <= max_words:
            turns[-1][1].append((text, words)); turns[-1] = (sp, turns[-1][1], turns[-1][2] + n)
        else:
            turns.append((sp, [(text, words)], n))
    chunks, cur, size = [], [], 0
    for t in turns:
        if cur and size + t[2] > max_words:
            chunks.append(cur); cur, size = [], 0
        cur.append(t); size += t[2]
    if cur:
        chunks.append(cur)
    out = []
    for c in chunks:
        text, placed = "", []
        for sp, parts, _ in c:
            text += ("\n" if text else "") + sp + ": "
            for k, (seg, words) in enumerate(parts):
                text += (" " if k else "") + seg
                cursor = len(text) - len(seg)
                for w in words:
                    p = text.find(w["word"], cursor)
                    if p >= 0:
                        cursor = p + len(w["word"])
                    placed.append((w["word"], w.get("start"), p))
        out.append({"text": text, "words": placed})
    return out


def transcript():
    import webvtt
    base = os.path.join(ROOT, "target/bench/transcript_3h")
    raw = open(base + ".json").read()

    def whisperx():
        segs = json.loads(raw)["segments"]
        return chunk_turns([(s.get("speaker", ""), s["text"].strip(), s.get("words", [])) for s in segs])

    def vtt():
        segs = []
        for c in webvtt.read(base + ".vtt"):
            sp, text = (c.voice or ""), c.text
            segs.append((sp, text, []))
        return chunk_turns(segs)

    for case, f, how in [("whisperx 3h", whisperx, "json.load + loop"), ("vtt 3h", vtt, f"webvtt-py {webvtt.__version__} + loop")]:
        f()
        ts = []
        for _ in range(5):
            t = time.perf_counter(); n = len(f()); ts.append(time.perf_counter() - t)
        emit("transcript", f"import + chunk {case}", "python peer", "ms", median(ts) * 1e3, "ms", f"{how}; {n} chunks, CPython {sys.version.split()[0]}")


def families():
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
    base = os.environ.get("MEETCITE_FAMILIES", os.path.join(ROOT, "target/bench/families"))
    fx = json.load(open(os.path.join(ROOT, "bench/fixtures/family_pairs.json")))
    imp = "onnxruntime 1 thread (python)"
    for family in sorted(os.listdir(base)):
        d = os.path.join(base, family)
        if not os.path.exists(os.path.join(d, "config.json")):
            continue
        cfg = json.load(open(os.path.join(d, "config.json")))
        data = open(os.path.join(d, cfg["model_file"]), "rb").read()
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        t = time.perf_counter()
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        emit("families", f"{family} load", imp, "ms", (time.perf_counter() - t) * 1e3, "ms", f"onnxruntime {ort.__version__}, from bytes in memory")
        names = [i.name for i in sess.get_inputs()]
        pad = cfg.get("pad_token_id", 0)
        ids = {"inputs": names}
        for b, T in ((1, 128), (8, 256)):
            tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
            tok.no_padding()
            tok.enable_truncation(T, strategy="only_first")
            batch = [(p, fx["hypothesis"]) for p in fx["premises"][:b]]

            def run():
                encs = tok.encode_batch(batch)
                L = max(len(e.ids) for e in encs)
                assert L == T, (family, L)
                feed = {"input_ids": np.full((b, L), pad, np.int64), "attention_mask": np.zeros((b, L), np.int64),
                        "token_type_ids": np.zeros((b, L), np.int64)}
                for r, e in enumerate(encs):
                    n = len(e.ids)
                    feed["input_ids"][r, :n] = e.ids
                    feed["attention_mask"][r, :n] = e.attention_mask
                    feed["token_type_ids"][r, :n] = e.type_ids
                return sess.run(None, {k: feed[k] for k in names})
            run()
            ts = []
            for _ in range(10 if b == 1 else 3):
                t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
            emit("families", f"{family} b{b} t{T}", imp, "ms", median(ts) * 1e3, "ms", "tokenize + infer")
            # the same pairs as token ids, for onnxruntime-web in bench/browser/families.mjs (it has no tokenizer)
            ids[str(T)] = [{"input_ids": e.ids, "token_type_ids": e.type_ids} for e in tok.encode_batch(batch)]
        with open(os.path.join(d, "bench_ids.json"), "w") as f:
            json.dump(ids, f)
        del sess


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("all", "matcher"):
        matcher()
    if what in ("all", "nli"):
        for k in MODELS:
            subprocess.run([sys.executable, __file__, "nli-one", k], check=True)
    if what in ("all", "transcript"):
        transcript()
    if what == "families":
        families()
    if what == "nli-one":
        nli_one(sys.argv[2])
