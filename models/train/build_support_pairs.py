"""In-domain training pairs for the support check, from QMSum **train** (MIT), in two disjoint parts:

  * fit meetings (3 of every 4, sorted by name): NLI training pairs, premise = a window of <= BUDGET tokens
      - entailment:     an answer sentence vs the window of its relevant span that covers it best
      - non_entailment: the same sentence vs the best-covering window of another topic of the meeting (hard negative)
      - edited copies ("train" phrase set, see claims.py) vs the supporting window: a changed number or negation
        (contradiction), a swapped speaker, a proposal reported as a decision, a hedge made certain, a wrong date
        (non_entailment, trained 2-way)
      - the product's pair: the claim vs its quote with the speaker (`Speaker: quote`), and edited claims vs it
  * calib meetings (every 4th): records in the evaluation's shape (claims.records, "train" phrases) on which the
    support score's weights and threshold are fitted (models/train/fit_support.py). The NLI model never trains on
    them, so its probabilities there are as honest as on new meetings.

Usage: python build_support_pairs.py OUT_PAIRS.jsonl OUT_CALIB.jsonl [BUDGET=200]
"""
import collections, json, os, random, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claims  # noqa: E402
from build_qmsum_pairs import Meeting  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

TOKENIZER = os.environ.get("TOKENIZER", os.path.join(HERE, "..", "tokenizer.json"))


def calib_meeting(name, names=sorted(n for n, _ in claims.meetings("train"))):
    return names.index(name) % 4 == 3


