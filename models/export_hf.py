"""Export a Hugging Face sequence-classification checkpoint (an NLI or fact-checking cross-encoder) into a folder
meetcite loads: an ONNX graph tract runs, `tokenizer.json` and `config.json`. Run it where the weights are; it never
downloads anything (offline mode, local files only).

  python models/export_hf.py --model ~/models/deberta-v3-base-mnli --out my-checker
  python models/export_hf.py --model ~/models/minicheck --out my-checker --supported-label 1 --int8
  meetcite verify --model my-checker ...          # or Verifier.load('/my-checker/') in JS

Families: BERT, RoBERTa / XLM-RoBERTa, DeBERTa (v1, v2, v3), ELECTRA; 3-way NLI (entailment / neutral /
contradiction) or 2-way checkers (supported / not supported).

What the export changes, and why: tract needs a plain graph. The attention is exported eager (no SDPA / flash
kernels) and, for the families that build their mask with transformers' mask utilities, the mask is the classic
additive one, `(1 - mask[:, None, None, :]) * finfo.min`, computed from the int64 input (the mask utilities trace
into vmap'd index arithmetic that tract does not run). The graph is checked against PyTorch with onnxruntime on
the parity pairs, and the tokenizer.json written is checked against the checkpoint's own tokenizer on the same
pairs (ids and type ids), so a label order, an input or a tokenizer that does not fit is found here and not in the
browser. `--int8` adds weight-only int8 (the form meetcite ships: per-channel int8 weights, f32 compute).
DeBERTa v1 computes its relative-attention span from the sequence length (`min(seq, max_relative_positions)`),
which tract cannot bound (`GatherElements: Undetermined symbol`); the export fixes the span at
`max_relative_positions`, which gives the same logits for every length up to it (the slice and the clamp select the
same table rows; checked against the unpatched model below) at the cost of scoring every relative position.
Both rewrites are checked: the reference logits come from the checkpoint as loaded, before any patch.

Labels: meetcite must know which output is which. Named labels in the checkpoint's `id2label` (entailment /
neutral / contradiction, or supported / unsupported and their common spellings) are used as they are; generic
ones (LABEL_0, ...) are refused unless `--labels` names them in order or `--supported-label` gives the index of
the "supported" output of a 2-way checker.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# model_type in the checkpoint's config.json -> the family meetcite's config names (the loader's list)
FAMILIES = {"bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "deberta": "deberta",
            "deberta-v2": "deberta-v2", "electra": "electra"}
# label spellings meetcite's loader understands (src/nli.rs `label_slot`); the export writes the canonical ones
ENTAIL = {"entailment", "entails", "entailed", "supported", "support", "consistent", "faithful", "true"}
NEUTRAL = {"neutral"}
CONTRA = {"contradiction", "contradicts", "contradicted"}
UNSUPPORTED = {"not_entailment", "non_entailment", "not_entailed", "unsupported", "not_supported", "inconsistent",
               "hallucinated", "false"}

PAIRS = [
    ("Dana Okafor: I think we should offer a ten percent discount for the pilot.", "The team agreed on a ten percent discount."),
    ("Sam Lee: And the pilot stays at three months.", "The pilot runs for three months."),
    ("The meeting was moved to Tuesday because the manager was ill.", "The meeting was rescheduled."),
    ("A man is playing a guitar on stage.", "Nobody plays music."),
    ("Priya: We'll ship the beta on the fourth of June, not before.", "The beta ships in May."),
    ("Okay. Um. So the budget for the remote is twelve fifty euro, yeah.", "The remote's budget is 12.50 euros."),
    # long enough (~150 tokens) for DeBERTa's log-bucketed relative positions beyond the linear range
    ("Project Manager: Right, so where were we. Um the last meeting we decided on the buttons, the scroll wheel and "
     "the colour scheme, and marketing came back with the survey results. Marketing: Yeah, so of the hundred people "
     "we asked, most said the remote controls they have are ugly, and about half said they lose them somewhere in "
     "the room at least once a week. Industrial Designer: Which is why I'd put a little speaker in it, so it beeps "
     "when you whistle. User Interface: That costs though. Project Manager: It does, and we have twelve fifty per "
     "unit, so let's park the beeper and decide next time, after the cost sheet is in.",
     "The team decided to add a speaker that beeps when you whistle."),
]


def canonical_labels(id2label, labels_arg, supported_arg):
    """The checkpoint's labels, by output index, in meetcite's spelling; exit with a message when they are unclear."""
    n = len(id2label)
    if labels_arg:
        names = [x.strip() for x in labels_arg.split(",")]
        if len(names) != n:
            sys.exit(f"--labels names {len(names)} labels, the model has {n} outputs")
    elif supported_arg is not None:
        if n != 2 or supported_arg not in (0, 1):
            sys.exit(f"--supported-label is for 2-way checkers (index 0 or 1); this model has {n} outputs")
        names = ["supported" if i == supported_arg else "unsupported" for i in range(2)]
    else:
        names = [id2label[i] for i in range(n)]
    out = []
    for i, name in enumerate(names):
        k = name.strip().lower().replace("-", "_").replace(" ", "_")
        if n == 3 and k in ENTAIL - {"supported", "support", "true"}:
            out.append("entailment")
        elif n == 3 and k in NEUTRAL:
            out.append("neutral")
        elif n == 3 and k in CONTRA:
            out.append("contradiction")
        elif n == 2 and k in ENTAIL:
            out.append("supported")
        elif n == 2 and k in UNSUPPORTED:
            out.append("unsupported")
        else:
            sys.exit(f"label {i} is {name!r}: meetcite cannot tell what it means for a {n}-way model. Give --labels "
                     f"(e.g. entailment,neutral,contradiction in output order) or, for a 2-way checker, "
                     f"--supported-label INDEX")
    if len(set(out)) != n:
        sys.exit(f"labels {names} map to {out}: each must appear once")
    return out


def classic_mask(*args, **kwargs):
    """Stand-in for transformers' `create_bidirectional_mask`: the additive [b, 1, 1, k] mask eager attention adds."""
    mask = kwargs.get("attention_mask")
    emb = kwargs.get("inputs_embeds", kwargs.get("input_embeds"))
    if mask is None:
        return None
    dtype = emb.dtype if emb is not None else torch.float32
    return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def fixed_span(query_layer, key_layer, max_relative_positions):
    """Stand-in for DeBERTa v1's `compute_attention_span` (`min(max(q, k), max_relative_positions)`): the span at
    `max_relative_positions` whatever the length. The rows of the relative table it selects are the same (the
    slice starts `span` rows lower and every index is `span` higher; the clamp is inactive while the length is at
    most `max_relative_positions`, and the original returns that same span beyond it), and the graph no longer
    carries a length-dependent `min` that tract cannot bound."""
    return torch.tensor(max_relative_positions)


