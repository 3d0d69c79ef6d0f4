"""Training / dev data mix (commercially usable sources only; see MODEL_CARD.md for licences)."""
import json, os, random

NLI = os.environ.get("NLI_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data", "nli", "normalized"))
HERE = os.path.dirname(os.path.abspath(__file__))
QMSUM_TRAIN = os.environ.get("QMSUM_TRAIN_PAIRS", os.path.join(HERE, "out", "qmsum_train_pairs.jsonl"))
# v2 (continued training) uses a larger QMSum-train pair file, see README step 4b
QMSUM_TRAIN_V2 = os.environ.get("QMSUM_TRAIN_PAIRS_V2", os.path.join(HERE, "out", "qmsum_train_pairs_v2.jsonl"))
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

# "v2": the mix of the continued-training step (started from the shipped v1 weights). All of v1's sources in full
# (the not-yet-used remainders of the four sampled sets), plus new sets whose licence as stated in
# /work/shared/data/nli/SOURCES.md allows commercial use, plus a larger QMSum-train pair file.
# A dict value caps the number of pairs per label (seeded sample), None = all.
# Checked and NOT used (see MODEL_CARD.md): rte / addone_rte / qnli / fracas / cb / commitmentbank (no licence
# stated that allows commercial use), wice (Common Crawl pages' own terms), dnc sentiment / verbnet / factuality /
# kg_relations / puns (per-example licences not stated here, puns CC BY-NC), fever_symmetric_v01_generated (366 of
# its 717 pairs are in the held-out fever_symmetric_v02_test), dnc_fw_nli_* (built from MNLI dev incl. the held-out
# mismatched part: exact overlaps), cad_snli_revised_dev (shares 401 premises with the dev-monitor set).
TRAIN_MIX_V2 = {
    "snli_dev.jsonl": None,                        # CC BY-SA 4.0
    "mnli_dev_matched.jsonl": None,                # OANC / CC BY-SA 3.0 parts
    "cad_snli_original_train.jsonl": None,         # SNLI text CC BY-SA 4.0, repo Apache-2.0
    "cad_snli_revised_train.jsonl": None,
    "conjnli_adversarial_train.jsonl": None,       # MIT (all 15k; v1 used 10k)
    "mpe_train.jsonl": None,                       # released by authors (all 9k; v1 used 6k)
    "joci_train.jsonl": None,                      # released by authors (all 8.4k; v1 used 6k)
    "dnli2024_train.jsonl": None,                  # MIT repo
    "fever_symmetric_v02_dev.jsonl": None,         # CC BY-SA 3.0
    "begin_v2_wow_dev_2way.jsonl": None,           # CC BY 4.0 (2-way)
    "dnc_megaveridicality_train_2way.jsonl": None, # MIT (2-way; all 9.45k; v1 used 3k)
    # new in v2
    "breaking_nli_test.jsonl": {"contradiction": 2000},  # CC BY-SA 4.0; single-word substitutions, 87% contradiction -> capped
    "scitail_dev_2way.jsonl": None,                # Apache-2.0 (2-way)
    "begin_v2_tc_dev_2way.jsonl": None,            # TopicalChat part, CDLA-Sharing 1.0 (2-way)
    "conjnli_dev.jsonl": None,                     # MIT
    "mpe_dev.jsonl": None,                         # same terms as mpe_train
    "joci_dev.jsonl": None,                        # same terms as joci_train
}

# "v3" (support check, issue 12): continued from the shipped v2 weights. The general sets of v2 sampled down (so the
# in-domain pairs are a third of the mix without forgetting SNLI/MNLI), the v2 QMSum pairs of the fit meetings only,
# and the support pairs of build_support_pairs.py (answer sentences vs their span windows, other-topic windows,
# edited claims, quote pairs, proposal-vs-decision turns) twice. The calib meetings (every 4th QMSum-train meeting)
# are left out everywhere: the support score is fitted on them.
SUPPORT_PAIRS = os.environ.get("SUPPORT_PAIRS", os.path.join(HERE, "out", "support_pairs.jsonl"))
TRAIN_MIX_V3 = {k: (v if isinstance(v, dict) else 0.5) for k, v in TRAIN_MIX_V2.items()}  # float = share of the file
TRAIN_MIX_V3.update({"snli_dev.jsonl": None, "mnli_dev_matched.jsonl": None})  # all: SNLI / MNLI must not slip

