"""Build meeting-style NLI pairs from QMSum (MIT) transcripts.

For each sentence of a human answer to a specific query:
  * entailment:    sentence vs. the window of turns inside its relevant_text_span that best covers it
                   (content-word overlap; windows trimmed to a token budget)
  * neutral:       sentence vs. a window of turns far from every relevant span of that query
  * contradiction: the sentence with a number, a speaker name/role, a polarity (negation) or an antonym
                   changed, vs. the same entailment window.

Usage: python build_qmsum_pairs.py SPLIT BUDGET OUT.jsonl [N_CONTRA]   (SPLIT = train | val)
Env: ATTR_PER_MEETING (default 25) attribution claims per meeting; ATTR_BOTH=1 gives every attribution claim both a
speaker-swap and a second (number-preferred) contradiction (used for the v2 training pairs only).
Deterministic (seeded).
"""
import json, os, random, re, sys, glob

from tokenizers import Tokenizer

QMSUM = os.environ.get("QMSUM_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data", "qmsum"))
STOP = set("""a an the and or but of to in on at for with by from as is are was were be been being it its this that
these those they them their he she his her we our you your i me my there here which who whom what when where why how
also would could should will can may might must do did does done have has had not no so than then too very just into
about over under up down out more most some any all each other such only own same both few many much one two three
said say says team group meeting discussed discussion mentioned thought think felt talked""".split())

NUMWORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty", "fifty", "hundred"]
ANTONYMS = {
    "agreed": "disagreed", "disagreed": "agreed", "agree": "disagree", "disagree": "agree",
    "increase": "decrease", "decrease": "increase", "increased": "decreased", "decreased": "increased",
    "more": "fewer", "less": "more", "higher": "lower", "lower": "higher", "cheaper": "more expensive",
    "cheap": "expensive", "expensive": "cheap", "easy": "difficult", "difficult": "easy", "easier": "harder",
    "harder": "easier", "liked": "disliked", "like": "dislike", "supported": "opposed", "support": "oppose",
    "opposed": "supported", "accepted": "rejected", "rejected": "accepted", "approved": "rejected",
    "before": "after", "after": "before", "positive": "negative", "negative": "positive", "good": "bad",
    "bad": "good", "better": "worse", "worse": "better", "large": "small", "small": "large", "big": "small",
    "first": "last", "last": "first", "always": "never", "never": "always", "possible": "impossible",
    "important": "unimportant", "necessary": "unnecessary", "satisfied": "dissatisfied", "successful": "unsuccessful",
    "allowed": "forbidden", "included": "excluded", "increasing": "decreasing", "decreasing": "increasing",
    "strong": "weak", "weak": "strong", "simple": "complicated", "complicated": "simple", "happy": "unhappy",
    "should": "should not", "preferred": "rejected", "wanted": "did not want", "suggested": "rejected",
}
AUX = ["is", "was", "are", "were", "would", "could", "should", "will", "can", "did", "does", "do", "has", "have", "had"]
NEG_RE = re.compile(r"\b(is|was|are|were|would|could|should|will|can|did|does|do|has|have|had) not\b|\b(\w+)n't\b")


def clean(text):
    text = re.sub(r"\{[a-z_]+\}", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r" ([,.?!;:])", r"\1", text)
    text = re.sub(r"([,.?!])(?:\s*[,.?!])+", r"\1", text)
    return text.strip(" ,")


def words(s):
    return [w for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in STOP and len(w) > 2]


def sentences(answer):
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z])", answer.strip())
    return [p.strip() for p in parts if len(p.split()) >= 5]


class Meeting:
    def __init__(self, d, tok):
        self.turns = []  # (idx, text, ntok, wordset)
        self.speakers = sorted({t["speaker"] for t in d["meeting_transcripts"]})
        for i, t in enumerate(d["meeting_transcripts"]):
            c = clean(t["content"])
            if not c or len(c.split()) < 2:
                self.turns.append(None)
                continue
            line = f"{t['speaker']}: {c}"
            n = len(tok.encode(line, add_special_tokens=False).ids)
            self.turns.append((i, line, n, set(words(c))))

    def window(self, lo, hi, budget, target):
        """Best contiguous window of turns in [lo, hi] with <= budget tokens, scored by target-word coverage."""
        turns = [t for t in self.turns[lo:hi + 1] if t is not None]
        best, best_score = None, -1.0
        for s in range(len(turns)):
            tot, cov, chosen = 0, set(), []
            for t in turns[s:]:
                if tot + t[2] > budget:
                    break
                tot += t[2]
                chosen.append(t)
                cov |= (t[3] & target)
            if not chosen:
                continue
            score = len(cov) / max(1, len(target))
            if score > best_score:
                best, best_score = chosen, score
        return best, best_score