def patch_graph(model_type):
    """Route the families that use transformers' mask utilities to `classic_mask`, and DeBERTa v1 to `fixed_span`
    (see the module doc). The modeling functions are looked up at call time, so a loaded model sees the patch."""
    import importlib
    mod = {"xlm-roberta": "xlm_roberta", "deberta-v2": "deberta_v2"}.get(model_type, model_type)
    try:
        m = importlib.import_module(f"transformers.models.{mod}.modeling_{mod}")
    except ImportError:
        return
    if hasattr(m, "create_bidirectional_mask"):
        m.create_bidirectional_mask = classic_mask
    if model_type == "deberta":
        if not hasattr(m, "compute_attention_span"):
            sys.exit("this transformers' DeBERTa v1 has no compute_attention_span to fix; export with transformers 5.x")
        m.compute_attention_span = fixed_span


class Wrapper(torch.nn.Module):
    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *xs):
        return self.model(**dict(zip(self.names, xs))).logits


def encode(tok, pairs, names, pad_id):
    """The pairs as the checkpoint's tokenizer encodes them, padded into one batch (pad id, mask 0)."""
    # token type ids are asked for: some tokenizers leave them out by default, and a model trained with them would
    # silently see segment 0 everywhere
    enc = [tok(p, h, truncation="only_first", max_length=512, return_token_type_ids=True) for p, h in pairs]
    L = max(len(e["input_ids"]) for e in enc)
    out = {}
    for name in names:
        fill = pad_id if name == "input_ids" else 0
        out[name] = np.array([list(e[name]) + [fill] * (L - len(e[name])) for e in enc], dtype=np.int64)
    return enc, out


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a local checkpoint folder (config.json, weights, tokenizer files)")
    ap.add_argument("--out", required=True, help="folder to write model.onnx, tokenizer.json, config.json")
    ap.add_argument("--name", help="the model's name in config.json (default: the checkpoint folder's name)")
    ap.add_argument("--labels", help="label names in output order, when the checkpoint's id2label is generic")
    ap.add_argument("--supported-label", type=int, help="2-way checkers: index of the 'supported' output")
    ap.add_argument("--max-length", type=int, help="tokens per pair (default: the model's, at most 512)")
    ap.add_argument("--int8", action="store_true", help="also write weight-only int8 (model-int8.onnx) and use it")
    ap.add_argument("--pairs", help="JSONL of {premise, hypothesis} for the parity check (default: built-in pairs)")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max |dp| onnxruntime vs PyTorch (f32)")
    a = ap.parse_args(argv)

    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    hf_cfg = AutoConfig.from_pretrained(a.model, local_files_only=True)
    model_type = hf_cfg.model_type
    if model_type not in FAMILIES:
        sys.exit(f"model_type {model_type!r} is not a family meetcite exports (known: {', '.join(sorted(FAMILIES))})")
    id2label = {int(k): v for k, v in hf_cfg.id2label.items()}
    if len(id2label) not in (2, 3):
        sys.exit(f"the model has {len(id2label)} outputs; meetcite takes 3-way NLI or 2-way supported/unsupported checkers")
    labels = canonical_labels(id2label, a.labels, a.supported_label)

    model = AutoModelForSequenceClassification.from_pretrained(a.model, local_files_only=True, attn_implementation="eager")
    model.eval()
    tok = AutoTokenizer.from_pretrained(a.model, local_files_only=True, use_fast=True)
    if not getattr(tok, "is_fast", False) or getattr(tok, "backend_tokenizer", None) is None:
        sys.exit("the checkpoint has no fast tokenizer (tokenizer.json); meetcite runs the `tokenizers` crate")

    pos = getattr(hf_cfg, "max_position_embeddings", 512) or 512
    if model_type in ("roberta", "xlm-roberta"):
        pos -= 2  # RoBERTa's positions start after the padding index
    max_length = min(a.max_length or 512, pos)
    type_vocab = getattr(hf_cfg, "type_vocab_size", 0) or 0
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if type_vocab > 1 or model_type == "bert" else [])
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0

    pairs = PAIRS
    if a.pairs:
        pairs = [(d["premise"], d["hypothesis"]) for d in map(json.loads, open(a.pairs)) if d]

    os.makedirs(a.out, exist_ok=True)
    tok_path = os.path.join(a.out, "tokenizer.json")
    tok.backend_tokenizer.save(tok_path)
    # the file meetcite reads must encode pairs as the checkpoint's tokenizer does
    from tokenizers import Tokenizer
    saved = Tokenizer.from_file(tok_path)
    saved.no_padding()
    saved.no_truncation()
    enc, feeds = encode(tok, pairs, names, pad_id)
    for (p, h), e in zip(pairs, enc):
        s = saved.encode(p, h)
        if list(s.ids) != list(e["input_ids"]):
            sys.exit(f"tokenizer.json encodes {p[:40]!r} / {h[:40]!r} differently from the checkpoint's tokenizer")
        if "token_type_ids" in names and list(s.type_ids) != list(e["token_type_ids"]):
            sys.exit(f"tokenizer.json gives other token type ids than the checkpoint's tokenizer for {p[:40]!r}")

    w = Wrapper(model, names).eval()
    args = tuple(torch.from_numpy(feeds[n]) for n in names)
    with torch.no_grad():
        # the reference is the checkpoint as transformers runs it; the patched graph must give the same logits
        ref = model(**{n: torch.from_numpy(feeds[n]) for n in names}).logits.numpy()
        patch_graph(model_type)
        got = w(*args).numpy()
    if np.abs(ref - got).max() > 1e-5:
        sys.exit(f"the export's rewrites (classic mask, fixed span) change the model's logits by {np.abs(ref - got).max():.2e}: not exported")
    f32 = os.path.join(a.out, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(w, args, f32, input_names=names, output_names=["logits"], opset_version=a.opset, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"logits": {0: "batch"}})
    import onnx
    graph_inputs = [i.name for i in onnx.load(f32).graph.input]
    if graph_inputs != names:
        # tracing drops inputs the model never reads (token_type_ids of a model without type embeddings)
        names = graph_inputs
        feeds = {n: feeds[n] for n in names}

    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1

    def run(path):
        """Each pair alone, at its own length (batch 1, no padding: how meetcite scores), so a length the tracer
        baked into the graph shows here, against PyTorch's padded batch."""
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        rows = []
        for e in enc:
            rows.append(s.run(["logits"], {n: np.array([e[n]], dtype=np.int64) for n in names})[0][0])
        return softmax(np.array(rows, dtype=np.float64))

    p_ref = softmax(ref.astype(np.float64))
    p_ort = run(f32)
    d = float(np.abs(p_ort - p_ref).max())
    print(f"onnxruntime f32 (one pair per run) vs PyTorch (padded batch): max |dp| {d:.2e} over {len(pairs)} pairs")
    if d > a.tolerance:
        sys.exit(f"the exported graph differs from PyTorch by {d:.2e} > {a.tolerance}")
    model_file = "model.onnx"
    p_q = None
    if a.int8:
        sys.path.insert(0, os.path.join(HERE, "train"))
        from quantize import quantize
        q = os.path.join(a.out, "model-int8.onnx")
        quantize(f32, q)
        p_q = run(q)
        print(f"int8 (weight-only) vs PyTorch: max |dp| {float(np.abs(p_q - p_ref).max()):.2e}; "
              f"{os.path.getsize(q) / 1e6:.1f} MB (f32 {os.path.getsize(f32) / 1e6:.1f} MB)")
        model_file = "model-int8.onnx"

    config = {
        "name": a.name or os.path.basename(os.path.normpath(a.model)),
        "architecture": FAMILIES[model_type],
        "model_file": model_file,
        "tokenizer_file": "tokenizer.json",
        "max_length": max_length,
        "id2label": {str(i): l for i, l in enumerate(labels)},
        "inputs": names,
        "output": "logits",
        "pad_token_id": pad_id,
        # meetcite's decision rule on these probabilities; no support-score weights: those are fitted per model
        # (models/train/fit_support.py), and without them the score is P(entailment)
        "thresholds": {"entailment": 0.5, "contradiction": 0.5},
        "exported_from": {"model_type": model_type, "transformers": __import__("transformers").__version__,
                          "torch": torch.__version__, "opset": a.opset},
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    # the probabilities of the parity pairs, in meetcite's label order, for checks downstream (tests pin tract to
    # these): PyTorch f32, onnxruntime on model.onnx and, with --int8, on model-int8.onnx
    with open(os.path.join(a.out, "parity.jsonl"), "w") as f:
        for i, (p, h) in enumerate(pairs):
            row = {"premise": p, "hypothesis": h, "torch": dict(zip(labels, map(float, p_ref[i]))),
                   "onnxruntime": dict(zip(labels, map(float, p_ort[i])))}
            if p_q is not None:
                row["onnxruntime_int8"] = dict(zip(labels, map(float, p_q[i])))
            f.write(json.dumps(row) + "\n")
    print(f"wrote {a.out}: {model_file}, tokenizer.json, config.json ({config['architecture']}, "
          f"{len(labels)}-way, inputs {names}, max_length {max_length}), parity.jsonl")


if __name__ == "__main__":
    main()
