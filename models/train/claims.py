"""Claims about real meetings and their evidence, from QMSum (MIT): the shared code behind the support
evaluation (models/eval/build_support_eval.py, QMSum **val**) and the in-domain training pairs
(models/train/build_support_pairs.py, QMSum **train**).

A claim is one sentence of a human answer to a specific query. Its evidence is the query's relevant span
(all ranges, as `Speaker: text` lines). From it we build
  * supported:      the sentence vs its own relevant span;
  * wrong_span:     the sentence vs the span of another topic of the same meeting (not supported);
  * edited copies (not supported) of supported sentences: speaker swap, number change, proposal -> decision,
    negation (added or removed), hedged -> certain, wrong date (the premise carries the meeting's date);
  * the product's shape: claim + verbatim quote + the quoted turn and its neighbours.

Evaluation-only phrasing: the edits take their replacement words from one of two disjoint phrase sets, "train"
and "eval", so the evaluation measures edits worded differently from the ones the model and the support score
were fitted on (an evaluation built by the same code as the training pairs overstates; this limits how much).
Deterministic (seeded).
"""
import glob
import json
import os
import random
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
QMSUM = os.environ.get("QMSUM_DIR", os.path.join(HERE, "..", "..", "..", "shared", "data", "qmsum"))

STOP = set("""a an the and or but of to in on at for with by from as is are was were be been being it its this that
these those they them their he she his her we our you your i me my there here which who whom what when where why how
also would could should will can may might must do did does done have has had not no so than then too very just into
about over under up down out more most some any all each other such only own same both few many much
said say says team group meeting discussed discussion mentioned thought think felt talked""".split())


def clean(text):
    """Transcript text as a premise: ASR markers removed, spacing before punctuation closed."""
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


def meetings(split):
    for f in sorted(glob.glob(os.path.join(QMSUM, split, "*.json"))):
        yield os.path.basename(f)[:-5], json.load(open(f))


def meeting_date(name):
    """A stable made-up date per meeting (QMSum has none), 2024-01-01 .. 2024-12-28."""
    h = sum((i + 1) * ord(c) for i, c in enumerate(name))
    return f"2024-{1 + h % 12:02d}-{1 + (h // 12) % 28:02d}"


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def long_date(iso):
    y, m, d = iso.split("-")
    return f"{int(d)} {MONTHS[int(m) - 1]} {y}"


def turn_lines(d, ranges, raw=True):
    """`Speaker: text` lines of the turns in `ranges` (inclusive), in order, without repeats."""
    seen, out = set(), []
    tr = d["meeting_transcripts"]
    for a, b in ranges:
        for i in range(max(0, a), min(b, len(tr) - 1) + 1):
            if i in seen:
                continue
            seen.add(i)
            t = tr[i]
            c = t["content"].strip() if raw else clean(t["content"])
            if c:
                out.append((i, t["speaker"], c))
    return out


def span_text(lines):
    return "\n".join(f"{s}: {c}" for _, s, c in lines)


def length_matched(lines, n_words, rng):
    """A contiguous run of `lines` with about `n_words` words (from a random start), so that a wrong-evidence premise
    is as long as the supporting one and length says nothing about the label."""
    if not lines:
        return lines
    total = sum(len(c.split()) for _, _, c in lines)
    if total <= n_words:
        return lines
    starts = [i for i in range(len(lines)) if sum(len(c.split()) for _, _, c in lines[i:]) >= n_words] or [0]
    i = rng.choice(starts)
    out, have = [], 0
    for ln in lines[i:]:
        out.append(ln)
        have += len(ln[2].split())
        if have >= n_words:
            break
    return out


