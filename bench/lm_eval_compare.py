#!/usr/bin/env python3
"""Side-by-side wall time: focal-eval vs lm-evaluation-harness on the same files and model.

Runs, one after the other on this machine, zero-shot tasks (default: arc_easy, arc_challenge,
hellaswag, piqa, boolq, lambada_openai, lambada_standard) on one model (default: the default
model, SmolLM2-135M-Instruct Q4_1 GGUF; any HF directory or .gguf file, e.g. the stories260K the build converts into
build/testdata/stories260K) with
  1. focal-eval run (CPU backend, --threads N, --precision fp32 or bf16), and
  2. lm-eval 0.4.13 (HF backend, CPU, torch threads N, --batch-size B; float32, or each dtype
     of --lm-eval-dtypes in turn, e.g. float32,bfloat16), through lm-eval's
     own installed task configs with only the data source replaced by the loaders of
     tests/reference/lm_eval_parity_reference.py (the same ../shared/data files; transformers
     loads a GGUF itself, dequantized to float32),
and prints a Markdown table of wall time, requests/s and each task's headline metric from both.
Full splits unless --limit or --docs A:B (documents A..B-1 of each task's files, cut into a
folder under the work folder that both tools then read, so a split too long for one sitting can
be run in slices; document indices in the output are then relative to A). --data-layout fetched
reads the files scripts/fetch_data.sh fetched (the data users get; WinoGrande too, ARC-Challenge's
test split) instead of ../shared's, where ARC-Challenge is its dev split.

Needs: a built focal-eval (cmake --build build --target focal-eval) and a python with lm-eval
(tests/reference/README.md: /tmp/lmeval-venv). Not a test: numbers are noisy.
Usage: python3 bench/lm_eval_compare.py [--model PATH] [--tasks T,...] [--limit N] [--threads N]
                                        [--batch-size B] [--python PY] [--skip-lm-eval]
                                        [--data-layout shared|fetched] [--data-root DIR]
                                        [--docs A:B] [--keep DIR] [--precision fp32|bf16]
                                        [--lm-eval-dtypes float32,bfloat16]
"""
import argparse
import bz2
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
HEADLINE = {"arc_easy": "acc", "arc_challenge": "acc_norm", "hellaswag": "acc_norm", "piqa": "acc",
            "boolq": "acc", "lambada_openai": "acc", "lambada_standard": "acc",
            "winogrande": "acc"}
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
from task_files import DATA_FILES, FETCHED_FILES  # noqa: E402  (the first is focal-eval's)

TASKS = list(DATA_FILES)
LAYOUT = "shared"  # main() may switch DATA_FILES to FETCHED_FILES

# Lines per document in those files (HellaSwag's text: context, label, four endings; PIQA's
# labels file has one line per document, like its data).
LINES_PER_DOC = {"hellaswag": 6}


def slice_data(tasks, data_root, work, first, end):
    """Documents [first, end) of each task's files, laid out like data_root under work/data."""
    root = os.path.join(work, "data")
    for t in tasks:
        per = LINES_PER_DOC.get(t, 1) if LAYOUT == "shared" else 1
        for rel in DATA_FILES[t]:
            src, dst = os.path.join(data_root, rel), os.path.join(root, rel)
            opener = bz2.open if rel.endswith(".bz2") else open
            with opener(src, "rb") as f:
                lines = f.read().splitlines(keepends=True)
            if len(lines) % per or end * per > len(lines):
                raise RuntimeError(f"{src}: {len(lines)} lines, not {per} per document for "
                                   f"documents {first}..{end - 1}")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with opener(dst, "wb") as f:
                f.writelines(lines[first * per:end * per])
    return root


