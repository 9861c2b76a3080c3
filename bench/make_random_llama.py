#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a random LLaMA checkpoint in HF layout with BF16 weights (sharded
safetensors + index, config.json, a tokenizer copied from --tokenizer), for
memory and speed benchmarks of models too large to widen to F32 on this
machine: the default shape is Llama 2 7B's (6.74 billion parameters, 13.5 GB).
Weights are N(0, 0.02) (norms 1), so scores are meaningless; the numbers it
serves are peak memory, load time and tokens/s.

    python3 bench/make_random_llama.py --out /tmp/llama7b-bf16 \\
        --tokenizer ../shared/models/llama2-tokenizer/tokenizer.model

Needs only numpy. Nothing it writes belongs in the repository.
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np


def bf16(rng, shape, std):
    """Normal(0, std) values as BF16 bit patterns (uint16, truncated)."""
    x = rng.standard_normal(shape, dtype=np.float32)
    x *= std
    return (x.view(np.uint32) >> 16).astype(np.uint16)


def write_shard(path, tensors):
    header, offset = {}, 0
    for name, arr in tensors:
        header[name] = {"dtype": "BF16", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for _, arr in tensors:
            f.write(arr.tobytes())
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", required=True, help="a sentencepiece tokenizer.model")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--intermediate", type=int, default=11008)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--layers-per-shard", type=int, default=4)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(1)
    C, F, D = a.hidden, a.intermediate, a.hidden // a.heads
    ones = (np.ones(C, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    weight_map, shards = {}, []
    groups = [list(range(i, min(i + a.layers_per_shard, a.layers)))
              for i in range(0, a.layers, a.layers_per_shard)]
    for gi, group in enumerate([None] + groups):
        name = f"model-{gi + 1:05d}-of-{len(groups) + 1:05d}.safetensors"
        tensors = []
        if group is None:  # embeddings, final norm and head in the first shard
            tensors = [("model.embed_tokens.weight", bf16(rng, (a.vocab, C), 0.02)),
                       ("model.norm.weight", ones),
                       ("lm_head.weight", bf16(rng, (a.vocab, C), 0.02))]
        else:
            for l in group:
                p = f"model.layers.{l}."
                tensors += [
                    (p + "input_layernorm.weight", ones),
                    (p + "self_attn.q_proj.weight", bf16(rng, (a.heads * D, C), 0.02)),
                    (p + "self_attn.k_proj.weight", bf16(rng, (a.kv_heads * D, C), 0.02)),
                    (p + "self_attn.v_proj.weight", bf16(rng, (a.kv_heads * D, C), 0.02)),
                    (p + "self_attn.o_proj.weight", bf16(rng, (C, a.heads * D), 0.02)),
                    (p + "post_attention_layernorm.weight", ones),
                    (p + "mlp.gate_proj.weight", bf16(rng, (F, C), 0.02)),
                    (p + "mlp.up_proj.weight", bf16(rng, (F, C), 0.02)),
                    (p + "mlp.down_proj.weight", bf16(rng, (C, F), 0.02)),
                ]
        write_shard(os.path.join(a.out, name), tensors)
        for t, _ in tensors:
            weight_map[t] = name
        shards.append(name)
        print(f"wrote {name}", flush=True)
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=1)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": C, "intermediate_size": F, "num_hidden_layers": a.layers,
        "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads,
        "vocab_size": a.vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    shutil.copy(a.tokenizer, os.path.join(a.out, "tokenizer.model"))


if __name__ == "__main__":
    main()
