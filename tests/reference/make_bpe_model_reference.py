#!/usr/bin/env python3
"""Tiny random llama checkpoints that carry a tokenizer.json, and their HF goldens.

Run from anywhere (the /work/venv-ref versions, tests/reference/requirements.txt):
    python3 tests/reference/make_bpe_model_reference.py
  -> tests/testdata/models/bpe_<name>/   config.json, model.safetensors, tokenizer.json (a copy of
     tests/testdata/tokenizer/<name>/tokenizer.json) and a tokenizer_config.json written here
  -> tests/testdata/golden/forward/bpe_<name>.txt   per text: SHA-256 of the text, HF AutoTokenizer
     ids without and with special tokens, and AutoModelForCausalLM (float32, eager) log-probs and
     argmaxes on the ids with special tokens (the format of make_reference.py's goldens, which
     ReadGoldenLogprobs reads; the extra lines are read by bpe_model_parity_test)
  -> tests/testdata/golden/forward/bpe_<name>_greedy.txt   HF greedy ids from two prompts

The texts are the project's own and live here and in tests/model/bpe_model_parity_test.cc; the
goldens keep only their hashes, ids and numbers. Everything is seeded; a rerun rewrites every file
byte for byte.
"""
import copy
import hashlib
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as mr  # noqa: E402  (sets one thread, deterministic algorithms, offline)
import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from transformers import AutoConfig, AutoTokenizer  # noqa: E402

TOKENIZERS = os.path.join(mr.REPO, "tests", "testdata", "tokenizer")

# The project's own texts: plain prose, whitespace runs/tabs/newlines, digits and contractions,
# non-ASCII (accents, CJK, emoji), and the spellings of special tokens (each tokenizer matches
# its own as one special token, the others as text).
TEXTS = [
    "A small robot named Pim watered the tomatoes at 6:45 every morning.",
    "  Two leading spaces, a tab\there,\nand a blank line\n\nbefore the end.  ",
    "Prices: 1234 apples cost $56.78 (about 9%)! Don't we'll THEY'RE",
    "na\u00efve caf\u00e9 \u6771\u4eac \U0001F600 \u00dcn\u00efc\u00f6d\u00e9",
    "<|begin_of_text|>Spelt specials: <|endoftext|>, <s> and </s> inside.",
]

GREEDY_PROMPTS = ["A small robot", ""]
GREEDY_NEW = 12

# name -> (tokenizer dir, tokenizer_config.json, config.json bos/eos, model shape, weight seed).
# tokenizer_class PreTrainedTokenizerFast: transformers uses tokenizer.json as written (a class
# with its own constructor, e.g. GPT2Tokenizer or LlamaTokenizer, rebuilds parts of it).
MODELS = {
    # Llama 3 style: BOS comes from the post-processor's template; no add_bos_token key.
    "bpe_llama3": ("llama3", {
        "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>",
        "model_max_length": 256, "tokenizer_class": "PreTrainedTokenizerFast"},
        {"bos_token_id": 695, "eos_token_id": 696},
        dict(hidden=48, heads=4, kv=2, layers=2, inter=96, tied=True), 301),
    # GPT-2 style without BOS: no bos_token, so lm-eval's prefix token is the EOS.
    "bpe_gpt2": ("gpt2", {
        "bos_token": None, "eos_token": "<|endoftext|>", "add_bos_token": False,
        "model_max_length": 256, "tokenizer_class": "PreTrainedTokenizerFast"},
        {"bos_token_id": None, "eos_token_id": 0},
        dict(hidden=64, heads=4, kv=4, layers=2, inter=128, tied=False), 302),
    # Llama 2 style sentencepiece BPE with byte fallback: add_bos_token in the config.
    "bpe_spm": ("spm", {
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "add_bos_token": True, "add_eos_token": False,
        "model_max_length": 256, "tokenizer_class": "PreTrainedTokenizerFast"},
        {"bos_token_id": 1, "eos_token_id": 2},
        dict(hidden=32, heads=2, kv=1, layers=2, inter=64, tied=False), 303),
}


