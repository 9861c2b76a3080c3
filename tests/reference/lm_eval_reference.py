#!/usr/bin/env python3
"""lm-evaluation-harness goldens for the stories260K model: per-request log-likelihoods and scores.

Runs the real lm-eval (HF backend, fp32, CPU, batch size 1, zero-shot) on the first 200 documents
of arc_easy, arc_challenge (dev), hellaswag, piqa, boolq, lambada_openai and lambada_standard,
read from tests/testdata/lm_eval/ through the custom tasks in tests/reference/lm_eval_tasks/
(copies of lm-eval's own task configs with a local loader), and writes

  tests/testdata/golden/lm_eval/<task>.jsonl   one line per document: every request's context,
      continuation, ll, is_greedy, the exact token ids lm-eval fed, lm-eval's per-doc metrics, gold
  tests/testdata/golden/lm_eval/aggregate.json lm-eval's aggregate scores and stderrs, plus _meta

Usage (repo root; see lm_eval_requirements.txt; nothing touches the HF hub):
    python3 tests/reference/lm_eval_reference.py [--shared-data ../shared/data]
The data subsets are cut from ../shared/data only if tests/testdata/lm_eval/ lacks them.
One torch thread and lm-eval's fixed seeds: a rerun rewrites every file byte for byte.
"""
import argparse
import bz2
import json
import os
import shutil
import sys

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"  # never touch the hub (must be set before the imports below)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402
import lm_eval  # noqa: E402
import sentencepiece  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from lm_eval.models.huggingface import HFLM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "testdata", "lm_eval")
GOLDEN = os.path.join(REPO, "tests", "testdata", "golden", "lm_eval")
TASKS_DIR = os.path.join(REPO, "tests", "reference", "lm_eval_tasks")
# Converted from ../shared by the build (cmake --build build --target stories260K_model).
MODEL = os.environ.get("FOCAL_STORIES260K_DIR", os.path.join(REPO, "build", "testdata", "stories260K"))
TASKS = ["arc_easy", "arc_challenge", "hellaswag", "piqa", "boolq", "lambada_openai", "lambada_standard"]
LIMIT = 200
BATCH_SIZE = 1
BOS = 1

# (source file under ../shared/data, destination under tests/testdata/lm_eval, lines to keep)
SUBSETS = [
    ("arc/ARC-Easy-Test.jsonl", "arc_easy.jsonl", LIMIT),
    ("arc/ARC-Challenge-Dev.jsonl", "arc_challenge.jsonl", LIMIT),
    ("hellaswag/hellaswag_val_full.txt.bz2", "hellaswag.txt", 6 * LIMIT),  # 6 lines per item
    ("piqa/valid.jsonl", "piqa.jsonl", LIMIT),
    ("piqa/valid-labels.lst", "piqa-labels.lst", LIMIT),
    ("boolq/dev.jsonl", "boolq.jsonl", LIMIT),
    ("lambada/lambada_test.jsonl", "lambada_openai.jsonl", LIMIT),
    ("lambada/lambada_test_plain_text.txt", "lambada_standard.txt", LIMIT),
]


def build_subsets(shared_data):
    """Copies the first lines of each source file byte for byte (bz2 is decompressed)."""
    os.makedirs(DATA, exist_ok=True)
    for src, dst, n_lines in SUBSETS:
        dst_path = os.path.join(DATA, dst)
        if os.path.exists(dst_path):
            continue
        src_path = os.path.join(shared_data, src)
        if not os.path.exists(src_path):
            sys.exit(f"missing {dst_path} and its source {src_path} (pass --shared-data)")
        opener = bz2.open if src.endswith(".bz2") else open
        with opener(src_path, "rb") as f, open(dst_path + ".tmp", "wb") as out:
            for _ in range(n_lines):
                line = f.readline()
                assert line.endswith(b"\n"), f"{src} has fewer than {n_lines} lines"
                out.write(line)
        shutil.move(dst_path + ".tmp", dst_path)
        print(f"wrote {dst_path}")


class RecordingHFLM(HFLM):
    """lm-eval's HFLM, unchanged, except that it remembers the token ids of every request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fed = {}  # (context, continuation) -> (context_enc, continuation_enc)

    def _loglikelihood_tokens(self, requests, disable_tqdm=False, override_bs=None):
        for (context, continuation), context_enc, continuation_enc in requests:
            self.fed[(context, continuation)] = (list(context_enc), list(continuation_enc))
        return super()._loglikelihood_tokens(requests, disable_tqdm=disable_tqdm, override_bs=override_bs)


def model_input(lm, ctx, cont):
    """What _loglikelihood_tokens feeds the model (left truncation to max_length + 1, last token dropped)."""
    return (ctx + cont)[-(lm.max_length + 1):][:-1]


def self_check(lm, rows):
    """Re-scores each task's first document with a plain HF forward: must equal lm-eval bit for bit."""
    for task, docs in rows.items():
        for req in docs[0]["requests"]:
            ctx, cont = req["context_tokens"], req["continuation_tokens"]
            inp = torch.tensor([model_input(lm, ctx, cont)])
            with torch.no_grad():
                logp = torch.log_softmax(lm.model(inp).logits[0, -len(cont):], dim=-1)
            ll = float(logp[torch.arange(len(cont)), torch.tensor(cont)].sum())
            greedy = bool((logp.argmax(-1) == torch.tensor(cont)).all())
            assert (ll, greedy) == (req["ll"], req["is_greedy"]), (task, req, ll, greedy)


