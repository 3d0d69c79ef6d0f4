"""Evaluate the SHIPPED model (models/nli-minilm-l6-int8.onnx) with onnxruntime and write models/eval/results.json.

  python evaluate.py                       # all held-out sets, latency, parity_pairs.jsonl
  python evaluate.py --f32 ../train/out/nli-minilm-l6-f32.onnx --torch-ckpt /work/ckpt/best.pt
        # + int8-vs-f32 accuracy delta and the 200-pair onnxruntime-vs-torch parity
  python evaluate.py --tune                # tune thresholds.entailment on dnli2024_dev + QMSum-train pairs
  python evaluate.py --model ../train/out/candidate-int8.onnx --results ../train/out/candidate_results.json \
        --parity-out ../train/out/candidate_parity_pairs.jsonl --save-probs ../train/out/probs_candidate
        # evaluate a CANDIDATE file without touching the shipped results.json / parity_pairs.jsonl
  python evaluate.py --parity-only --tract ../../target/release/meetcite --torch-exact /work/ckpt/from_onnx.pt
        # tract vs onnxruntime (default and exact) vs PyTorch on 200 pairs; rewrites parity_pairs.jsonl

Tokenization (the Rust side must match): tokenizer.json (BERT uncased WordPiece), pair encoding
[CLS] premise [SEP] hypothesis [SEP], token_type_ids 0 for the premise part and 1 for the hypothesis part,
truncation of the premise only (only_first) to max_length=256. Long documents (SummEdits, BEGIN) are split into
~200-token premise chunks; the chunk with the highest P(entailment) is used (MiniCheck-style max aggregation).
"""
import argparse, json, os, random, sys, time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
NLI = os.environ.get("NLI_DIR", os.path.join(MODELS, "..", "..", "shared", "data", "nli", "normalized"))
CFG = json.load(open(os.path.join(MODELS, "config.json")))
LABELS = [CFG["id2label"][str(i)] for i in range(len(CFG["id2label"]))]
E, N, C = LABELS.index("entailment"), LABELS.index("neutral"), LABELS.index("contradiction")


def read(p):
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


