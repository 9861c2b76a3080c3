#!/usr/bin/env bash
# The main job on the embedded default: build, then inspect, generate and
# score with the bundled stories260K, as base and as a t=0.4 focal retrofit.
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
