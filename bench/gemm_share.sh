#!/usr/bin/env bash
# Our GEMMs inside SmolLM2-135M prefill passes beside OpenBLAS's sgemm on the
# very same operands (gguf_prefill_bench --paired-sgemm: each linear layer runs
# both, taking turns in which goes first), at 512 and 2048 tokens. Prints the
# per-op profile and the per-shape table; the last line is the GEMM share.
# One thread by default: with more, OpenBLAS's threads spin after each call
# and slow whatever runs next.
# Usage: bash bench/gemm_share.sh [THREADS] [MODEL.gguf]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-1}
model=${2:-${FOCAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/focal-eval}/models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf}
bin=build/bench/gguf_prefill_bench
[[ -x $bin ]] || { echo "$bin: not built (cmake --build build --target gguf_prefill_bench)" >&2; exit 1; }
[[ -f $model ]] || { echo "$model: not found (scripts/fetch_default_model.sh fetches it)" >&2; exit 1; }
tokens=$(mktemp)
trap 'rm -f "$tokens"' EXIT
# Fixed ids in SmolLM2's vocabulary: a prefill's work does not depend on them.
awk 'BEGIN { x = 12345; for (i = 0; i < 2049; ++i) { x = (x * 1103515245 + 12345) % 2147483648; printf "%d ", 100 + x % 48900 } print "" }' > "$tokens"
{
  echo "m last 512"  # warm-up
  for _ in 1 2 3; do echo "m last 512"; echo "m all 512"; echo "m last 2048"; done
  echo "m all 2048"
  echo profile
} | OPENBLAS_NUM_THREADS=$threads "$bin" --threads "$threads" --tokens "$tokens" --paired-sgemm m="$model"
