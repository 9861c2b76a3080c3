#!/usr/bin/env bash
# The device verification script: run on the GPU machine, from the repository
# root, on the bundle made by tests/device/bundle.sh on the development
# machine. It unpacks the bundle, finds the machine's CUDA 13 cuBLASLt, runs
# the GPU tests, a focal-eval smoke test (CPU vs CUDA), the benchmarks with
# their PyTorch references, and prints a short table last. $OUT (default
# build-cuda/device-out) receives summary.txt and device-logs.tar.gz (every log).
#
#   bash tests/device/run.sh [build-cuda/focal-cuda-bundle.tar.xz]
#
# SKIP_BENCH=1 runs the tests only; SKIP_REF=1 skips the PyTorch references;
# TEST_TIMEOUT (default 150) bounds each test binary, in seconds. Everything
# together stays within the device tool's 10-minute command limit.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
# Every step's timeout is cut to what is left of DEADLINE seconds (default
# 540: the device tool stops a command at 600), so the table always prints.
START=$(date +%s)
DEADLINE=${DEADLINE:-540}
budget() {  # budget WANT: min(WANT, seconds left - 30 for the table), at least 1
  local left=$(( DEADLINE - ($(date +%s) - START) - 30 ))
  (( left < 1 )) && left=1
  echo $(( $1 < left ? $1 : left ))
}
TARBALL=${1:-build-cuda/focal-cuda-bundle.tar.xz}
FINAL=${OUT:-$ROOT/build-cuda/device-out}
mkdir -p "$FINAL"
OUT=$(mktemp -d /tmp/focal-logs.XXXXXX)  # every log; packed into $FINAL at the end
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
# Packs what exists so far into $FINAL, so a run cut short still returns logs.
checkpoint() { tar -C "$OUT" -czf "$FINAL/device-logs.tar.gz" . 2>/dev/null; }

WORK=$(mktemp -d /tmp/focal-bundle.XXXXXX)
if ! tar -C "$WORK" -xJf "$TARBALL" 2>/dev/null; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$TARBALL" "$WORK" || { echo "cannot unpack $TARBALL" >&2; exit 1; }
fi
B="$WORK/bundle"
cat "$B/MANIFEST"

# cuBLASLt of CUDA 13: the toolkit's, else the one PyTorch's wheels carry.
find_cublaslt() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/lib/x86_64-linux-gnu; do
    [[ -e "$d/libcublasLt.so.13" ]] && { echo "$d"; return 0; }
  done
  d=$(ldconfig -p 2>/dev/null | awk '/libcublasLt\.so\.13 / {print $NF; exit}')
  [[ -n "$d" ]] && { dirname "$d"; return 0; }
  d=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
roots = list(site.getsitepackages()) + [site.getusersitepackages()]
try:
    import torch  # its nvidia wheels sit beside it, whatever the interpreter's layout
    roots.append(os.path.dirname(os.path.dirname(torch.__file__)))
except Exception:
    pass
for root in roots:
    for p in glob.glob(os.path.join(root, "nvidia", "**", "libcublasLt.so.13"), recursive=True):
        print(os.path.dirname(p)); raise SystemExit
PY
)
  [[ -n "$d" ]] && { echo "$d"; return 0; }
  return 1
}
CUBLAS_DIR=$(find_cublaslt) || { echo "no libcublasLt.so.13 on this machine" >&2; exit 1; }
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH="$B/lib:$CUBLAS_DIR${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
if ! "$B/bin/cuda_plan_test" --gtest_list_tests >/dev/null 2>"$OUT/probe.err"; then
  cat "$OUT/probe.err"
  if grep -q "GLIBCXX\|CXXABI\|GCC_" "$OUT/probe.err"; then
    echo "the machine's libstdc++ is older than the build's: using the bundled one"
    export LD_LIBRARY_PATH="$B/lib:$B/lib-fallback:$CUBLAS_DIR${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
  fi
