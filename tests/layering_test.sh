#!/usr/bin/env bash
# The include direction docs/design.md draws:
#   harness -> engine -> {tasks, datasets, reports, model} -> kernels -> base
# (within the middle tier: reports -> tasks -> datasets). Fails, naming the
# file and line, when a folder includes one it may not.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [base]="base"
  [kernels]="base kernels"
  [model]="base kernels model"
  [datasets]="base datasets"
  [tasks]="base datasets tasks"
  [reports]="base datasets tasks reports"
  [engine]="base kernels model datasets tasks reports engine"
  [harness]="base kernels model datasets tasks reports engine harness"
)
bad=0
for dir in "${!allowed[@]}"; do
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}
    inc=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$rest")
    # Only the project's own folders are layered (absl/, google/, ... are not).
    [[ -n "${allowed[$inc]+x}" ]] || continue
    if [[ " ${allowed[$dir]} " != *" $inc "* ]]; then
      echo "$file:$line: $dir/ must not include $inc/ (${rest#*:})"
      bad=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir" --include='*.cc' --include='*.h' \
             --include='*.cu' --include='*.cuh' || true)
done
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "layering: every include follows harness -> engine -> {tasks, datasets, reports, model} -> kernels -> base"
