#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Goldens for the GGUF reader and dequantizer, from the `gguf` package.

Writes, under tests/testdata/golden/gguf/:

- dequant.txt: for every type model/dequant.cc supports, two blocks of stored
  bytes (hex) and what gguf's own dequantizer makes of them: the SHA-256 of the
  float32 values (little-endian) and a few of them as bit patterns. The blocks
  come from gguf's quantizers where it has them (F16, BF16, Q8_0, Q4_0, Q4_1,
  Q5_0, Q5_1) applied to seeded pseudo-random data, else (Q4_K, Q5_K, Q6_K)
  from seeded random bytes with finite fp16 scales written in. The second block
  of each type has small values, so its fp16 scales are subnormal.
- oracle.txt: a small GGUF file written by gguf's GGUFWriter (hex), with
  metadata of every value type, a nested array and three tensors; the C++ test
  checks our reader against the values below.

gguf's dequantizers are numpy ports of ggml's reference dequantize_row_*
functions, checked bit for bit against ggml by gguf's own tests.

Rerun from the repo root (CPU, < 1 s):

    pip install -r tests/reference/requirements-gguf.txt
    python3 tests/reference/make_gguf_reference.py

A rerun rewrites both files byte for byte (fixed seeds).
"""

import hashlib
import importlib.metadata
import os
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as V

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "golden", "gguf")
HEADER = (f"# Written by tests/reference/make_gguf_reference.py (gguf {importlib.metadata.version('gguf')}, "
          f"numpy {np.__version__}); do not edit.\n")

QUANTIZED = [Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1]
RAW_K = [Q.Q4_K, Q.Q5_K, Q.Q6_K]
# Byte offsets of the fp16 scales (d, then dmin when there is one) in a block.
K_SCALE_OFFSETS = {Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}


def f32_bits(x):
    return f"{np.float32(x).view(np.uint32):08x}"


def block_data(rng, n, block):
    """n values in blocks: the first block ~N(0, 1), the rest ~1e-4 (their
    fp16 scales are subnormal)."""
    x = rng.standard_normal(n).astype(np.float32)
    x[block:] *= np.float32(1e-4)
    return x


def stored_bytes(rng, qtype):
    block, type_size = gguf.GGML_QUANT_SIZES[qtype]
    if qtype == Q.F32:
        x = rng.standard_normal(16).astype(np.float32)
        x[:5] = [0.0, -0.0, np.inf, 1e-40, -3.4e38]  # 1e-40: an f32 subnormal
        return x.tobytes()
    if qtype == Q.F16:
        x = rng.standard_normal(16).astype(np.float16)
        x[:7] = [0.0, -0.0, np.inf, -np.inf, 6e-8, 65504, np.nan]  # 6e-8: subnormal
        return x.tobytes()
    if qtype == Q.BF16:
        x = rng.standard_normal(16).astype(np.float32)
        x[:5] = [0.0, -0.0, np.inf, 1e-40, 3.0e38]
        return gguf.quants.quantize(x.reshape(1, 16), qtype).tobytes()
    if qtype in QUANTIZED:
        x = block_data(rng, 2 * block, block)
        return gguf.quants.quantize(x.reshape(1, -1), qtype).tobytes()
    # K-quants: gguf has no quantizer; random quants and scales, finite fp16
    # super-block scales (a normal one, then subnormal ones).
    raw = bytearray(rng.integers(0, 256, size=2 * type_size, dtype=np.uint8).tobytes())
    scales = [np.float16(0.0123), np.float16(-0.0071), np.float16(3.0e-6), np.float16(-5.0e-7)]
    k = 0
    for b in range(2):
        for off in K_SCALE_OFFSETS[qtype]:
            raw[b * type_size + off: b * type_size + off + 2] = scales[k].tobytes()
            k += 1
    return bytes(raw)


def dequant_golden(rng):
    lines = [HEADER,
             "# type NAME GGML_ID N_VALUES / blocks HEX / sha256 OF_FLOAT32_LE / sample INDEX F32_BITS\n"]
    for qtype in [Q.F32, Q.F16, Q.BF16] + QUANTIZED + RAW_K:
        raw = stored_bytes(rng, qtype)
        y = gguf.quants.dequantize(np.frombuffer(raw, dtype=np.uint8).reshape(1, -1), qtype)
        y = np.asarray(y, dtype=np.float32).reshape(-1)
        block, type_size = gguf.GGML_QUANT_SIZES[qtype]
        assert len(raw) == y.size // block * type_size, qtype.name
        lines.append(f"type {qtype.name} {int(qtype)} {y.size}\n")
        lines.append(f"blocks {raw.hex()}\n")
        lines.append(f"sha256 {hashlib.sha256(y.astype('<f4').tobytes()).hexdigest()}\n")
        for i in sorted({0, 1, y.size // 2 - 1, y.size // 2 + 3, y.size - 1}):
            lines.append(f"sample {i} {f32_bits(y[i])}\n")
    return "".join(lines)


def oracle_golden(rng):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "oracle.gguf")
        w = gguf.GGUFWriter(path, "llama")
        w.add_uint8("test.u8", 200)
        w.add_int8("test.i8", -100)
        w.add_uint16("test.u16", 60000)
        w.add_int16("test.i16", -30000)
        w.add_uint32("test.u32", 4000000000)
        w.add_int32("test.i32", -2000000000)
        w.add_uint64("test.u64", 2**63 + 5)
        w.add_int64("test.i64", -(2**62))
        w.add_float32("test.f32", 0.15625)
        w.add_float64("test.f64", 1e100)
        w.add_bool("test.bool", True)
        w.add_string("test.string", "h\u00e9llo")
        w.add_key_value("test.array.i32", [1, -2, 3], V.ARRAY, sub_type=V.INT32)
        w.add_key_value("test.array.u8", [7, 8], V.ARRAY, sub_type=V.UINT8)
        w.add_key_value("test.array.f32", [0.5, -1.25], V.ARRAY, sub_type=V.FLOAT32)
        w.add_key_value("test.array.bool", [True, False], V.ARRAY, sub_type=V.BOOL)
        w.add_key_value("test.array.str", ["a", "", "ccc"], V.ARRAY, sub_type=V.STRING)
        w.add_key_value("test.array.nested", [["x", "y"], ["z"]], V.ARRAY, sub_type=V.ARRAY)
        w.add_tensor("t.f32", np.arange(6, dtype=np.float32).reshape(2, 3))
        w.add_tensor("t.f16", np.array([1.5, -2.0, 0.25, 65504], dtype=np.float16))
        q8 = rng.standard_normal(32).astype(np.float32)
        q8_bytes = gguf.quants.quantize(q8.reshape(1, 32), Q.Q8_0)
        w.add_tensor("t.q8", q8_bytes, raw_dtype=Q.Q8_0)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        data = open(path, "rb").read()
    y = gguf.quants.dequantize(q8_bytes, Q.Q8_0).astype("<f4").reshape(-1)
    lines = [HEADER,
             "# A GGUF file written by gguf.GGUFWriter (hex, 32 bytes a line); the values are\n",
             "# listed in make_gguf_reference.py. q8_sha256: SHA-256 of t.q8 dequantized.\n",
             f"q8_sha256 {hashlib.sha256(y.tobytes()).hexdigest()}\n"]
    for i in range(0, len(data), 32):
        lines.append(f"hex {data[i:i + 32].hex()}\n")
    return "".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20250807)
    outputs = {"dequant.txt": dequant_golden(rng), "oracle.txt": oracle_golden(rng)}
    for name, text in outputs.items():
        with open(os.path.join(OUT, name), "w", newline="\n") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(os.path.join(OUT, name))} ({len(text)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
