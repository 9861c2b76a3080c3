#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""RULER's scorer (nvidia-long-context-eval 26.3, eval/evaluate.py and eval/synthetic/constants.py)
on the project's own prediction cases (tests/testdata/ruler_eval/cases.jsonl): per case the
post-processed prediction's string_match_all and string_match_part per-sample scores, then both
task scores (RULER rounds them to 2 decimals). Numbers only go into the golden.

    /tmp/lmeval-venv/bin/python tests/reference/ruler_eval_reference.py \
        > tests/testdata/golden/ruler_reference/eval_scores.txt

evaluate.py parses its command line when imported, so its postprocess_pred is taken from the
source by name and compiled alone.
"""
import ast
import json
import os
import sys

import long_context_eval
from long_context_eval.eval.synthetic import constants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_postprocess():
    path = os.path.join(os.path.dirname(long_context_eval.__file__), "eval", "evaluate.py")
    tree = ast.parse(open(path).read())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "postprocess_pred")
    scope = {"re": __import__("re")}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), scope)
    return scope["postprocess_pred"]


def main():
    post = load_postprocess()
    cases = [json.loads(l) for l in open(os.path.join(ROOT, "tests/testdata/ruler_eval/cases.jsonl"))]
    preds = [post(c["pred"], {}) for c in cases]
    refs = [c["refs"] for c in cases]
    all_ps = constants.string_match_all_per_sample(preds, refs)
    part_ps = constants.string_match_part_per_sample(preds, refs)
    print("# RULER's evaluate.py on tests/testdata/ruler_eval/cases.jsonl (ruler_eval_reference.py):")
    print("# id string_match_all string_match_part (per sample, x100); then the task scores")
    for c, a, p in zip(cases, all_ps, part_ps):
        print(f"{c['id']} {a!r} {p!r}")
    print(f"task {constants.string_match_all(preds, refs)!r} {constants.string_match_part(preds, refs)!r}")


if __name__ == "__main__":
    sys.exit(main())
