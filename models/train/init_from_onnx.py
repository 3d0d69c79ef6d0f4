"""Reconstruct the torch model (the BertForSequenceClassification that train.py builds) from the shipped weight-only
int8 ONNX file, so that training can continue from the shipped weights (the torch checkpoints of the first run were
lost).

  python init_from_onnx.py ../nli-minilm-l6-int8.onnx /work/ckpt/from_onnx.pt [parity_pairs.jsonl]

How the mapping works (no reliance on the anonymous onnx::MatMul_NNN numbering):
  * every DequantizeLinear node is evaluated exactly as onnxruntime does: y = (q - zero_point) * scale (float32,
    per-channel along its `axis`), giving an f32 tensor under the node's output name (which is the name the f32
    export used for that weight);
  * named initializers (m.bert....) map 1:1 onto the torch state dict (prefix "m." from export.Wrapper removed);
  * an anonymous MatMul weight W [in, out] is identified through the graph: the MatMul's output is consumed by an Add
    whose other input is a named bias initializer `<module>.bias`, so W belongs to `<module>.weight` and is stored
    transposed (nn.Linear keeps [out, in]).
Every torch parameter must be assigned exactly once, with the right shape; buffers (position_ids, token_type_ids)
keep the values of the base model. The script then checks torch vs onnxruntime (int8 file) probabilities on the
parity pairs (+ PARITY_EXTRA_N pairs of the jsonl in PARITY_EXTRA) and prints max |delta prob|, for onnxruntime with
graph optimizations disabled (exact graph semantics) and at its default level (fused int8 kernels, ~1e-2 off).

  PARITY_EXTRA=../eval/qmsum_val_pairs.jsonl PARITY_EXTRA_N=30 python init_from_onnx.py ../nli-minilm-l6-int8.onnx \
      /work/ckpt/from_onnx.pt           # 20 + 30 = 50 pairs
"""
import json, os, sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def dequantized_tensors(path):
    m = onnx.load(path)
    g = m.graph
    vals = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    vals[n.output[0]] = numpy_helper.to_array(a.t)
    out = {}
    dq_inputs = {x for n in g.node if n.op_type == "DequantizeLinear" for x in n.input}
    for n in g.node:
        if n.op_type != "DequantizeLinear":
            continue
        q = vals[n.input[0]]
        scale = vals[n.input[1]].astype(np.float32)
        zp = vals[n.input[2]] if len(n.input) > 2 and n.input[2] else np.zeros_like(scale, dtype=q.dtype)
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        shp = [1] * q.ndim
        shp[axis] = -1
        y = (q.astype(np.float32) - zp.astype(np.float32).reshape(shp)) * scale.reshape(shp)
        out[n.output[0]] = y.astype(np.float32)
    for name, a in vals.items():
        if name.startswith("m.") and a.dtype == np.float32 and name not in dq_inputs:
            out[name] = a
    return g, out


