"""Offline loaders for the focal-eval lm-eval reference tasks.

Each task YAML here copies the settings of lm-eval's own task config (arc_easy.yaml, hellaswag.yaml,
piqa.yaml, super_glue/boolq/default.yaml, lambada_openai.yaml, lambada_standard.yaml) and only swaps
the dataset: `custom_dataset` points at a loader below, which reads the local subsets in
tests/testdata/lm_eval/ (or $FOCAL_LM_EVAL_DATA) and returns documents in the schema of the HF
dataset the standard task reads. No network, no datasets cache.
"""
import json
import os

import datasets
from lm_eval.tasks.hellaswag.utils import preprocess  # lm-eval's own HellaSwag preprocess()

DATA = os.environ.get(
    "FOCAL_LM_EVAL_DATA",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "lm_eval"),
)


def _lines(name):
    with open(os.path.join(DATA, name), encoding="utf-8", newline="") as f:
        text = f.read()
    assert text.endswith("\n") and "\r" not in text, name
    return text[:-1].split("\n")


def _jsonl(name):
    return [json.loads(line) for line in _lines(name)]


def _arc(name):
    # AI2 jsonl -> allenai/ai2_arc schema (question str, choices {text, label}, answerKey).
    docs = []
    for d in _jsonl(name):
        choices = d["question"]["choices"]
        docs.append({
            "id": d["id"],
            "question": d["question"]["stem"],
            "choices": {"text": [c["text"] for c in choices], "label": [c["label"] for c in choices]},
            "answerKey": d["answerKey"],
        })
    return docs


def load_arc_easy(**kwargs):
    return {"test": datasets.Dataset.from_list(_arc("arc_easy.jsonl"))}


def load_arc_challenge(**kwargs):
    return {"test": datasets.Dataset.from_list(_arc("arc_challenge.jsonl"))}


def load_hellaswag(**kwargs):
    # llama.cpp layout, 6 lines per item: "activity_label: ctx", gold (0-3), 4 endings.
    # Equivalent of lm-eval's hellaswag utils.process_docs, except that line 1 is HF's `ctx`
    # (ctx_a + " " + ctx_b, not capitalised) because ctx_a/ctx_b are not in the file.
    lines = _lines("hellaswag.txt")
    assert len(lines) % 6 == 0
    docs = []
    for i in range(0, len(lines), 6):
        ctx, label, endings = lines[i], lines[i + 1], lines[i + 2:i + 6]
        docs.append({
            "ctx": ctx, "label": label, "endings": endings,
            "query": preprocess(ctx),
            "choices": [preprocess(e) for e in endings],
            "gold": int(label),
        })
    return {"validation": datasets.Dataset.from_list(docs)}


def load_piqa(**kwargs):
    docs = _jsonl("piqa.jsonl")
    labels = _lines("piqa-labels.lst")
    assert len(docs) == len(labels)
    for d, label in zip(docs, labels):
        d["label"] = int(label)
    return {"validation": datasets.Dataset.from_list(docs)}


def load_boolq(**kwargs):
    docs = _jsonl("boolq.jsonl")
    for idx, d in enumerate(docs):
        d["idx"] = idx
        d["label"] = 1 if d["answer"] else 0  # aps/super_glue boolq: 0 = False, 1 = True
    return {"validation": datasets.Dataset.from_list(docs)}


def load_lambada_openai(**kwargs):
    return {"test": datasets.Dataset.from_list(_jsonl("lambada_openai.jsonl"))}


def load_lambada_standard(**kwargs):
    # cimec/lambada schema: one passage per line of the original release.
    return {"test": datasets.Dataset.from_list([{"text": t, "domain": None} for t in _lines("lambada_standard.txt")])}
