#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurmctld, slurmd, munge), started and
# stopped by this test, runs scripts/slurm/submit.sh: a 4-task job array
# plus the chained merge on the bundled model. The merged results must equal
# the unsharded run's (all but wall time and tokens/s). Then one task's
# results are removed: merge refuses and names the missing shard, and the
# task resubmitted alone resumes from its resume log (every request cached).
# Then `submit.sh --compare`: a 2-task compare array and its chained
# report from the shards equal the unsharded compare's report.
#
#   tests/slurm/slurm_array_test.sh FOCAL_EVAL STORIES260K_DIR
#
# Needs root (slurmd) and the packages slurmctld slurmd slurm-client munge
# (scripts/install_deps.sh --tests). Exits 77 (skipped) without them, except
# under CI=true, where that is a failure.
set -uo pipefail
BIN="$(realpath "${1:?FOCAL_EVAL}")"
MODEL="$(realpath "${2:?STORIES260K_DIR}")"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"

skip() {
  if [[ "${CI:-}" == "true" ]]; then echo "FAIL (CI=true): $*" >&2; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[[ "$(id -u)" == 0 ]] || skip "slurmd needs root"
for b in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$b" >/dev/null || skip "'$b' not found (apt-get install slurmctld slurmd slurm-client munge)"
done

D="$(mktemp -d /tmp/focal-slurm.XXXXXX)"
chmod 755 "$D"
PIDS=()
cleanup() {
  # Each daemon stopped by its own process id, then waited for.
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$D"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$D"/log/*.log "$D"/out/*.log; do
    [[ -f "$f" ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}

# --- munge: its own key and socket ------------------------------------------------
mkdir -p "$D/munge" "$D/log" "$D/state" "$D/spool" "$D/out"
chmod 700 "$D/munge"
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
munged --force --foreground --socket="$D/munge/munge.sock" --key-file="$D/munge/munge.key" \
  --pid-file="$D/munge/munged.pid" --seed-file="$D/munge/seed" \
  --log-file="$D/log/munged.log" >"$D/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [[ -S "$D/munge/munge.sock" ]] && break; sleep 0.1; done
[[ -S "$D/munge/munge.sock" ]] || fail "munged did not start"

# --- Slurm: one node, this host, free ports ---------------------------------------
HOST="$(hostname -s)"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CPORT="$(port)"; DPORT="$(port)"
CPUS="$(nproc)"
cat >"$D/slurm.conf" <<CONF
ClusterName=focaltest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CPORT
SlurmdPort=$DPORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
PlugStackConfig=$D/plugstack.conf
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
: >"$D/plugstack.conf"
export SLURM_CONF="$D/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$D/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" -N "$HOST" >"$D/log/slurmd.out" 2>&1 &
PIDS+=($!)
state=""
for _ in $(seq 300); do
  state="$(sinfo -h -n "$HOST" -o %t 2>/dev/null)"
  [[ "$state" == "idle" ]] && break
  sleep 0.2
done
[[ "$state" == "idle" ]] || fail "the node did not come up (state '$state')"

# Waits for a job to reach a final state; prints it.
wait_job() {
  local id="$1" s=""
  for _ in $(seq 900); do
    s="$(scontrol show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | cut -d= -f2 | tr '\n' ' ')"
    [[ -n "$s" && ! "$s" =~ PENDING|RUNNING|CONFIGURING|COMPLETING ]] && { echo "$s"; return 0; }
    sleep 0.2
  done
  echo "TIMEOUT($s)"
}

RUN_ARGS=(--tasks arc_easy,piqa,ruler_niah_single_1 --lengths 1024 --allow-length-extrapolation --limit 6)
export FOCAL_DEFAULT_MODEL="$MODEL"
"$BIN" run "${RUN_ARGS[@]}" --threads 1 --no-progress --out "$D/all.json" >"$D/log/unsharded.log" 2>&1 ||
  fail "the unsharded run failed"

# --- The array and the chained merge ----------------------------------------------
OUT="$D/out"
sub="$(bash "$REPO/scripts/slurm/submit.sh" --shards 4 --out "$OUT" --focal-eval "$BIN" -- \
  "${RUN_ARGS[@]}" 2>&1)" || fail "submit.sh: $sub"
echo "$sub"
array_id="$(sed -n 's/^array job: \([0-9]*\).*/\1/p' <<<"$sub")"
merge_id="$(sed -n 's/^merge job: \([0-9]*\).*/\1/p' <<<"$sub")"
[[ -n "$array_id" && -n "$merge_id" ]] || fail "submit.sh printed no job ids"
dep="$(scontrol show job "$merge_id" | grep -o 'Dependency=[^ ]*')"
echo "merge job $merge_id: $dep"
[[ "$dep" == "Dependency=afterok:${array_id}_*"* ]] ||
  fail "merge job's dependency is '$dep'"
[[ "$(wait_job "$array_id")" == "COMPLETED " ]] || fail "array job $array_id did not complete"
[[ "$(wait_job "$merge_id")" == "COMPLETED " ]] || fail "merge job $merge_id did not complete"
for i in 0 1 2 3; do
  grep -q "shard $i/4 (from SLURM_ARRAY_TASK_ID=$i of 4 shards)" "$OUT"/focal-eval-run-"${array_id}_$i".log ||
    fail "task $i did not take shard $i/4 from Slurm"
done

# Merged == unsharded, but for wall time and tokens/s.
# Further fields to ignore may follow the two files.
same() {
  python3 - "$@" <<'PY'
import json, sys
def norm(p):
    r = json.load(open(p))
    for m in r["models"]:
        for k in ["wall_seconds", "tokens_per_second"] + sys.argv[3:]:
            m.pop(k, None)
    return json.dumps(r, sort_keys=True)
a, b = norm(sys.argv[1]), norm(sys.argv[2])
if a != b:
    def walk(x, y, path=""):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k), y.get(k), path + "/" + k)
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, "%s[%d]" % (path, i))
        elif x != y:
            print("differs at %s: %.80s vs %.80s" % (path, x, y), file=sys.stderr)
    walk(json.loads(a), json.loads(b))
