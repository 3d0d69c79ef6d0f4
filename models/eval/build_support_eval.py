"""Build the support evaluation set from QMSum **val** (MIT): claims written by people (answer sentences), edited
copies of them, and the product's claim + quote shape. Evaluation only: nothing here is ever trained on, and the
edits use the "eval" phrase set (the training pairs use a disjoint one). See models/train/claims.py.

    python models/eval/build_support_eval.py [OUT.jsonl]     (default models/eval/support_eval.jsonl)
"""
import collections, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train"))
import claims  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "support_eval.jsonl")
recs = claims.records("val", "eval", seed=2024)
with open(out, "w") as f:
    for r in recs:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(len(recs), "records ->", out)
print(collections.Counter(r["kind"] for r in recs))
