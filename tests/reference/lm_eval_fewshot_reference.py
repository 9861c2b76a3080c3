#!/usr/bin/env python3
"""lm-evaluation-harness few-shot goldens for the stories260K model (num_fewshot=3).

Runs the real lm-eval 0.4.13 exactly as lm_eval_reference.py does (HF backend, fp32, CPU, batch
size 1, all seeds at lm-eval's defaults, fewshot_random_seed=1234) but with num_fewshot=3 on the
first 40 documents of arc_easy, piqa, boolq and lambada_openai, through the tasks in
tests/reference/lm_eval_tasks_fewshot/: the zero-shot task YAMLs plus `fewshot_split` = the
evaluation split, so the few-shot examples come from the same local file (all 200 documents of it
are the sampling population, not just the 40 evaluated). It writes

  tests/testdata/golden/lm_eval_fewshot/<task>.jsonl   one line per document, the format of
      tests/testdata/golden/lm_eval/<task>.jsonl plus
        "fewshot_doc_ids":     indices (0-based lines of the local file) of the examples in the
                               context, in context order
        "fewshot_sampled_ids": the raw random.sample() draw they came from (K+1 ids when the
                               current doc is excluded, else K), in draw order
  tests/testdata/golden/lm_eval_fewshot/aggregate.json lm-eval's aggregates plus _meta

It also re-builds every context independently (local files parsed here, templates written out
by hand, `random.Random(1234).sample(range(200), k)` in document order, and once more with a
pure-Python MT19937 + CPython sample() that the C++ port can follow line by line) and asserts
that each golden context string is reproduced exactly, and that the example ids agree with the
ones recovered by matching the rendered examples back to documents. See tests/reference/README.md,
"Few-shot sampling in lm-eval 0.4.13".

Usage (repo root, same venv as lm_eval_reference.py; ~20 s):
    /tmp/lmeval-venv/bin/python tests/reference/lm_eval_fewshot_reference.py
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lm_eval_reference as ref  # noqa: E402  (sets the HF_*_OFFLINE variables before its imports)

import datasets  # noqa: E402
import lm_eval  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

TASKS_DIR = os.path.join(ref.REPO, "tests", "reference", "lm_eval_tasks_fewshot")
GOLDEN = os.path.join(ref.REPO, "tests", "testdata", "golden", "lm_eval_fewshot")
TASKS = ["arc_easy", "piqa", "boolq", "lambada_openai"]
LIMIT = 40
NUM_FEWSHOT = 3
FEWSHOT_SEED = 1234  # lm-eval's DEFAULT_OTHER_SEED, simple_evaluate(fewshot_random_seed=...)
# (fewshot_split, test_split) of each task in lm_eval_tasks_fewshot/: lm-eval excludes the
# current doc from its own examples iff they are equal (task.py fewshot_context).
SPLITS = {
    "arc_easy": ("test", "test"),
    "lambada_openai": ("test", "test"),
    "piqa": ("validation", None),
    "boolq": ("validation", None),
}


# ---------------------------------------------------------------------------------------------
# Independent re-implementation: documents, rendering, sampling.
# ---------------------------------------------------------------------------------------------

def _lines(name):
    with open(os.path.join(ref.DATA, name), encoding="utf-8", newline="") as f:
        text = f.read()
    return text[:-1].split("\n")


def load_docs(task):
    """Returns [(key, question, choices or None, answer_text)] in file order.

    key is what lm-eval's dict equality compares (the HF row of lm_eval_tasks/utils.py);
    question = doc_to_text, answer_text = the gold choice text (multiple choice) or the
    doc_to_target string (lambada, leading space included)."""
    docs = []
    if task == "arc_easy":
        for line in _lines("arc_easy.jsonl"):
            d = json.loads(line)
            q, ch = d["question"]["stem"], d["question"]["choices"]
            texts, labels = [c["text"] for c in ch], [c["label"] for c in ch]
            key = (d["id"], q, tuple(texts), tuple(labels), d["answerKey"])
            docs.append((key, f"Question: {q}\nAnswer:", texts, texts[labels.index(d["answerKey"])]))
    elif task == "piqa":
        for line, label in zip(_lines("piqa.jsonl"), _lines("piqa-labels.lst"), strict=True):
            d = json.loads(line)
            texts = [d["sol1"], d["sol2"]]
            key = (d["goal"], d["sol1"], d["sol2"], int(label))
            docs.append((key, f"Question: {d['goal']}\nAnswer:", texts, texts[int(label)]))
    elif task == "boolq":
        for idx, line in enumerate(_lines("boolq.jsonl")):
            d = json.loads(line)
            texts = ["no", "yes"]
            key = (idx, d["question"], d["title"], d["answer"], d["passage"])
            q = f"{d['passage']}\nQuestion: {d['question']}?\nAnswer:"
            docs.append((key, q, texts, texts[1 if d["answer"] else 0]))
    elif task == "lambada_openai":
        for line in _lines("lambada_openai.jsonl"):
            words = json.loads(line)["text"].split(" ")
            docs.append(((" ".join(words),), " ".join(words[:-1]), None, " " + words[-1]))
    else:
        raise KeyError(task)
    return docs


def render_example(doc):
    """One few-shot example: question + target_delimiter " " + answer + fewshot_delimiter "\\n\\n"."""
    return doc[1] + " " + doc[3] + "\n\n"


class PureRandom:
    """CPython 3.11's random.Random(int_seed), only what sample() needs, in plain integer ops."""

    N, M = 624, 397

    def __init__(self, seed):
        key = []
        seed = abs(seed)
        while True:  # 32-bit words of |seed|, least significant first ([0] for 0)
            key.append(seed & 0xFFFFFFFF)
            seed >>= 32
            if not seed:
                break
        mt = [0] * self.N
        mt[0] = 19650218  # init_genrand(19650218)
        for i in range(1, self.N):
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
        i, j = 1, 0
        for _ in range(max(self.N, len(key))):  # init_by_array(key)
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & 0xFFFFFFFF
            i, j = i + 1, j + 1
            if i >= self.N:
                mt[0], i = mt[self.N - 1], 1
            if j >= len(key):
                j = 0
        for _ in range(self.N - 1):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & 0xFFFFFFFF
            i += 1
            if i >= self.N:
                mt[0], i = mt[self.N - 1], 1
        mt[0] = 0x80000000
        self.mt, self.mti = mt, self.N

    def genrand_uint32(self):
        mt, N, M = self.mt, self.N, self.M
        if self.mti >= N:
            for kk in range(N):
                y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7FFFFFFF)
                mt[kk] = mt[(kk + M) % N] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.mti = 0
        y = mt[self.mti]
        self.mti += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y

    def randbelow(self, n):  # _randbelow_with_getrandbits; getrandbits(k <= 32) = word >> (32 - k)
        k = n.bit_length()
        assert 0 < k <= 32
        r = self.genrand_uint32() >> (32 - k)
        while r >= n:
            r = self.genrand_uint32() >> (32 - k)
        return r

    def sample(self, population, k):
        n = len(population)
        assert 0 <= k <= n
        setsize = 21
        if k > 5:
            import math
            setsize += 4 ** math.ceil(math.log(k * 3, 4))
        result = []
        if n <= setsize:  # pool branch: partial Fisher-Yates on a copy
            pool = list(population)
            for i in range(k):
                j = self.randbelow(n - i)
                result.append(pool[j])
                pool[j] = pool[n - i - 1]
        else:  # set branch: redraw indices already taken
            selected = set()
            for _ in range(k):
                j = self.randbelow(n)
                while j in selected:
                    j = self.randbelow(n)
                selected.add(j)
                result.append(population[j])
        return result


