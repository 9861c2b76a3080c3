#!/usr/bin/env bash
# Wall time of `focal-eval run` on one device against the same cores split
# into replicas (--device cpu vs cpu,cpu ..., --threads fixed), the two
# taking turns, REPS times each; prints each run, the medians and their
# ratio, and checks the results agree (wall time, tokens/s and the scratch
# estimate aside). No cache: every run computes everything.
#
#   bash bench/replicas.sh [--reps N] [--threads T] [--devices LIST] [-- RUN_ARGS...]
#
# Defaults: 3 reps, all cores, cpu,cpu, and on the default model
# --tasks arc_easy,piqa --limit 200.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=3 threads=0 devices=cpu,cpu
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --devices) devices="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "replicas.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--tasks arc_easy,piqa --limit 200)
bin=build/harness/focal-eval
[[ -x $bin ]] || { echo "$bin: not built" >&2; exit 1; }
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
declare -A times
for ((i = 1; i <= reps; ++i)); do
  # Alternate which goes first: a drifting machine favours neither.
  order=(cpu "$devices"); (( i % 2 == 0 )) && order=("$devices" cpu)
  for d in "${order[@]}"; do
    start=$(date +%s.%N)
    "$bin" run "${args[@]}" --device "$d" --threads "$threads" --no-progress \
      --out "$dir/$d-$i.json" >/dev/null 2>"$dir/err"  || { cat "$dir/err" >&2; exit 1; }
    end=$(date +%s.%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
    times[$d]+="$t "
    printf 'run %d  %-16s %7.2f s\n' "$i" "$d" "$t"
  done
done
python3 - "$dir" "$reps" "$devices" "${times[cpu]}" "${times[$devices]}" <<'PY'
import json, statistics, sys
d, reps, devs, one, many = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def numbers(p):
    r = json.load(open(p))
    for m in r["models"]:
        for k in ("wall_seconds", "tokens_per_second", "memory_estimate_bytes"):
            m.pop(k, None)
    return json.dumps(r, sort_keys=True)
ref = numbers(f"{d}/cpu-1.json")
for i in range(1, reps + 1):
    for dev in ("cpu", devs):
        assert numbers(f"{d}/{dev}-{i}.json") == ref, f"results of {dev} run {i} differ"
a = statistics.median(map(float, one.split()))
b = statistics.median(map(float, many.split()))
print(f"median: cpu {a:.2f} s, {devs} {b:.2f} s; {devs} takes {b / a:.2f}x the time "
      f"({a / b:.2f}x speed); results identical")
PY
