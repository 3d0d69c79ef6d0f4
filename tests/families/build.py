"""Build the tiny per-family fixtures in tests/fixtures/families/: a randomly initialised sequence-classification model
of each family meetcite exports (from a `transformers` config, seeded), with a tokenizer trained here on the repo's
own meeting fixtures and quote cases (WordPiece for BERT / ELECTRA, byte-level BPE for RoBERTa / DeBERTa v1, a
SentencePiece-style Unigram for DeBERTa v3), exported with models/export_hf.py exactly as a user would export a
real checkpoint. Nothing is downloaded. The Rust and wasm tests pin tract to the PyTorch and onnxruntime
probabilities the export writes into each folder's parity.jsonl. The model weights are the same on every run
(seeded); the WordPiece and Unigram vocabularies are not (the trainers break ties in hash-map order), so a rebuild
changes tokenizer.json and parity.jsonl together and the tests still hold.

  python tests/families/build.py            # needs models/train/requirements.txt (torch, transformers, onnx...)
  python tests/families/build.py --base target/bench/families    # base-size models for bench/run families
  python tests/families/build.py --out target/families            # fresh exports elsewhere (scripts/export-check.sh)

Each folder: model.onnx (f32), model-int8.onnx (weight-only int8, config.json's model_file), tokenizer.json,
config.json, parity.jsonl. The label orders differ on purpose (RoBERTa in roberta-large-mnli's order, ELECTRA as a
2-way checker with generic labels exported with --supported-label), so a loader that read labels by position
would fail the tests.
"""
import json, os, shutil, subprocess, sys, tempfile
import torch
from tokenizers import Tokenizer, models, trainers, pre_tokenizers, normalizers, processors, decoders

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "families")


def corpus():
    """The tokenizers' training text: the meeting fixtures and the quote cases (files that do not change, so
    the same tokenizers come out of every run)."""
    out = []
    for f in ["pricing_chunks.json", "qmsum_chunks.json"]:
        for c in json.load(open(os.path.join(ROOT, "tests/fixtures", f))):
            out.append(c["text"])
    for f in ["quotes_test.jsonl", "quotes_tune.jsonl"]:
        for line in open(os.path.join(ROOT, "tests/fixtures", f)):
            if line.strip():
                d = json.loads(line)
                out += [d.get("text", ""), d.get("quote", "")]
    return out

