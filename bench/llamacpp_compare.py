#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prompt processing (prefill) of SmolLM2-135M: focal-eval beside llama.cpp.

llama.cpp (through llama-cpp-python) is a reference only, never a dependency:
install it into its own venv (bench/requirements-llamacpp.txt) and run this
script with that venv's python. In ONE run, taking turns repetition by
repetition, both engines process the same token ids (512 and 2048 by default)
at the same thread count, on

  * an F32 GGUF of the default model's weights: the Q4_1 file dequantized
    tensor by tensor with the `gguf` package, same metadata and tokenizer,
    written to a cache directory (never the repository); equal precision;
  * the Q4_1 file itself: llama.cpp computes in Q4_1/Q8_0 (its quantized dot
    products), we widen the weights to F32 on load and compute in F32;
  * with --files bf16: a BF16 GGUF of the same dequantized weights (matrices
    in BF16, norms in F32): llama.cpp computes on it in its BF16 path, we in
    our BF16 mode (--precision bf16).

Two amounts of LM-head work, measured for both engines:
  * "last": logits for the last position only (llama.cpp's default; our
    scoring of a single continuation token);
  * "all": every position (llama.cpp: a logit flag on every token of the
    batch, i.e. logits_all; we compute the log-prob of each next token, as a
    perplexity/loglikelihood pass over the whole prompt does).

With --decode G, also one long-context sample's work per engine and length L:
a prefill of L - G prompt tokens ("last"), then G one-token decode steps on the same
cache (teacher-forced on fixed ids: the work of a greedy step), timed
separately.

