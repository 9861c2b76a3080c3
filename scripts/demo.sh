#!/usr/bin/env bash
# The main job on the embedded default: build, then evaluate the bundled
# stories260K on the bundled task samples (all seven lm-eval tasks), as base and
# as a t=0.4 focal retrofit, and print the tables; plus a quick look at the
# model (inspect, greedy generation, per-token scores).
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
mkdir -p build/demo
$FE run --tasks all --out build/demo/base.json --samples build/demo/base.samples.jsonl
$FE run --tasks all --focal-temperature 0.4 --out build/demo/focal.json \
  --samples build/demo/focal.samples.jsonl
# A short long-context pass at the bundled model's own lengths (it has 512
# positions): the 13 RULER tasks and hotpotqa_long, 5 samples per task and length.
$FE run --tasks long_context --lengths 256,512 --limit 5 --out build/demo/long.json \
  --samples build/demo/long.samples.jsonl
