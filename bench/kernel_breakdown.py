#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a forward pass's GPU time goes, from Nsight Compute's per-kernel durations.

Reads the CSV that `ncu --csv --print-units base --metrics gpu__time_duration.sum
--log-file FILE PROGRAM ...` writes (one row per kernel launch) and prints the time per
forward call by kind of kernel (GEMM, attention, the casts, norms, ...), against the
forward's wall time when given. Run on the GPU machine by tests/device/run.sh (PROFILE=1)
on bench/e2e_score_bench.

  kernel_breakdown.py FILE.csv --forwards 2 [--wall-ms 136] [--label NAME]
"""
import argparse
import csv
import re
import sys

# First match wins; names are matched anywhere in ncu's (demangled) kernel name.
KINDS = [
    ("GEMM (cuBLASLt)", r"gemm|xmma|cutlass|nvjet|cublas"),
    ("attention", r"Attn\w*Kernel"),
    ("cast F32 -> BF16 (GEMM inputs)", r"CastRowsToBf16Kernel"),
    ("convert (q, K/V into BF16)", r"ConvertKernel"),
    ("RMSNorm", r"RmsNormKernel"),
    ("RoPE", r"RopeKernel"),
    ("SwiGLU", r"SwiGluKernel"),
    ("residual add", r"AddKernel"),
    ("log-softmax + gather", r"LogSoftmaxGatherKernel"),
    ("embedding", r"EmbedKernel"),
    ("row gather (LM-head rows)", r"GatherRowsKernel"),
    ("row dot (learned focal)", r"RowDotKernel"),
]


def read(path):
    """(kernel name, nanoseconds) per launch."""
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own "==PROF==" lines are not CSV
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}
        if unit not in scale:
            sys.exit(f"{path}: unknown unit {unit!r}")
        rows.append((r["Kernel Name"], value * scale[unit]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--forwards", type=int, required=True, help="forward calls in the capture")
    ap.add_argument("--wall-ms", type=float, help="one forward's wall time, measured unprofiled")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    rows = read(args.csv)
    if not rows:
        sys.exit(f"{args.csv}: no gpu__time_duration rows")
    totals, counts = {}, {}
    for name, ns in rows:
        kind = next((k for k, rx in KINDS if re.search(rx, name, re.I)), "other: " + name[:60])
        totals[kind] = totals.get(kind, 0.0) + ns
        counts[kind] = counts.get(kind, 0) + 1
    n = args.forwards
    all_ms = sum(totals.values()) / 1e6 / n
    print(f"{args.label}: {len(rows)} kernel launches over {n} forward calls, "
          f"{all_ms:.2f} ms of kernel time per forward")
    print()
    print("| kernels | launches per forward | ms per forward | share of kernel time |")
    print("|---|---:|---:|---:|")
    for kind, ns in sorted(totals.items(), key=lambda kv: -kv[1]):
        ms = ns / 1e6 / n
        print(f"| {kind} | {counts[kind] / n:.0f} | {ms:.2f} | {100 * ms / all_ms:.1f}% |")
    if args.wall_ms:
        print(f"| (wall time not in any kernel: launch gaps, host work, copies) | | "
              f"{args.wall_ms - all_ms:.2f} | {100 * (args.wall_ms - all_ms) / args.wall_ms:.1f}% "
              f"of wall |")
    print()
    print(f"RESULT kernel_ms_per_forward_{args.label} {all_ms:.3f}")


if __name__ == "__main__":
    main()