def perturb(sent, speakers, rng):
    """Return list of (kind, new_sentence) contradictions."""
    out = []
    # numbers
    m = list(re.finditer(r"\b\d+(?:\.\d+)?\b", sent))
    if m:
        x = rng.choice(m)
        v = x.group()
        if "." in v:
            nv = f"{float(v) * rng.choice([2, 3, 0.5]) + 1:.1f}".rstrip("0").rstrip(".")
        else:
            iv = int(v)
            nv = str(rng.choice([iv + rng.randint(1, 9), iv * 2 + 1, max(0, iv - rng.randint(1, 5)) if iv > 5 else iv + 10]))
        if nv != v:
            out.append(("number", sent[:x.start()] + nv + sent[x.end():]))
    else:
        nw = [w for w in NUMWORDS if re.search(rf"\b{w}\b", sent, re.I)]
        if nw:
            w = rng.choice(nw)
            alt = rng.choice([x for x in NUMWORDS if x != w.lower()])
            out.append(("number", re.sub(rf"\b{w}\b", alt, sent, count=1, flags=re.I)))
    # speaker names / roles
    present = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", sent, re.I)]
    if present and len(speakers) > 1:
        s = rng.choice(present)
        others = [o for o in speakers if o != s and o not in present]
        if others:
            o = rng.choice(others)
            out.append(("speaker", re.sub(rf"\b{re.escape(s)}\b", o, sent, count=1, flags=re.I)))
    # negation removal / insertion
    nm = NEG_RE.search(sent)
    if nm:
        if nm.group(1):
            new = sent[:nm.start()] + nm.group(1) + sent[nm.end():]
        else:
            base = nm.group(2)
            base = {"won": "will", "can": "can", "ca": "can", "don": "do", "doesn": "does", "didn": "did"}.get(base, base)
            new = sent[:nm.start()] + base + sent[nm.end():]
        out.append(("negation", new))
    else:
        am = [x for x in re.finditer(r"\b(" + "|".join(AUX) + r")\b", sent)]
        if am:
            x = rng.choice(am)
            out.append(("negation", sent[:x.end()] + " not" + sent[x.end():]))
        else:
            # past-tense verb -> "did not <verb>" is grammar-hard; use "It is not true that" rarely
            vm = [x for x in re.finditer(r"\b(agreed|decided|wanted|suggested|proposed|thought|believed|liked|planned|chose|preferred)\b", sent)]
            if vm:
                x = rng.choice(vm)
                base = {"agreed": "agree", "decided": "decide", "wanted": "want", "suggested": "suggest", "proposed": "propose",
                        "thought": "think", "believed": "believe", "liked": "like", "planned": "plan", "chose": "choose",
                        "preferred": "prefer"}[x.group()]
                out.append(("negation", sent[:x.start()] + "did not " + base + sent[x.end():]))
    # antonyms
    am = [x for x in re.finditer(r"\b(" + "|".join(map(re.escape, ANTONYMS)) + r")\b", sent)]
    if am:
        x = rng.choice(am)
        out.append(("antonym", sent[:x.start()] + ANTONYMS[x.group()] + sent[x.end():]))
    return [(k, s) for k, s in out if s != sent]