fi
if ldd "$B"/bin/* | grep "not found"; then
  echo "unresolved libraries (above): the bundle does not run here" >&2
  cp "$OUT"/* "$FINAL"/ 2>/dev/null
  exit 1
fi
export FOCAL_TEST_SOURCE_DIR="$ROOT" FOCAL_ASSET_DIR="$ROOT" FOCAL_TEST_STORIES260K_DIR="$B/stories260K"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
echo "cuBLASLt: $CUBLAS_DIR"

# 1. GPU tests (and the host-side unit tests of the backend), all at once: they
# are correctness checks, not timings, and device time is short.
TESTS_OK=1
declare -a TEST_ROWS
TESTS=(cuda_probe_test cuda_plan_test backend_ops_test cuda_backend_test cuda_model_test)
test_timeout=$(budget "${TEST_TIMEOUT:-150}")
for t in "${TESTS[@]}"; do
  ( start=$(date +%s)
    timeout "$test_timeout" "$B/bin/$t" --gtest_brief=1 --gtest_color=no >"$OUT/$t.log" 2>&1
    echo "$? $(( $(date +%s) - start ))" >"$OUT/$t.rc" ) &
done
wait
for t in "${TESTS[@]}"; do
  read -r rc secs <"$OUT/$t.rc"
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$OUT/$t.log" | tail -n1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$OUT/$t.log" | tail -n1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$OUT/$t.log" | tail -n1)
  TEST_ROWS+=("| $t | ${passed:-0} | ${failed:-0} | ${skipped:-0} | $rc | ${secs}s |")
  if [[ $t != cuda_plan_test && ${skipped:-0} -gt 0 ]]; then
    TESTS_OK=0  # on the GPU machine a skipped GPU test is a failed check
    echo "== $t skipped tests:" | tee -a "$SUMMARY"
    grep -m3 -A2 "Skipped\|SKIPPED" "$OUT/$t.log" | tee -a "$SUMMARY"
  fi
  if [[ $rc -ne 0 ]]; then
    TESTS_OK=0
    echo "== $t failed (exit $rc); its failures:"
    grep -E "Failure|FAILED|error|Expected|Which is|GPU error|differ" "$OUT/$t.log" | head -n 60 \
      | tee -a "$SUMMARY"
  fi
done
echo "tests done at $(( $(date +%s) - START )) s"
checkpoint

# On failures: compute-sanitizer's memcheck on the first few failed tests, so
# that one run already says whether a kernel reads or writes out of bounds.
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)
if [[ $TESTS_OK == 0 && -n "$SANITIZER" && "${SKIP_SANITIZER:-0}" != 1 ]]; then
  for t in backend_ops_test cuda_backend_test cuda_model_test; do
    failed_tests=$(sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_/.]*\).*/\1/p' "$OUT/$t.log" | grep '\.' | awk '!seen[$0]++' \
      | head -n 3 | paste -sd: -)
    [[ -z "$failed_tests" ]] && continue
    echo "== compute-sanitizer memcheck: $t --gtest_filter=$failed_tests"
    timeout "$(budget 60)" "$SANITIZER" --tool memcheck --print-limit 20 "$B/bin/$t" \
      --gtest_filter="$failed_tests" --gtest_brief=1 >"$OUT/sanitizer_$t.log" 2>&1
    grep -m 20 -E "Invalid|ERROR SUMMARY|out of bounds|Address|at 0x|by thread" \
      "$OUT/sanitizer_$t.log" | tee -a "$SUMMARY"
  done
  checkpoint
fi