class Model:
    """onnxruntime on one ONNX file. exact=True disables graph optimisation: at its default level onnxruntime fuses
    DequantizeLinear+MatMul into int8 kernels, so only exact=True computes the graph's own (dequantize-to-f32) maths."""

    def __init__(self, path, threads=2, max_len=CFG["max_length"], exact=False):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        if exact:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(os.path.join(MODELS, CFG["tokenizer_file"]))
        self.max_len = max_len

    def encode(self, p, h):
        self.tok.enable_truncation(self.max_len, strategy="only_first")
        try:
            return self.tok.encode(p, h)
        except Exception:
            self.tok.enable_truncation(self.max_len, strategy="longest_first")
            return self.tok.encode(p, h)

    def probs(self, pairs, bs=32):
        encs = [self.encode(p, h) for p, h in pairs]
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(encs), 3), dtype=np.float64)
        for k in range(0, len(order), bs):
            idx = order[k:k + bs]
            L = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), L), np.int64); am = np.zeros_like(ids); tt = np.zeros_like(ids)
            for r, i in enumerate(idx):
                e = encs[i]; n = len(e.ids)
                ids[r, :n] = e.ids; am[r, :n] = 1; tt[r, :n] = e.type_ids
            lg = self.s.run([CFG["output"]], {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]
            lg = lg - lg.max(1, keepdims=True)
            p = np.exp(lg); p /= p.sum(1, keepdims=True)
            out[idx] = p
        return out

    def chunk(self, premise, size=200):
        self.tok.no_truncation()
        e = self.tok.encode(premise, add_special_tokens=False)
        if len(e.ids) <= size:
            return [premise]
        offs = e.offsets
        chunks = []
        for s in range(0, len(offs), size):
            a, b = offs[s][0], offs[min(s + size, len(offs)) - 1][1]
            chunks.append(premise[a:b])
        return chunks

    def probs_chunked(self, pairs, size=200):
        flat, owner = [], []
        for i, (p, h) in enumerate(pairs):
            for c in self.chunk(p, size):
                flat.append((c, h)); owner.append(i)
        pr = self.probs(flat)
        out = np.zeros((len(pairs), 3))
        best = np.full(len(pairs), -1.0)
        for o, p in zip(owner, pr):
            if p[E] > best[o]:
                best[o] = p[E]; out[o] = p
        return out


def supported(p, th=None):
    th = th or CFG["thresholds"]
    return (p[:, E] >= th["entailment"]) & (p[:, C] < th["contradiction"])


def acc3(p, rows):
    y = np.array([LABELS.index(r["label"]) for r in rows])
    return float((p.argmax(1) == y).mean())


def bal_acc(pred, gold):
    pred, gold = np.asarray(pred, bool), np.asarray(gold, bool)
    tpr = (pred & gold).sum() / max(1, gold.sum())
    tnr = (~pred & ~gold).sum() / max(1, (~gold).sum())
    return float((tpr + tnr) / 2)


def auc(score, gold):
    score, gold = np.asarray(score), np.asarray(gold, bool)
    order = np.argsort(score)
    ranks = np.empty(len(score)); ranks[order] = np.arange(1, len(score) + 1)
    npos, nneg = gold.sum(), (~gold).sum()
    return float((ranks[gold].sum() - npos * (npos + 1) / 2) / max(1, npos * nneg))


THREE_WAY = ["snli_test", "mnli_dev_mismatched", "dnli2024_test", "fever_symmetric_v02_test", "cad_snli_revised_test",
             "xnli_en_test", "sick_test", "control_test"]
TWO_WAY_DOCS = ["summedits_qmsumm_2way", "summedits_sales_call_2way", "begin_v2_wow_test_2way", "summedits_samsum_2way"]


_DUMP = {}


def _dump():
    if "res" in _DUMP:
        json.dump(_DUMP["res"], open(_DUMP["path"], "w"), indent=2)


_PROBS = {}


def _save_probs(name, p):
    if _PROBS.get("dir"):
        os.makedirs(_PROBS["dir"], exist_ok=True)
        np.save(os.path.join(_PROBS["dir"], name + ".npy"), p)


def eval_sets(model, res, quick=False, docs=True):
    for name in THREE_WAY:
        rows = read(os.path.join(NLI, name + ".jsonl"))
        if quick:
            rows = random.Random(0).sample(rows, min(2000, len(rows)))
        t = time.time()
        p = model.probs([(r["premise"], r["hypothesis"]) for r in rows])
        _save_probs(name, p)
        gold = np.array([r["label"] == "entailment" for r in rows])
        res[name] = {"n": len(rows), "acc_3way": round(acc3(p, rows), 4),
                     "bal_acc_supported": round(bal_acc(supported(p), gold), 4), "secs": round(time.time() - t, 1)}
        print(name, res[name], flush=True)
        _dump()
    if quick or not docs:
        return
    for name in TWO_WAY_DOCS:
        rows = read(os.path.join(NLI, name + ".jsonl"))
        t = time.time()
        p = model.probs_chunked([(r["premise"], r["hypothesis"]) for r in rows])
        _save_probs(name, p)
        gold = np.array([r["label"] == "entailment" for r in rows])
        res[name] = {"n": len(rows), "bal_acc_supported": round(bal_acc(supported(p), gold), 4),
                     "roc_auc_p_entailment": round(auc(p[:, E], gold), 4), "secs": round(time.time() - t, 1)}
        print(name, res[name], flush=True)
        _dump()


def eval_qmsum(model, res, key="qmsum_val_pairs"):
    rows = read(os.path.join(HERE, "qmsum_val_pairs.jsonl"))
    p = model.probs([(r["premise"], r["hypothesis"]) for r in rows])
    _save_probs(key, p)
    gold = np.array([r["label"] == "entailment" for r in rows])
    sup = supported(p)
    by_kind = {}
    for r, s in zip(rows, sup):
        by_kind.setdefault(r["kind"], []).append(bool(s) == (r["label"] == "entailment"))
    res[key] = {"n": len(rows), "acc_3way": round(acc3(p, rows), 4), "bal_acc_supported": round(bal_acc(sup, gold), 4),
                "roc_auc_p_entailment": round(auc(p[:, E], gold), 4),
                "acc_by_kind": {k: round(float(np.mean(v)), 4) for k, v in sorted(by_kind.items())}}
    print(key, res[key], flush=True)
    return p


def tune(model):
    rows = read(os.path.join(NLI, "dnli2024_dev.jsonl"))
    q = read(os.path.join(MODELS, "train", "out", "qmsum_train_pairs.jsonl"))
    q = random.Random(0).sample(q, 1500)
    out = {}
    for name, rs in [("dnli2024_dev", rows), ("qmsum_train_sample", q)]:
        p = model.probs([(r["premise"], r["hypothesis"]) for r in rs])
        gold = np.array([r["label"] == "entailment" for r in rs])
        out[name] = (p, gold)
    grid = [round(x, 2) for x in np.arange(0.2, 0.91, 0.05)]
    table = []
    for te in grid:
        th = {"entailment": te, "contradiction": 0.5}
        row = {"entailment": te}
        for name, (p, gold) in out.items():
            row[name] = round(bal_acc(supported(p, th), gold), 4)
        row["mean"] = round(np.mean([row[n] for n in out]), 4)
        table.append(row)
        print(row)
    best = max(table, key=lambda r: r["mean"])
    print("best", best)
    return table, best


def latency(model, L=128, runs=50):
    ids = np.full((1, L), 1000, np.int64); ids[0, 0] = 101; ids[0, -1] = 102
    am = np.ones_like(ids); tt = np.zeros_like(ids); tt[0, L // 2:] = 1
    feed = {"input_ids": ids, "attention_mask": am, "token_type_ids": tt}
    for _ in range(5):
        model.s.run(None, feed)
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); model.s.run(None, feed); ts.append(time.perf_counter() - t)
    return round(float(np.median(ts)) * 1000, 2)


def parity_pairs(model, exact, n=20, out=None):
    """The 20 pairs the Rust test pins tract against: `probs` from onnxruntime computing the graph's exact maths
    (no graph optimisation), `probs_ort_default` from its default (fused int8) level for reference. Batch size 1."""
    rng = random.Random(1)
    src = []
    for name, k in [("snli_test", 5), ("mnli_dev_mismatched", 5), ("dnli2024_test", 4)]:
        src += [dict(r, source=name) for r in rng.sample(read(os.path.join(NLI, name + ".jsonl")), k)]
    src += [dict(r) for r in rng.sample(read(os.path.join(HERE, "qmsum_val_pairs.jsonl")), n - len(src))]
    pairs = [(r["premise"], r["hypothesis"]) for r in src]
    pe, pd = exact.probs(pairs, bs=1), model.probs(pairs, bs=1)
    with open(out or os.path.join(HERE, "parity_pairs.jsonl"), "w") as f:
        for r, a, b in zip(src, pe, pd):
            f.write(json.dumps({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"],
                                "source": r.get("source"), "probs": [round(float(x), 7) for x in a],
                                "probs_ort_default": [round(float(x), 7) for x in b]}, ensure_ascii=False) + "\n")


def parity_rows(n=200):
    rng = random.Random(2)
    return rng.sample(read(os.path.join(NLI, "snli_test.jsonl")), n // 2) + rng.sample(read(os.path.join(HERE, "qmsum_val_pairs.jsonl")), n // 2)


def diff(a, b):
    return {"max_abs_diff_probs": float(np.abs(a - b).max()), "mean_abs_diff_probs": float(np.abs(a - b).mean()),
            "argmax_agreement": float((a.argmax(1) == b.argmax(1)).mean())}


def tract_probs(binary, onnx_path, pairs):
    """Probabilities from tract (native) through the meetcite CLI: `meetcite score --pair` (the raw pair, no premise
    cleaning or windows) on a temporary model folder that holds this ONNX file, models/tokenizer.json and
    models/config.json."""
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.abspath(onnx_path), os.path.join(d, CFG["model_file"]))
        for f in ("config.json", CFG["tokenizer_file"]):
            os.symlink(os.path.join(MODELS, f), os.path.join(d, f))
        inp = os.path.join(d, "pairs.jsonl")
        with open(inp, "w") as f:
            for i, (a, b) in enumerate(pairs):
                f.write(json.dumps({"id": i, "premise": a, "hypothesis": b}, ensure_ascii=False) + "\n")
        out = subprocess.run([binary, "score", "--pair", "--input", inp, "--model", d], check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in out.splitlines() if l.strip()]
    assert [r["id"] for r in rows] == list(range(len(pairs)))
    return np.array([[r[l] for l in LABELS] for r in rows], dtype=np.float64)


def parity_200(model, exact, tract_bin=None, torch_exact=None, path=None):
    """tract (native) vs onnxruntime (default and exact) vs PyTorch on the same 200 pairs (100 SNLI test, 100 QMSum val),
    one pair at a time. torch_exact: a checkpoint holding the int8 file's dequantized weights (train/init_from_onnx.py),
    i.e. the same function in PyTorch."""
    rows = parity_rows()
    pairs = [(r["premise"], r["hypothesis"]) for r in rows]
    p = {"ort_default": model.probs(pairs, bs=1), "ort_exact": exact.probs(pairs, bs=1)}
    if tract_bin:
        p["tract"] = tract_probs(tract_bin, path, pairs)
    if torch_exact:
        p["torch"] = torch_probs(torch_exact, model, pairs)
    names = list(p)
    out = {"n": len(pairs), "batch": 1}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out[f"{a}_vs_{b}"] = diff(p[a], p[b])
    return out


def torch_probs(ckpt, model, pairs):
    sys.path.insert(0, os.path.join(MODELS, "train"))
    import torch
    from export import load_model
    torch.set_num_threads(2)
    m = load_model(ckpt)
    pt = np.zeros((len(pairs), 3))
    for i, (a, b) in enumerate(pairs):
        e = model.encode(a, b)
        with torch.no_grad():
            lg = m(input_ids=torch.tensor([e.ids]), attention_mask=torch.ones(1, len(e.ids), dtype=torch.long),
                   token_type_ids=torch.tensor([e.type_ids])).logits
        pt[i] = torch.softmax(lg.double(), -1)[0].numpy()
    return pt


def torch_parity(ckpt, model, n=200):
    rows = parity_rows(n)
    pairs = [(r["premise"], r["hypothesis"]) for r in rows]
    po = model.probs(pairs)
    pt = torch_probs(ckpt, model, pairs)
    return {"n": n, **diff(po, pt)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--f32")
    ap.add_argument("--torch-ckpt")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-sets", action="store_true")
    ap.add_argument("--model", help="ONNX file to evaluate (default: the shipped models/<config model_file>)")
    ap.add_argument("--results", help="results json to write (default: eval/results.json)")
    ap.add_argument("--parity-out", help="parity pairs jsonl to write (default: eval/parity_pairs.jsonl)")
    ap.add_argument("--save-probs", help="folder for per-set probability arrays (.npy)")
    ap.add_argument("--skip-docs", action="store_true", help="skip the chunked long-document 2-way sets")
    ap.add_argument("--tract", help="meetcite CLI binary (cargo build --release): adds tract to the 200-pair parity")
    ap.add_argument("--torch-exact", help="checkpoint with the int8 file's dequantized weights (init_from_onnx.py) for the 200-pair parity")
    ap.add_argument("--parity-only", action="store_true", help="only write parity_pairs.jsonl and results.json's parity_200")
    a = ap.parse_args()
    path = a.model or os.path.join(MODELS, CFG["model_file"])
    res_path = a.results or os.path.join(HERE, "results.json")
    _PROBS["dir"] = a.save_probs
    res = json.load(open(res_path)) if os.path.exists(res_path) else {}
    model = Model(path)
    if a.tune:
        table, best = tune(model)
        res["threshold_tuning"] = {"sets": ["dnli2024_dev", "qmsum_train_sample (1500 training pairs)"], "grid": table, "best": best}
        json.dump(res, open(res_path, "w"), indent=2)
        return
    exact = Model(path, exact=True)  # only the parity steps use it
    if a.parity_only:
        parity_pairs(model, exact, out=a.parity_out)
        res["parity_200"] = parity_200(model, exact, a.tract, a.torch_exact, path)
        print("parity_200", json.dumps(res["parity_200"], indent=1))
        json.dump(res, open(res_path, "w"), indent=2)
        return
    res["model_file"] = os.path.basename(path)
    res["size_mb"] = round(os.path.getsize(path) / 1e6, 2)
    res["thresholds"] = CFG["thresholds"]
    res["latency_ms_1x128_ort_2threads"] = latency(model)
    m1 = Model(path, threads=1)
    res["latency_ms_1x128_ort_1thread"] = latency(m1)
    res["sets"] = {}
    _DUMP.update(res=res, path=res_path)
    pq = eval_qmsum(model, res["sets"])
    if not a.skip_sets:
        eval_sets(model, res["sets"], quick=a.quick, docs=not a.skip_docs)
    parity_pairs(model, exact, out=a.parity_out)
    res["parity_200"] = parity_200(model, exact, a.tract, a.torch_exact, path)
    if a.f32:
        mf = Model(a.f32)
        d = {}
        for name in ["snli_test", "mnli_dev_mismatched"]:
            rows = random.Random(3).sample(read(os.path.join(NLI, name + ".jsonl")), 3000)
            pr = [(r["premise"], r["hypothesis"]) for r in rows]
            pi, pf = model.probs(pr), mf.probs(pr)
            d[name + "_3000"] = {"int8_acc": round(acc3(pi, rows), 4), "f32_acc": round(acc3(pf, rows), 4),
                                 "max_abs_diff_probs": round(float(np.abs(pi - pf).max()), 4),
                                 "argmax_agreement": round(float((pi.argmax(1) == pf.argmax(1)).mean()), 4)}
        tmp = {}
        eval_qmsum(mf, tmp, "f32")
        d["qmsum_val_pairs"] = {"int8_bal_acc": res["sets"]["qmsum_val_pairs"]["bal_acc_supported"],
                                "f32_bal_acc": tmp["f32"]["bal_acc_supported"],
                                "int8_acc_3way": res["sets"]["qmsum_val_pairs"]["acc_3way"], "f32_acc_3way": tmp["f32"]["acc_3way"]}
        res["int8_vs_f32"] = d
        print("int8_vs_f32", d)
    if a.torch_ckpt:
        res["parity_ort_int8_vs_torch_f32"] = torch_parity(a.torch_ckpt, model)
        if a.f32:
            res["parity_ort_f32_vs_torch_f32"] = torch_parity(a.torch_ckpt, Model(a.f32))
        print("parity", res.get("parity_ort_int8_vs_torch_f32"), res.get("parity_ort_f32_vs_torch_f32"))
    json.dump(res, open(res_path, "w"), indent=2)
    print("wrote", res_path)


if __name__ == "__main__":
    main()