def build(split, budget, seed=13, min_cov=0.4, n_contra=2):
    tok = Tokenizer.from_file(os.environ.get("TOKENIZER", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenizer.json")))
    rng = random.Random(seed)
    pairs = []
    for f in sorted(glob.glob(f"{QMSUM}/{split}/*.json")):
        d = json.load(open(f))
        mt = Meeting(d, tok)
        name = os.path.basename(f)[:-5]
        nt = len(mt.turns)
        for qi, q in enumerate(d["specific_query_list"]):
            spans = [(int(a), int(b)) for a, b in q["relevant_text_span"]]
            for si, sent in enumerate(sentences(q["answer"])):
                target = set(words(sent))
                if len(target) < 3:
                    continue
                best, bscore = None, -1
                for a, b in spans:
                    w, sc = mt.window(a, min(b, nt - 1), budget, target)
                    if w and sc > bscore:
                        best, bscore = w, sc
                if not best or bscore < min_cov:
                    continue
                prem = "\n".join(t[1] for t in best)
                meta = {"meeting": name, "query": qi, "sent": si, "coverage": round(bscore, 3)}
                pairs.append({"premise": prem, "hypothesis": sent, "label": "entailment", "source": f"qmsum_{split}", "kind": "span", **meta})
                # neutral: far from every span of this query
                far_ok = [i for i in range(nt) if all(i < a - 40 or i > b + 40 for a, b in spans)]
                if len(far_ok) > 10:
                    cands = []
                    for _ in range(6):
                        c = rng.choice(far_ok)
                        w, sc = mt.window(c, min(nt - 1, c + 30), budget, target)
                        if w and sum(t[2] for t in w) > budget * 0.4:
                            cands.append((sc, w))
                    if cands:
                        # half random, half the most lexically similar distant window (harder), but never high coverage
                        cands = [c for c in cands if c[0] < 0.5] or cands[:0]
                        if cands:
                            sc, w = max(cands, key=lambda c: c[0]) if rng.random() < 0.5 else rng.choice(cands)
                            pairs.append({"premise": "\n".join(t[1] for t in w), "hypothesis": sent, "label": "neutral",
                                          "source": f"qmsum_{split}", "kind": "distant", **meta})
                cons = perturb(sent, mt.speakers, rng)
                rng.shuffle(cons)
                for kind, cs in cons[:n_contra]:
                    pairs.append({"premise": prem, "hypothesis": cs, "label": "contradiction", "source": f"qmsum_{split}",
                                  "kind": kind, **meta})
    return pairs


FILLER = re.compile(r"\b(uh|um|uh-huh|mm-hmm|hmm|you know|i mean|like,|so,|well,|okay,|yeah,|oh,)\s*", re.I)


def attribution_pairs(split, budget, seed=7, per_meeting=25, both=False):
    """Speaker-attribution pairs: '<Speaker> said that <sentence of one of their turns>' vs. a window that contains the
    turn (entailment), the same claim with the speaker swapped / negated / a number changed (contradiction), and the
    claim vs. a distant window (neutral)."""
    tok = Tokenizer.from_file(os.environ.get("TOKENIZER", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenizer.json")))
    rng = random.Random(seed)
    pairs = []
    for f in sorted(glob.glob(f"{QMSUM}/{split}/*.json")):
        d = json.load(open(f))
        mt = Meeting(d, tok)
        name = os.path.basename(f)[:-5]
        nt = len(mt.turns)
        cand = []
        for t in mt.turns:
            if t is None:
                continue
            spk, content = t[1].split(": ", 1)
            for s in re.split(r"(?<=[.!?])\s+", content):
                s = FILLER.sub("", s).strip(" ,")
                if 7 <= len(s.split()) <= 30 and len(set(words(s))) >= 3:
                    cand.append((t[0], spk, s))
        rng.shuffle(cand)
        for ti, spk, s in cand[:per_meeting]:
            s = s[0].lower() + s[1:] if not s.startswith("I ") else s
            s = re.sub(r"\bI\b", "they", s) if rng.random() < 0.5 else s
            s = s.rstrip(".?!")
            verb = rng.choice(["said that", "mentioned that", "stated that", "pointed out that", "noted that"])
            hyp = f"{spk} {verb} {s}."
            w, sc = mt.window(max(0, ti - 6), min(nt - 1, ti + 6), budget, set(words(s)))
            if not w or ti not in [x[0] for x in w]:
                continue
            prem = "\n".join(x[1] for x in w)
            meta = {"meeting": name, "turn": ti}
            pairs.append({"premise": prem, "hypothesis": hyp, "label": "entailment", "source": f"qmsum_{split}", "kind": "attr", **meta})
            others = [o for o in mt.speakers if o != spk]
            r = rng.random()
            if both:
                # v2: always a speaker swap (if another speaker exists) AND one more contradiction, a changed number
                # preferred when the claim has one (speaker attribution and numbers are the known weaknesses)
                if others:
                    o = rng.choice(others)
                    pairs.append({"premise": prem, "hypothesis": f"{o} {verb} {s}.", "label": "contradiction",
                                  "source": f"qmsum_{split}", "kind": "attr_speaker", **meta})
                cons = [c for c in perturb(hyp, [], rng) if c[0] in ("negation", "number", "antonym")]
                num = [c for c in cons if c[0] == "number"]
                if cons:
                    k, cs = num[0] if num else rng.choice(cons)
                    pairs.append({"premise": prem, "hypothesis": cs, "label": "contradiction", "source": f"qmsum_{split}",
                                  "kind": "attr_" + k, **meta})
            elif others and r < 0.5:
                o = rng.choice(others)
                pairs.append({"premise": prem, "hypothesis": f"{o} {verb} {s}.", "label": "contradiction",
                              "source": f"qmsum_{split}", "kind": "attr_speaker", **meta})
            else:
                cons = [c for c in perturb(hyp, [], rng) if c[0] in ("negation", "number", "antonym")]
                if cons:
                    k, cs = rng.choice(cons)
                    pairs.append({"premise": prem, "hypothesis": cs, "label": "contradiction", "source": f"qmsum_{split}",
                                  "kind": "attr_" + k, **meta})
            if rng.random() < 0.6:
                far = [i for i in range(nt) if abs(i - ti) > 60]
                if far:
                    c = rng.choice(far)
                    w2, _ = mt.window(c, min(nt - 1, c + 30), budget, set())
                    if w2:
                        pairs.append({"premise": "\n".join(x[1] for x in w2), "hypothesis": hyp, "label": "neutral",
                                      "source": f"qmsum_{split}", "kind": "attr_distant", **meta})
    return pairs


if __name__ == "__main__":
    split, budget, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    n_contra = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    ps = build(split, budget, n_contra=n_contra)
    ps += attribution_pairs(split, budget, per_meeting=int(os.environ.get("ATTR_PER_MEETING", "25")),
                            both=os.environ.get("ATTR_BOTH", "0") == "1")
    with open(out, "w") as fh:
        for p in ps:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    from collections import Counter
    print(len(ps), Counter(p["label"] for p in ps), Counter(p["kind"] for p in ps))
