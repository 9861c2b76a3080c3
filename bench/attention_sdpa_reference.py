#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch scaled_dot_product_attention on the shapes of bench/attention_bench.

Causal BF16 forward, 32 query heads, 8 KV heads (GQA), head dims 128 and 64,
one 16K-token sequence and 8 x 2K sequences (batched: SDPA has no packed
layout), with the same explicit softmax scale as the C++ benchmark. Timed with
CUDA events, median of --repeats runs after one warm-up. TFLOP/s use the
FlashAttention convention (4 * S^2 * H * D per sequence, halved for causal),
the formula attention_bench uses. Run on the GPU machine by tests/device/run.sh.
"""
import argparse
import statistics

import torch
import torch.nn.functional as F


def run(batch, seq, heads, kv_heads, head_dim, repeats):
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(batch, kv_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(batch, kv_heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
    scale = 1.0 / (0.4 * head_dim ** 0.5)

    def call():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=True)

    call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    s = statistics.median(times)
    pairs = seq * (seq + 1) / 2
    flops = 4.0 * pairs * heads * head_dim * batch
    return s, flops / s / 1e12


def dense_bf16_gemm_tflops(repeats, n=8192):
    """The GPU's measured dense BF16 matrix rate: the ceiling beside attention's."""
    g = torch.Generator(device="cuda").manual_seed(2)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return 2.0 * n ** 3 / statistics.median(times) / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--sweep", default="",
                    help="comma-separated lengths: one-sequence cases at d=128 and d=64")
    args = ap.parse_args()
    t = args.tokens
    print(f"torch {torch.__version__} SDPA on {torch.cuda.get_device_name()}: causal bf16, "
          f"median of {args.repeats} runs\n")
    print("| case | tokens | heads (kv) | head dim | ms | TFLOP/s |")
    print("|---|---:|---:|---:|---:|---:|")
    results = []
    cases = [(f"prefill_1x{t // 1024}K_d128_bf16", 1, t, 128),
             (f"prefill_1x{t // 1024}K_d64_bf16", 1, t, 64),
             ("prefill_8x2K_d128_bf16", 8, t // 8, 128)]
    for n in (int(x) for x in args.sweep.split(",") if x):
        cases += [(f"prefill_1x{n // 1024}K_d{d}_bf16", 1, n, d) for d in (128, 64)]
    for name, batch, seq, d in cases:
        s, tf = run(batch, seq, 32, 8, d, args.repeats)
        print(f"| {name} | {batch * seq} | 32 (8) | {d} | {s * 1e3:.3f} | {tf:.1f} |")
        results.append((name, tf))
    gemm = dense_bf16_gemm_tflops(args.repeats)
    print(f"\ndense BF16 GEMM (torch.matmul, 8192 x 8192 x 8192, random data): {gemm:.1f} TFLOP/s")
    print()
    for name, tf in results:
        print(f"RESULT sdpa_tflops_{name} {tf:.2f}")
    print(f"RESULT gemm_bf16_tflops {gemm:.2f}")


if __name__ == "__main__":
    main()
