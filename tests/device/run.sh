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

# 1. GPU tests (and the host-side unit tests of the backend).
TESTS_OK=1
declare -a TEST_ROWS
for t in cuda_probe_test cuda_plan_test backend_ops_test cuda_backend_test cuda_model_test; do
  start=$(date +%s)
  timeout "$(budget "${TEST_TIMEOUT:-150}")" "$B/bin/$t" --gtest_brief=1 --gtest_color=no >"$OUT/$t.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
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
  checkpoint
done

# 2. focal-eval smoke: the bundled model scored on the CPU and on CUDA.
TEXT="Once upon a time, there was a little girl named Lily. She loved to play outside."
FE="$B/bin/focal-eval"
timeout "$(budget 60)" "$FE" inspect --device cuda >"$OUT/inspect.txt" 2>&1
for dev in cpu cuda:0:fp32 cuda:0:bf16; do
  tag=${dev//:/_}
  timeout "$(budget 60)" "$FE" score --device "$dev" --text "$TEXT" >"$OUT/score_$tag.jsonl" 2>"$OUT/score_$tag.err"
  timeout "$(budget 60)" "$FE" generate --device "$dev" --max-new-tokens 60 >"$OUT/generate_$tag.txt" 2>&1
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
for dev in ("cuda_0_fp32", "cuda_0_bf16"):
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
parts.append("greedy fp32 == cpu: " + str(text("cpu") is not None and text("cpu") == text("cuda_0_fp32")))
print("; ".join(parts))
PY
)

# 3. Benchmarks and their references.
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  checkpoint
  timeout "$(budget 150)" "$B/bin/attention_bench" --repeats 10 2>&1 | tee "$OUT/attention_bench.log"
  checkpoint
  if [[ "${SKIP_REF:-0}" != 1 ]]; then
    LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" PYTHONUNBUFFERED=1 timeout "$(budget 150)" \
      python3 bench/attention_sdpa_reference.py --repeats 10 2>&1 \
      | tee "$OUT/attention_sdpa.log"
    checkpoint
  fi
  timeout "$(budget 200)" "$B/bin/e2e_score_bench" --repeats 5 2>&1 | tee "$OUT/e2e_score_bench.log"
  checkpoint
  # Long context: 128K tokens through the 1B shape, 32K through the 8B shape.
  timeout "$(budget 120)" "$B/bin/long_prefill_bench" --shape 1b --tokens 131072 2>&1 \
    | tee "$OUT/long_1b.log"
  checkpoint
  timeout "$(budget 150)" "$B/bin/long_prefill_bench" --shape 8b --tokens 32768 2>&1 \
    | tee "$OUT/long_8b.log"
  checkpoint
  if [[ "${SKIP_REF:-0}" != 1 ]]; then
    LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" PYTHONUNBUFFERED=1 timeout "$(budget 200)" \
      python3 bench/e2e_hf_reference.py --repeats 5 2>&1 \
      | tee "$OUT/e2e_hf.log"
  fi
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
say "focal-eval inspect: $(grep -m1 -iE 'backend|error' "$OUT/inspect.txt" || echo 'no output')"
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
print("| e2e Llama-3.2-1B shape, 8 x 2K packed | ours tokens/s | ours MFU % | HF tokens/s | HF MFU % |")
print("|---|---:|---:|---:|---:|")
for tag in ("all_rows", "last32"):
    g = lambda k: res.get(k)
    fmt = lambda x, p: "" if x is None else f"{x:.{p}f}"
    print(f"| {tag} | {fmt(g('e2e_tokens_per_s_' + tag), 0)} | {fmt(g('e2e_mfu_percent_' + tag), 1)} "
          f"| {fmt(g('hf_tokens_per_s_' + tag), 0)} | {fmt(g('hf_mfu_percent_' + tag), 1)} |")
print()
print("| long-context prefill | tokens | tokens/s | predicted MiB | peak MiB | within |")
print("|---|---:|---:|---:|---:|---|")
for shape, n in (("1b", 131072), ("8b", 32768)):
    g = lambda k: res.get(k + "_" + shape)
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
