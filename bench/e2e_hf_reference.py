#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""HF transformers on the workload of bench/e2e_score_bench.

A Llama-3.2-1B-shaped LlamaForCausalLM with random BF16 weights (SDPA
attention, eager PyTorch, as lm-eval's HF backend runs it), a batch of
8 x 2048 tokens (equal lengths: no padding needed), log-probabilities of the
next token at every row, or at the last 32 rows of each sequence
(logits_to_keep). Tokens/s and MFU with the FLOP count e2e_score_bench uses.
Timed with CUDA events, median of --repeats runs after one warm-up. Run on the
GPU machine by tests/device/run.sh.
"""
import argparse
import statistics

import torch
from transformers import LlamaConfig, LlamaForCausalLM

C, F, L, H, HKV, D, V = 2048, 8192, 16, 32, 8, 64, 128256


def flops(seqs, length, scored):
    qd, kvd = H * D, HKV * D
    t = seqs * length
    linear = 2.0 * t * L * (2 * qd * C + 2 * kvd * C + 3 * F * C)
    attn = 4.0 * L * H * D * seqs * (length * (length + 1) / 2)
    head = 2.0 * C * V * seqs * scored
    return linear + attn + head


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seqs", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--peak-tflops", type=float, default=989.0)
    args = ap.parse_args()
    config = LlamaConfig(hidden_size=C, intermediate_size=F, num_hidden_layers=L,
                         num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                         vocab_size=V, max_position_embeddings=131072, rms_norm_eps=1e-5,
                         rope_theta=500000.0, tie_word_embeddings=True)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config)
    model.eval()
    n_params = sum(p.numel() for p in model.parameters())
    g = torch.Generator(device="cuda").manual_seed(3)
    ids = torch.randint(3, V, (args.seqs, args.seq_len), device="cuda", generator=g)
    targets = torch.roll(ids, -1, dims=1)
    print(f"HF transformers reference on {torch.cuda.get_device_name()}: Llama-3.2-1B shape, "
          f"random BF16 weights ({n_params / 1e9:.2f}B parameters), {args.seqs} x {args.seq_len} "
          f"tokens per forward, SDPA, median of {args.repeats} runs\n")
    print("| scored rows | tokens | median s | tokens/s | TFLOP/s | MFU |")
    print("|---|---:|---:|---:|---:|---:|")
    results = []
    for scored in (args.seq_len, 32):
        def call():
            with torch.inference_mode():
                keep = 0 if scored == args.seq_len else scored
                logits = model(input_ids=ids, logits_to_keep=keep).logits
                lp = torch.log_softmax(logits.float(), dim=-1)
                tg = targets[:, -logits.shape[1]:]
                return lp.gather(-1, tg.unsqueeze(-1)).squeeze(-1), lp.argmax(-1)

        call()
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        s = statistics.median(times)
        t = args.seqs * args.seq_len
        tf = flops(args.seqs, args.seq_len, scored) / s / 1e12
        label = "all" if scored == args.seq_len else "last 32 per sequence"
        print(f"| {label} | {t} | {s:.4f} | {t / s:.0f} | {tf:.1f} | {100 * tf / args.peak_tflops:.1f}% |")
        tag = "all_rows" if scored == args.seq_len else "last32"
        results += [(f"hf_tokens_per_s_{tag}", t / s), (f"hf_mfu_percent_{tag}", 100 * tf / args.peak_tflops)]
    print()
    for name, v in results:
        print(f"RESULT {name} {v:.2f}")


if __name__ == "__main__":
    main()
