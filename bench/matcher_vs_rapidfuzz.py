"""Quote matching: meetcite (CLI `match`, native) vs rapidfuzz partial_ratio_alignment (threshold 90)
on the same labelled QMSum-derived cases. Prints accuracy and pairs/s side by side.
Usage: python3 bench/matcher_vs_rapidfuzz.py [tests/fixtures/quotes_test.jsonl] (after cargo build --release)"""
import json, subprocess, sys, time
from rapidfuzz import fuzz, utils

path = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/quotes_test.jsonl"
cases = [json.loads(l) for l in open(path)]
REP = 20
big = path + ".x20.jsonl"
with open(big, "w") as f:
    for _ in range(REP):
        for c in cases:
            f.write(json.dumps({"id": c["id"], "text": c["text"], "quote": c["quote"]}) + "\n")
t = time.perf_counter()
out = subprocess.run(["./target/release/meetcite", "match", "--input", big], capture_output=True, text=True, check=True).stdout.splitlines()
mc_time = time.perf_counter() - t
mc = [json.loads(l)["matched"] for l in out[: len(cases)]]
t = time.perf_counter()
for _ in range(REP):
    rf = [fuzz.partial_ratio_alignment(c["quote"], c["text"], processor=utils.default_process).score >= 90 for c in cases]
rf_time = time.perf_counter() - t

def acc(pred):
    P = [p for p, c in zip(pred, cases) if c["label"]]
    N = [p for p, c in zip(pred, cases) if not c["label"]]
    tpr, tnr = sum(P) / len(P), sum(not x for x in N) / len(N)
    return tpr, tnr, (tpr + tnr) / 2

n = len(cases) * REP
print(f"{'matcher':<34}{'TPR':>7}{'TNR':>7}{'bal.acc':>9}{'pairs/s':>11}")
for name, pred, tm in [("meetcite native (CLI, incl. I/O)", mc, mc_time), ("rapidfuzz partial_ratio_alignment", rf, rf_time)]:
    a = acc(pred)
    print(f"{name:<34}{a[0]:>7.3f}{a[1]:>7.3f}{a[2]:>9.3f}{n / tm:>11.0f}")
import os; os.remove(big)