def other_topic_ranges(d, ranges, min_turns=8):
    """Topic segments of the meeting that do not overlap `ranges` (for wrong-evidence pairs)."""
    used = set()
    for a, b in ranges:
        used.update(range(a, b + 1))
    out = []
    for t in d.get("topic_list", []):
        rs = [(int(a), int(b)) for a, b in t["relevant_text_span"]]
        cover = set()
        for a, b in rs:
            cover.update(range(a, b + 1))
        if len(cover) >= min_turns and not (cover & used):
            out.append(rs)
    return out


# --- edits -------------------------------------------------------------------------------------------------

NUMWORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "fifteen", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million"]

# disjoint phrase sets: the training pairs use "train", the evaluation "eval"
PHRASES = {
    "train": {
        "decision": ["decided on", "agreed on"],
        "decision_that": ["decided that", "agreed that"],
        "decision_impersonal": "It was decided that",
        "certain_modal": "will",
        "certain_adv": "definitely",
        "certain_belief": "confirmed that",
        "certain_unsure": "was sure",
        "date_prefix": "In the meeting on {date},",
    },
    "eval": {
        "decision": ["approved", "settled on", "signed off on"],
        "decision_that": ["made the final decision that", "reached the decision that"],
        "decision_impersonal": "It was agreed by everyone that",
        "certain_modal": "is certain to",
        "certain_adv": "certainly",
        "certain_belief": "established that",
        "certain_unsure": "was certain",
        "date_prefix": "At the {date} meeting,",
    },
}

PROPOSAL = re.compile(r"\b(suggested|proposed|recommended|advised)\b( that)?")
HEDGE_MODAL = re.compile(r"\b(might|may|could)\b(?! not)")
HEDGE_ADV = re.compile(r"\b(probably|possibly|perhaps|maybe)\b ?")
HEDGE_BELIEF = re.compile(r"\b(thought|believed|felt|guessed|assumed|speculated)( that)?\b")
HEDGE_UNSURE = re.compile(r"\bwas (not sure|unsure|uncertain)\b")
AUX = ["is", "was", "are", "were", "would", "could", "should", "will", "can", "did", "does", "do", "has", "have", "had"]
NEG_RE = re.compile(r"\b(is|was|are|were|would|could|should|will|can|did|does|do|has|have|had) not\b|\b(\w+)n't\b")
PAST_VERBS = {"agreed": "agree", "decided": "decide", "wanted": "want", "suggested": "suggest", "proposed": "propose",
              "thought": "think", "believed": "believe", "liked": "like", "planned": "plan", "chose": "choose",
              "preferred": "prefer", "explained": "explain", "mentioned": "mention", "asked": "ask",
              "expected": "expect", "needed": "need", "found": "find", "used": "use", "considered": "consider"}


def aliases(label):
    """How answers name a speaker: the label, and a member's name without the title suffix ("Kirsty Williams AM")."""
    out = [label]
    m = re.fullmatch(r"(.+?) (AM|MS|MP|MSP|Ms|Mr|MLA)", label)
    if m and " " in m.group(1):
        out.append(m.group(1))
    return out


def speaker_mentions(sent, speakers):
    """(start, end, speaker) of speakers named in the sentence; short labels ("C", "PhD B") case-sensitive."""
    out = []
    names = sorted(((a, s) for s in speakers for a in aliases(s)), key=lambda x: len(x[0]), reverse=True)
    for a_, s in names:
        if a_ in ("A", "I"):  # the article and the pronoun
            continue
        flags = 0 if len(a_) <= 3 or re.search(r"\b[A-Z]$", a_) else re.I
        for m in re.finditer(rf"(?<![\w-]){re.escape(a_)}(?![\w-])", sent, flags):
            if not any(a < m.end() and m.start() < b for a, b, _ in out):
                out.append((m.start(), m.end(), s))
    return sorted(out)