def pairs(budget, seed=5, calib=False, rounds=2, min_cov=0.4, wrong=1):
    tok = Tokenizer.from_file(TOKENIZER)
    rng = random.Random(seed)
    ph = claims.PHRASES["train"]
    out = []

    def add(kind, premise, hyp, label, name):
        out.append({"premise": premise, "hypothesis": hyp, "label": label, "source": "qmsum_support", "kind": kind,
                    "meeting": name})

    for name, d in claims.meetings("train"):
        if calib_meeting(name) != calib:
            continue
        mt = Meeting(d, tok)
        nt = len(mt.turns)
        speakers = sorted({t["speaker"] for t in d["meeting_transcripts"]})
        iso = claims.meeting_date(name)
        for q in d["specific_query_list"]:
            ranges = [(int(a), int(b)) for a, b in q.get("relevant_text_span", [])]
            if not ranges:
                continue
            others = claims.other_topic_ranges(d, ranges)
            for sent in claims.sentences(q["answer"]):
                target = set(claims.words(sent))
                if len(target) < 3:
                    continue
                best, bsc = None, -1
                for a, b in ranges:
                    w, sc = mt.window(a, min(b, nt - 1), budget, target)
                    if w and sc > bsc:
                        best, bsc = w, sc
                if not best or bsc < min_cov:
                    continue
                prem = "\n".join(t[1] for t in best)
                add("span", prem, sent, "entailment", name)
                if others:
                    cands = []
                    for rs in others:
                        for a, b in rs:
                            w, sc = mt.window(a, min(b, nt - 1), budget, target)
                            if w:
                                cands.append((sc, w))
                    if cands:
                        cands.sort(key=lambda c: -c[0])
                        picks = [cands[0] if rng.random() < 0.6 else rng.choice(cands)]
                        if wrong > 1 and len(cands) > 1:
                            picks.append(rng.choice(cands[1:]))
                        for sc, w in picks:
                            add("wrong_span", "\n".join(t[1] for t in w), sent, "non_entailment", name)
                ev_speakers = sorted({t[1].split(": ", 1)[0] for t in best})
                seen = set()
                for _ in range(rounds):  # a second draw gives other numbers, speakers and negation sites
                    for kind, e in claims.edits(sent, speakers, ev_speakers, iso, "train", rng).items():
                        if e not in seen:
                            seen.add(e)
                            add("edit_" + kind, prem, e,
                                "contradiction" if kind in ("number", "negation") else "non_entailment", name)
                if rng.random() < 0.25:
                    head = f"Meeting {name} | {iso}\n"
                    add("date", head + prem, claims.with_date(sent, iso, ph), "entailment", name)
                    add("edit_date", head + prem, claims.with_date(sent, claims.other_date(iso, rng), ph),
                        "non_entailment", name)
                # the quote pair: "Speaker: quote" as the premise (what verify scores beside the context window)
                lines = [(t[0], t[1].split(": ", 1)[0], t[1].split(": ", 1)[1]) for t in best]
                bq = claims.best_quote(lines, sent)
                if bq and len(set(claims.words(bq[2])) & target) >= max(3, len(target) // 2):
                    qp = f"{bq[1]}: {bq[2]}"
                    add("quote", qp, sent, "entailment", name)
                    es = claims.edits(sent, speakers, [bq[1]], iso, "train", rng)
                    if es:
                        k = rng.choice(sorted(es))
                        add("quote_edit_" + k, qp, es[k], "contradiction" if k in ("number", "negation") else
                            "non_entailment", name)
    return out


PROPOSAL_TURN = re.compile(r"\b(?:I think |maybe |perhaps |I guess )?we (should|could|might) ((?:\w+[ ,']*){3,14}?\w+)\s*[.!]")


def proposal_turns(seed=8, cap=1500):
    """Proposal vs decision on real turns: "<Speaker>: ... I think we should X ..." entails "<Speaker> suggested that
    they should X" and does not entail "The team decided to X" (the premise is the turn and the one before it, so no
    later agreement is in view)."""
    rng = random.Random(seed)
    out = []
    for name, d in claims.meetings("train"):
        if calib_meeting(name):
            continue
        tr = d["meeting_transcripts"]
        for i, t in enumerate(tr):
            c = claims.clean(t["content"])
            m = PROPOSAL_TURN.search(c)
            if not m or re.search(r"\b(not|n't|never)\b", m.group(2)):
                continue
            vp = m.group(2).strip(" ,")
            prev = f"{tr[i - 1]['speaker']}: {claims.clean(tr[i - 1]['content'])}\n" if i > 0 else ""
            prem = prev + f"{t['speaker']}: {c}"
            modal = m.group(1)
            out.append({"premise": prem, "hypothesis": f"{t['speaker']} suggested that they {modal} {vp}.",
                        "label": "entailment", "source": "qmsum_support", "kind": "proposal_turn", "meeting": name})
            hyp = rng.choice([f"The team decided to {vp}.", f"Everyone agreed to {vp}.", f"It was decided that they would {vp}."])
            out.append({"premise": prem, "hypothesis": hyp, "label": "non_entailment", "source": "qmsum_support",
                        "kind": "proposal_turn_decision", "meeting": name})
    rng.shuffle(out)
    return out[:cap * 2]


if __name__ == "__main__":
    if sys.argv[1] == "--dev":
        # a small dev-monitor set of the same pairs from the calib meetings (checkpoint selection only)
        ps = pairs(int(sys.argv[3]) if len(sys.argv) > 3 else 200, seed=6, calib=True, rounds=1)
        random.Random(0).shuffle(ps)
        with open(sys.argv[2], "w") as f:
            for p in ps[:800]:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
        sys.exit(0)
    out_pairs, out_calib = sys.argv[1], sys.argv[2]
    if out_calib == "-":
        out_calib = None
    budget = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    # v5 (second support round): sentences down to 30 % coverage and two wrong-span windows each
    v5 = os.environ.get("SUPPORT_V5") == "1"
    ps = (pairs(budget, min_cov=0.3, wrong=2) if v5 else pairs(budget)) + proposal_turns()
    with open(out_pairs, "w") as f:
        for p in ps:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(len(ps), "pairs", collections.Counter(p["kind"] for p in ps), collections.Counter(p["label"] for p in ps))
    if out_calib is None:
        sys.exit(0)
    cal = claims.records("train", "train", seed=99, keep=calib_meeting)
    with open(out_calib, "w") as f:
        for r in cal:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(len(cal), "calib records", collections.Counter(r["kind"] for r in cal))