def build_contexts(task, rng, limit=LIMIT, k=NUM_FEWSHOT):
    """lm-eval's contexts for docs 0..limit-1, built in that order from ONE generator."""
    docs = load_docs(task)
    fewshot_split, test_split = SPLITS[task]
    exclude = fewshot_split == test_split
    out = []
    for i in range(limit):
        doc = docs[i]
        if exclude:
            drawn = rng.sample(range(len(docs)), k + 1)
            ids = [j for j in drawn if docs[j][0] != doc[0]][:k]
            if len(ids) < k:  # only with duplicate rows equal to doc (not in these files)
                ids = rng.sample([j for j in range(len(docs)) if docs[j][0] != doc[0]], k)
        else:
            drawn = rng.sample(range(len(docs)), k)
            ids = list(drawn)
        context = "".join(render_example(docs[j]) for j in ids) + doc[1]
        continuations = [" " + c for c in doc[2]] if doc[2] is not None else [doc[3]]
        out.append({"context": context, "continuations": continuations,
                    "fewshot_doc_ids": ids, "fewshot_sampled_ids": list(drawn)})
    return out


def recover_ids_by_text(task, context, k=NUM_FEWSHOT):
    """Matches the context's leading examples back to documents (None if ambiguous)."""
    renders = [render_example(d) for d in load_docs(task)]
    ids, pos = [], 0
    for _ in range(k):
        hits = [j for j, r in enumerate(renders) if context.startswith(r, pos)]
        if len(hits) != 1:
            return None
        ids.append(hits[0])
        pos += len(renders[hits[0]])
    return ids


