#!/usr/bin/env python3
"""Paired interval for a long-context category's average, from `compare`'s samples.jsonl.

`compare` reports each task's paired bootstrap interval and each category's average (RULER,
HELMET recall, RAG, ICL) per length, but not the average's interval. This computes it as a
stratified paired bootstrap: each resample draws, within every task of the category, as many
sample indices as the task has (with replacement, the same indices for both models), and
averages the per-task means as the category average does. 10,000 resamples, percentile
interval; standard library only.

    python3 bench/category_average_ci.py DIR/samples.jsonl [--resamples N] [--seed S]
"""
import argparse
import collections
import json
import random
import sys


def category(task):
    if task.startswith("ruler_"):
        return "RULER"
    if task.startswith("helmet_icl_"):
        return "HELMET ICL"
    if task.startswith("helmet_rag_"):
        return "HELMET RAG"
    if task.startswith("helmet_"):
        return "HELMET recall"
    return task


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()

    # (category, length) -> task -> index -> {variant: score}
    scores = collections.defaultdict(lambda: collections.defaultdict(dict))
    variants = []
    with open(args.samples, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            d = json.loads(line)
            if "prediction" not in d:
                continue  # a loglikelihood document, not a generation sample
            if len(d["scores"]) != 1:
                sys.exit(f"{args.samples}:{n}: expected one score per sample, got {d['scores']}")
            v = d["variant"]
            if v not in variants:
                variants.append(v)
            key = (d["task"], d.get("gold_depth"))  # a depth sweep: one stratum per depth
            score = next(iter(d["scores"].values()))
            scores[(category(d["task"]), d["length"])][key].setdefault(d["index"], {})[v] = score
    if len(variants) != 2:
        sys.exit(f"{args.samples}: expected two variants (base and one focal), got {variants}")
    base, focal = variants
    print(f"| category | length | tasks | pairs | {base} | {focal} | Δ | 95% CI |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    rng = random.Random(args.seed)
    for (cat, length), tasks in sorted(scores.items()):
        pairs = {}
        for task, by_index in tasks.items():
            p = [(s[base], s[focal]) for _, s in sorted(by_index.items()) if len(s) == 2]
            if len(p) != len(by_index):
                sys.exit(f"{args.samples}: {task[0]} at {length}: some samples lack a model")
            pairs[task] = p
        # Scores in [0, 1] are shown as percentages, as the reports do.
        scale = 100.0 if all(0 <= x <= 1 for p in pairs.values() for a in p for x in a) else 1.0

        def average(which, picks):
            return scale * sum(sum(p[i][which] for i in picks[t]) / len(picks[t])
                               for t, p in pairs.items()) / len(pairs)

        full = {t: range(len(p)) for t, p in pairs.items()}
        b, fo = average(0, full), average(1, full)
        deltas = []
        for _ in range(args.resamples):
            picks = {t: [rng.randrange(len(p)) for _ in p] for t, p in pairs.items()}
            deltas.append(average(1, picks) - average(0, picks))
        deltas.sort()
        lo = deltas[int(0.025 * (len(deltas) - 1))]
        hi = deltas[int(0.975 * (len(deltas) - 1))]
        n = sum(len(p) for p in pairs.values())
        print(f"| {cat} | {length} | {len(pairs)} | {n} | {b:.2f} | {fo:.2f} | {fo - b:+.2f} "
              f"| [{lo:+.2f}, {hi:+.2f}] |")


if __name__ == "__main__":
    main()