def map_to_state_dict(g, tensors):
    sd = {}
    consumers = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    for name, a in tensors.items():
        if name.startswith("m."):
            sd[name[2:]] = a
    for n in g.node:
        if n.op_type != "MatMul" or n.input[1] not in tensors or n.input[1].startswith("m."):
            continue
        adds = [c for c in consumers.get(n.output[0], []) if c.op_type == "Add"]
        bias = [x for c in adds for x in c.input if x.startswith("m.") and x.endswith(".bias")]
        if len(bias) != 1:
            raise SystemExit(f"cannot identify the module of MatMul {n.name} ({n.input[1]}): {bias}")
        key = bias[0][2:-len(".bias")] + ".weight"
        if key in sd:
            raise SystemExit(f"{key} assigned twice")
        sd[key] = tensors[n.input[1]].T.copy()
    return sd


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(MODELS, "nli-minilm-l6-int8.onnx")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "from_onnx.pt")
    pp = sys.argv[3] if len(sys.argv) > 3 else os.path.join(MODELS, "eval", "parity_pairs.jsonl")
    torch.set_num_threads(2)
    from transformers import BertForSequenceClassification
    from train import base_model_dir
    from data_mix import LABELS
    m = BertForSequenceClassification.from_pretrained(
        base_model_dir(), num_labels=3, attn_implementation="eager",
        id2label={i: l for i, l in enumerate(LABELS)}, label2id={l: i for i, l in enumerate(LABELS)})
    g, tensors = dequantized_tensors(src)
    sd = map_to_state_dict(g, tensors)
    ref = m.state_dict()
    params = dict(m.named_parameters())
    missing = [k for k in params if k not in sd]
    extra = [k for k in sd if k not in ref]
    if missing or extra:
        raise SystemExit(f"missing {missing} extra {extra}")
    new = {}
    for k, v in ref.items():
        if k in sd:
            if tuple(sd[k].shape) != tuple(v.shape):
                raise SystemExit(f"shape mismatch {k}: onnx {sd[k].shape} torch {tuple(v.shape)}")
            new[k] = torch.from_numpy(np.ascontiguousarray(sd[k])).to(v.dtype)
        else:
            new[k] = v  # buffers
    m.load_state_dict(new)
    m.eval()
    print(f"assigned {len(sd)} tensors onto {len(params)} parameters; buffers kept: {[k for k in ref if k not in sd]}")

    # parity: torch (reconstructed) vs onnxruntime on the int8 file
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(MODELS, "tokenizer.json"))
    tok.enable_truncation(256, strategy="only_first")
    # Two onnxruntime sessions: graph optimizations disabled = the graph's exact f32 semantics (what tract computes
    # after constant-folding the DequantizeLinear nodes), and the default level (ORT_ENABLE_ALL), which fuses
    # DequantizeLinear+MatMul into an int8 kernel and so differs from exact dequantized-f32 math by ~1e-2.
    sessions = {}
    for lvl in ["disable_all", "enable_all"]:
        so = ort.SessionOptions(); so.intra_op_num_threads = 2
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, "ORT_" + lvl.upper())
        sessions[lvl] = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    rows = [json.loads(l) for l in open(pp) if l.strip()]
    extra_rows = os.environ.get("PARITY_EXTRA")  # optional second jsonl (premise/hypothesis) to reach ~50 pairs
    if extra_rows:
        import random
        more = [json.loads(l) for l in open(extra_rows) if l.strip()]
        rows += random.Random(5).sample(more, min(int(os.environ.get("PARITY_EXTRA_N", "30")), len(more)))
    res = {"n": len(rows)}
    for lvl, sess in sessions.items():
        dmax, dsum, agree, stored_dmax = 0.0, 0.0, 0, 0.0
        for r in rows:
            e = tok.encode(r["premise"], r["hypothesis"])
            ids = np.array([e.ids], np.int64); am = np.ones_like(ids); tt = np.array([e.type_ids], np.int64)
            lo = sess.run(["logits"], {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]
            po = np.exp(lo - lo.max()); po /= po.sum()
            with torch.no_grad():
                pt = torch.softmax(m(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am),
                                     token_type_ids=torch.from_numpy(tt)).logits, -1).numpy()
            d = float(np.abs(po - pt).max())
            dmax = max(dmax, d); dsum += d; agree += int(po.argmax() == pt.argmax())
            if "probs" in r:
                stored_dmax = max(stored_dmax, float(np.abs(po[0] - np.array(r["probs"])).max()))
        res[lvl] = {"max_abs_diff_probs": dmax, "mean_of_per_pair_max": dsum / len(rows),
                    "argmax_agreement": agree / len(rows), "ort_vs_stored_parity_pairs_probs_max": stored_dmax}
    print("parity torch(reconstructed) vs onnxruntime(int8):", json.dumps(res))
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    torch.save({"model": m.state_dict(), "source": os.path.abspath(src), "parity": res}, dst)
    print("saved", dst)


if __name__ == "__main__":
    main()