def edit_speaker(sent, speakers, evidence_speakers, rng):
    ms = speaker_mentions(sent, speakers)
    if not ms:
        return None
    a, b, s = rng.choice(ms)
    named = {x[2] for x in ms}
    # half the time someone who also speaks in the evidence (the harder case), else anyone else in the meeting
    pool = [o for o in evidence_speakers if o not in named] if rng.random() < 0.5 else []
    pool = pool or [o for o in speakers if o not in named]
    if not pool:
        return None
    new = rng.choice(pool)
    # name the new speaker the way the sentence named the old one (without a title suffix if it had none)
    if sent[a:b] != s and sent[a:b].lower() != s.lower():
        new = aliases(new)[-1]
    return sent[:a] + new + sent[b:]


def edit_number(sent, rng):
    m = list(re.finditer(r"\b\d+(?:[.,]\d+)?\b", sent))
    if m:
        x = rng.choice(m)
        v = x.group().replace(",", "")
        if "." in v:
            nv = f"{float(v) * rng.choice([2, 3, 0.5]) + 1:.1f}".rstrip("0").rstrip(".")
        else:
            iv = int(v)
            if 1900 <= iv <= 2100:
                nv = str(iv + rng.choice([-2, -1, 1, 2]))
            else:
                nv = str(rng.choice([iv + rng.randint(1, 9), iv * 2 + 1, iv + 10]))
        return sent[:x.start()] + nv + sent[x.end():] if nv != v else None
    nw = [m for m in re.finditer(r"\b(" + "|".join(NUMWORDS) + r")\b", sent, re.I)]
    nw = [m for m in nw if not (m.group().lower() == "one" and re.match(r"\s+(of|another|more|thing|way|day)\b", sent[m.end():]))]
    if not nw:
        return None
    x = rng.choice(nw)
    alt = rng.choice([w for w in NUMWORDS if w != x.group().lower()])
    return sent[:x.start()] + alt + sent[x.end():]


def edit_negation(sent, rng):
    nm = NEG_RE.search(sent)
    if nm and rng.random() < 0.5:
        if nm.group(1):
            return sent[:nm.start()] + nm.group(1) + sent[nm.end():]
        base = {"won": "will", "ca": "can", "don": "do", "doesn": "does", "didn": "did", "isn": "is", "wasn": "was",
                "aren": "are", "weren": "were", "couldn": "could", "wouldn": "would", "shouldn": "should"}.get(
            nm.group(2).lower(), nm.group(2))
        return sent[:nm.start()] + base + sent[nm.end():]
    am = [x for x in re.finditer(r"\b(" + "|".join(AUX) + r")\b", sent)]
    am = [x for x in am if not sent[x.end():].startswith(" not")]
    if am:
        x = rng.choice(am)
        return sent[:x.end()] + " not" + sent[x.end():]
    vm = [x for x in re.finditer(r"\b(" + "|".join(PAST_VERBS) + r")\b", sent)]
    if vm:
        x = rng.choice(vm)
        return sent[:x.start()] + "did not " + PAST_VERBS[x.group()] + sent[x.end():]
    return None


def edit_proposal(sent, phrases, rng):
    """A proposal reported as a decision or agreement."""
    m = PROPOSAL.search(sent)
    if not m:
        return None
    pre = sent[:m.start()].rstrip()
    if re.search(r"\b(was|were|been)$", pre):
        # passive: "It was suggested that X" -> "It was decided that X"; other passives are skipped
        if m.group(2) and re.fullmatch(r"It (was|had been)", pre):
            return phrases["decision_impersonal"] + sent[m.end():]
        return None
    if m.group(2):
        return sent[:m.start()] + rng.choice(phrases["decision_that"]) + sent[m.end():]
    rest = sent[m.end():]
    # "suggested using X" / "proposed a new design" -> "decided on using X" / "agreed on a new design"
    return sent[:m.start()] + rng.choice(phrases["decision"]) + rest