def bert_pairs(t):
    """BERT's pair template ([CLS] A [SEP] B [SEP], segment 1 for B) and special tokens, for WordPiece and Unigram."""
    cls, sep = t.token_to_id("[CLS]"), t.token_to_id("[SEP]")
    t.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                     special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return t, dict(pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def wordpiece(lower=True):
    t = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer(lowercase=lower)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tr = trainers.WordPieceTrainer(vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    t.train_from_iterator(corpus(), tr)
    t.decoder = decoders.WordPiece()
    return bert_pairs(t)

def bytebpe():
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tr = trainers.BpeTrainer(vocab_size=600, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t.train_from_iterator(corpus(), tr)
    t.post_processor = processors.RobertaProcessing(("</s>", t.token_to_id("</s>")), ("<s>", t.token_to_id("<s>")))
    t.decoder = decoders.ByteLevel()
    return t, dict(bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>", cls_token="<s>", sep_token="</s>", mask_token="<mask>")

def unigram():
    t = Tokenizer(models.Unigram())
    t.normalizer = normalizers.Sequence([normalizers.Replace("``", '"'), normalizers.Replace("''", '"')])
    t.pre_tokenizer = pre_tokenizers.Metaspace()
    tr = trainers.UnigramTrainer(vocab_size=600, special_tokens=["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], unk_token="[UNK]")
    t.train_from_iterator(corpus(), tr)
    t.decoder = decoders.Metaspace()
    return bert_pairs(t)

# base size (for speed measurements only): the published base models' shapes and vocabularies; the tokenizer
# stays the tiny one (its ids fit any table), so file sizes and load times are those of the real models
BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
BASE_VOCAB = {"bert": 30522, "roberta": 50265, "deberta-v2": 128100, "electra": 30522, "deberta": 50265}


def build(family, out, labels, base=False):
    from transformers import (BertConfig, RobertaConfig, DebertaV2Config, DebertaConfig, ElectraConfig, AutoModelForSequenceClassification,
                              PreTrainedTokenizerFast)
    torch.manual_seed(0)
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=512,
                 id2label={i: l for i, l in enumerate(labels)}, label2id={l: i for i, l in enumerate(labels)})
    if base:
        small |= BASE
    if family == "bert":
        tok, sp = wordpiece(); cfg = BertConfig(vocab_size=tok.get_vocab_size(), **small)
    elif family == "deberta":
        tok, sp = bytebpe(); cfg = DebertaConfig(vocab_size=tok.get_vocab_size(), pad_token_id=tok.token_to_id("<pad>"), type_vocab_size=0,
                                                 relative_attention=True, max_relative_positions=-1, pos_att_type=["c2p", "p2c"],
                                                 position_biased_input=False, **small)
    elif family == "electra":
        tok, sp = wordpiece(); cfg = ElectraConfig(vocab_size=tok.get_vocab_size(), embedding_size=768 if base else 16, **small)
    elif family == "roberta":
        tok, sp = bytebpe(); cfg = RobertaConfig(vocab_size=tok.get_vocab_size(), pad_token_id=tok.token_to_id("<pad>"),
                                                 bos_token_id=0, eos_token_id=2, type_vocab_size=1, **(small | dict(max_position_embeddings=514)))
    elif family == "deberta-v2":
        tok, sp = unigram(); cfg = DebertaV2Config(vocab_size=tok.get_vocab_size(), pad_token_id=0, type_vocab_size=0,
                                                   relative_attention=True, position_buckets=64, max_relative_positions=-1,
                                                   pos_att_type=["p2c", "c2p"], position_biased_input=False, norm_rel_ebd="layer_norm",
                                                   share_att_key=True, **small)
    else:
        raise SystemExit(family)
    if base:
        cfg.vocab_size = BASE_VOCAB[family]
    m = AutoModelForSequenceClassification.from_config(cfg)
    # random init has tiny std; make logits spread so probabilities differ between pairs
    with torch.no_grad():
        for n, p in m.named_parameters():
            if p.dim() >= 2 and not base: p.normal_(0, 0.2)
    os.makedirs(out, exist_ok=True)
    m.save_pretrained(out)
    PreTrainedTokenizerFast(tokenizer_object=tok, **sp).save_pretrained(out)
    return sum(p.numel() for p in m.parameters())


# folder -> (family, labels in output order, export_hf.py flags)
FIXTURES = {
    "bert": ("bert", ("entailment", "neutral", "contradiction"), []),
    "roberta": ("roberta", ("contradiction", "neutral", "entailment"), []),
    "deberta-v3": ("deberta-v2", ("entailment", "neutral", "contradiction"), []),
    "electra-2way": ("electra", ("LABEL_0", "LABEL_1"), ["--supported-label", "1"]),
    "deberta-v1": ("deberta", ("entailment", "neutral", "contradiction"), []),
}


def export(ckpt, out, flags):
    cmd = [sys.executable, os.path.join(ROOT, "models", "export_hf.py"), "--model", ckpt, "--out", out, "--int8"] + flags
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    args = sys.argv[1:]
    base = "--base" in args
    dest = args[args.index("--base") + 1] if base else args[args.index("--out") + 1] if "--out" in args else OUT
    only = [a for a in args if not a.startswith("--") and a != dest]
    tmp = tempfile.mkdtemp(prefix="meetcite-families-")
    try:
        for name, (family, labels, flags) in FIXTURES.items():
            if only and name not in only or base and name == "deberta-v1":
                continue
            ckpt = os.path.join(tmp, name)
            n = build(family, ckpt, labels, base)
            out = os.path.join(dest, name)
            shutil.rmtree(out, ignore_errors=True)
            if flags:
                # generic labels without the flag are refused, not guessed
                r = export(ckpt, out + ".refused", [])
                assert r.returncode != 0 and "cannot tell what it means" in r.stderr, r.stderr[-500:]
                shutil.rmtree(out + ".refused", ignore_errors=True)
            r = export(ckpt, out, flags)
            if r.returncode:
                sys.exit(f"{name}: export failed\n{r.stdout}\n{r.stderr[-2000:]}")
            print(f"{name}: {family}, {n} parameters, labels {labels}")
            print("  " + "\n  ".join(l for l in r.stdout.splitlines() if l))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
