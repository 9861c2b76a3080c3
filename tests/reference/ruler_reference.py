#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""RULER's own generator as the oracle for focal-eval's RULER prompts.

Runs `long_context_eval/data/prepare.py` of the pinned `nvidia-long-context-eval` wheel (RULER's
generator, installed with --no-deps; see ruler_requirements.txt) for each task and length, with a
local HF tokenizer, and writes one line per sample: the SHA-256 of `input`, of the golds joined by
"\n", the byte size of `input` and RULER's `length`. No text goes into the golden.

    python3 -m venv /tmp/ruler-venv
    /tmp/ruler-venv/bin/pip install -r tests/reference/ruler_requirements.txt
    /tmp/ruler-venv/bin/pip install --no-deps nvidia-long-context-eval==26.3
    /tmp/ruler-venv/bin/python tests/reference/ruler_reference.py \
        --gguf ~/.cache/focal-eval/models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf \
        --name smollm2 --lengths 4096,8192 --num-samples 3 \
        --out tests/testdata/golden/ruler_reference/smollm2.txt
    /tmp/ruler-venv/bin/python tests/reference/ruler_reference.py \
        --sp-model ../shared/models/llama2-tokenizer/tokenizer.model --name llama2 ...

The essay tasks need NLTK's punkt_tab, which the RULER wheel lacks: --nltk-data DIR, a folder
holding tokenizers/punkt_tab, e.g. from the wheel the data fetch pins for it:
    pip download --no-deps llama-index-core==0.14.25 -d /tmp/w && unzip -q /tmp/w/llama_index_core-*.whl \
        'llama_index/core/_static/nltk_cache/*' -d /tmp/w   # DIR = /tmp/w/llama_index/core/_static/nltk_cache prepare.py reports
success even when its child script failed, so every output file is checked for its sample count.
--keep DIR keeps RULER's jsonl files (for looking at a difference).
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

TASKS = ["niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
         "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe", "qa_1",
         "qa_2"]


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tokenizer_dir(args, tmp):
    """A folder AutoTokenizer.from_pretrained reads: the given one, or one written from a GGUF's
    embedded tokenizer or a sentencepiece model."""
    if args.tokenizer_dir:
        return args.tokenizer_dir
    out = os.path.join(tmp, "tokenizer")
    if args.sp_model:
        # What transformers loads for a Llama 2 checkpoint: LlamaTokenizer from tokenizer.model
        # (LlamaTokenizer(vocab_file=...) builds an empty one in transformers 5).
        os.makedirs(out)
        shutil.copy(args.sp_model, os.path.join(out, "tokenizer.model"))
        with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
                       "unk_token": "<unk>", "add_bos_token": True}, f)
        return out
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(args.gguf)),
                                        gguf_file=os.path.basename(args.gguf))
    tok.save_pretrained(out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tokenizer-dir")
    src.add_argument("--gguf")
    src.add_argument("--sp-model")
    ap.add_argument("--name", required=True, help="the tokenizer's name in the golden")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--lengths", default="4096,8192")
    ap.add_argument("--num-samples", type=int, default=3)
    ap.add_argument("--nltk-data", help="a folder holding tokenizers/punkt_tab (essay tasks)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--keep")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds per task and length (RULER loops forever on a broken tokenizer)")
    args = ap.parse_args()

    import long_context_eval
    data_dir = os.path.join(os.path.dirname(long_context_eval.__file__), "data")
    nltk_data = args.nltk_data or ""
    env = dict(os.environ, NLTK_DATA=nltk_data,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        tok = tokenizer_dir(args, tmp)
        for length in [int(x) for x in args.lengths.split(",")]:
            for task in args.tasks.split(","):
                save = os.path.join(tmp, f"out{length}")
                cmd = [sys.executable, "prepare.py", "--save_dir", save, "--benchmark",
                       "synthetic", "--task", task, "--tokenizer_path", tok, "--tokenizer_type",
                       "hf", "--max_seq_length", str(length), "--model_template_type", "base",
                       "--num_samples", str(args.num_samples)]
                p = subprocess.run(cmd, cwd=data_dir, env=env, capture_output=True, text=True,
                                   timeout=args.timeout)
                path = os.path.join(save, task, "validation.jsonl")
                rows = []
                if os.path.exists(path):
                    with open(path, encoding="utf-8") as f:
                        rows = [json.loads(line) for line in f]
                if p.returncode != 0 or len(rows) != args.num_samples:
                    sys.exit(f"{task} at {length}: RULER wrote {len(rows)} of {args.num_samples} "
                             f"samples\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
                for r in rows:
                    lines.append(f"{args.name} {task} {length} {r['index']} {sha(r['input'])} "
                                 f"{sha(chr(10).join(r['outputs']))} "
                                 f"{len(r['input'].encode('utf-8'))} {r['length']}")
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copy(path, os.path.join(args.keep, f"{task}_{length}.jsonl"))
                print(f"{task} {length}: {len(rows)} samples", file=sys.stderr)
    header = [
        "# RULER's own generator (nvidia-long-context-eval==26.3, prepare.py, seed 42, base",
        "# template, HF tokenizer): tokenizer task length index sha256(input)",
        "# sha256(golds joined by \\n) input_bytes length. Made by tests/reference/ruler_reference.py.",
    ]
    with open(args.out, "w") as f:
        f.write("\n".join(header + lines) + "\n")


if __name__ == "__main__":
    main()