def sha256(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def build(name, tok_name, tok_config, ids, shape, seed):
    out = os.path.join(mr.MODELS, name)
    src = os.path.join(TOKENIZERS, tok_name, "tokenizer.json")
    vocab = Tokenizer.from_file(src).get_vocab_size(with_added_tokens=True)
    cfg = mr.llama_config(shape["hidden"], shape["heads"], shape["kv"], shape["layers"],
                          shape["inter"], shape["tied"], vocab_size=vocab, **ids)
    cfg_obj = AutoConfig.for_model(**copy.deepcopy({k: v for k, v in cfg.items()
                                                    if k != "architectures"}))
    model = transformers.LlamaForCausalLM(cfg_obj)
    mr.init_weights(model, seed)
    sd = model.state_dict()
    if cfg["tie_word_embeddings"]:
        sd.pop("lm_head.weight")
    mr.save_checkpoint(name, cfg, sd, torch.float32)
    shutil.copyfile(src, os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        f.write(json.dumps(tok_config, indent=2) + "\n")
    return out


@torch.no_grad()
def golden(name, model_dir):
    tok = AutoTokenizer.from_pretrained(model_dir)
    raw = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    model = mr.load_model(model_dir)
    prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    lines = ["# focal-eval: HF AutoTokenizer ids and AutoModelForCausalLM (float32, eager) log-probs;"
             " generated by tests/reference/make_bpe_model_reference.py",
             "# transformers %s tokenizers %s torch %s; model %s" % (
                 transformers.__version__, __import__("tokenizers").__version__,
                 torch.__version__.split("+")[0], os.path.relpath(model_dir, mr.REPO)),
             "# tokenizer: class %s, bos_token_id %s, eos_token_id %s, lm-eval prefix_token_id %s"
             % (type(tok).__name__, tok.bos_token_id, tok.eos_token_id, prefix),
             "special_ids %d %d %d" % (-1 if tok.bos_token_id is None else tok.bos_token_id,
                                       -1 if tok.eos_token_id is None else tok.eos_token_id,
                                       prefix)]
    min_gap = float("inf")
    for n, text in enumerate(TEXTS):
        plain = tok.encode(text, add_special_tokens=False)
        ids = tok.encode(text)  # add_special_tokens=True: what lm-eval's HF backend encodes by default
        # transformers must agree with the file as `tokenizers` reads it (else the golden would
        # test transformers' rebuild, not tokenizer.json).
        assert plain == raw.encode(text, add_special_tokens=False).ids, (name, text)
        logits = mr.run(model, ids)
        logp = torch.log_softmax(logits, dim=-1)
        top2 = logits.topk(2, dim=-1).values
        min_gap = min(min_gap, float((top2[:, 0] - top2[:, 1]).min()))
        lines += ["sequence %d" % n, "text_sha256 " + sha256(text),
                  "ids_plain " + " ".join(map(str, plain)), "tokens " + " ".join(map(str, ids))]
        for i in range(1, len(ids)):
            lines.append("logprob %d %d %.9g %d" % (i, ids[i], float(logp[i - 1, ids[i]]),
                                                     int(logits[i - 1].argmax())))
        lines += ["final_argmax %d" % int(logits[-1].argmax()), "end"]
    with open(os.path.join(mr.GOLDEN, name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # Greedy decoding (HF generate, KV cache) from a prompt and from an empty one, which starts
    # from BOS, else EOS (focal-eval generate's rule, lm-eval's empty-context token).
    lines = ["# HF transformers greedy decoding (generate, do_sample=False, eos_token_id=None), "
             "%d new tokens; generated by tests/reference/make_bpe_model_reference.py" % GREEDY_NEW]
    for prompt in GREEDY_PROMPTS:
        ids = tok.encode(prompt) or [prefix]
        # An explicit all-ones mask: generate would otherwise infer one from pad_token_id and
        # mask out a prompt token equal to it (here BOS or EOS).
        x = torch.tensor([ids])
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=GREEDY_NEW,
                             do_sample=False, eos_token_id=None, pad_token_id=prefix)
        new = out[0, len(ids):].tolist()
        # focal-eval generate stops at the EOS: the golden must not reach one.
        assert tok.eos_token_id not in new, (name, prompt, new)
        lines += ["text_sha256 " + sha256(prompt), "prompt " + " ".join(map(str, ids)),
                  "greedy " + " ".join(map(str, new))]
    with open(os.path.join(mr.GOLDEN, name + "_greedy.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("  %-12s %s: bos %s eos %s prefix %s; min top1-top2 logit gap %.3g" % (
        name, type(tok).__name__, tok.bos_token_id, tok.eos_token_id, prefix, min_gap))


def main():
    print("transformers %s, torch %s" % (transformers.__version__, torch.__version__))
    for name, (tok_name, tok_config, ids, shape, seed) in MODELS.items():
        golden(name, build(name, tok_name, tok_config, ids, shape, seed))


if __name__ == "__main__":
    sys.exit(main())
