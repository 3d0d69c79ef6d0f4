"""Export a trained checkpoint to ONNX (f32), check onnxruntime == torch, then quantize (weight-only int8) and
write the shipped files into models/.

  python export.py /work/ckpt/best.pt            # -> train/out/nli-minilm-l6-f32.onnx, ../nli-minilm-l6-int8.onnx
  python export.py /work/ckpt2/final.pt out/candidate-int8.onnx out/candidate-f32.onnx
        # CANDIDATE paths: the shipped model and models/config.json are left untouched

The graph is tract-friendly: eager attention, a classic additive 4-D mask computed from the int64 mask, no
HF mask utilities; inputs input_ids / attention_mask / token_type_ids (int64 [batch, seq]), output logits [batch, 3].
"""
import json, os, shutil, sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from train import base_model_dir, weights_of  # noqa: E402
from data_mix import LABELS  # noqa: E402

CONFIG = {"name": "nli-minilm-l6", "model_file": "nli-minilm-l6-int8.onnx", "tokenizer_file": "tokenizer.json",
          "max_length": 256, "id2label": {str(i): l for i, l in enumerate(LABELS)},
          "inputs": ["input_ids", "attention_mask", "token_type_ids"], "output": "logits",
          "thresholds": {"entailment": 0.5, "contradiction": 0.5}, "do_lower_case": True}


class Wrapper(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        bert = self.m.bert
        h = bert.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e4
        for layer in bert.encoder.layer:
            out = layer(h, attention_mask=ext)
            h = out[0] if isinstance(out, (tuple, list)) else out
        pooled = bert.pooler(h)
        return self.m.classifier(pooled)


def load_model(ckpt):
    from transformers import BertForSequenceClassification
    base = base_model_dir()
    m = BertForSequenceClassification.from_pretrained(base, num_labels=3, attn_implementation="eager",
                                                      id2label={i: l for i, l in enumerate(LABELS)})
    # a train.py checkpoint or a --carry file (int8 weights per row)
    m.load_state_dict(weights_of(torch.load(ckpt, weights_only=False, map_location="cpu"), m.state_dict()))
    m.eval()
    return m


def main():
    ckpt = sys.argv[1]
    out_dir = os.path.join(HERE, "out")
    os.makedirs(out_dir, exist_ok=True)
    f32 = sys.argv[3] if len(sys.argv) > 3 else os.path.join(out_dir, "nli-minilm-l6-f32.onnx")
    torch.set_num_threads(2)
    m = load_model(ckpt)
    w = Wrapper(m).eval()
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(MODELS, "tokenizer.json"))
    ex = [("The meeting was moved to Tuesday because the manager was ill.", "The meeting was rescheduled."),
          ("A man is playing a guitar.", "Nobody plays music.")]
    encs = tok.encode_batch(ex)
    L = max(len(e.ids) for e in encs)
    ids = torch.tensor([e.ids + [0] * (L - len(e.ids)) for e in encs])
    am = torch.tensor([[1] * len(e.ids) + [0] * (L - len(e.ids)) for e in encs])
    tt = torch.tensor([e.type_ids + [0] * (L - len(e.ids)) for e in encs])
    with torch.no_grad():
        ref = m(input_ids=ids, attention_mask=am, token_type_ids=tt).logits
        got = w(ids, am, tt)
    print("wrapper vs HF max abs diff", (ref - got).abs().max().item())
    torch.onnx.export(w, (ids, am, tt), f32, input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in ["input_ids", "attention_mask", "token_type_ids"]} |
                      {"logits": {0: "batch"}})
    import onnxruntime as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 2
    s = ort.InferenceSession(f32, so, providers=["CPUExecutionProvider"])
    o = s.run(["logits"], {"input_ids": ids.numpy(), "attention_mask": am.numpy(), "token_type_ids": tt.numpy()})[0]
    print("ort f32 vs torch max abs logit diff", float(np.abs(o - ref.numpy()).max()))
    from quantize import quantize
    shipped = os.path.join(MODELS, CONFIG["model_file"])
    q = sys.argv[2] if len(sys.argv) > 2 else shipped
    quantize(f32, q)
    s2 = ort.InferenceSession(q, so, providers=["CPUExecutionProvider"])
    o2 = s2.run(["logits"], {"input_ids": ids.numpy(), "attention_mask": am.numpy(), "token_type_ids": tt.numpy()})[0]
    print("int8 logits", o2.tolist(), "f32", o.tolist())
    print("size MB", os.path.getsize(q) / 1e6)
    if os.path.abspath(q) != os.path.abspath(shipped):
        print("candidate written to", q, "(models/config.json not touched)")
        return
    cfg_path = os.path.join(MODELS, "config.json")
    cfg = dict(CONFIG)
    if os.path.exists(cfg_path):  # keep tuned thresholds
        old = json.load(open(cfg_path))
        cfg["thresholds"] = old.get("thresholds", cfg["thresholds"])
        if "support" in old:
            # the support score's weights were fitted for the previous weights' probabilities
            print("models/config.json: support weights removed (they belong to the old weights); "
                  "run fit_support.py for these")
    json.dump(cfg, open(cfg_path, "w"), indent=2)
    print("wrote", q, cfg_path)


if __name__ == "__main__":
    main()