def edit_hedge(sent, phrases, rng):
    """A hedged statement made certain."""
    opts = []
    for m in HEDGE_UNSURE.finditer(sent):
        opts.append(sent[:m.start()] + phrases["certain_unsure"] + sent[m.end():])
    for m in HEDGE_MODAL.finditer(sent):
        opts.append(sent[:m.start()] + phrases["certain_modal"] + sent[m.end():])
    for m in HEDGE_ADV.finditer(sent):
        opts.append(sent[:m.start()] + phrases["certain_adv"] + " " + sent[m.end():])
    for m in HEDGE_BELIEF.finditer(sent):
        opts.append(sent[:m.start()] + phrases["certain_belief"] + sent[m.end():])
    opts = [re.sub(r"\s+", " ", o).replace(" .", ".") for o in opts if o != sent]
    return rng.choice(opts) if opts else None


def with_date(sent, iso, phrases):
    lead = sent[0].lower() + sent[1:] if sent.split()[0] in ("The", "They", "It", "There", "This", "That", "These", "A", "An", "In", "When", "After", "Before", "As", "Since", "Everyone", "All", "Both", "Some", "Most") else sent
    return phrases["date_prefix"].format(date=long_date(iso)) + " " + lead


def other_date(iso, rng):
    y, m, d = map(int, iso.split("-"))
    while True:
        nm, nd = rng.randint(1, 12), rng.randint(1, 28)
        if (nm, nd) != (m, d) and nm != m:
            return f"{y}-{nm:02d}-{nd:02d}"


EDITS = ["speaker", "number", "proposal", "negation", "hedge", "date"]


def edits(sent, speakers, evidence_speakers, iso, phrase_set, rng):
    """{kind: edited sentence} for the edits that apply to this sentence."""
    ph = PHRASES[phrase_set]
    out = {
        "speaker": edit_speaker(sent, speakers, evidence_speakers, rng),
        "number": edit_number(sent, rng),
        "proposal": edit_proposal(sent, ph, rng),
        "negation": edit_negation(sent, rng),
        "hedge": edit_hedge(sent, ph, rng),
    }
    return {k: v for k, v in out.items() if v and v != sent}


def best_quote(lines, sent, max_words=25):
    """(turn index, speaker, quote): the sentence of a turn in `lines` that covers most of the claim's words,
    cut to at most `max_words` words around the densest part. The quote is verbatim (raw transcript text)."""
    target = set(words(sent))
    best = None
    for i, spk, c in lines:
        for s in re.split(r"(?<=[.!?])\s+", c):
            ws = s.split()
            if len(ws) < 4:
                continue
            if len(ws) > max_words:
                # densest window of max_words words
                sc = [1 if set(words(w)) & target else 0 for w in ws]
                k = max(range(len(ws) - max_words + 1), key=lambda j: sum(sc[j:j + max_words]))
                s = " ".join(ws[k:k + max_words])
            cov = len(set(words(s)) & target)
            if best is None or cov > best[0]:
                best = (cov, i, spk, s)
    if not best or best[0] < 2:
        return None
    return best[1], best[2], best[3]


