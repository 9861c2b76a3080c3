#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Goldens for GGUF-embedded sentencepiece ('llama') vocabularies, from HF transformers.

The oracle is what lm-eval's HF backend would tokenize with: transformers'
AutoTokenizer.from_pretrained(dir, gguf_file=...) (5.24.0, see
requirements.txt), which rebuilds the tokenizer from the GGUF metadata
(integrations/gguf/gguf_tokenizer_mapping.py). For every line of the
project's corpus (tests/testdata/tokenizer/corpus.jsonl, then
random_corpus.jsonl) it records encode(add_special_tokens=False),
encode(add_special_tokens=True) and the SHA-256 of decode(ids,
skip_special_tokens=True) into tests/testdata/golden/tokenizer/<name>.jsonl,
after a header with the GGUF's SHA-256, the sizes, the special ids and flags,
and the SHA-256 of the merges transformers derived (each merge as
left NUL right NUL).

GGUFs:
- gguf_llama_spm, gguf_llama_spm_nospace, gguf_llama_spm_odd: written here
  (metadata only, no tensors) from the project-trained vocabulary of
  tests/testdata/tokenizer/spm/tokenizer.json, exactly as
  gguf_llama_tokenizer_test builds them with tests/testing/gguf_writer (the
  test checks the SHA-256 first). See project_gguf() for what each holds.
- gguf_llama_tiny_random_llama2 (with --shared): the tiny random Llama 2 of
  ../shared (a real llama.cpp conversion with Llama 2's 32000-token
  vocabulary; never committed, only its ids and hashes). Also
  tests/testdata/golden/forward/gguf_tiny_random_llama2.txt: HF's
  LlamaForCausalLM loaded from that GGUF (float32), log-probs of a few short
  texts of ours, in make_reference.py's format.

    /work/venv-ref/bin/python tests/reference/make_gguf_llama_tokenizer_reference.py [--shared ../shared]