def tokenizer_check(lm, pairs):
    """Counts strings where lm-eval's HF tokenizer differs from raw sentencepiece (BOS + encode)."""
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(MODEL, "tokenizer.model"))
    strings = sorted({s for c, k in pairs for s in (c.rstrip(), c + k) if s})
    diffs = [s for s in strings if lm.tok_encode(s) != [BOS] + sp.encode(s)]
    return len(strings), diffs


def doc_rows(lm, task, samples):
    rows = []
    for s in sorted(samples, key=lambda s: s["doc_id"]):
        requests = []
        for (context, continuation), (ll, is_greedy) in zip(s["arguments"], s["filtered_resps"], strict=True):
            ctx_enc, cont_enc = lm.fed[(context, continuation)]
            total = len(ctx_enc) + len(cont_enc)
            requests.append({
                "context": context, "continuation": continuation,
                "ll": ll, "is_greedy": bool(is_greedy),
                "context_tokens": ctx_enc, "continuation_tokens": cont_enc,
                # tokens cut from the front of context_tokens: (ctx + cont)[-(max_length+1):][:-1]
                "truncated": max(0, total - (lm.max_length + 1)),
            })
        metrics = {m: s[m] for m in s["metrics"]}
        rows.append({"doc_id": s["doc_id"], "requests": requests, "metrics": metrics, "gold": s["target"]})
    assert [r["doc_id"] for r in rows] == list(range(LIMIT)), task
    return rows


def aggregate(results, n_samples):
    out = {}
    for task in TASKS:
        res = results[task]
        entry = {}
        for key in ("acc", "acc_norm", "perplexity"):
            if f"{key},none" in res:
                entry[key] = res[f"{key},none"]
                entry[f"{key}_stderr"] = res[f"{key}_stderr,none"]
        entry["n"] = n_samples[task]["effective"]
        out[task] = entry
    return out


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared-data", default=os.path.join(os.path.dirname(REPO), "shared", "data"))
    ap.add_argument("--out", default=GOLDEN, help="golden output directory")
    args = ap.parse_args()

    build_subsets(args.shared_data)
    torch.set_num_threads(1)  # one thread: fixed reduction order, byte-identical reruns
    torch.use_deterministic_algorithms(True)
    datasets.disable_progress_bars()

    lm = RecordingHFLM(pretrained=MODEL, dtype="float32", device="cpu", batch_size=BATCH_SIZE)
    task_manager = TaskManager(include_path=TASKS_DIR, include_defaults=False)
    out = lm_eval.simple_evaluate(
        model=lm, tasks=TASKS, task_manager=task_manager, limit=LIMIT, log_samples=True,
        # zero-shot; bootstrap_iters and all seeds left at lm-eval's defaults (100000; 0/1234/1234/1234)
    )

    rows = {task: doc_rows(lm, task, out["samples"][task]) for task in TASKS}
    self_check(lm, rows)
    first_tokens = {req["context_tokens"][0] for docs in rows.values() for d in docs for req in d["requests"]}
    n_strings, tok_diffs = tokenizer_check(lm, lm.fed.keys())
    requests = [req for docs in rows.values() for d in docs for req in d["requests"]]

    os.makedirs(args.out, exist_ok=True)
    for task in TASKS:
        write_jsonl(os.path.join(args.out, f"{task}.jsonl"), rows[task])
    agg = aggregate(out["results"], out["n-samples"])
    agg["_meta"] = {
        "lm_eval": lm_eval.__version__, "transformers": transformers.__version__,
        "torch": torch.__version__, "datasets": datasets.__version__,
        "python": sys.version.split()[0],
        "model": "model/assets/stories260K (hf, dtype=float32, device=cpu)",
        "add_bos": first_tokens == {BOS},
        "batch_size": BATCH_SIZE, "limit": LIMIT, "num_fewshot": 0,
        "max_length": lm.max_length, "bootstrap_iters": 100000,
        "requests": len(requests),
        "requests_truncated": sum(1 for r in requests if r["truncated"]),
        "requests_with_context_trailing_space": sum(1 for r in requests if r["context"] != r["context"].rstrip()),
        "requests_with_empty_context": sum(1 for r in requests if r["context"] == ""),
        "hf_vs_sentencepiece_token_mismatches": f"{len(tok_diffs)} of {n_strings} strings",
    }
    with open(os.path.join(args.out, "aggregate.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(agg, f, indent=2, ensure_ascii=False)
        f.write("\n")

    for task in TASKS:
        print(task, json.dumps(agg[task]))
    print(json.dumps(agg["_meta"], indent=1))
    for s in tok_diffs[:5]:
        print("tokenizer mismatch:", repr(s[:120]))


if __name__ == "__main__":
    main()
