#!/usr/bin/env python3
"""Side-by-side wall time: focal-eval vs lm-evaluation-harness on full task splits.

Runs, one after the other on this machine, the six zero-shot tasks (arc_easy, arc_challenge,
hellaswag, piqa, boolq, lambada_openai) on the bundled stories260K with
  1. focal-eval run (CPU backend, all cores), and
  2. lm-eval 0.4.13 (HF backend, fp32, CPU, all cores, --batch_size given below),
over the same files from ../shared/data (lm-eval reads them through the custom tasks in
tests/reference/lm_eval_tasks/ with FOCAL_LM_EVAL_DATA pointing at a staging directory), and
prints a Markdown table of wall time, requests/s and each task's headline metric from both.

Needs: a built focal-eval (cmake --build build) and lm-eval importable by --python
(pip install -r tests/reference/lm_eval_requirements.txt). Not a test: numbers are noisy.
Usage: python3 bench/lm_eval_compare.py [--limit N] [--batch-size B] [--python PY]
"""
import argparse
import bz2
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
TASKS = ["arc_easy", "arc_challenge", "hellaswag", "piqa", "boolq", "lambada_openai"]
# staged name -> source under ../shared/data
FILES = {
    "arc_easy.jsonl": "arc/ARC-Easy-Test.jsonl",
    "arc_challenge.jsonl": "arc/ARC-Challenge-Dev.jsonl",
    "hellaswag.txt": "hellaswag/hellaswag_val_full.txt.bz2",
    "piqa.jsonl": "piqa/valid.jsonl",
    "piqa-labels.lst": "piqa/valid-labels.lst",
    "boolq.jsonl": "boolq/dev.jsonl",
    "lambada_openai.jsonl": "lambada/lambada_test.jsonl",
}
DATA_FLAG = {"arc_easy": "arc_easy.jsonl", "arc_challenge": "arc_challenge.jsonl",
             "hellaswag": "hellaswag.txt", "piqa": "piqa.jsonl", "boolq": "boolq.jsonl",
             "lambada_openai": "lambada_openai.jsonl"}
HEADLINE = {"arc_easy": "acc", "arc_challenge": "acc_norm", "hellaswag": "acc_norm", "piqa": "acc",
            "boolq": "acc", "lambada_openai": "acc"}


def stage(dst):
    for name, src in FILES.items():
        data = open(os.path.join(SHARED, src), "rb").read()
        if src.endswith(".bz2"):
            data = bz2.decompress(data)
        open(os.path.join(dst, name), "wb").write(data)


def run_focal(stage_dir, work, limit):
    cmd = [os.path.join(REPO, "build", "harness", "focal-eval"), "run", "--no-progress",
           "--tasks", ",".join(TASKS), "--out", os.path.join(work, "focal.json"),
           "--cache-dir", os.path.join(work, "focal-cache")]
    for t in TASKS:
        cmd += ["--data", f"{t}={os.path.join(stage_dir, DATA_FLAG[t])}"]
    if limit:
        cmd += ["--limit", str(limit)]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    res = json.load(open(os.path.join(work, "focal.json")))
    m = res["models"][0]
    metrics = {t["task"]: {v["name"]: v["value"] for v in t["metrics"]} for t in m["tasks"]}
    requests = sum(int(t["num_requests"]) for t in m["tasks"])
    return wall, requests, metrics, m


LM_EVAL_SNIPPET = r"""
import json, os, sys, time
import lm_eval
from lm_eval.tasks import TaskManager
tasks, limit, bs, model, tasks_dir, out = json.loads(sys.argv[1])
tm = TaskManager(include_path=tasks_dir, include_defaults=False)
t0 = time.monotonic()
r = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={model},dtype=float32",
                            device="cpu", batch_size=bs, tasks=tasks, task_manager=tm,
                            limit=limit or None)
wall = time.monotonic() - t0
json.dump({"wall": wall, "results": r["results"], "n": r["n-samples"]}, open(out, "w"))
"""


def run_lm_eval(stage_dir, work, limit, batch_size, python):
    env = dict(os.environ, FOCAL_LM_EVAL_DATA=stage_dir, HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    out = os.path.join(work, "lm_eval.json")
    args = json.dumps([TASKS, limit, batch_size, os.path.join(REPO, "build", "testdata", "stories260K"),
                       os.path.join(REPO, "tests", "reference", "lm_eval_tasks"), out])
    t0 = time.monotonic()
    log = os.path.join(work, "lm_eval.log")
    with open(log, "w") as f:
        rc = subprocess.run([python, "-c", LM_EVAL_SNIPPET, args], env=env, stdout=f,
                            stderr=subprocess.STDOUT).returncode
    if rc != 0:
        tail = open(log).read()[-3000:]
        raise RuntimeError(f"lm-eval failed (exit {rc}); last output:\n{tail}")
    wall = time.monotonic() - t0  # whole process, start-up included, like focal-eval's
    res = json.load(open(out))
    metrics = {t: {k.split(",")[0]: v for k, v in r.items() if isinstance(v, float)}
               for t, r in res["results"].items()}
    return wall, res["wall"], metrics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default=",".join(TASKS), help="subset of the six tasks")
    ap.add_argument("--limit", type=int, default=0, help="documents per task (0: full splits)")
    ap.add_argument("--batch-size", default="32", help="lm-eval batch size")
    ap.add_argument("--python", default=sys.executable, help="python with lm-eval installed")
    a = ap.parse_args()
    TASKS[:] = a.tasks.split(",")
    with tempfile.TemporaryDirectory() as work:
        stage_dir = os.path.join(work, "data")
        os.makedirs(stage_dir)
        stage(stage_dir)
        f_wall, requests, f_metrics, f_model = run_focal(stage_dir, work, a.limit)
        l_wall, l_eval_wall, l_metrics = run_lm_eval(stage_dir, work, a.limit, a.batch_size,
                                                     a.python)
    print(f"{requests} loglikelihood requests, {'full splits' if not a.limit else f'limit {a.limit}'}"
          f", {os.cpu_count()} cores\n")
    print("| tool | wall s | requests/s | speed-up |")
    print("|---|---:|---:|---:|")
    print(f"| focal-eval run (CPU) | {f_wall:.1f} | {requests / f_wall:.0f} | {l_wall / f_wall:.1f}x |")
    print(f"| lm-eval 0.4.13 (HF, CPU, batch {a.batch_size}) | {l_wall:.1f} "
          f"(evaluate {l_eval_wall:.1f}) | {requests / l_wall:.0f} | 1.0x |")
    print("\n| task | metric | focal-eval | lm-eval |")
    print("|---|---|---:|---:|")
    for t in TASKS:
        m = HEADLINE[t]
        print(f"| {t} | {m} | {f_metrics[t][m]:.4f} | {l_metrics[t][m]:.4f} |")
    print(f"\nfocal-eval processed {f_model['tokens_processed']} tokens "
          f"({float(f_model['tokens_per_second']):.0f} tokens/s).")


if __name__ == "__main__":
    main()