def data_cache():
    """scripts/fetch_data.sh's folder (as base/asset_root.cc, DataCacheDir())."""
    if os.environ.get("FOCAL_DATA_CACHE") not in (None, "", "none"):
        return os.environ["FOCAL_DATA_CACHE"]
    cache = os.environ.get("FOCAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "focal-eval")
    return os.path.join(cache, "data")


def default_model():
    cache = os.environ.get("FOCAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "focal-eval")
    return os.path.join(cache, "models", "smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf")


def run_focal(tasks, model, data_root, work, limit, threads, precision):
    cmd = [os.path.join(REPO, "build", "harness", "focal-eval"), "run", "--no-progress",
           "--model", model, "--device", "cpu", "--threads", str(threads),
           "--precision", precision,
           "--tasks", ",".join(tasks), "--out", os.path.join(work, "focal.json"),
           "--samples", os.path.join(work, "focal_samples.jsonl"),
           "--cache-dir", os.path.join(work, "focal-cache")]
    for t in tasks:
        cmd += ["--data", f"{t}={os.path.join(data_root, DATA_FILES[t][0])}"]
    if limit:
        cmd += ["--limit", str(limit)]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    res = json.load(open(os.path.join(work, "focal.json")))
    m = res["models"][0]
    metrics = {t["task"]: {v["name"]: v["value"] for v in t["metrics"]} for t in m["tasks"]}
    requests = sum(int(t["num_requests"]) for t in m["tasks"])
    docs = {}  # (task, doc index) -> (loglikelihoods, per-document metrics)
    with open(os.path.join(work, "focal_samples.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            docs[(d["task"], d["doc_index"])] = (d["loglikelihoods"], d["metrics"])
    return wall, requests, metrics, m, docs


LM_EVAL_SNIPPET = r"""
import json, sys, time
tasks, limit, bs, threads, model_path, ref_dir, shared, out, layout, dtype = json.loads(sys.argv[1])
sys.path.insert(0, ref_dir)
import lm_eval_parity_reference as ref  # sets the offline env vars before importing lm-eval
ref.FILES, ref.READERS = ref.LAYOUTS[layout]
import lm_eval, torch
from lm_eval.tasks import TaskManager
torch.set_num_threads(threads)
t0 = time.monotonic()
model, tok = ref.load_model(model_path)  # float32
if dtype != "float32":
    model = model.to(getattr(torch, dtype))
lm = ref.RecordingHFLM(pretrained=model, tokenizer=tok, batch_size=bs)
tm = TaskManager()
specs, _ = ref.task_specs(tm, tasks, shared)
t1 = time.monotonic()
r = lm_eval.simple_evaluate(model=lm, tasks=specs, task_manager=tm, limit=limit or None,
                            log_samples=True)
t2 = time.monotonic()
# Where the model's own tokenizer (ref.model_tokenizer) gives other ids than transformers'
# did, the request is scored again on the model's ids by a plain forward (lm-eval's own
# arithmetic, self-checked by the parity reference); not part of lm-eval's time.
own = ref.model_tokenizer(model_path)
docs, retokenized = {}, {}
for t, ss in r["samples"].items():
    docs[t], retokenized[t] = [], []
    for s in ss:
        lls, differs = [float(x[0]) for x in s["filtered_resps"]], False
        ntok = [len(lm.fed[(c, k)][1]) for c, k in s["arguments"]]
        for i, (c, k) in enumerate(s["arguments"]):
            ids = own[1](own[0], c, k, None) if own and c else None
            if ids is not None and ids != lm.fed[(c, k)]:
                lls[i], differs, ntok[i] = ref.score(lm, *ids)[0], True, len(ids[1])
        if differs:
            retokenized[t].append(s["doc_id"])
        docs[t].append([s["doc_id"], lls, {k: float(s[k]) for k in ("acc", "acc_norm") if k in s},
                        ntok])
json.dump({"load": t1 - t0, "evaluate": t2 - t1, "after": time.monotonic() - t2,
           "results": r["results"], "n": r["n-samples"], "docs": docs,
           "retokenized": retokenized}, open(out, "w"))
"""


def run_lm_eval(tasks, model, data_root, work, limit, batch_size, threads, python, dtype):
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    out = os.path.join(work, f"lm_eval_{dtype}.json")
    args = json.dumps([tasks, limit, batch_size, threads, model,
                       os.path.join(REPO, "tests", "reference"), data_root, out, LAYOUT, dtype])
    t0 = time.monotonic()
    log = os.path.join(work, f"lm_eval_{dtype}.log")
    with open(log, "w") as f:
        rc = subprocess.run([python, "-c", LM_EVAL_SNIPPET, args], env=env, stdout=f,
                            stderr=subprocess.STDOUT).returncode
    if rc != 0:
        tail = open(log).read()[-3000:]
        raise RuntimeError(f"lm-eval failed (exit {rc}); last output:\n{tail}")
    res = json.load(open(out))
    # The whole process, start-up included, like focal-eval's; less the re-scoring after it.
    wall = time.monotonic() - t0 - res["after"]
    metrics = {t: {k.split(",")[0]: v for k, v in r.items() if isinstance(v, float)}
               for t, r in res["results"].items()}
    docs = {(t, d[0]): (d[1], d[2], d[3]) for t, ds in res["docs"].items() for d in ds}
    return wall, res["load"], res["evaluate"], metrics, docs, res["retokenized"]


def parity_tolerance():
    """(absolute, per continuation token), the parity tests' rule."""
    with open(os.path.join(REPO, "tests", "testdata", "golden", "lm_eval_tolerance.json")) as f:
        tol = json.load(f)
    return tol["absolute"], tol["per_token_large_vocab"]


def compare_docs(tasks, ours, theirs):
    """Per task: documents, documents whose acc (and acc_norm) agree, max |loglikelihood diff|,
    documents over the parity test's tolerance and each tool's count of documents right by the
    headline metric (exact counts, so that slices of a split add up).

    The tolerance is the parity tests' (tests/testdata/golden/lm_eval_tolerance.json): an
    absolute term plus one per continuation token (lm-eval's float32 log-softmax drifts ~1.1e-5
    to 1.9e-5 per token over a large vocabulary); the float32-ulp term is left out here.

    A document that transformers tokenizes otherwise than the model's tokenizer is compared on
    the model's ids (re-scored by the lm-eval process); its acc is lm-eval's on transformers' ids.
    """
    absolute, per_token = parity_tolerance()
    rows = []
    for t in tasks:
        keys = sorted(k for k in theirs if k[0] == t)
        mine = sorted(k for k in ours if k[0] == t)
        if keys != mine:
            raise RuntimeError(f"{t}: the two tools scored different documents "
                               f"({len(mine)} vs {len(keys)})")
        agree, worst, where, flat, over, correct = 0, 0.0, None, 0, 0, [0, 0]
        for k in keys:
            (lo, mo), (lt, mt, ntok) = ours[k], theirs[k]
            if len(lo) != len(lt):
                raise RuntimeError(f"{t} document {k[1]}: {len(lo)} vs {len(lt)} continuations")
            diff = max(abs(a - b) for a, b in zip(lo, lt))
            flat += diff > absolute
            over += any(abs(a - b) > absolute + per_token * n for a, b, n in zip(lo, lt, ntok))
            if diff > worst:
                worst, where = diff, k[1]
            agree += all(mo[m] == mt[m] for m in mt)
            correct[0] += mo[HEADLINE[t]]
            correct[1] += mt[HEADLINE[t]]
        rows.append((t, len(keys), agree, worst, where, flat, over, correct))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=default_model(), help="HF directory or .gguf file")
    ap.add_argument("--tasks", default=",".join(TASKS), help="subset of the seven tasks")
    ap.add_argument("--limit", type=int, default=0, help="documents per task (0: full splits)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads, both tools")
    ap.add_argument("--batch-size", default="32", help="lm-eval batch size")
    ap.add_argument("--python", default=sys.executable, help="python with lm-eval installed")
    ap.add_argument("--skip-lm-eval", action="store_true", help="time focal-eval only")
    ap.add_argument("--data-layout", choices=["shared", "fetched"], default="shared",
                    help="../shared/data's files, or scripts/fetch_data.sh's")
    ap.add_argument("--data-root", help="the data folder (default: ../shared/data, or the data "
                    "cache with --data-layout fetched)")
    ap.add_argument("--docs", metavar="A:B", help="only documents A..B-1 of each task")
    ap.add_argument("--keep", metavar="DIR", help="keep both tools' outputs (per-document "
                    "samples, results, logs) in DIR instead of a temporary folder")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="focal-eval's --precision")
    ap.add_argument("--lm-eval-dtypes", default="float32",
                    help="lm-eval runs, one per torch dtype, in this order (float32,bfloat16)")
    a = ap.parse_args()
    global DATA_FILES, LAYOUT
    LAYOUT = a.data_layout
    if LAYOUT == "fetched":
        DATA_FILES = FETCHED_FILES
    if a.data_root is None:
        a.data_root = SHARED if LAYOUT == "shared" else data_cache()
    # A terminated run unwinds like an interrupted one: subprocess.run kills the tool it waits
    # on and the temporary folder (outputs, lock files) is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    tasks = a.tasks.split(",")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    first, end = map(int, a.docs.split(":")) if a.docs else (0, 0)
    if a.docs and not 0 <= first < end:
        ap.error(f"--docs {a.docs}: want A:B with 0 <= A < B")
    with contextlib.nullcontext(a.keep) if a.keep else tempfile.TemporaryDirectory() as work:
        data_root = slice_data(tasks, a.data_root, work, first, end) if a.docs else a.data_root
        f_wall, requests, f_metrics, f_model, f_docs = run_focal(tasks, a.model, data_root, work,
                                                                 a.limit, a.threads, a.precision)
        runs = {}  # dtype -> (wall, load, evaluate, metrics, docs, retokenized)
        for dtype in ([] if a.skip_lm_eval else a.lm_eval_dtypes.split(",")):
            runs[dtype] = run_lm_eval(tasks, a.model, data_root, work, a.limit, a.batch_size,
                                      a.threads, a.python, dtype)
    scope = f"documents {first}..{end - 1}" if a.docs else (
        f"limit {a.limit}" if a.limit else "full splits")
    print(f"{os.path.basename(os.path.normpath(a.model))}: {requests} loglikelihood requests, "
          f"{scope}, {a.threads} threads, {os.cpu_count()} cores\n")
    print("| tool | wall s | requests/s | speed-up |")
    print("|---|---:|---:|---:|")
    # Speed-ups are over each lm-eval run; the focal-eval row shows the first's.
    first_wall = next(iter(runs.values()))[0] if runs else None
    print(f"| focal-eval run (CPU, {a.precision}) | {f_wall:.1f} | {requests / f_wall:.0f} | "
          + (f"{first_wall / f_wall:.1f}x |" if runs else "|"))
    for dtype, (l_wall, l_load, l_eval, *_) in runs.items():
        print(f"| lm-eval 0.4.13 (HF, CPU, {dtype}, batch {a.batch_size}) | {l_wall:.1f} "
              f"(model load {l_load:.1f}, evaluate {l_eval:.1f}) | {requests / l_wall:.0f} | "
              f"focal-eval {l_wall / f_wall:.1f}x faster |")
    print("\n| task | metric | focal-eval | " + " | ".join(f"lm-eval {d}" for d in runs) + " |")
    print("|---|---|---:|" + "---:|" * len(runs))
    for t in tasks:
        m = HEADLINE[t]
        print(f"| {t} | {m} | {f_metrics[t][m]:.4f} | "
              + " | ".join(f"{r[3][t][m]:.4f}" for r in runs.values()) + " |")
    absolute, per_token = parity_tolerance()
    for dtype, (_, _, _, _, l_docs, l_retok) in runs.items():
        print(f"\nfocal-eval ({a.precision}) beside lm-eval ({dtype}):\n")
        print("| task | documents | same acc (and acc_norm) | max abs loglikelihood diff "
              f"(document) | documents over {absolute:g} | over {absolute:g} + {per_token:g}/token "
              "| tokenized otherwise by transformers "
              "| right by the headline metric (focal-eval / lm-eval) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for t, n, agree, worst, where, flat, over, right in compare_docs(tasks, f_docs, l_docs):
            print(f"| {t} | {n} | {agree} | {worst:.2e} ({where}) | {flat} | {over} "
                  f"| {len(l_retok[t])} "
                  f"| {right[0]:.0f} / {right[1]:.0f} |")
        for t in tasks:
            if l_retok[t]:
                print(f"\n{t}: documents {l_retok[t][:20]}{' ...' if len(l_retok[t]) > 20 else ''} "
                      "are tokenized otherwise by transformers' tokenizer than by the model's "
                      "(tests/reference/lm_eval_parity_reference.py, model_tokenizer); their "
                      "loglikelihoods are compared on the model's ids.")
    print(f"\nfocal-eval processed {f_model['tokens_processed']} tokens "
          f"({float(f_model['tokens_per_second']):.0f} tokens/s).")


if __name__ == "__main__":
    main()
