#!/usr/bin/env python3
"""lm-eval 0.4.13's request encoding and scoring on the tiny BPE-tokenizer checkpoints.

Runs lm-eval's own HFLM (HF backend, float32, CPU, batch 1, max_length 32) on
tests/testdata/models/bpe_{llama3,gpt2,spm} (written by make_bpe_model_reference.py) with the
project's context/continuation pairs below, under add_bos_token None (lm-eval's default; our
`--add-bos auto`), True (`always`) and False (`never`). Each request goes through HFLM.loglikelihood
alone; what lm-eval hands to _loglikelihood_tokens (context_enc, continuation_enc) and the
input_ids its model forward receives are recorded with the (loglikelihood, is_greedy) it returns.

    python3 -m venv /tmp/lmeval-venv   # as in tests/reference/README.md
    /tmp/lmeval-venv/bin/pip install -r tests/reference/lm_eval_requirements.txt
    /tmp/lmeval-venv/bin/python tests/reference/lm_eval_bpe_reference.py

Writes tests/testdata/golden/lm_eval_bpe/requests.jsonl: a header, then one line per model,
policy and pair: {"model", "add_bos", "pair", "context_enc", "continuation_enc", "input",
"ll", "is_greedy"} or {"model", "add_bos", "pair", "error"} when lm-eval raises. The texts are the
project's own; the golden keeps their index into PAIRS (tests/engine/lm_eval_bpe_test.cc holds the
same list) and the SHA-256 of context + NUL + continuation. A rerun rewrites the file byte for byte.
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402
import transformers  # noqa: E402
import lm_eval  # noqa: E402
from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.huggingface import HFLM  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "testdata", "golden", "lm_eval_bpe", "requests.jsonl")
MODELS = ("bpe_llama3", "bpe_gpt2", "bpe_spm")
MAX_LENGTH = 32

# (context, continuation): plain pairs, trailing whitespace that _encode_pair moves, empty contexts
# (the prefix token; a continuation that itself starts with the prefix token), contexts that spell a
# BOS/EOS token at the start (lm-eval then adds no special tokens), and a context long enough to be
# left-truncated at MAX_LENGTH.
PAIRS = [
    ("The robot watered the", " tomatoes"),
    ("Question: How many apples did Pim count?\nAnswer:", " 1234"),
    ("A trailing space ", "moves into the continuation"),
    ("Tab and newline\t\n", "next line"),
    ("", "An empty context is scored from the prefix token."),
    ("", "<|endoftext|> opens this continuation"),
    ("", "<|begin_of_text|>Hello there"),
    ("", "<s> Hello there"),
    ("<|begin_of_text|>A context that spells the Llama 3 BOS", " and goes on"),
    ("<|endoftext|>A context that spells GPT-2's end of text", " and goes on"),
    ("<s> A context that spells the sentencepiece BOS", " and goes on"),
    ("Every morning at 6:45 the small robot walked along the greenhouse, counting 1234 tomatoes, "
     "17 peppers and 9 very old cucumbers before it finally", " watered them all."),
]


def sha256(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


class Recorder:
    """Forward pre-hook on the model: the input_ids of every forward call."""

    def __init__(self):
        self.inputs = []

    def __call__(self, module, args, kwargs):
        x = args[0] if args else kwargs["input_ids"]
        self.inputs.append(x[0].tolist())


def run(model_name, add_bos):
    lm = HFLM(pretrained=os.path.join(REPO, "tests", "testdata", "models", model_name),
              backend="causal", device="cpu", dtype="float32", batch_size=1,
              max_length=MAX_LENGTH, add_bos_token=add_bos, logits_cache=False)
    lm.model.config._attn_implementation = "eager"
    rec = Recorder()
    lm.model.register_forward_pre_hook(rec, with_kwargs=True)
    seen = {}
    original = lm._loglikelihood_tokens

    def spy(requests, **kwargs):
        assert len(requests) == 1
        seen["ctx"], seen["cont"] = requests[0][1], requests[0][2]
        return original(requests, **kwargs)

    lm._loglikelihood_tokens = spy
    rows = []
    for i, (context, continuation) in enumerate(PAIRS):
        seen.clear()
        rec.inputs.clear()
        row = {"model": model_name, "add_bos": add_bos, "pair": i,
               "pair_sha256": sha256(context + "\0" + continuation)}
        inst = Instance(request_type="loglikelihood", doc={}, arguments=(context, continuation),
                        idx=0)
        try:
            (ll, greedy), = lm.loglikelihood([inst], disable_tqdm=True)
        except Exception as e:  # noqa: BLE001  (recorded: the C++ side must refuse too)
            row["error"] = "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:120])
            rows.append(row)
            continue
        assert len(rec.inputs) == 1, rec.inputs
        row.update({"context_enc": seen["ctx"], "continuation_enc": seen["cont"],
                    "input": rec.inputs[0], "ll": float(ll), "is_greedy": bool(greedy)})
        rows.append(row)
    return rows


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    header = {"lm_eval": lm_eval.__version__ if hasattr(lm_eval, "__version__") else "0.4.13",
              "transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
              "max_length": MAX_LENGTH, "pairs": len(PAIRS)}
    rows = []
    for m in MODELS:
        for add_bos in (None, True, False):
            rows += run(m, add_bos)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for row in [header] + rows:
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    for r in rows:
        print(r["model"], r["add_bos"], r["pair"], r.get("error") or
              "%d+%d -> %d, ll %.5f" % (len(r["context_enc"]), len(r["continuation_enc"]),
                                        len(r["input"]), r["ll"]))


if __name__ == "__main__":
    sys.exit(main())
