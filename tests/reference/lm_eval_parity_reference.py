#!/usr/bin/env python3
"""lm-evaluation-harness parity goldens for any model: per-request scores, token ids and hashes.

Runs the real lm-eval (HF backend, float32, CPU, batch size 1, zero-shot unless
--num-fewshot, lm-eval's default seeds)
through lm-eval's OWN installed task configs (TaskManager defaults): the configs are loaded as
installed and only their data source is replaced, by a `custom_dataset` loader that reads the
published files under ../shared/data and yields the schema of the HF dataset each config names.
The model is an HF checkpoint directory or a GGUF file (transformers dequantizes it itself).
Writes, under --out:

  <task>.jsonl    one line per document, in order: doc_id; per request the SHA-256 of the
                  context and continuation strings (never the text), ll, is_greedy, the token
                  ids lm-eval fed (context_tokens, continuation_tokens) and how many tokens left
                  truncation cut; lm-eval's per-document metrics and gold (an int, or the
                  SHA-256 of a string target)
  aggregate.json  lm-eval's acc / acc_norm / perplexity with stderrs and n per task, plus _meta
                  (versions, model and data SHA-256, config files, request counts)

Usage (repo root; see tests/reference/README.md; nothing touches the HF hub):
    python tests/reference/lm_eval_parity_reference.py \\
        --model "$(bash scripts/fetch_default_model.sh)" --out tests/testdata/golden/lm_eval_smollm2
    python tests/reference/lm_eval_parity_reference.py --model build/testdata/stories260K \\
        --out tests/testdata/golden/lm_eval_stories260k
    python tests/reference/lm_eval_parity_reference.py --model build/testdata/stories260K \\
        --tasks arc_easy,piqa,boolq,lambada_openai,lambada_standard --limit 40 --num-fewshot 3 \\
        --fewshot-data arc_easy=arc/ARC-Easy-Dev.jsonl --fewshot-data piqa=piqa/valid.jsonl \\
        --fewshot-data boolq=boolq/dev.jsonl \\
        --fewshot-data lambada_standard=lambada/lambada_test_plain_text.txt \\
        --out tests/testdata/golden/lm_eval_stories260k_3shot
Also usable as a loader module: `make_loader(...)` builds a custom_dataset callable and `task_specs(...)` builds the config dicts (bench/lm_eval_compare.py uses both).
"""
import argparse
import bz2
import hashlib
import json
import os
import sys
import time

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"  # never touch the hub (must be set before the imports below)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402
import lm_eval  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from lm_eval.models.huggingface import HFLM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402
from lm_eval.tasks._yaml_loader import load_yaml  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASKS = ["arc_easy", "arc_challenge", "hellaswag", "piqa", "boolq", "lambada_openai", "lambada_standard"]
# Where scripts/fetch_default_model.sh puts the default model.
DEFAULT_MODEL = os.path.join(
    os.environ.get("FOCAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "focal-eval"),
    "models", "smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf")
BATCH_SIZE = 1
BOOTSTRAP_ITERS = 100000  # lm-eval's default

# Files under ../shared/data per task (the C++ test passes the same paths with --data), or
# under the data cache (--data-layout fetched).
from task_files import DATA_FILES, FETCHED_FILES  # noqa: E402


def data_cache():
    """Where scripts/fetch_data.sh puts the data (as base/asset_root.cc, DataCacheDir())."""
    if os.environ.get("FOCAL_DATA_CACHE") not in (None, "", "none"):
        return os.environ["FOCAL_DATA_CACHE"]
    root = os.environ.get("FOCAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "focal-eval")
    return os.path.join(root, "data")


def sha256_hex(data):
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------- data loaders

def _lines(path):
    opener = bz2.open if path.endswith(".bz2") else open
    with opener(path, "rb") as f:
        text = f.read().decode("utf-8")
    if not text.endswith("\n") or "\r" in text:
        raise ValueError(f"{path}: expected LF-terminated lines")
    return text[:-1].split("\n")


def _jsonl(path):
    return [json.loads(line) for line in _lines(path)]


def _arc(path):
    # AI2 jsonl -> allenai/ai2_arc schema (id, question, choices {text, label}, answerKey).
    docs = []
    for d in _jsonl(path):
        choices = d["question"]["choices"]
        docs.append({
            "id": d["id"], "question": d["question"]["stem"],
            "choices": {"text": [c["text"] for c in choices], "label": [c["label"] for c in choices]},
            "answerKey": d["answerKey"],
        })
    return docs


def _hellaswag(path):
    # llama.cpp layout, 6 lines per item: "activity_label: ctx", gold 0-3, four endings, where
    # ctx is HF's `ctx` (= ctx_a + " " + ctx_b, ctx_b not capitalised). The split of ctx into
    # ctx_a/ctx_b is not in the file, so ctx_a carries all of it and ctx_b is "": lm-eval's own
    # process_docs then builds preprocess(activity_label + ": " + ctx + " "), whose strip() makes
    # it preprocess(line 1). Versus the HF dataset the only change is ctx_b's missing capital.
    lines = _lines(path)
    if len(lines) % 6:
        raise ValueError(f"{path}: {len(lines)} lines is not a multiple of 6")
    docs = []
    for i in range(0, len(lines), 6):
        label, sep, ctx = lines[i].partition(": ")
        if not sep:
            raise ValueError(f"{path}:{i + 1}: no 'activity_label: ' prefix")
        docs.append({
            "ind": i // 6, "activity_label": label, "ctx_a": ctx, "ctx_b": "", "ctx": ctx,
            "endings": lines[i + 2:i + 6], "source_id": "", "split": "val", "split_type": "",
            "label": lines[i + 1],
        })
    return docs


def _piqa(path, labels_path):
    docs, labels = _jsonl(path), _lines(labels_path)
    if len(docs) != len(labels):
        raise ValueError(f"{path}: {len(docs)} items but {len(labels)} labels")
    return [{"goal": d["goal"], "sol1": d["sol1"], "sol2": d["sol2"], "label": int(lab)}
            for d, lab in zip(docs, labels)]


def _boolq(path):
    # aps/super_glue boolq schema: label 0 = False, 1 = True.
    return [{"question": d["question"], "passage": d["passage"], "idx": i, "label": int(bool(d["answer"]))}
            for i, d in enumerate(_jsonl(path))]


def _lambada_openai(path):
    return [{"text": d["text"]} for d in _jsonl(path)]


def _lambada_standard(path):
    # cimec/lambada schema: one passage per line of the original release.
    return [{"text": t, "domain": None} for t in _lines(path)]


_READERS = {
    "arc_easy": _arc, "arc_challenge": _arc, "hellaswag": _hellaswag, "piqa": _piqa,
    "boolq": _boolq, "lambada_openai": _lambada_openai, "lambada_standard": _lambada_standard,
}
# The fetched files are already in the HF schemas: each line is a row as is.
_FETCHED_READERS = {task: _jsonl for task in FETCHED_FILES}

# The layout main() selects: (files per task, readers per task).
LAYOUTS = {"shared": (DATA_FILES, _READERS), "fetched": (FETCHED_FILES, _FETCHED_READERS)}
FILES, READERS = LAYOUTS["shared"]


def _split_names(cfg):
    return [cfg[k] for k in ("training_split", "validation_split", "test_split", "fewshot_split")
            if cfg.get(k)]


def make_loader(task, shared_data, cfg, fewshot_files=None):
    """A custom_dataset callable: the task's evaluation split from ../shared/data.

    The split lm-eval evaluates (test_split, else validation_split) gets the file's documents.
    With `fewshot_files` (paths under shared_data, read like DATA_FILES[task]) the split lm-eval
    draws few-shot examples from (fewshot_split, else training_split, else a validation split
    that is not the evaluated one) gets those documents: k are drawn, the current document not
    excluded. Every other split the config names is empty with the same features, since
    ../shared has no such data. A config with none of those (lambada_openai) draws its few-shot
    examples from the evaluated split itself, the current document not excluded either.
    """
    paths = [os.path.join(shared_data, p) for p in FILES[task]]
    eval_split = cfg.get("test_split") or cfg.get("validation_split")
    fewshot_split = cfg.get("fewshot_split") or cfg.get("training_split") or (
        cfg.get("validation_split") if cfg.get("validation_split") != eval_split else None)
    if fewshot_files and not fewshot_split:
        raise ValueError(f"{task}: its lm-eval config draws few-shot examples from the evaluated "
                         "split; --fewshot-data does not apply")

    def load(**_metadata):
        ds = datasets.Dataset.from_list(READERS[task](*paths))
        out = {name: ds.select([]) for name in _split_names(cfg)}
        out[eval_split] = ds
        if fewshot_files:
            out[fewshot_split] = datasets.Dataset.from_list(
                READERS[task](*[os.path.join(shared_data, p) for p in fewshot_files]))
        return out

    return load


def task_specs(task_manager, tasks, shared_data, fewshot_data=None):
    """lm-eval's installed config of each task with only `custom_dataset` replaced.

    `fewshot_data` maps a task to the files (under shared_data) of its few-shot split.
    Returns (config dicts for simple_evaluate, {task: config file path}).
    """
    specs, sources = [], {}
    for task in tasks:
        entry = task_manager.task_index[task]
        cfg = load_yaml(entry.yaml_path, resolve_func=True)  # lm-eval's own loader (includes resolved)
        cfg["custom_dataset"] = make_loader(task, shared_data, cfg, (fewshot_data or {}).get(task))
        specs.append(cfg)
        sources[task] = str(entry.yaml_path)
    return specs, sources


# ---------------------------------------------------------------- model

def load_model(path):
    """(model, tokenizer) from an HF directory or a GGUF file, float32, CPU."""
    kwargs = {}
    d = path
    if path.endswith(".gguf"):
        d, kwargs["gguf_file"] = os.path.dirname(path), os.path.basename(path)
    tok = transformers.AutoTokenizer.from_pretrained(d, **kwargs)
    model = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, **kwargs).eval()
    return model, tok


def model_sha256(path):
    if os.path.isfile(path):
        return file_sha256(path)
    h = hashlib.sha256()  # a directory: its files' names and hashes, sorted
    for name in sorted(os.listdir(path)):
        if os.path.isfile(os.path.join(path, name)):
            h.update(f"{name} {file_sha256(os.path.join(path, name))}\n".encode())
    return h.hexdigest()


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


@torch.no_grad()
def score(lm, ctx, cont):
    """(ll, is_greedy) of one request by a plain HF forward, as _loglikelihood_tokens computes it."""
    inp = torch.tensor([model_input(lm, ctx, cont)])
    logp = torch.log_softmax(lm.model(inp).logits[0, -len(cont):].float(), dim=-1)
    ll = float(logp[torch.arange(len(cont)), torch.tensor(cont)].sum())
    return ll, bool((logp.argmax(-1) == torch.tensor(cont)).all())


def self_check(lm, fed, rows):
    """Re-scores each task's first document with a plain HF forward: must equal lm-eval bit for bit.

    `fed` maps the golden's request hashes back to the token ids (the goldens keep no text).
    """
    for task, docs in rows.items():
        for req in docs[0]["requests"]:
            ctx, cont = req["context_tokens"], req["continuation_tokens"]
            assert fed[(req["context_sha256"], req["continuation_sha256"])] == (ctx, cont), task
            ll, greedy = score(lm, ctx, cont)
            assert (ll, greedy) == (req["ll"], req["is_greedy"]), (task, req, ll, greedy)


def model_tokenizer(model_path):
    """The model's own tokenizer where transformers does not reproduce it, else None.

    transformers 5 builds SmolLM2's tokenizer (from the GGUF, and from the hub's tokenizer.json
    through GPT2Tokenizer) without the Digits(individual_digits) pre-tokenizer that the model's
    tokenizer.json and the GGUF's `tokenizer.ggml.pre = smollm` (llama.cpp) specify; focal-eval
    follows the model. This builds the specified one with `tokenizers` from the GGUF's tokens and
    merges (make_tokenizer_reference.build_smollm2_real).
    """
    if not model_path.endswith(".gguf"):
        return None
    from gguf import GGUFReader
    if GGUFReader(model_path).fields["tokenizer.ggml.pre"].contents() != "smollm":
        return None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_tokenizer_reference as tokref
    return tokref.build_smollm2_real(model_path)[0], tokref.encode_pair


def add_model_tokenizer_requests(lm, own, rows, samples, task_manager, specs):
    """Where the model's own tokenizer gives other ids than lm-eval fed, records those ids with the
    ll and is_greedy a plain forward gives them (the self-checked equivalent of lm-eval's), and the
    document's metrics from lm-eval's own process_results on those results."""
    tok, encode_pair = own
    by_text = {}  # (context_sha256, continuation_sha256) -> (context, continuation)
    for task_samples in samples.values():
        for s in task_samples:
            for c, k in s["arguments"]:
                by_text[(sha256_hex(c), sha256_hex(k))] = (c, k)
    changed = 0
    tasks_obj = {}
    for task, docs in rows.items():
        for d in docs:
            results, touched = [], False
            for req in d["requests"]:
                c, k = by_text[(req["context_sha256"], req["continuation_sha256"])]
                ctx, cont = encode_pair(tok, c, k, None) if c else (None, None)
                if c and (ctx, cont) != (req["context_tokens"], req["continuation_tokens"]):
                    ll, greedy = score(lm, ctx, cont)
                    req["model_tokenizer"] = {"context_tokens": ctx, "continuation_tokens": cont,
                                              "ll": ll, "is_greedy": greedy}
                    results.append((ll, greedy))
                    touched = True
                    changed += 1
                else:
                    results.append((req["ll"], req["is_greedy"]))
            if touched:
                if task not in tasks_obj:
                    tasks_obj.update(task_manager.load([sp for sp in specs if sp["task"] == task])["tasks"])
                sample = next(s for s in samples[task] if s["doc_id"] == d["doc_id"])
                metrics = tasks_obj[task].process_results(sample["doc"], results)
                d["model_tokenizer_metrics"] = {m: metrics[m] for m in d["metrics"]}
    return changed


# ---------------------------------------------------------------- goldens

def doc_rows(lm, task, samples, limit):
    rows = []
    for s in sorted(samples, key=lambda s: s["doc_id"]):
        requests = []
        for (context, continuation), (ll, is_greedy) in zip(s["arguments"], s["filtered_resps"], strict=True):
            ctx_enc, cont_enc = lm.fed[(context, continuation)]
            total = len(ctx_enc) + len(cont_enc)
            requests.append({
                "context_sha256": sha256_hex(context), "continuation_sha256": sha256_hex(continuation),
                "ll": ll, "is_greedy": bool(is_greedy),
                "context_tokens": ctx_enc, "continuation_tokens": cont_enc,
                # tokens cut from the front: (ctx + cont)[-(max_length+1):][:-1]
                "truncated": max(0, total - (lm.max_length + 1)),
            })
        row = {"doc_id": s["doc_id"], "requests": requests, "metrics": {m: s[m] for m in s["metrics"]}}
        if isinstance(s["target"], str):  # loglikelihood tasks: the target is text
            row["gold_sha256"] = sha256_hex(s["target"])
        else:
            row["gold"] = s["target"]
        rows.append(row)
    assert [r["doc_id"] for r in rows] == list(range(limit)), task
    return rows


def aggregate(tasks, results, n_samples):
    out = {}
    for task in tasks:
        res, entry = results[task], {}
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
    ap.add_argument("--model", default=DEFAULT_MODEL, help="HF checkpoint directory or .gguf file")
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "testdata", "golden", "lm_eval_smollm2"),
                    help="golden output directory")
    ap.add_argument("--shared-data", default=None,
                    help="the data folder (default: ../shared/data, or with --data-layout "
                         "fetched the data cache)")
    ap.add_argument("--data-layout", choices=sorted(LAYOUTS), default="shared",
                    help="shared: ../shared/data's files; fetched: scripts/fetch_data.sh's")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--limit", type=int, default=200, help="first N documents per task (0: all)")
    ap.add_argument("--num-fewshot", type=int, default=0,
                    help="few-shot examples per document (lm-eval's sampler and default seed 1234)")
    ap.add_argument("--fewshot-data", action="append", default=[], metavar="TASK=FILE",
                    help="a file under --shared-data that fills TASK's few-shot split (read like "
                         "its evaluation file; PIQA's labels: the .lst beside it); repeatable")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: fixed reduction order, byte-identical reruns)")
    ap.add_argument("--no-write", action="store_true", help="run and check, write nothing (timing)")
    args = ap.parse_args()
    global FILES, READERS
    FILES, READERS = LAYOUTS[args.data_layout]
    if args.shared_data is None:
        args.shared_data = (os.path.join(os.path.dirname(REPO), "shared", "data")
                            if args.data_layout == "shared" else data_cache())
    tasks = args.tasks.split(",")
    DATA_FILES = FILES  # noqa: N806  (below: the files of the selected layout)
    fewshot_data = {}
    for item in args.fewshot_data:
        task, sep, rel = item.partition("=")
        if not sep or task not in tasks:
            ap.error(f"--fewshot-data {item}: expected TASK=FILE with TASK among --tasks")
        fewshot_data[task] = [rel] + [p for p in DATA_FILES[task][1:] if rel == DATA_FILES[task][0]]
        if len(fewshot_data[task]) != len(DATA_FILES[task]):
            ap.error(f"--fewshot-data {item}: {task} reads {len(DATA_FILES[task])} files; "
                     "only its evaluation files can be given")

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    datasets.disable_progress_bars()

    t0 = time.time()
    model, tok = load_model(args.model)
    t_load = time.time() - t0
    lm = RecordingHFLM(pretrained=model, tokenizer=tok, batch_size=BATCH_SIZE)
    task_manager = TaskManager()  # lm-eval's installed task configs only
    specs, sources = task_specs(task_manager, tasks, args.shared_data, fewshot_data)
    t0 = time.time()
    out = lm_eval.simple_evaluate(
        model=lm, tasks=specs, task_manager=task_manager, limit=args.limit or None, log_samples=True,
        num_fewshot=args.num_fewshot or None,
        # bootstrap_iters and all seeds left at lm-eval's defaults (100000; 0/1234/1234/1234)
    )
    t_eval = time.time() - t0
    print(f"model load {t_load:.1f} s, simple_evaluate {t_eval:.1f} s "
          f"({args.threads} torch threads, {len(tasks)} tasks, limit {args.limit})", flush=True)

    rows = {task: doc_rows(lm, task, out["samples"][task], args.limit or len(out["samples"][task]))
            for task in tasks}
    fed = {(sha256_hex(c), sha256_hex(k)): v for (c, k), v in lm.fed.items()}
    self_check(lm, fed, rows)
    own = model_tokenizer(args.model)
    n_own = add_model_tokenizer_requests(lm, own, rows, out["samples"], task_manager, specs) if own else 0
    requests = [req for docs in rows.values() for d in docs for req in d["requests"]]
    agg = aggregate(tasks, out["results"], out["n-samples"])
    pkg = os.path.dirname(os.path.abspath(lm_eval.__file__))
    agg["_meta"] = {
        "lm_eval": lm_eval.__version__, "transformers": transformers.__version__,
        "torch": torch.__version__, "datasets": datasets.__version__,
        "tokenizers": tokenizers.__version__, "python": sys.version.split()[0],
        "model": os.path.basename(os.path.normpath(args.model)),
        "model_sha256": model_sha256(args.model),
        "hf": "dtype=float32, device=cpu, batch_size=1",
        "tokenizer_class": type(tok).__name__,
        "add_special_tokens_adds": tok.encode("a") != tok.encode("a", add_special_tokens=False),
        "prefix_token_id": lm.prefix_token_id,
        "limit": args.limit, "num_fewshot": args.num_fewshot, "max_length": lm.max_length,
        "data_layout": args.data_layout,
        "bootstrap_iters": BOOTSTRAP_ITERS,
        "task_configs": {t: {"path": os.path.relpath(p, pkg), "sha256": file_sha256(p)}
                         for t, p in sources.items()},
        "data": {t: {p: file_sha256(os.path.join(args.shared_data, p)) for p in DATA_FILES[t]}
                 for t in tasks},
        # the files that filled each task's few-shot split
        "fewshot_data": {t: {p: file_sha256(os.path.join(args.shared_data, p)) for p in fs}
                         for t, fs in fewshot_data.items()},
        "requests": len(requests),
        "requests_truncated": sum(1 for r in requests if r["truncated"]),
        # requests whose ids from the model's own tokenizer differ from lm-eval's (see
        # model_tokenizer()): they carry a "model_tokenizer" entry, their docs
        # "model_tokenizer_metrics"
        "model_tokenizer": ("tokenizers: Digits(individual_digits) + ByteLevel from the GGUF"
                            if own else None),
        "requests_model_tokenizer_differs": n_own,
    }
    for task in tasks:
        print(task, json.dumps(agg[task]))
    print(json.dumps(agg["_meta"], indent=1))
    if args.no_write:
        return
    os.makedirs(args.out, exist_ok=True)
    for task in tasks:
        write_jsonl(os.path.join(args.out, f"{task}.jsonl"), rows[task])
    with open(os.path.join(args.out, "aggregate.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(agg, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
