#!/usr/bin/env python3
"""Fails if a tracked file carries third-party data from ../shared.

Two checks over `git ls-files`:
  1. text: a tracked file contains a line (longer than 40 characters, ends
     stripped, three words at least), or such a sentence of one, of any file
     under SHARED/data: plain, .bz2 or .gz; for JSON and
     JSONL files also every line of every string value, so that text re-encoded
     inside our own JSON goldens is found too (tracked JSON is decoded the same
     way before the search).
  2. tensors: a tracked file has the SHA-256 of a file under SHARED/models or of
     a file of the build's conversion of stories260K (--derived DIR), or a
     tracked .safetensors holds a tensor whose bytes equal one of the converted
     model's tensors.
Usage: third_party_check.py SHARED [--derived DIR]... (run in the checkout).
Exit 0: clean; 1: findings (listed); 77: SHARED missing and CI is not "true".
"""
import argparse
import bz2
import gzip
import hashlib
import json
import os
import re
import struct
import subprocess
import sys

MIN_LEN = 41  # "longer than 40 characters"
KEY = 40


def open_text(path):
    opener = bz2.open if path.endswith(".bz2") else gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return f.read()


def json_strings(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            json_strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            json_strings(v, out)


def decoded_json_text(text):
    """The string values of a JSON document or of each JSONL line, joined by newlines."""
    strings = []
    try:
        json_strings(json.loads(text), strings)
    except ValueError:
        for line in text.splitlines():
            try:
                json_strings(json.loads(line), strings)
            except ValueError:
                pass
    return "\n".join(strings)


def long_lines(text):
    for line in text.splitlines():
        line = line.strip()
        # Three words at least: one long word (an NQ answer such as
        # "Pneumonoultramicroscopicsilicovolcanoconiosis") is vocabulary, not text.
        if len(line) >= MIN_LEN and line.count(" ") >= 2:
            yield line


def shared_lines(data_dir):
    """40-character prefix -> the shared lines that start with it."""
    index = {}
    for root, _, files in os.walk(data_dir):
        for name in sorted(files):
            path = os.path.join(root, name)
            text = open_text(path)
            texts = [text]
            if ".json" in name:
                texts.append(decoded_json_text(text))
            for t in texts:
                for line in long_lines(t):
                    index.setdefault(line[:KEY], set()).add(line)
                    # Its sentences too: an extract need not keep whole lines.
                    for sentence in long_lines(re.sub(r"([.?!]) +", r"\1\n", line)):
                        index.setdefault(sentence[:KEY], set()).add(sentence)
    return index


def find_text(text, index):
    """The first shared line contained in `text`, or None."""
    for i in range(len(text) - MIN_LEN + 1):
        lines = index.get(text[i:i + KEY])
        if lines:
            for line in lines:
                if text.startswith(line, i):
                    return line
    return None


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def safetensors_tensors(data):
    """name -> SHA-256 of the tensor's bytes ({} if not a safetensors file)."""
    if len(data) < 8:
        return {}
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n])
    except ValueError:
        return {}
    out = {}
    for name, info in header.items():
        if name != "__metadata__" and isinstance(info, dict) and "data_offsets" in info:
            b, e = info["data_offsets"]
            out[name] = sha256(data[8 + n + b:8 + n + e])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shared")
    ap.add_argument("--derived", action="append", default=[],
                    help="a directory of files made from SHARED/models (e.g. the converted stories260K)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.shared, "data")):
        if os.environ.get("CI") == "true":
            print(f"missing under CI: {args.shared}/data")
            return 1
        print(f"skipped: no {args.shared}/data")
        return 77

    index = shared_lines(os.path.join(args.shared, "data"))
    file_hashes, tensor_hashes = {}, {}
    model_dirs = [os.path.join(args.shared, "models")] + args.derived
    for d in model_dirs:
        for root, _, files in os.walk(d):
            for name in files:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    data = f.read()
                file_hashes[sha256(data)] = path
                for t, h in safetensors_tensors(data).items():
                    if len(data) > 0:
                        tensor_hashes[h] = f"{path}:{t}"

    tracked = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True)
    findings = []
    for rel in tracked.stdout.decode().split("\0"):
        if not rel or not os.path.isfile(rel):
            continue
        with open(rel, "rb") as f:
            data = f.read()
        if sha256(data) in file_hashes:
            findings.append(f"{rel}: same bytes as {file_hashes[sha256(data)]}")
            continue
        if rel.endswith(".safetensors"):
            for t, h in safetensors_tensors(data).items():
                if h in tensor_hashes:
                    findings.append(f"{rel}: tensor {t} equals {tensor_hashes[h]}")
            continue
        if b"\0" in data:
            continue  # other binary files
        text = data.decode("utf-8", errors="replace")
        texts = [text]
        if rel.endswith((".json", ".jsonl")):
            texts.append(decoded_json_text(text))
        for t in texts:
            line = find_text(t, index)
            if line is not None:
                findings.append(f"{rel}: holds a line of {args.shared}/data: {line[:80]!r}")
                break
    for f in findings:
        print(f)
    print(f"{len(findings)} tracked files carry data from {args.shared}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
