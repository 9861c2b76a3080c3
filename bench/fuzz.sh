#!/usr/bin/env bash
# Fuzzes every parser of the product with libFuzzer under ASan+UBSan
# (tests/fuzz, docs/evidence.md, "Fuzzing"): builds build-fuzz with clang if needed,
# makes the seed corpora (from tests/testdata, datasets/samples, tasks/specs
# and the fuzz_seeds program), runs each target in turn and prints a
# Markdown table of executions, seconds, exec/s and the result.
#
#   bash bench/fuzz.sh                   every target for 1,000,000 executions
#   bash bench/fuzz.sh --runs N          ... for N executions
#   bash bench/fuzz.sh --short SECONDS   every target for SECONDS (the test command)
#   bash bench/fuzz.sh ... TARGET...     only these (names as in the table)
#
# One target at a time, one job, under `nice -n 19` (the build uses
# $FOCAL_FUZZ_JOBS jobs, default 1). Exits non-zero when a target crashes (a
# sanitizer report, a timeout, running out of memory or a leak); the crashing
# input and the log are kept in a temporary directory (printed), never in the
# repository. The full runs grow the corpora in build-fuzz/fuzz/corpus/<target>;
# --short starts from the seeds each time. Needs clang with libFuzzer (Debian's
# clang and libclang-rt-14-dev) and the project's other build dependencies.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD="${FOCAL_FUZZ_BUILD_DIR:-build-fuzz}"
ALL_TARGETS=(json config safetensors safetensors_index gguf tokenizer_json sentencepiece datasets
             task_spec results resume_log)
RUNS=1000000
SHORT=""
TARGETS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --short) SHORT="${2:?--short needs SECONDS}"; shift 2 ;;
    --runs) RUNS="${2:?--runs needs N}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=("${ALL_TARGETS[@]}")
for t in "${TARGETS[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done

# --- Build --------------------------------------------------------------------------
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2; exit 1; }
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CC=clang CXX=clang++ nice -n 19 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOCAL_FUZZ=ON -DFOCAL_CUDA=OFF -DFOCAL_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null || exit 1
fi
build_log="$(mktemp "${TMPDIR:-/tmp}/focal-fuzz-build.XXXXXX")"
if ! nice -n 19 cmake --build "$BUILD" -j"${FOCAL_FUZZ_JOBS:-1}" --target focal_fuzz >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  echo "fuzz.sh: build failed (log: $build_log)" >&2
  exit 1
fi
rm -f "$build_log"
FUZZ_BIN="$BUILD/tests/fuzz"

# --- Seed corpora (regenerated every run; nothing is copied into the repository) ----
SEEDS="$BUILD/fuzz/seeds"
CORPUS="$BUILD/fuzz/corpus"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS"
for t in "${ALL_TARGETS[@]}"; do mkdir -p "$SEEDS/$t" "$CORPUS/$t"; done
nice -n 19 "$FUZZ_BIN/fuzz_seeds" "$SEEDS" || { echo "fuzz.sh: fuzz_seeds failed" >&2; exit 1; }
SEP=$'\n%%FILE%%\n'  # tests/fuzz/fuzz_util.h kFileSeparator

# seed TARGET NAME: stdin -> the seed file.
seed() { cat >"$SEEDS/$1/$2"; }
# A byte given as a number.
byte() { printf "\\$(printf '%03o' "$1")"; }
slug() { echo "$1" | tr '/.' '__'; }

# Every JSON file the tests and samples use (up to 64 KiB) and the first
# lines of the JSON-lines files.
while IFS= read -r f; do
  cp "$f" "$SEEDS/json/$(slug "$f")"
done < <(find tests/testdata datasets/samples -name '*.json' -size -65k | sort)
for f in datasets/samples/*.jsonl tests/datasets/testdata/*.jsonl; do
  head -n 1 "$f" | seed json "$(slug "$f")_line1"
done
# config.json files of the test models (focal constant/learned, mistral, rope
# scaling, sharded...).
for f in tests/testdata/models/*/config.json; do cp "$f" "$SEEDS/config/$(slug "$f")"; done
# safetensors: the test checkpoints' headers in the target's structured
# layout (0, data size u32le, header); the data stays zeros.
for f in tests/testdata/models/*/*.safetensors; do
  size=$(stat -c %s "$f")
  n=$(od -An -t u8 -N 8 "$f" | tr -d ' ')
  d=$((size - 8 - n))
  { byte 0; byte $((d & 255)); byte $(((d >> 8) & 255)); byte $(((d >> 16) & 255))
    byte $(((d >> 24) & 255)); tail -c +9 "$f" | head -c "$n"; } | seed safetensors "$(slug "$f")"
done
for f in tests/testdata/models/*/model.safetensors.index.json; do
  cp "$f" "$SEEDS/safetensors_index/$(slug "$f")"
