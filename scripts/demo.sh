#!/usr/bin/env bash
# The main job on the embedded default: build, then compare the bundled
# stories260K (base) with itself retrofitted as focal attention at t = 0.4 on
# the bundled samples of all seven lm-eval tasks and on a short long-context
# pass, and print the comparison; plus a quick look at the model (inspect,
# greedy generation, per-token scores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target focal-eval
FE=./build/harness/focal-eval
set -x
$FE inspect
$FE generate --max-new-tokens 120
$FE generate --max-new-tokens 120 --focal-temperature 0.4
$FE score --text "Once upon a time, there was a little girl named Lily."
$FE score --text "Once upon a time, there was a little girl named Lily." --focal-temperature 0.4
# Base vs the t=0.4 retrofit on the bundled samples (reports in build/demo/compare),
# with logit agreement and attention entropy on 16 documents per task.
$FE compare --tasks all --attention-stats 16 --out build/demo/compare
# A short long-context pass: the 13 RULER tasks and hotpotqa_long, 3 samples
# each at 2048 tokens. stories260K has 512 positions, so RoPE is extrapolated
# (recorded in the results); several tasks need more than 512 of its tokens.
$FE compare --tasks long_context --lengths 2048 --allow-length-extrapolation --limit 3 \
  --attention-stats 3 --out build/demo/compare_long