def records(split, phrase_set, seed=11, keep=lambda name: True):
    """Support records in the evaluation's shape, one JSON object each:
    {id, premise, hypothesis, [quote], label (1 supported / 0 not), kind, meeting}.
    `premise` is raw transcript text (`Speaker: text` lines, ASR markers kept), as an integrator would pass it."""
    rng = random.Random(seed)
    out = []

    def add(kind, premise, hyp, label, meeting, quote=None):
        r = {"id": f"{meeting}-{len(out)}", "premise": premise, "hypothesis": hyp, "label": label, "kind": kind,
             "meeting": meeting}
        if quote is not None:
            r["quote"] = quote
        out.append(r)

    for name, d in meetings(split):
        if not keep(name):
            continue
        speakers = sorted({t["speaker"] for t in d["meeting_transcripts"]})
        iso = meeting_date(name)
        for q in d["specific_query_list"]:
            ranges = [(int(a), int(b)) for a, b in q.get("relevant_text_span", [])]
            if not ranges:
                continue
            lines = turn_lines(d, ranges)
            if not lines:
                continue
            prem = span_text(lines)
            others = other_topic_ranges(d, ranges)
            ev_speakers = sorted({s for _, s, _ in lines})
            for sent in sentences(q["answer"]):
                if len(set(words(sent))) < 3:
                    continue
                add("human_supported", prem, sent, 1, name)
                if others:
                    olines = length_matched(turn_lines(d, rng.choice(others)), len(prem.split()), rng)
                    add("human_wrong_span", span_text(olines), sent, 0, name)
                for kind, e in edits(sent, speakers, ev_speakers, iso, phrase_set, rng).items():
                    add("edit_" + kind, prem, e, 0, name)
                # dates: the premise carries the meeting's date in a header line, as a source header does
                if rng.random() < 0.35:
                    head = f"Meeting {name} | {iso}\n"
                    add("date_supported", head + prem, with_date(sent, iso, PHRASES[phrase_set]), 1, name)
                    add("edit_date", head + prem, with_date(sent, other_date(iso, rng), PHRASES[phrase_set]), 0, name)
                # the product's shape: claim + verbatim quote + the quoted turn and its neighbours
                bq = best_quote(lines, sent)
                if bq:
                    ti, spk, quote = bq
                    tr = d["meeting_transcripts"]
                    chunk = span_text(turn_lines(d, [(ti - 3, ti + 3)]))
                    add("quote_supported", chunk, sent, 1, name, quote)
                    es = edits(sent, speakers, sorted({s for _, s, _ in turn_lines(d, [(ti - 3, ti + 3)])}), iso,
                               phrase_set, rng)
                    if es:
                        k = rng.choice(sorted(es))
                        add("quote_edit_" + k, chunk, es[k], 0, name, quote)
                    if others:
                        olines = turn_lines(d, rng.choice(others))
                        oq = best_quote(olines, sent)
                        if oq:
                            oti = oq[0]
                            add("quote_wrong_evidence", span_text(turn_lines(d, [(oti - 3, oti + 3)])), sent, 0, name,
                                oq[2])
    return out


def score_with_cli(meetcite, model, inp, out, jobs=None, both_pairs=False):
    """`meetcite score --features` on the records of `inp`, written to `out` in input order. The CLI scores one pair
    batch at a time on one core, so the records are split over JOBS processes (env JOBS, default 2) side by side: on
    2 idle cores a 5,233-record calib file takes about half the ~20 min of one process. `both_pairs`: score both NLI
    pairs of every quoted claim (`--both-pairs`, no quote-first cascade), as the support fit needs."""
    lines = open(inp).read().splitlines(keepends=True)
    n = max(1, min(int(jobs or os.environ.get("JOBS", "2")), len(lines) or 1))
    procs = []
    for i in range(n):
        pin = f"{out}.in{i}"
        with open(pin, "w") as f:
            f.writelines(lines[i::n])
        cmd = [meetcite, "score", "--input", pin, "--features", "--model", model] + (["--both-pairs"] if both_pairs else [])
        procs.append((subprocess.Popen(cmd, stdout=open(f"{out}.part{i}", "w")), pin))
    failed = [pin for p, pin in procs if p.wait() != 0]
    if failed:
        raise SystemExit(f"meetcite score failed on {', '.join(failed)}")
    parts = [open(f"{out}.part{i}").read().splitlines(keepends=True) for i in range(n)]
    if sum(map(len, parts)) != len(lines):
        raise SystemExit(f"meetcite score wrote {sum(map(len, parts))} lines for {len(lines)} records")
    with open(out + ".tmp", "w") as f:
        # back into input order: record k went to part k % n, line k // n
        for k in range(len(lines)):
            f.write(parts[k % n][k // n])
    for i in range(n):
        os.remove(f"{out}.part{i}")
        os.remove(f"{out}.in{i}")
    os.replace(out + ".tmp", out)