def verify(rows):
    """Asserts that both re-implementations reproduce every golden context and continuation."""
    stats = {}
    for task in TASKS:
        mine = build_contexts(task, random.Random(FEWSHOT_SEED))
        assert mine == build_contexts(task, PureRandom(FEWSHOT_SEED)), task
        ambiguous = 0
        for row, m in zip(rows[task], mine, strict=True):
            assert all(r["context"] == m["context"] for r in row["requests"]), (task, row["doc_id"])
            assert [r["continuation"] for r in row["requests"]] == m["continuations"], (task, row["doc_id"])
            by_text = recover_ids_by_text(task, m["context"])
            if by_text is None:
                ambiguous += 1
            else:
                assert by_text == m["fewshot_doc_ids"], (task, row["doc_id"], by_text, m)
            row["fewshot_doc_ids"] = m["fewshot_doc_ids"]
            row["fewshot_sampled_ids"] = m["fewshot_sampled_ids"]
        stats[task] = {
            "pool_size": len(load_docs(task)),
            "excludes_current_doc": SPLITS[task][0] == SPLITS[task][1],
            "draw_size": NUM_FEWSHOT + (SPLITS[task][0] == SPLITS[task][1]),
            "docs_whose_draw_contains_itself": sum(
                1 for r in rows[task] if r["doc_id"] in r["fewshot_sampled_ids"]),
            "docs_with_ids_ambiguous_by_text": ambiguous,
        }
    return stats


# ---------------------------------------------------------------------------------------------

def aggregate(results, n_samples):
    out = {}
    for task in TASKS:
        res, entry = results[task], {}
        for key in ("acc", "acc_norm", "perplexity"):
            if f"{key},none" in res:
                entry[key] = res[f"{key},none"]
                entry[f"{key}_stderr"] = res[f"{key}_stderr,none"]
        entry["n"] = n_samples[task]["effective"]
        out[task] = entry
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=GOLDEN, help="golden output directory")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    datasets.disable_progress_bars()

    lm = ref.RecordingHFLM(pretrained=ref.MODEL, dtype="float32", device="cpu", batch_size=ref.BATCH_SIZE)
    task_manager = TaskManager(include_path=TASKS_DIR, include_defaults=False)
    out = lm_eval.simple_evaluate(
        model=lm, tasks=TASKS, task_manager=task_manager, limit=LIMIT, log_samples=True,
        num_fewshot=NUM_FEWSHOT, fewshot_random_seed=FEWSHOT_SEED,
        # bootstrap_iters and the other seeds left at lm-eval's defaults (100000; 0/1234/1234)
    )

    ref.LIMIT = LIMIT  # doc_rows() asserts doc_ids == range(ref.LIMIT)
    rows = {task: ref.doc_rows(lm, task, out["samples"][task]) for task in TASKS}
    stats = verify(rows)
    ref.self_check(lm, rows)
    requests = [req for docs in rows.values() for d in docs for req in d["requests"]]
    n_strings, tok_diffs = ref.tokenizer_check(lm, lm.fed.keys())

    os.makedirs(args.out, exist_ok=True)
    for task in TASKS:
        ref.write_jsonl(os.path.join(args.out, f"{task}.jsonl"), rows[task])
    agg = aggregate(out["results"], out["n-samples"])
    agg["_meta"] = {
        "lm_eval": lm_eval.__version__, "transformers": transformers.__version__,
        "torch": torch.__version__, "datasets": datasets.__version__,
        "python": sys.version.split()[0],
        "model": "model/assets/stories260K (hf, dtype=float32, device=cpu)",
        "tasks_dir": "tests/reference/lm_eval_tasks_fewshot",
        "batch_size": ref.BATCH_SIZE, "limit": LIMIT, "num_fewshot": NUM_FEWSHOT,
        "fewshot_random_seed": FEWSHOT_SEED,
        "fewshot_rng": "one random.Random(1234) per task, used for docs 0..limit-1 in file order",
        "fewshot": stats,
        "max_length": lm.max_length, "bootstrap_iters": 100000,
        "requests": len(requests),
        "requests_truncated": sum(1 for r in requests if r["truncated"]),
        "hf_vs_sentencepiece_token_mismatches": f"{len(tok_diffs)} of {n_strings} strings",
        "contexts_verified": "every context rebuilt by random.Random and by a pure MT19937 sample()",
    }
    with open(os.path.join(args.out, "aggregate.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(agg, f, indent=2, ensure_ascii=False)
        f.write("\n")

    for task in TASKS:
        print(task, json.dumps(agg[task]))
    print(json.dumps(agg["_meta"], indent=1))


if __name__ == "__main__":
    main()