Prints medians and ratios as Markdown, and optionally our per-op profile
(see bench/gguf_prefill_bench.cc). See bench/README.md.
"""
import argparse
import ctypes
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_MODEL = os.environ.get(
    "FOCAL_DEFAULT_MODEL",
    str(pathlib.Path.home() / ".cache/focal-eval/models/smollm2-135m-instruct/"
        "SmolLM2-135M-Instruct.Q4_1.gguf"))


def write_gguf(src: pathlib.Path, dst: pathlib.Path, bf16: bool = False) -> None:
    """Dequantizes every tensor of `src` to F32 (with `bf16`: the matrices then
    rounded to BF16, the 1-D norms kept in F32, as llama.cpp's converter
    writes a BF16 file); copies all metadata."""
    import gguf

    reader = gguf.GGUFReader(str(src))
    arch = reader.fields["general.architecture"].contents()
    tmp = dst.with_suffix(".tmp")
    writer = gguf.GGUFWriter(str(tmp), arch)  # writes general.architecture itself
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value = field.contents()
        if name == "general.file_type":
            value = int(gguf.LlamaFileType.MOSTLY_BF16 if bf16 else gguf.LlamaFileType.ALL_F32)
        sub_type = field.types[1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, field.types[0], sub_type)
    for t in reader.tensors:
        data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        # GGUF lists dimensions fastest first; numpy wants them slowest first.
        data = np.ascontiguousarray(data.reshape([int(d) for d in reversed(t.shape)]))
        if bf16 and data.ndim == 2:
            q = gguf.quants.quantize(data, gguf.GGMLQuantizationType.BF16)
            writer.add_tensor(t.name, q, raw_shape=q.shape,
                              raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            writer.add_tensor(t.name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.rename(dst)


class LlamaCpp:
    """One llama.cpp context; times llama_decode over a fresh KV cache."""

    def __init__(self, path, n_ctx, threads, flash_attn, extra_ctx=0):
        import llama_cpp

        self.lc = llama_cpp
        kwargs = dict(model_path=str(path), n_ctx=n_ctx + extra_ctx, n_batch=n_ctx, n_ubatch=n_ctx,
                      n_threads=threads, n_threads_batch=threads, verbose=False)
        if flash_attn is not None:
            kwargs["flash_attn"] = flash_attn
        self.llm = llama_cpp.Llama(**kwargs)
        self.ctx = self.llm._ctx.ctx
        self.batch = llama_cpp.llama_batch_init(n_ctx, 0, 1)

    def clear(self):
        lc = self.lc
        if hasattr(lc, "llama_memory_clear"):
            lc.llama_memory_clear(lc.llama_get_memory(self.ctx), True)
        else:
            lc.llama_kv_self_clear(self.ctx)

    def decode(self, tokens, n, steps):
        """Prefill tokens[:n] (last logits), then `steps` one-token decodes."""
        pre = self.run(tokens[:n], "last")
        b = self.batch
        t0 = time.perf_counter()
        for g in range(steps):
            b.token[0] = int(tokens[n + g])
            b.pos[0] = n + g
            b.n_seq_id[0] = 1
            b.seq_id[0][0] = 0
            b.logits[0] = 1
            b.n_tokens = 1
            if self.lc.llama_decode(self.ctx, b) != 0:
                raise RuntimeError("llama_decode failed in a decode step")
            self.lc.llama_synchronize(self.ctx)
            _ = self.lc.llama_get_logits_ith(self.ctx, 0)[0]
        return pre, time.perf_counter() - t0

    def run(self, tokens, mode):
        b = self.batch
        n = len(tokens)
        for i, t in enumerate(tokens):
            b.token[i] = int(t)
            b.pos[i] = i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if (mode == "all" or i == n - 1) else 0
        b.n_tokens = n
        self.clear()
        t0 = time.perf_counter()
        rc = self.lc.llama_decode(self.ctx, b)
        self.lc.llama_synchronize(self.ctx)
        s = time.perf_counter() - t0
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        # Touch the logits (an output row exists for every flagged token).
        logits = self.lc.llama_get_logits_ith(self.ctx, n - 1)
        _ = logits[0]
        return s


class Ours:
    """bench/gguf_prefill_bench as a subprocess, one command per pass."""

    def __init__(self, binary, tokens_file, threads, models):
        args = [str(binary), "--threads", str(threads), "--tokens", str(tokens_file)]
        args += [f"{k}={v}" for k, v in models.items()]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"gguf_prefill_bench did not start: {line!r}")
        self.sums = {}

    def run(self, label, mode, n):
        self.p.stdin.write(f"{label} {mode} {n}\n")
        self.p.stdin.flush()
        parts = self.p.stdout.readline().split()
        if len(parts) != 5:
            raise RuntimeError(f"gguf_prefill_bench failed on {label} {mode} {n}")
        self.sums[(label, mode, n)] = float(parts[4])
        return float(parts[3])

    def decode(self, label, n, steps):
        self.p.stdin.write(f"{label} decode {n} {steps}\n")
        self.p.stdin.flush()
        parts = self.p.stdout.readline().split()
        if len(parts) != 6:
            raise RuntimeError(f"gguf_prefill_bench failed on {label} decode {n} {steps}")
        return float(parts[4]), float(parts[5])

    def profile(self):
        self.p.stdin.write("profile\n")
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            if line.strip() == "end":
                break
            out.append(line.rstrip("\n"))
        return "\n".join(out)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help="the Q4_1 GGUF (default model)")
    ap.add_argument("--cache-dir", default=str(pathlib.Path.home() / ".cache/focal-eval/bench"),
                    help="where the F32 GGUF and the token ids are written")
    ap.add_argument("--binary", default=str(REPO / "build/bench/gguf_prefill_bench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lengths", default="512,2048")
    ap.add_argument("--modes", default="last,all")
    ap.add_argument("--files", default="f32,q4_1",
                    help="any of f32, q4_1, bf16 (a BF16 GGUF of the same weights, which "
                         "focal-eval runs with --precision bf16)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pause", type=float, default=0.3,
                    help="seconds between passes (llama.cpp's OpenMP threads spin after a call)")
    ap.add_argument("--decode", type=int, default=0,
                    help="also time a prefill plus this many decode steps per length "
                         "(one long-context sample; 0: off)")
    ap.add_argument("--flash-attn", choices=["default", "on", "off"], default="default")
    ap.add_argument("--profile", action="store_true",
                    help="also print our per-op profile and the GEMMs beside OpenBLAS")
    ap.add_argument("--only", choices=["both", "ours", "llama"], default="both",
                    help="run one engine only (profiling, checking)")
    args = ap.parse_args()

    src = pathlib.Path(args.model)
    if not src.exists():
        sys.exit(f"{src}: not found (scripts/fetch_default_model.sh fetches it)")
    cache = pathlib.Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    f32 = cache / (src.stem.replace(".Q4_1", "") + ".F32.gguf")
    bf16 = cache / (src.stem.replace(".Q4_1", "") + ".BF16.gguf")
    for path, is_bf16 in ((f32, False), (bf16, True)):
        if not path.exists() and path.stem.split(".")[-1].lower() in args.files.split(","):
            print(f"writing {path} ...", file=sys.stderr)
            write_gguf(src, path, is_bf16)
    files = {"f32": f32, "q4_1": src, "bf16": bf16}
    files = {k: files[k] for k in args.files.split(",")}
    lengths = [int(x) for x in args.lengths.split(",")]
    modes = args.modes.split(",")

    # The same token ids for both engines: fixed pseudo-random ids (the
    # content does not change the work of a prefill).
    n_max = max(lengths)
    rng = np.random.default_rng(0)
    tokens = rng.integers(3, 49152, size=n_max + args.decode + 1).tolist()
    tokens_file = cache / f"prefill_tokens_{len(tokens)}.txt"
    tokens_file.write_text(" ".join(map(str, tokens)) + "\n")

    import llama_cpp

    flash = {"default": None, "on": True, "off": False}[args.flash_attn]
    engines = {}
    if args.only != "ours":
        engines["llama"] = {k: LlamaCpp(p, n_max, args.threads, flash, args.decode)
                            for k, p in files.items()}
    # Ours runs the BF16 file in its BF16 mode (cpu:bf16), the others exactly.
    ours_files = {k: f"{p}@bf16" if k == "bf16" else p for k, p in files.items()}
    ours = (Ours(args.binary, tokens_file, args.threads, ours_files)
            if args.only != "llama" else None)

    times = {}  # (engine, file, mode, n) -> [s]
    cases = [(f, m, n) for n in lengths for f in files for m in modes]
    if args.decode:
        cases += [(f, "decode", n) for n in lengths for f in files]
    # Warm-up, not timed: one pass per engine and file (page cache, buffers).
    for f in files:
        if ours is not None:
            ours.run(f, "all", min(lengths))
        if "llama" in engines:
            engines["llama"][f].run(tokens[:min(lengths)], "all")
    for rep in range(1, args.repeats + 1):
        for f, m, n in cases:
            for eng in ("ours", "llama"):
                if (eng == "ours" and ours is None) or (eng == "llama" and "llama" not in engines):
                    continue
                time.sleep(args.pause)
                if m == "decode":
                    # A sample of n tokens: n - G prompt tokens, G generated.
                    pre, dec = (ours.decode(f, n - args.decode, args.decode) if eng == "ours"
                                else engines["llama"][f].decode(tokens, n - args.decode,
                                                                args.decode))
                    s = (pre, dec, pre + dec)
                elif eng == "ours":
                    s = ours.run(f, m, n)
                else:
                    s = engines["llama"][f].run(tokens[:n], m)
                if rep > 0:
                    times.setdefault((eng, f, m, n), []).append(s)
        print(f"round {rep} done", file=sys.stderr)
    profile = ours.profile() if (ours is not None and args.profile) else None
    # (the profile covers the warm-up passes too; its shares are what matter)

    def med(key):
        v = times.get(key)
        return statistics.median(v) if v else float("nan")

    print(f"SmolLM2-135M prefill, {args.threads} threads, median of {args.repeats} "
          f"(alternating), llama-cpp-python {llama_cpp.__version__}, {platform.processor() or platform.machine()}")
    print(f"flash_attn: {args.flash_attn}; llama.cpp system info: "
          f"{llama_cpp.llama_print_system_info().decode().strip()}\n")
    print("| weights | logits | tokens | focal-eval s | tok/s | llama.cpp s | tok/s | "
          "focal-eval / llama.cpp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for f, m, n in cases:
        if m == "decode":
            continue
        a, b = med(("ours", f, m, n)), med(("llama", f, m, n))
        print(f"| {f.upper()} | {m} | {n} | {a:.3f} | {n / a:.0f} | {b:.3f} | "
              f"{n / b:.0f} | {b / a:.2f} |")
    if args.decode:
        def med_i(key, i):
            v = times.get(key)
            return statistics.median(x[i] for x in v) if v else float("nan")

        g = args.decode
        print(f"\nOne long-context sample of LENGTH tokens: prefill of LENGTH - {g} (last "
              f"logits) + {g} decode steps\n")
        print("| weights | length | engine | prefill s | decode s | decode tok/s | sample s |")
        print("|---|---:|---|---:|---:|---:|---:|")
        for f, m, n in cases:
            if m != "decode":
                continue
            for eng, name in (("ours", "focal-eval"), ("llama", "llama.cpp")):
                if (eng, f, m, n) not in times:
                    continue
                p, d = med_i((eng, f, m, n), 0), med_i((eng, f, m, n), 1)
                print(f"| {f.upper()} | {n} | {name} | {p:.3f} | {d:.3f} | {g / d:.1f} | "
                      f"{med_i((eng, f, m, n), 2):.3f} |")
    if ours is not None:
        print("\nfocal-eval log-prob sums (the files should agree closely): " +
              ", ".join(f"{f} {m} {n}: {ours.sums[(f, m, n)]:.4f}" for f, m, n in cases
                        if m != "decode"))
    print("\nall timings (s):")
    for k, v in sorted(times.items()):
        print(f"  {k}: " + " ".join(
            "/".join(f"{y:.3f}" for y in x[:2]) if isinstance(x, tuple) else f"{x:.3f}"
            for x in v))
    if profile:
        print("\nfocal-eval profile over all timed and warm-up passes:\n")
        print(profile)
    if ours is not None:
        ours.close()


if __name__ == "__main__":
    main()
