#!/usr/bin/env bash
# scripts/k8s/indexed-job.yaml as Kubernetes would run it: the container's
# command for JOB_COMPLETION_INDEX 0..N-1 (N = the manifest's completions,
# which --shard auto/N must repeat), on the bundled model with --limit 3
# appended; the merged shards must equal the unsharded run (all but wall time
# and tokens/s).
#
#   tests/slurm/k8s_indexed_job_test.sh FOCAL_EVAL STORIES260K_DIR
set -euo pipefail
BIN="$(realpath "${1:?FOCAL_EVAL}")"
export FOCAL_DEFAULT_MODEL="$(realpath "${2:?STORIES260K_DIR}")"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
YAML="$REPO/scripts/k8s/indexed-job.yaml"
D="$(mktemp -d /tmp/focal-k8s.XXXXXX)"
trap 'rm -rf "$D"' EXIT

n="$(sed -n 's/^ *completions: *\([0-9]*\).*/\1/p' "$YAML")"
# The folded (>-) argument: the lines after "- >-" up to "resources:".
cmd="$(awk '/- >-/{f=1; next} /resources:/{f=0} f' "$YAML" | tr -s ' \n' '  ')"
[[ -n "$n" && "$cmd" == *"--shard auto/$n "* ]] ||
  { echo "FAIL: completions ($n) and --shard auto/N disagree: $cmd" >&2; exit 1; }
cmd="${cmd//\/results/$D}"
cmd="${cmd//exec focal-eval/exec $BIN}"
for ((i = 0; i < n; i++)); do
  JOB_COMPLETION_INDEX=$i /bin/sh -c "$cmd --limit 3 --threads 1" >"$D/pod-$i.log" 2>&1 ||
    { echo "FAIL: pod $i"; cat "$D/pod-$i.log"; exit 1; } >&2
  grep -q "shard $i/$n (from JOB_COMPLETION_INDEX=$i of $n)" "$D/pod-$i.log" ||
    { echo "FAIL: pod $i did not take shard $i/$n" >&2; exit 1; }
done
"$BIN" merge "$D"/shard-*.json --out "$D/results.json" >/dev/null
tasks="$(sed -n 's/.*--tasks \([^ ]*\).*/\1/p' <<<"$cmd")"
"$BIN" run --tasks "$tasks" --limit 3 --threads 1 --no-progress --out "$D/all.json" >/dev/null 2>&1
python3 - "$D/all.json" "$D/results.json" <<'PY'
import json, sys
def norm(p):
    r = json.load(open(p))
    for m in r["models"]:
        m.pop("wall_seconds", None); m.pop("tokens_per_second", None)
    return json.dumps(r, sort_keys=True)
if norm(sys.argv[1]) != norm(sys.argv[2]):
    sys.exit("FAIL: merged pods differ from the unsharded run")
PY
echo "PASS: $n pods of the Indexed Job merge to the unsharded run"
