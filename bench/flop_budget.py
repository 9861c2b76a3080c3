#!/usr/bin/env python3
"""The arithmetic each tool needs for the seven tasks: the most wall time focal-eval can save.

On the CPU both tools spend their time in float32 GEMMs at about the same FLOP rate (our GEMM
reaches 87% of sgemm, bench/gemm_share.sh), so the ratio of their FLOPs bounds the speed-up.
This counts those FLOPs exactly from the requests, without running a model:

  1. lm-eval 0.4.13's own requests: its installed task configs with only the data source
     replaced (tests/reference/lm_eval_parity_reference.py), run through simple_evaluate with a
     recording LM that scores nothing (returns 0.0);
  2. token ids as lm-eval's _encode_pair makes them, with the model's own tokenizer (for the
     default model, SmolLM2's Digits + ByteLevel one, as focal-eval encodes);
  3. lm-eval's HF backend: requests whose context + continuation minus its last token are the
     same run once (its one-token logits cache), sorted longest first, in batches of --batch-size
     padded to the longest, every position through the body and the LM head;
     focal-eval (engine/scorer.cc): each distinct context once, then per distinct request the
     continuation but its last token, the LM head only on the rows that predict a continuation
     token (the context's last row once per request that shares it), and contexts that begin
     with the same 16 or more tokens computing that stem once per batch (plan_ours replays the
     scorer's clusters, order and --batch-tokens batches).
FLOPs per position p of a sequence (p keys before it): 2 x (body parameters) + 4 x d x (p + 1) per
layer for causal attention; the LM head is 2 x d x vocab per position that goes through it.

Prints one row per task with both tools' positions and GFLOPs and their ratio. The focal-eval
positions equal the tokens_processed focal-eval reports (checked on both LAMBADA splits, 832,595,
before stems; with stems on 300 documents of ARC-Easy, PIQA, BoolQ and HellaSwag: 12,403, 17,316,
44,078 and 23,556).
Needs a python with lm-eval (tests/reference/README.md: /tmp/lmeval-venv) and ../shared/data.
Usage: python bench/flop_budget.py [--model GGUF] [--tasks T,...] [--limit N] [--batch-size B]
       [--batch-tokens N] [--min-stem N]
"""
import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
import lm_eval_parity_reference as ref  # noqa: E402  (sets the offline env vars first)
import lm_eval  # noqa: E402
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402


class Recorder(LM):
    """Records every loglikelihood request (task, doc, context, continuation); scores nothing."""

    def __init__(self):
        super().__init__()
        self.requests = []

    def loglikelihood(self, requests, disable_tqdm=False):
        for r in requests:
            self.requests.append((r.task_name, r.doc_id) + tuple(r.args))
        return [(0.0, False)] * len(requests)

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError("no rolling loglikelihood in these tasks")

    def generate_until(self, requests, disable_tqdm=False):
        raise NotImplementedError("no generation in these tasks")


def model_shape(path):
    """(layers, d, body parameters, vocab) from the GGUF's metadata."""
    from gguf import GGUFReader
    f = GGUFReader(path).fields
    get = lambda k: int(f[k].contents())  # noqa: E731
    layers, d, ffn = get("llama.block_count"), get("llama.embedding_length"), get("llama.feed_forward_length")
    heads, kv = get("llama.attention.head_count"), get("llama.attention.head_count_kv")
    kv_dim = d // heads * kv
    body = layers * (2 * d * d + 2 * d * kv_dim + 3 * d * ffn)
    return layers, d, body, len(f["tokenizer.ggml.tokens"].contents())


def seq_flops(start, end, shape):
    """Body FLOPs of positions [start, end) of a sequence (position p attends p + 1 keys)."""
    layers, d, body, _ = shape
    n = end - start
    keys = (end * (end + 1) - start * (start + 1)) // 2  # sum of p + 1 over the positions
    return 2 * body * n + 4 * d * keys * layers