A rerun rewrites every file byte for byte.
"""
import argparse
import hashlib
import json
import pathlib
import struct
import tempfile

import tokenizers
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/testdata/tokenizer"
GOLDEN = ROOT / "tests/testdata/golden"
SHARED_GGUF = "models/tiny-random-llama-2-gguf/llama-2-tiny-random.gguf"

# Short texts of ours for the forward golden.
FORWARD_TEXTS = ["Hello world!", "The quick brown fox jumps over the lazy dog.",
                 "  two spaces, a tab\tand 日本語"]


def corpus():
    lines = []
    for name in ("corpus.jsonl", "random_corpus.jsonl"):
        with open(DATA / name, encoding="utf-8") as f:
            lines += [json.loads(line) for line in f]
    return lines


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# --- A GGUF writer with tests/testing/gguf_writer's layout (metadata only) ---

def g_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, type_id, body):
    return g_str(key) + struct.pack("<I", type_id) + body


def kv_u32(key, v):
    return kv(key, 4, struct.pack("<I", v))


def kv_bool(key, v):
    return kv(key, 7, bytes([1 if v else 0]))


def kv_string(key, v):
    return kv(key, 8, g_str(v))


def kv_strings(key, values):
    return kv(key, 9, struct.pack("<IQ", 8, len(values)) + b"".join(g_str(v) for v in values))


def kv_f32s(key, values):
    return kv(key, 9, struct.pack("<IQ", 6, len(values)) + struct.pack(f"<{len(values)}f", *values))


def kv_i32s(key, values):
    return kv(key, 9, struct.pack("<IQ", 5, len(values)) + struct.pack(f"<{len(values)}i", *values))


def gguf_bytes(entries):
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + b"".join(entries)
    return out + b"\0" * (-len(out) % 32)


def project_gguf(variant):
    """The project's llama-vocab GGUF `variant` (test: ProjectGguf()).

    Tokens: spm/tokenizer.json's vocabulary in id order (<unk> <s> </s>, the
    256 <0xNN> tokens, trained pieces), then <mask> (user-defined),
    <|im_start|> and <|im_end|> (control). Types: 2 for <unk>, 3 for <s> </s>,
    6 for the byte tokens, 1 otherwise. Scores: -(id // 2) for normal tokens
    (ties in pairs, to pin the merge order on equal scores), 0 otherwise.
      spm          add_space_prefix true, no add_bos_token (BOS by default),
                   unknown 0, bos 1, eos 2
      spm_nospace  add_space_prefix false, add_bos_token false, add_eos_token true
      spm_odd      the byte tokens <0x80>..<0xFF> removed (characters without
                   a token are dropped), no unknown id, <s> spelled <BOS>
                   (transformers then appends "<s>" after the vocabulary),
                   </s> user-defined (an eos that is not special), padding id
                   = the token "d" (made special)
    """
    j = json.loads((DATA / "spm/tokenizer.json").read_text(encoding="utf-8"))
    tokens = [t for t, _ in sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])]
    types = [2 if i == 0 else 3 if i < 3 else 6 if t.startswith("<0x") else 1
             for i, t in enumerate(tokens)]
    for t, ty in (("<mask>", 4), ("<|im_start|>", 3), ("<|im_end|>", 3)):
        tokens.append(t)
        types.append(ty)
    if variant == "spm_odd":
        keep = [i for i, t in enumerate(tokens) if not (t.startswith("<0x") and int(t[3:5], 16) >= 0x80)]
        tokens = [tokens[i] for i in keep]
        types = [types[i] for i in keep]
        tokens[1] = "<BOS>"
        types[2] = 4
    scores = [-float(i // 2) if ty == 1 else 0.0 for i, ty in enumerate(types)]
    e = [kv_string("general.architecture", "llama"), kv_string("tokenizer.ggml.model", "llama"),
         kv_strings("tokenizer.ggml.tokens", tokens), kv_f32s("tokenizer.ggml.scores", scores),
         kv_i32s("tokenizer.ggml.token_type", types), kv_u32("tokenizer.ggml.bos_token_id", 1),
         kv_u32("tokenizer.ggml.eos_token_id", 2)]
    if variant == "spm":
        e += [kv_u32("tokenizer.ggml.unknown_token_id", 0),
              kv_bool("tokenizer.ggml.add_space_prefix", True)]
    elif variant == "spm_nospace":
        e += [kv_u32("tokenizer.ggml.unknown_token_id", 0),
              kv_bool("tokenizer.ggml.add_space_prefix", False),
              kv_bool("tokenizer.ggml.add_bos_token", False),
              kv_bool("tokenizer.ggml.add_eos_token", True)]
    elif variant == "spm_odd":
        e += [kv_u32("tokenizer.ggml.padding_token_id", tokens.index("d"))]
    else:
        raise ValueError(variant)
    return gguf_bytes(e)


# --- Goldens -------------------------------------------------------------------

def load_tokenizer(path):
    path = pathlib.Path(path)
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def header_for(name, tok, gguf_data):
    from gguf import GGUFReader  # the reader transformers itself uses underneath
    backend = json.loads(tok.backend_tokenizer.to_str())
    merges = backend["model"]["merges"]
    merged = b"".join(a.encode() + b"\0" + b.encode() + b"\0" for a, b in merges)
    with tempfile.NamedTemporaryFile(suffix=".gguf") as f:
        f.write(gguf_data)
        f.flush()
        fields = GGUFReader(f.name).fields
        flag = lambda k: bool(fields[k].contents()) if k in fields else None  # noqa: E731
        n_tokens = len(fields["tokenizer.ggml.tokens"].contents())
        add_space_prefix = flag("tokenizer.ggml.add_space_prefix")
    return {"tokenizer": name, "transformers_version": transformers.__version__,
            "tokenizers_version": tokenizers.__version__, "gguf_sha256": sha256(gguf_data),
            "tokens": n_tokens, "vocab_size": len(tok), "merges": len(merges),
            "merges_sha256": sha256(merged), "bos_id": tok.bos_token_id, "eos_id": tok.eos_token_id,
            "add_bos": bool(tok.add_bos_token), "add_eos": bool(tok.add_eos_token),
            "gguf_add_space_prefix": add_space_prefix}


def write_golden(name, gguf_path, gguf_data):
    tok = load_tokenizer(gguf_path)
    rows = []
    for text in corpus():
        ids = tok.encode(text, add_special_tokens=False)
        decoded = tok.decode(ids, skip_special_tokens=True)
        rows.append({"ids": ids, "with_special": tok.encode(text, add_special_tokens=True),
                     "decoded_sha256": sha256(decoded.encode("utf-8"))})
    header = header_for(name, tok, gguf_data)
    path = GOLDEN / "tokenizer" / f"{name}.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for row in [header] + rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{name}: {header['tokens']} tokens, {header['merges']} merges, vocab {header['vocab_size']}")
    return tok


@torch.no_grad()
def write_forward_golden(gguf_path, tok):
    gguf_path = pathlib.Path(gguf_path)
    model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name,
                                                 dtype=torch.float32)
    model.eval()
    lines = ["# focal-eval reference log-probabilities; generated by "
             "tests/reference/make_gguf_llama_tokenizer_reference.py",
             "# transformers %s torch %s; model ../shared/%s (HF LlamaForCausalLM from the GGUF, "
             "float32); tokens = the GGUF tokenizer's encode(text) of the script's FORWARD_TEXTS"
             % (transformers.__version__, torch.__version__.split("+")[0], SHARED_GGUF)]
    for n, text in enumerate(FORWARD_TEXTS):
        ids = tok.encode(text)
        logits = model(torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        lines += ["sequence %d" % n, "tokens " + " ".join(map(str, ids))]
        for i in range(1, len(ids)):
            lines.append("logprob %d %d %.9g %d" % (i, ids[i], float(logp[i - 1, ids[i]]),
                                                     int(logits[i - 1].argmax())))
        lines += ["final_argmax %d" % int(logits[-1].argmax()), "end"]
    path = GOLDEN / "forward" / "gguf_tiny_random_llama2.txt"
    path.write_text("\n".join(lines) + "\n")
    print(f"forward golden: {len(FORWARD_TEXTS)} texts -> {path.relative_to(ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=pathlib.Path, help="the shared/ folder (../shared)")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("spm", "spm_nospace", "spm_odd"):
            data = project_gguf(variant)
            path = pathlib.Path(tmp) / variant / "t.gguf"
            path.parent.mkdir()
            path.write_bytes(data)
            write_golden(f"gguf_llama_{variant}", path, data)
    if args.shared:
        path = args.shared / SHARED_GGUF
        tok = write_golden("gguf_llama_tiny_random_llama2", path, path.read_bytes())
        write_forward_golden(path, tok)


if __name__ == "__main__":
    main()
