#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the BF16 mode changes, per task, from one `focal-eval compare` of a model against
itself in BF16:

    focal-eval compare --base default --focal default@bf16 --tasks T,... --out DIR
    python3 bench/bf16_error.py DIR/samples.jsonl DIR/results.json

Prints, per task: documents; the share whose chosen answer (prediction) is the exact mode's;
each headline metric exact and BF16 with the exact mode's standard error and whether the
difference is within it; the largest and mean |loglikelihood difference| over all choices.
"""
import json
import sys
from collections import defaultdict

HEADLINE = {"arc_easy": "acc", "arc_challenge": "acc_norm", "hellaswag": "acc_norm", "piqa": "acc",
            "boolq": "acc", "lambada_openai": "acc", "lambada_standard": "acc",
            "winogrande": "acc"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    samples, results = sys.argv[1], sys.argv[2]
    docs = defaultdict(dict)  # (task, doc_index) -> {"exact"|"bf16": sample}
    for line in open(samples):
        d = json.loads(line)
        mode = "bf16" if d.get("backend") == "cpu:bf16" else "exact"
        docs[(d["task"], d["doc_index"])][mode] = d
    res = json.load(open(results))
    metric = {}  # (mode, task, name) -> (value, stderr)
    for m in res["models"]:
        mode = "bf16" if m.get("backend") == "cpu:bf16" else "exact"
        for t in m["tasks"]:
            for v in t["metrics"]:
                metric[(mode, t["task"], v["name"])] = (float(v["value"]),
                                                        float(v.get("stderr", "nan")))
    print("| task | documents | same answer | headline: exact ± stderr | BF16 | within one stderr "
          "| max abs Δ loglikelihood | mean abs Δ |")
    print("|---|---:|---:|---|---:|---|---:|---:|")
    for task in sorted({t for t, _ in docs}):
        pairs = [v for (t, _), v in sorted(docs.items()) if t == task]
        if any(len(p) != 2 for p in pairs):
            sys.exit(f"{task}: a document is missing one of the two modes")
        same = sum(p["exact"]["prediction"] == p["bf16"]["prediction"] for p in pairs)
        diffs = [abs(a - b) for p in pairs
                 for a, b in zip(p["exact"]["loglikelihoods"], p["bf16"]["loglikelihoods"])]
        name = HEADLINE.get(task, "acc")
        (e, se), (b, _) = metric[("exact", task, name)], metric[("bf16", task, name)]
        print(f"| {task} | {len(pairs)} | {same} ({100 * same / len(pairs):.2f}%) | "
              f"{name} {e:.4f} ± {se:.4f} | {b:.4f} | {'yes' if abs(b - e) <= se else 'no'} | "
              f"{max(diffs):.4f} | {sum(diffs) / len(diffs):.4f} |")


if __name__ == "__main__":
    main()