sys.exit(0 if a == b else 1)
PY
}
same "$D/all.json" "$OUT/results.json" || fail "merged results differ from the unsharded run"
grep -q "arc_easy" "$OUT/results.md" || fail "no Markdown table"

# --- A lost shard: merge names it; the task resubmitted alone resumes ---------------
mv "$OUT/shard-2.json" "$D/shard-2.first.json"
rm "$OUT/results.json"
if msg="$("$BIN" merge "$OUT"/shard-*.json --out "$OUT/results.json" 2>&1)"; then
  fail "merge accepted 3 of 4 shards"
fi
grep -q "shard 2/4 is missing" <<<"$msg" || fail "merge did not name the missing shard: $msg"
sub="$(bash "$REPO/scripts/slurm/submit.sh" --shards 4 --only 2 --out "$OUT" --focal-eval "$BIN" -- \
  "${RUN_ARGS[@]}" 2>&1)" || fail "resubmit: $sub"
array_id="$(sed -n 's/^array job: \([0-9]*\).*/\1/p' <<<"$sub")"
merge_id="$(sed -n 's/^merge job: \([0-9]*\).*/\1/p' <<<"$sub")"
[[ "$(wait_job "$array_id")" == "COMPLETED " ]] || fail "resubmitted task did not complete"
[[ "$(wait_job "$merge_id")" == "COMPLETED " ]] || fail "second merge did not complete"
python3 - "$OUT/shard-2.json" "$D/shard-2.first.json" <<'PY' || fail "the resubmitted shard did not resume from its log"
import json, sys
again, first = (json.load(open(p))["models"][0] for p in sys.argv[1:3])
n = sum(int(t["num_requests"]) for t in first["tasks"])
print("cached", again.get("cached_requests"), "requests", n, file=sys.stderr)
assert int(again.get("cached_requests", 0)) == n and n > 0
PY
# (A resumed shard computes less: its cache hits and token count differ.)
same "$D/all.json" "$OUT/results.json" cached_requests tokens_processed ||
  fail "results after the resubmission differ"
# --- compare as a 2-task array and its report from the shards -----------------------
CMP_ARGS=(--tasks arc_easy,piqa --limit 6 --no-logit-agreement --bootstrap 200)
"$BIN" compare "${CMP_ARGS[@]}" --threads 1 --no-progress --out "$D/cmp-all" \
  >"$D/log/compare.log" 2>&1 || fail "the unsharded compare failed"
sub="$(bash "$REPO/scripts/slurm/submit.sh" --compare --shards 2 --out "$D/cmp" \
  --focal-eval "$BIN" -- "${CMP_ARGS[@]}" 2>&1)" || fail "submit.sh --compare: $sub"
echo "$sub"
array_id="$(sed -n 's/^array job: \([0-9]*\).*/\1/p' <<<"$sub")"
merge_id="$(sed -n 's/^merge job: \([0-9]*\).*/\1/p' <<<"$sub")"
[[ "$(wait_job "$array_id")" == "COMPLETED " ]] || fail "compare array did not complete"
[[ "$(wait_job "$merge_id")" == "COMPLETED " ]] || fail "compare merge did not complete"
for f in report.md report.csv table.tex; do
  cmp -s "$D/cmp-all/$f" "$D/cmp/report/$f" || fail "compare $f from the shards differs"
done
echo "PASS: 4-task array + merge equal the unsharded run; a lost shard is named and resumes;"
echo "PASS: a 2-task compare array gives the unsharded compare's report"
