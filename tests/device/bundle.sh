#!/usr/bin/env bash
# Builds the CUDA binaries on this (development) machine and packs them, with
# the shared libraries the GPU machine lacks (absl, OpenBLAS, gfortran, ...),
# into build-cuda/focal-cuda-bundle.tar.xz for tests/device/run.sh.
#
#   bash tests/device/bundle.sh          # BUILD=build-cuda JOBS=2 by default
#
# Left out, because the GPU machine has them (or must use its own): the C
# runtime (libc, libm, libpthread, libdl, librt, ld-linux), libcuda (the
# driver), libcudart (linked statically anyway) and cuBLAS/cuBLASLt (dlopen'ed
# from the machine's CUDA 13). libstdc++ and libgcc_s go into lib-fallback/,
# used only if the machine's own are too old. See kernels/cuda/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-cuda}
JOBS=${JOBS:-2}
TARGETS=(focal-eval cuda_probe_test cuda_plan_test backend_ops_test cuda_backend_test cuda_model_test
         attention_bench e2e_score_bench long_prefill_bench)
# stories260K, converted from ../shared by the build: the GPU machine has no ../shared.
STORIES="$BUILD/testdata/stories260K"

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DFOCAL_CUDA=ON >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" stories260K_model
[[ -f "$STORIES/model.safetensors" ]] || { echo "bundle: no $STORIES (needs ../shared)" >&2; exit 1; }

STAGE="$BUILD/bundle"
rm -rf "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/lib-fallback"
cp -r "$STORIES" "$STAGE/stories260K"
for t in "${TARGETS[@]}"; do
  path=$(find "$BUILD" -path "$STAGE" -prune -o -type f -name "$t" -perm -u+x -print | head -n1)
  [[ -n "$path" ]] || { echo "bundle: $t was not built" >&2; exit 1; }
  cp "$path" "$STAGE/bin/$t"
  strip --strip-unneeded "$STAGE/bin/$t"
done

SYSTEM='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas)'
for b in "$STAGE"/bin/*; do
  ldd "$b" | awk '/=>/ && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if [[ "$name" =~ $SYSTEM ]]; then continue; fi
  cp -L "$path" "$STAGE/lib/$name"
done
for name in libstdc++.so.6 libgcc_s.so.1; do
  path=$(ldd "$STAGE/bin/focal-eval" | awk -v n="$name" '$1 == n {print $3}')
  [[ -n "$path" ]] && cp -L "$path" "$STAGE/lib-fallback/$name"
done
if ldd "$STAGE"/bin/* | grep -q "not found"; then
  echo "bundle: unresolved libraries here:" >&2
  ldd "$STAGE"/bin/* | grep "not found" >&2
  exit 1
fi

{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "uncommitted files: $(git status --porcelain 2>/dev/null | wc -l)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n1)"
  echo "device code: $(grep -ho 'arch=compute_[0-9a-z]*,code=[^ ]*' \
    "$BUILD"/kernels/cuda/CMakeFiles/focal_cuda_kernels.dir/flags.make 2>/dev/null | sort -u | tr '\n' ' ')"
  echo "libraries: $(ls "$STAGE/lib" | tr '\n' ' ')"
} > "$STAGE/MANIFEST"

TARBALL="$BUILD/focal-cuda-bundle.tar.xz"
tar -C "$BUILD" -cf - bundle | xz -T"$JOBS" -6 > "$TARBALL"
bytes=$(stat -c %s "$TARBALL")
echo "bundle: $TARBALL, $((bytes / 1024 / 1024)) MiB ($(du -sh "$STAGE" | cut -f1) unpacked)"
if (( bytes > 60 * 1024 * 1024 )); then
  echo "bundle: over 60 MiB; it must travel in the 64 MiB working-tree limit" >&2
  exit 1
fi
