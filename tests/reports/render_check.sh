#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Renders an HTML report headless with chromium and checks the result:
#   tests/reports/render_check.sh report.html [out.png]
# Fails when chromium logs a console message (JavaScript error or other), or
# the screenshot is missing or too small. Then look at the PNG yourself.
set -euo pipefail
html=$(realpath "$1")
png=${2:-/tmp/focal_report.png}
command -v chromium >/dev/null || { echo "chromium is not installed (apt-get install chromium)"; exit 2; }
profile=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
rm -f "$png"
timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
  --user-data-dir="$profile" --enable-logging=stderr --v=0 \
  --screenshot="$png" --window-size=1200,2000 "file://$html" >"$log" 2>&1
if grep -E "CONSOLE|Uncaught" "$log"; then echo "FAIL: console messages while rendering"; exit 1; fi
[[ -f "$png" ]] || { echo "FAIL: no screenshot"; cat "$log"; exit 1; }
size=$(stat -c %s "$png")
(( size > 30000 )) || { echo "FAIL: screenshot only $size bytes"; exit 1; }
echo "OK: $png ($size bytes)"
