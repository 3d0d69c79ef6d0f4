"""Training / dev data mix (commercially usable sources only; see MODEL_CARD.md for licences)."""
import json, os, random

NLI = os.environ.get("NLI_DIR", "/work/shared/data/nli/normalized")
HERE = os.path.dirname(os.path.abspath(__file__))
QMSUM_TRAIN = os.environ.get("QMSUM_TRAIN_PAIRS", os.path.join(HERE, "out", "qmsum_train_pairs.jsonl"))
QMSUM_VAL = os.environ.get("QMSUM_VAL_PAIRS", os.path.join(HERE, "..", "eval", "qmsum_val_pairs.jsonl"))
LABELS = ["entailment", "neutral", "contradiction"]

# file -> number of pairs to take (None = all). Sampling is seeded.
TRAIN_MIX = {
    "snli_dev.jsonl": None,                        # CC BY-SA 4.0
    "mnli_dev_matched.jsonl": None,                # OANC / CC BY-SA 3.0 parts
    "cad_snli_original_train.jsonl": None,         # SNLI text CC BY-SA 4.0, repo Apache-2.0
    "cad_snli_revised_train.jsonl": None,
    "conjnli_adversarial_train.jsonl": 10000,      # MIT
    "mpe_train.jsonl": 6000,                       # released by authors (Flickr30k-based captions)
    "joci_train.jsonl": 6000,                      # released by authors
    "dnli2024_train.jsonl": None,                  # MIT repo (Spoken BNC / CHILDES dialogue)
    "fever_symmetric_v02_dev.jsonl": None,         # CC BY-SA 3.0
    "begin_v2_wow_dev_2way.jsonl": None,           # CC BY 4.0 (2-way)
    "dnc_megaveridicality_train_2way.jsonl": 3000, # MIT (2-way)
}


def read(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def load_train_mix(seed=42):
    rng = random.Random(seed)
    out = []
    for fn, n in TRAIN_MIX.items():
        rows = read(os.path.join(NLI, fn))
        if n is not None and n < len(rows):
            rows = rng.sample(rows, n)
        for r in rows:
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": fn[:-6]})
    for r in read(QMSUM_TRAIN):
        out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "qmsum_train"})
    return out


def load_dev_mix(seed=42, n_qmsum=300):
    rng = random.Random(seed + 1)
    out = []
    for fn in ["cad_snli_original_dev.jsonl", "dnli2024_dev.jsonl"]:
        for r in read(os.path.join(NLI, fn)):
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": fn[:-6]})
    q = read(QMSUM_VAL)
    for r in rng.sample(q, min(n_qmsum, len(q))):
        out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "qmsum_val_subset"})
    return out