# 2. focal-eval smoke: the bundled model scored on the CPU and on CUDA.
# (The GPU machine has no default model: the bundle's stories260K is named.)
TEXT="Once upon a time, there was a little girl named Lily. She loved to play outside."
FE="$B/bin/focal-eval"
M="$B/stories260K"
timeout "$(budget 60)" "$FE" inspect --device auto "$M" >"$OUT/inspect.txt" 2>&1
for dev in cpu cuda:0:fp32 cuda:0:bf16 auto; do
  tag=${dev//:/_}
  timeout "$(budget 60)" "$FE" score --device "$dev" --model "$M" --text "$TEXT" \
    >"$OUT/score_$tag.jsonl" 2>"$OUT/score_$tag.err"
  timeout "$(budget 60)" "$FE" generate --device "$dev" --model "$M" --max-new-tokens 60 \
    >"$OUT/generate_$tag.txt" 2>&1
done
SMOKE=$(LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(dev):
    p = os.path.join(out, f"score_{dev}.jsonl")
    try:
        return [json.loads(l)["logprob"] for l in open(p) if l.startswith("{")]
    except Exception as e:
        return None
cpu = load("cpu")
parts = []
for dev in ("cuda_0_fp32", "cuda_0_bf16", "auto"):
    got = load(dev)
    if not cpu or not got or len(got) != len(cpu):
        parts.append(f"{dev}: no comparable scores")
        continue
    parts.append(f"{dev}: max |dlogprob| {max(abs(a - b) for a, b in zip(cpu, got)):.2e} over {len(cpu)} tokens")
def text(dev):
    try:
        return open(os.path.join(out, f"generate_{dev}.txt")).read()
    except Exception:
        return None
same = text("cpu") is not None and "error" not in text("cpu") and text("cpu") == text("cuda_0_fp32")
parts.append("greedy fp32 == cpu: " + str(same))
try:
    auto = open(os.path.join(out, "score_auto.err")).read().strip()
    parts.append("--device auto stderr: " + (auto or "(empty)"))
except Exception:
    pass
print("; ".join(parts))
PY
)

# 2b. PROFILE=1: where one scoring forward's GPU time goes (1B shape, 8 x 2K),
# per kind of kernel, from Nsight Compute's per-kernel durations, beside the
# forward's unprofiled wall time.
if [[ "${PROFILE:-0}" == 1 ]]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
  for scored in all last32; do
    timeout "$(budget 60)" "$B/bin/e2e_score_bench" --repeats 5 --scored "$scored" \
      >"$OUT/e2e_plain_$scored.log" 2>&1
    tps=$(sed -n 's/^RESULT e2e_tokens_per_s_[a-z0-9_]* \(.*\)/\1/p' "$OUT/e2e_plain_$scored.log")
    wall_ms=$(python3 -c "print(16384 / $tps * 1e3 if '$tps' else '')" 2>/dev/null)
    if [[ -z "$NCU" ]]; then echo "PROFILE: no ncu on this machine" | tee -a "$SUMMARY"; break; fi
    # --repeats 1: a warm-up and a timed forward, both captured.
    timeout "$(budget 150)" "$NCU" --csv --print-units base --clock-control none \
      --cache-control none --metrics gpu__time_duration.sum --log-file "$OUT/ncu_$scored.csv" \
      "$B/bin/e2e_score_bench" --repeats 1 --scored "$scored" >"$OUT/ncu_$scored.out" 2>&1
    LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" python3 bench/kernel_breakdown.py "$OUT/ncu_$scored.csv" \
      --forwards 2 --label "$scored" ${wall_ms:+--wall-ms "$wall_ms"} 2>&1 | tee -a "$SUMMARY"
    checkpoint
  done
  timeout "$(budget 60)" "$B/bin/e2e_score_bench" --shape smollm2 --repeats 5 --seqs 64 \
    --seq-len 256 >"$OUT/e2e_plain_smollm2.log" 2>&1
  grep -h "^RESULT" "$OUT"/e2e_plain_*.log | tee -a "$SUMMARY"
fi

# 3. Benchmarks and their references. SWEEP: the attention lengths beside 16K;
# LONG_1B: the 1B-shape prefill lengths (8K-32K against the predicted memory,
# and 128K).
SWEEP=${SWEEP:-4096,8192,32768}
LONG_1B=${LONG_1B:-8192,16384,32768,131072}
stamp() { echo "== $1 at $(( $(date +%s) - START )) s"; }
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  stamp attention_bench
  timeout "$(budget 150)" "$B/bin/attention_bench" --repeats 10 --sweep "$SWEEP" 2>&1 \
    | tee "$OUT/attention_bench.log"
  checkpoint
  if [[ "${SKIP_REF:-0}" != 1 ]]; then
    stamp attention_sdpa_reference
    LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" PYTHONUNBUFFERED=1 timeout "$(budget 150)" \
      python3 bench/attention_sdpa_reference.py --repeats 10 --sweep "$SWEEP" 2>&1 \
      | tee "$OUT/attention_sdpa.log"
    checkpoint
  fi
  stamp e2e_score_bench
  timeout "$(budget 200)" "$B/bin/e2e_score_bench" --repeats 5 2>&1 | tee "$OUT/e2e_score_bench.log"
  # The default model's shape, at the sizes of short-task scoring requests.
  timeout "$(budget 100)" "$B/bin/e2e_score_bench" --shape smollm2 --repeats 5 --seqs 64 \
    --seq-len 256 2>&1 | tee -a "$OUT/e2e_score_bench.log"
  checkpoint
  stamp long_prefill_bench
  timeout "$(budget 150)" "$B/bin/long_prefill_bench" --shape 1b --tokens "$LONG_1B" 2>&1 \
    | tee "$OUT/long_1b.log"
  checkpoint
  timeout "$(budget 150)" "$B/bin/long_prefill_bench" --shape 8b --tokens 32768 2>&1 \
    | tee "$OUT/long_8b.log"
  checkpoint
  if [[ "${SKIP_REF:-0}" != 1 ]]; then
    stamp e2e_hf_reference
    LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" PYTHONUNBUFFERED=1 timeout "$(budget 200)" \
      python3 bench/e2e_hf_reference.py --repeats 5 2>&1 \
      | tee "$OUT/e2e_hf.log"
  fi
  stamp done
fi

# 4. The short table, last.
say ""
say "== focal-eval CUDA device check on $(head -n2 "$OUT/gpu.txt" | tail -n1)"
say "bundle: $(head -n1 "$B/MANIFEST")"
say ""
say "| test binary | passed | failed | skipped | exit | time |"
say "|---|---:|---:|---:|---:|---:|"
for row in "${TEST_ROWS[@]}"; do say "$row"; done
say ""
say "focal-eval inspect --device auto: $(grep -m1 -iE 'backend|device|error' "$OUT/inspect.txt" || echo 'no output')"
say "$(grep -h '^MEASURED' "$OUT/cuda_model_test.log" | sort -u)"
say "smoke: $SMOKE"
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" python3 - "$OUT" <<'PY' | tee -a "$SUMMARY"
import os, re, sys
out = sys.argv[1]
res = {}
for f in ("attention_bench.log", "attention_sdpa.log", "e2e_score_bench.log", "e2e_hf.log",
          "long_1b.log", "long_8b.log"):
    p = os.path.join(out, f)
    if os.path.exists(p):
        for line in open(p):
            m = re.match(r"RESULT (\S+) (\S+)", line)
            if m:
                res[m.group(1)] = float(m.group(2))
print()
print("| attention case (causal) | ours TFLOP/s | torch SDPA TFLOP/s |")
print("|---|---:|---:|")
for k, v in res.items():
    if k.startswith("attention_tflops_"):
        case = k[len("attention_tflops_"):]
        ref = res.get("sdpa_tflops_" + case)
        print(f"| {case} | {v:.1f} | {'' if ref is None else f'{ref:.1f}'} |")
print()
if "gemm_bf16_tflops" in res:
    print(f"\ndense BF16 GEMM (torch.matmul 8192^3): {res['gemm_bf16_tflops']:.1f} TFLOP/s")
print()
print("| e2e scoring (1B: 8 x 2K packed; smollm2: 64 x 256) | ours tokens/s | ours MFU % | HF tokens/s | HF MFU % |")
print("|---|---:|---:|---:|---:|")
for tag in ("all_rows", "last32", "all_rows_smollm2", "last32_smollm2"):
    g = lambda k: res.get(k)
    fmt = lambda x, p: "" if x is None else f"{x:.{p}f}"
    print(f"| {tag} | {fmt(g('e2e_tokens_per_s_' + tag), 0)} | {fmt(g('e2e_mfu_percent_' + tag), 1)} "
          f"| {fmt(g('hf_tokens_per_s_' + tag), 0)} | {fmt(g('hf_mfu_percent_' + tag), 1)} |")
print()
print("| long-context prefill | tokens | tokens/s | predicted MiB | peak MiB | within |")
print("|---|---:|---:|---:|---:|---|")
long_runs = sorted({(k.split("_")[-2], int(k.split("_")[-1])) for k in res
                    if k.startswith("long_tokens_per_s_")})
for shape, n in long_runs:
    g = lambda k: res.get(f"{k}_{shape}_{n}")
    fmt = lambda x, p: "" if x is None else f"{x:.{p}f}"
    within = g("long_within")
    print(f"| {shape} | {n} | {fmt(g('long_tokens_per_s'), 0)} | {fmt(g('long_predicted_mib'), 0)} "
          f"| {fmt(g('long_peak_mib'), 0)} | {'' if within is None else ('yes' if within else 'NO')} |")
PY
fi
say ""
if [[ $TESTS_OK == 1 ]]; then
  say "RESULT: all GPU tests passed"
else
  say "RESULT: GPU TESTS FAILED OR SKIPPED (logs in device-logs.tar.gz)"
fi
cp "$SUMMARY" "$FINAL/summary.txt"
checkpoint
rm -rf "$WORK" "$OUT"
[[ $TESTS_OK == 1 ]]