def plan_ours(reqs, shape, batch_tokens, min_stem):
    """Positions and FLOPs of focal-eval's scorer (engine/scorer.cc ScoreRequests) on reqs.

    Each distinct context once, its last row scoring every continuation's first token; then,
    per distinct request, the continuation but its last token; one LM-head row per continuation
    token. Contexts that begin with the same >= min_stem tokens form a cluster (sorted order; a
    context joins while n * l > (n - 1) * stem) whose stem runs once per batch; clusters are
    ordered by their longest request, cut into batches of whole groups within batch_tokens.
    """
    _, d, _, vocab = shape
    head = 2 * d * vocab
    groups = {}  # context -> its distinct continuations, first seen first
    for c, k in reqs:
        ks = groups.setdefault(tuple(c), [])
        if tuple(k) not in ks:
            ks.append(tuple(k))
    clusters, members, stem = [], [], 0
    for p in sorted(groups):
        if members and min_stem > 0:
            most, first = min(stem, len(p) - 1), members[0]
            l = 0
            while l < most and first[l] == p[l]:
                l += 1
            if l >= min_stem and len(members) * l > (len(members) - 1) * stem:
                members.append(p)
                stem = l
                continue
        if members:
            clusters.append((members, stem if len(members) > 1 else 0))
        members, stem = [p], len(p) - 1
    if members:
        clusters.append((members, stem if len(members) > 1 else 0))

    def length(p):  # the scorer's sort key: the context + its first continuation's feed
        return len(p) + len(groups[p][0]) - 1

    order = []  # (context, stem, cluster id), clusters by their longest member
    for cid, (ms, st) in sorted(enumerate(clusters), key=lambda e: -max(length(p) for p in e[1][0])):
        order += [(p, st, cid) for p in sorted(ms, key=lambda p: -length(p))]
    pos = flops = 0
    budget, prev = None, None
    for p, st, cid in order:
        tokens = len(p) - st + sum(len(k) - 1 for k in groups[p])
        new_stem = st > 0 and (budget is None or prev != cid)
        cost = tokens + (st if new_stem else 0)
        if budget is not None and budget + cost > batch_tokens:
            budget = None  # a new batch: its first group brings its stem
            new_stem = st > 0
            cost = tokens + (st if new_stem else 0)
        budget = cost if budget is None else budget + cost
        prev = cid
        pos += cost
        if new_stem:
            flops += seq_flops(0, st, shape)
        flops += seq_flops(st, len(p), shape)
        for k in groups[p]:
            flops += seq_flops(len(p), len(p) + len(k) - 1, shape) + len(k) * head
    return pos, flops


def count(reqs, shape, batch_size, ours_batch_tokens=4096, min_stem=16):
    _, d, _, vocab = shape
    head = 2 * d * vocab
    # lm-eval: one forward per distinct context + continuation[:-1], padded batches.
    inputs = sorted({tuple(c + k[:-1]) for c, k in reqs}, key=lambda t: (-len(t), t))
    lm_pos = lm_flops = 0
    for i in range(0, len(inputs), batch_size):
        batch = inputs[i:i + batch_size]
        width = len(batch[0])  # the longest comes first
        lm_pos += width * len(batch)
        lm_flops += len(batch) * (seq_flops(0, width, shape) + width * head)
    # focal-eval: its scorer's plan (engine/scorer.cc), replayed.
    ours_pos, ours_flops = plan_ours(reqs, shape, ours_batch_tokens, min_stem)
    return len(inputs), lm_pos, lm_flops, ours_pos, ours_flops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=ref.DEFAULT_MODEL, help="a llama-architecture .gguf file")
    ap.add_argument("--tasks", default=",".join(ref.TASKS))
    ap.add_argument("--limit", type=int, default=0, help="documents per task (0: full splits)")
    ap.add_argument("--batch-size", type=int, default=32, help="lm-eval's batch size")
    ap.add_argument("--batch-tokens", type=int, default=4096, help="focal-eval's --batch-tokens")
    ap.add_argument("--min-stem", type=int, default=16,
                    help="focal-eval's shared-stem threshold (ScorerOptions::min_stem_tokens; 0: off)")
    ap.add_argument("--shared-data", default=os.path.join(os.path.dirname(REPO), "shared", "data"))
    a = ap.parse_args()
    tasks = a.tasks.split(",")
    own = ref.model_tokenizer(a.model)
    if own is None:
        sys.exit(f"{a.model}: only GGUF files whose own tokenizer the reference builds "
                 "(tokenizer.ggml.pre = smollm) are supported")
    tok, encode_pair = own
    shape = model_shape(a.model)
    rec = Recorder()
    tm = TaskManager()
    specs, _ = ref.task_specs(tm, tasks, a.shared_data)
    lm_eval.simple_evaluate(model=rec, tasks=specs, task_manager=tm, limit=a.limit or None,
                            bootstrap_iters=0)
    print(f"{os.path.basename(a.model)}: {shape[0]} layers, d {shape[1]}, "
          f"{shape[2] / 1e6:.1f}M body parameters, vocab {shape[3]}; lm-eval batch {a.batch_size}; "
          f"{'full splits' if not a.limit else f'limit {a.limit}'}\n")
    print("| task | requests | lm-eval forwards | lm-eval positions (padded) | focal-eval positions "
          "| lm-eval GFLOP | focal-eval GFLOP | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    tot = [0, 0]
    for t in tasks:
        reqs = [encode_pair(tok, c, k, None) for task, _, c, k in rec.requests if task == t]
        n, lm_pos, lm_f, ours_pos, ours_f = count(reqs, shape, a.batch_size, a.batch_tokens, a.min_stem)
        tot[0] += lm_f
        tot[1] += ours_f
        print(f"| {t} | {len(reqs)} | {n} | {lm_pos:,} | {ours_pos:,} | {lm_f / 1e9:,.0f} | "
              f"{ours_f / 1e9:,.0f} | {lm_f / ours_f:.2f}x |")
    print(f"| all | | | | | {tot[0] / 1e9:,.0f} | {tot[1] / 1e9:,.0f} | {tot[0] / tot[1]:.2f}x |")


if __name__ == "__main__":
    main()