done
# tokenizer.json, with tokenizer_config.json after the separator where the
# test model has one.
for f in tests/testdata/tokenizer/*/tokenizer.json; do cp "$f" "$SEEDS/tokenizer_json/$(slug "$f")"; done
for d in tests/testdata/models/*/; do
  [[ -f "$d/tokenizer.json" ]] || continue
  { cat "$d/tokenizer.json"; [[ -f "$d/tokenizer_config.json" ]] && { printf '%s' "$SEP"; cat "$d/tokenizer_config.json"; }; } \
    | seed tokenizer_json "$(slug "$d")with_config"
done
# Datasets: the reader's index (ReaderIds() order) + 8 * compression.
ds() { { byte "$1"; cat "$2"; } | seed datasets "$(slug "$2")"; }
ds 0 datasets/samples/arc_easy.jsonl
ds 0 datasets/samples/arc_challenge.jsonl
ds 1 datasets/samples/boolq.jsonl
ds 2 tests/datasets/testdata/hellaswag_original.jsonl
ds 3 datasets/samples/hellaswag.txt
ds $((3 + 8 * 3)) tests/datasets/testdata/hellaswag_2.txt.bz2
ds 4 datasets/samples/lambada_openai.jsonl
ds 5 datasets/samples/lambada_standard.txt
{ byte $((1 + 8 * 2)); gzip -nc datasets/samples/boolq.jsonl; } | seed datasets boolq_gz
{ byte 6; cat datasets/samples/piqa.jsonl; printf '%s' "$SEP"; cat datasets/samples/piqa-labels.lst; } \
  | seed datasets piqa_with_labels
# Task specs: the bundled ones.
cp tasks/specs/*.textproto "$SEEDS/task_spec/"
# Hand-written seeds, if any.
if [[ -d tests/fuzz/seeds ]]; then
  for d in tests/fuzz/seeds/*/; do
    [[ -d "$d" ]] && cp "$d"* "$SEEDS/$(basename "$d")/" 2>/dev/null
  done
fi

# --- Runs ---------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/focal-fuzz.XXXXXX")"
mkdir -p "$WORK/artifacts" "$WORK/logs"
# The targets write each input to a file here (entry points that take a
# path): memory-backed where possible, or file I/O dominates the run.
if [[ -d /dev/shm && -w /dev/shm ]]; then
  SCRATCH="$(mktemp -d /dev/shm/focal-fuzz-scratch.XXXXXX)"
else
  SCRATCH="$WORK/scratch"
  mkdir -p "$SCRATCH"
fi
trap 'rm -rf "$SCRATCH"' EXIT
if [[ -n "$SHORT" ]]; then
  budget=(-max_total_time="$SHORT")
  echo "Fuzzing each target for ${SHORT}s ($BUILD, ASan+UBSan, one job):"
else
  budget=(-runs="$RUNS")
  echo "Fuzzing each target for $RUNS executions ($BUILD, ASan+UBSan, one job):"
fi
rows=()
failed=0
for t in "${TARGETS[@]}"; do
  log="$WORK/logs/$t.log"
  # --short starts from the seeds alone, so its time does not grow with the
  # corpus; the long runs add to the kept corpus.
  corpus="$CORPUS/$t"
  if [[ -n "$SHORT" ]]; then
    corpus="$WORK/corpus/$t"
    mkdir -p "$corpus"
  fi
  start=$(date +%s.%N)
  FOCAL_FUZZ_TMPDIR="$SCRATCH" \
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    nice -n 19 "$FUZZ_BIN/fuzz_$t" "${budget[@]}" -print_final_stats=1 -timeout=30 \
      -rss_limit_mb=2048 -artifact_prefix="$WORK/artifacts/$t-" \
      "$corpus" "$SEEDS/$t" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -n 1)
  [[ -n "$execs" ]] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
  [[ -n "$execs" ]] || execs=$(grep -o '#[0-9]*' "$log" | tail -n 1 | tr -d '#')
  [[ -n "$execs" ]] || execs=0
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
  eps=$(awk -v n="$execs" -v s="$secs" 'BEGIN {printf "%d", (s > 0 ? n / s : 0)}')
  if [[ $rc -eq 0 ]]; then
    result="ok"
  elif [[ $rc -eq 72 ]]; then  # libFuzzer's exit status after SIGINT: stopped, not a crash
    failed=1
    result="interrupted"
  else
    failed=1
    kind=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-zA-Z-]+( signal)?|runtime error: .*|out-of-memory|timeout' "$log" | head -n 1)
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    result="FAILED (rc $rc: ${kind:-see log}; ${artifact:-no artifact}; log $log)"
  fi
  rows+=("| $t | $execs | $secs | $eps | $result |")
  echo "  $t: $execs executions, ${secs}s, $result" >&2
done
rm -rf "$SCRATCH"

echo
echo "| target | executions | seconds | exec/s | result |"
echo "|---|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
if [[ $failed -ne 0 ]]; then
  echo
  echo "fuzz.sh: a target failed; crashing inputs and logs are in $WORK" >&2
  exit 1
fi
rm -rf "$WORK"