# "v5" (second support round, continued from v3's result): v3 plus claim-vs-evidence fact checking (FEVER-NLI
# binary dev, CC BY-SA 3.0, deduplicated against the held-out FEVER-symmetric test claims; Fool Me Twice dev,
# Apache-2.0) and the larger support pair file (SUPPORT_V5=1 build_support_pairs.py: more abstractive sentences,
# two wrong-span windows each).
TRAIN_MIX_V5 = dict(TRAIN_MIX_V3)
TRAIN_MIX_V5.update({"fever_nli_binary_dev_2way.jsonl": 4000, "fm2_dev.jsonl": None})
SUPPORT_PAIRS_V5 = os.environ.get("SUPPORT_PAIRS_V5", os.path.join(HERE, "out", "support_pairs_v5.jsonl"))

# "v2c" (the clean retrain, stage A, from the base encoder): v2 with the QMSum pairs of the fit meetings only, and the
# v3/v5 dev mix (no QMSum val for checkpoint selection), so that after stage B (v5 from stage A) no step of the
# model has seen a calib meeting and the support score's fit is on meetings new to the NLI, as val is.
MIXES = {"v1": (TRAIN_MIX, QMSUM_TRAIN), "v2": (TRAIN_MIX_V2, QMSUM_TRAIN_V2), "v3": (TRAIN_MIX_V3, QMSUM_TRAIN_V2),
         "v5": (TRAIN_MIX_V5, QMSUM_TRAIN_V2), "v2c": (TRAIN_MIX_V2, QMSUM_TRAIN_V2)}
# mixes whose QMSum pairs leave the calib meetings out and whose dev mix has no QMSum val
CALIB_HELD_OUT = ("v3", "v5", "v2c")


def read(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def load_train_mix(seed=42, mix="v1"):
    table, qmsum = MIXES[mix]
    rng = random.Random(seed)
    out = []
    for fn, n in table.items():
        rows = read(os.path.join(NLI, fn))
        if isinstance(n, dict):
            keep = []
            for lab in sorted({r["label"] for r in rows}):
                rl = [r for r in rows if r["label"] == lab]
                cap = n.get(lab)
                keep += rng.sample(rl, cap) if cap is not None and cap < len(rl) else rl
            rows = keep
        elif isinstance(n, float):
            rows = rng.sample(rows, int(len(rows) * n))
        elif n is not None and n < len(rows):
            rows = rng.sample(rows, n)
        if fn.startswith("fever_nli_binary"):
            # FEVER-symmetric test is held out: drop claims it shares
            held = {x["hypothesis"].strip().lower() for x in read(os.path.join(NLI, "fever_symmetric_v02_test.jsonl"))}
            rows = [r for r in rows if r["hypothesis"].strip().lower() not in held]
        for r in rows:
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": fn[:-6]})
    if mix in CALIB_HELD_OUT:
        from build_support_pairs import calib_meeting
        qrows = [r for r in read(qmsum) if not calib_meeting(r["meeting"])]
    else:
        qrows = read(qmsum)
    if mix in ("v3", "v5"):
        qrows = rng.sample(qrows, len(qrows) // 2)
        srows = read(SUPPORT_PAIRS if mix == "v3" else SUPPORT_PAIRS_V5)
        if mix == "v5":  # two wrong-span windows per sentence: one more copy of its supported window
            srows += [r for r in srows if r.get("kind") == "span"]
        for r in srows * 2:
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "qmsum_support"})
    for r in qrows:
        out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "qmsum_train"})
    return out


SUPPORT_DEV = os.environ.get("SUPPORT_DEV", os.path.join(HERE, "out", "support_dev.jsonl"))


def load_dev_mix(seed=42, n_qmsum=300, mix="v1"):
    rng = random.Random(seed + 1)
    out = []
    for fn in ["cad_snli_original_dev.jsonl", "dnli2024_dev.jsonl"]:
        for r in read(os.path.join(NLI, fn)):
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": fn[:-6]})
    if mix in CALIB_HELD_OUT:
        # QMSum val is the support evaluation's: never used for checkpoint selection from v3 on
        for r in read(SUPPORT_DEV):
            out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "support_dev"})
        return out
    q = read(QMSUM_VAL)
    for r in rng.sample(q, min(n_qmsum, len(q))):
        out.append({"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"], "source": "qmsum_val_subset"})
    return out
