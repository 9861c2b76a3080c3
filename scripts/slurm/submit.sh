#!/usr/bin/env bash
# Submits a sharded `focal-eval run` to Slurm: a job array with one task per
# shard (run_array.sbatch) and a merge job chained after it with
# --dependency=afterok:<array id> (merge.sbatch). Prints both job ids.
# With --compare, a sharded `focal-eval compare` (compare_array.sbatch) and
# its report from the shards (merge_compare.sbatch) instead.
#
#   scripts/slurm/submit.sh --shards N --out DIR [options] -- ARGS...
#
#   --shards N             array tasks 0..N-1, one shard each
#   --out DIR              shard results, samples, resume logs and results.json
#   --gpus-per-task G      GPUs per array task (default 0; pass --device cuda in RUN_ARGS)
#   --cpus-per-task C      CPU cores per array task (default 1; focal-eval uses them all)
#   --partition P, --time T, --sbatch-arg ARG (repeatable): passed to sbatch
#   --only I[,J...]        resubmit these array tasks (and a new merge) only:
#                          each resumes from its resume log in DIR/cache
#   --focal-eval PATH      the binary (default: build/harness/focal-eval)
#   --compare              ARGS are `compare` flags (--base, --focal, --tasks, ...)
#
# ARGS are `focal-eval run` flags, e.g. --tasks arc_easy,piqa --model M (not
# --shard, --out, --samples, --cache-dir or --threads, which the scripts set).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shards="" out="" gpus=0 cpus=1 only="" mode=run bin="$here/../../build/harness/focal-eval"
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shards) shards="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --gpus-per-task) gpus="$2"; shift 2 ;;
    --cpus-per-task) cpus="$2"; shift 2 ;;
    --partition) extra+=("--partition=$2"); shift 2 ;;
    --time) extra+=("--time=$2"); shift 2 ;;
    --sbatch-arg) extra+=("$2"); shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --focal-eval) bin="$2"; shift 2 ;;
    --compare) mode=compare; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "submit.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards N (N >= 1) is required" >&2; exit 2; }
[[ -n "$out" ]] || { echo "submit.sh: --out DIR is required" >&2; exit 2; }
[[ -x "$bin" ]] || { echo "submit.sh: focal-eval not found at '$bin' (build it, or --focal-eval PATH)" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

array="0-$((shards - 1))"
if [[ -n "$only" ]]; then
  [[ "$only" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "submit.sh: --only takes task ids, e.g. 2 or 1,3" >&2; exit 2; }
  array="$only"
fi
res=(--cpus-per-task="$cpus")
(( gpus > 0 )) && res+=(--gpus-per-task="$gpus")
# The array task id is the shard; the count is --shards, also when only
# some tasks are resubmitted (run_array.sbatch: --shard auto/$FOCAL_SHARDS).
export FOCAL_EVAL="$bin" FOCAL_OUT_DIR="$out" FOCAL_SHARDS="$shards"
array_script=run_array.sbatch merge_script=merge.sbatch result="$out/results.json"
if [[ $mode == compare ]]; then
  array_script=compare_array.sbatch merge_script=merge_compare.sbatch result="$out/report"
fi
array_id=$(sbatch --parsable --export=ALL --chdir="$out" --array="$array" "${res[@]}" \
  "${extra[@]}" "$here/$array_script" "$@")
array_id="${array_id%%;*}"
merge_id=$(sbatch --parsable --export=ALL --chdir="$out" --dependency="afterok:$array_id" \
  "${extra[@]}" "$here/$merge_script")
merge_id="${merge_id%%;*}"
echo "array job: $array_id (tasks $array of $shards shards)"
echo "merge job: $merge_id (after the array succeeds; writes $result)"
