#!/usr/bin/env python3
"""Writes the tiny test checkpoints and the HF-transformers golden log-probabilities.

Run from anywhere:  python3 tests/reference/make_reference.py
  -> tests/testdata/models/<name>/          random-init tiny checkpoints (config.json + safetensors)
  -> tests/testdata/golden/forward/<name>.txt  per-position log-probs from HF transformers (fp32, eager)
  -> stories260K goldens too, if build/testdata/stories260K/ exists (the
     build converts it from ../shared with the C++ converter; FOCAL_STORIES260K_DIR overrides).
Or for one existing HF directory:
     python3 tests/reference/make_reference.py --model-dir DIR --name NAME

Everything is seeded; a second run rewrites every file byte for byte. The focal-attention
variants (docs: focal-attention.md) are not in transformers; they are emulated by overriding
`self_attn.scaling`, the factor eager attention multiplies q.k by (checked by self_check()).
"""
import argparse
import copy
import json
import math
import os
import random
import shutil
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never touch the hub
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "tests", "testdata", "models")
GOLDEN = os.path.join(REPO, "tests", "testdata", "golden", "forward")
# Converted from ../shared by the build (cmake --build build --target stories260K_model).
STORIES = os.environ.get("FOCAL_STORIES260K_DIR", os.path.join(REPO, "build", "testdata", "stories260K"))
SEQ_LENGTHS = (1, 6, 23, 57)
SEQ_SEED = 1234
BOS = 1

torch.set_num_threads(1)  # one thread: fixed reduction order, so reruns are byte-identical
torch.use_deterministic_algorithms(True)
transformers.logging.set_verbosity_error()  # focal_tau.* are "unexpected keys" for HF: expected
transformers.logging.disable_progress_bar()


def llama_config(hidden, heads, kv, layers, inter, tied, **extra):
    # Written by hand in the classic (transformers 4.x, hub) key layout: rope_theta + rope_scaling +
    # torch_dtype. transformers 5 save_pretrained would write "rope_parameters"/"dtype" instead.
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": 320, "hidden_size": hidden, "intermediate_size": inter,
        "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv,
        "hidden_act": "silu", "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "rope_scaling": None, "tie_word_embeddings": tied,
        "attention_bias": False, "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2,
        "torch_dtype": "float32",
    }
    cfg.update(extra)
    return cfg


GQA = llama_config(64, 4, 2, 2, 172, False)
# name -> (config, seed for the weights, stored dtype, number of shards)
BASE_MODELS = {
    "gqa_untied": (GQA, 101, torch.float32, 1),
    # original_max_position_embeddings 64 (not 32): with head_dim 12 and theta 5e5 the wavelengths
    # are 6.3, 56, 499, ...; 64 puts one in each llama3 band (kept / smoothed / divided by factor).
    "tied_theta_llama3": (llama_config(
        48, 4, 4, 2, 96, True, rope_theta=500000.0, rms_norm_eps=1e-6,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
        102, torch.float32, 1),
    "bf16_headdim_sharded": (llama_config(64, 4, 2, 2, 128, False, head_dim=24,
                                          torch_dtype="bfloat16"), 103, torch.bfloat16, 2),
    "f16_linear_rope": (llama_config(32, 2, 1, 3, 64, True, torch_dtype="float16",
                                     rope_scaling={"rope_type": "linear", "type": "linear",
                                                   "factor": 2.0}), 104, torch.float16, 1),
    "mistral": (dict(llama_config(32, 4, 2, 2, 64, False), architectures=["MistralForCausalLM"],
                     model_type="mistral", sliding_window=None), 105, torch.float32, 1),
    # Head dims 64 and 128: the shapes the CUDA tensor-core attention kernel takes (BF16 storage
    # keeps them small in the repository).
    "headdim64_bf16": (llama_config(128, 2, 1, 2, 256, False, torch_dtype="bfloat16"),
                       106, torch.bfloat16, 1),
    "headdim128_bf16": (llama_config(256, 2, 1, 1, 256, True, torch_dtype="bfloat16"),
                        107, torch.bfloat16, 1),
}
# Focal variants reuse the gqa_untied weights; learned ones add focal_tau tensors (calibrated below).
FOCAL_MODELS = {
    "focal_const": {"mode": "constant", "temperature": 0.4},
    "focal_const_per_layer": {"mode": "constant", "temperature": [0.5, 0.3]},
    "focal_learned_token": {"mode": "learned", "tau_min": 2.5, "tau_max": 6.0, "reduction": "token"},
    "focal_learned_mean": {"mode": "learned", "tau_min": 2.5, "reduction": "sequence_mean"},
}


def random_sequences(vocab, lengths=SEQ_LENGTHS, seed=SEQ_SEED):
    rng = random.Random(seed)  # Python's Mersenne Twister: stable across versions
    return [[BOS] + [rng.randrange(3, vocab) for _ in range(n - 1)] for n in lengths]


def init_weights(model, seed):
    # HF's default std 0.02 gives near-uniform logits at these widths; use O(1) activations instead.
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():  # named_parameters skips the tied lm_head
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif "embed_tokens" in name:
                p.normal_(0.0, 0.3)
            else:  # Linear [out, in]: std 1.5/sqrt(in) (0.11..0.27 here) keeps logits ~1.5-2 std
                p.normal_(0.0, 1.5 / math.sqrt(p.shape[1]))


def save_checkpoint(name, cfg, tensors, dtype, shards=1):
    out = os.path.join(MODELS, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(cfg, indent=2) + "\n")
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in tensors.items()}
    if shards == 1:
        save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        return
    # HF sharded layout: layer 0 and below in shard 1, the rest in shard 2, plus the index.
    files = ["model-%05d-of-%05d.safetensors" % (i + 1, shards) for i in range(shards)]
    weight_map = {k: files[0 if ("embed_tokens" in k or ".layers.0." in k) else 1]
                  for k in sorted(tensors)}
    for fname in files:
        save_file({k: tensors[k] for k in weight_map if weight_map[k] == fname},
                  os.path.join(out, fname), metadata={"format": "pt"})
    index = {"metadata": {"total_size": sum(t.numel() * t.element_size() for t in tensors.values())},
             "weight_map": weight_map}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2) + "\n")


def load_model(model_dir):
    """The HF reference: float32 (bf16/f16 weights are upcast exactly), eager attention."""
    model, info = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    assert not info["missing_keys"], (model_dir, info["missing_keys"])
    assert all(".focal_tau." in k for k in info["unexpected_keys"]), info["unexpected_keys"]
    return model.eval()


class LearnedTau:
    """Forward pre-hook on self_attn: its hidden_states input IS the input_layernorm output x.
    Sets module.scaling = 1/tau, shaped [B,1,T,1] (one tau per query token) or [B,1,1,1]
    (sequence_mean); eager attention computes (q @ k^T) * scaling, so tau replaces sqrt(d)."""

    def __init__(self, w, b, tau_min, tau_max, reduction):
        self.w, self.b, self.tau_min, self.tau_max, self.reduction = w, b, tau_min, tau_max, reduction
        self.taus, self.inputs = [], []  # recorded per call, for clip statistics / calibration

    def __call__(self, module, args, kwargs):
        x = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        self.inputs.append(x[0].detach())
        if self.w is None:  # layer not calibrated yet: leave the base scaling
            return None
        raw = x.float() @ self.w + self.b  # [B, T]
        if self.reduction == "sequence_mean":
            raw = raw.mean(dim=-1, keepdim=True)  # one tau per sequence (not causal, by design)
        tau = raw.clamp(min=self.tau_min, max=self.tau_max)
        self.taus.append((raw[0].detach(), tau[0].detach()))
        module.scaling = (1.0 / tau)[:, None, :, None]
        return None


def apply_focal(model, focal, tensors=None):
    """Patches model in place for a "focal_attention" config; returns the LearnedTau hooks."""
    attns = [layer.self_attn for layer in model.model.layers]
    if focal is None:
        return []
    if focal["mode"] == "constant":
        t = focal["temperature"]
        ts = t if isinstance(t, list) else [t] * len(attns)
        for a, t_l in zip(attns, ts):
            a.scaling = 1.0 / (t_l * math.sqrt(a.head_dim))  # t multiplies sqrt(d)
        return []
    hooks = []
    for l, a in enumerate(attns):
        w = b = None
        if tensors is not None:
            w = tensors["model.layers.%d.self_attn.focal_tau.weight" % l].float()
            b = tensors.get("model.layers.%d.self_attn.focal_tau.bias" % l, torch.zeros(1)).float()
        h = LearnedTau(w, b, focal["tau_min"], focal.get("tau_max"), focal.get("reduction", "token"))
        a.register_forward_pre_hook(h, with_kwargs=True)
        hooks.append(h)
    return hooks


@torch.no_grad()
def run(model, tokens):
    return model(torch.tensor([tokens])).logits[0].float()


@torch.no_grad()
def calibrate_learned(focal, seqs, seed):
    """Chooses focal_tau w, b layer by layer (layer l sees layer < l already focal) so tau spreads
    over ~1.4..7.1 (token) and hits both clip bounds, or so per-sequence means straddle tau_min."""
    model = load_model(os.path.join(MODELS, "gqa_untied"))
    hooks = apply_focal(model, focal)
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for l, h in enumerate(hooks):
        for hk in hooks:
            hk.inputs.clear()
        for s in seqs:
            run(model, s)
        xs = h.inputs  # one [T, C] per sequence
        w0 = torch.randn(xs[0].shape[-1], generator=gen)
        proj = torch.cat([x @ w0 for x in xs])
        w = w0 * (1.9 / proj.std())  # token tau: mean 4.25, std 1.9
        b = torch.tensor([4.25]) - proj.mean() * (1.9 / proj.std())
        if focal["reduction"] == "sequence_mean":
            means = torch.stack([(x @ w + b).mean() for x in xs])
            mid = means.sort().values[len(means) // 2 - 1:len(means) // 2 + 1].mean()
            b = b + focal["tau_min"] - mid  # about half the sequences clip low
            if l == 1:  # layer 1 has no bias tensor: fold b into w along the mean input direction
                xbar = torch.cat(xs).mean(0)
                w, b = w + b * xbar / xbar.dot(xbar), None
        h.w, h.b = w, (b if b is not None else torch.zeros(1))
        out["model.layers.%d.self_attn.focal_tau.weight" % l] = w.clone()
        if b is not None:
            out["model.layers.%d.self_attn.focal_tau.bias" % l] = b.clone()
    return out


def golden_text(model, seqs, model_path):
    lines = ["# focal-eval reference log-probabilities; generated by tests/reference/make_reference.py",
             "# transformers %s torch %s; model %s" % (transformers.__version__,
                                                      torch.__version__.split("+")[0], model_path)]
    min_gap = float("inf")  # smallest top1-top2 logit gap: argmax near-ties would make tests flaky
    for n, toks in enumerate(seqs):
        logits = run(model, toks)
        logp = torch.log_softmax(logits, dim=-1)
        top2 = logits.topk(2, dim=-1).values
        min_gap = min(min_gap, float((top2[:, 0] - top2[:, 1]).min()))
        lines += ["sequence %d" % n, "tokens " + " ".join(map(str, toks))]
        for i in range(1, len(toks)):
            lines.append("logprob %d %d %.9g %d" % (i, toks[i], float(logp[i - 1, toks[i]]),
                                                     int(logits[i - 1].argmax())))
        lines += ["final_argmax %d" % int(logits[-1].argmax()), "end"]
    return "\n".join(lines) + "\n", min_gap


def write_golden(name, model, seqs, model_dir):
    rel = os.path.relpath(os.path.abspath(model_dir), REPO)
    text, gap = golden_text(model, seqs, os.path.abspath(model_dir) if rel.startswith("..") else rel)
    os.makedirs(GOLDEN, exist_ok=True)
    with open(os.path.join(GOLDEN, name + ".txt"), "w") as f:
        f.write(text)
    print("  %-24s golden written; min top1-top2 logit gap %.3g" % (name, gap))


def read_tensors(model_dir):
    tensors = {}
    for f in sorted(os.listdir(model_dir)):
        if f.endswith(".safetensors"):
            tensors.update(load_file(os.path.join(model_dir, f)))
    return tensors


@torch.no_grad()
def self_check(seqs):
    """Invariants from docs/focal-attention.md, checked on HF itself: the patch is live and exact."""
    d = os.path.join(MODELS, "gqa_untied")
    base = [run(load_model(d), s) for s in seqs]
    def logits_with(focal, tensors=None):
        m = load_model(d)
        apply_focal(m, focal, tensors)
        return [run(m, s) for s in seqs]
    same = lambda a, b: all(torch.equal(x, y) for x, y in zip(a, b))  # noqa: E731
    assert same(base, logits_with({"mode": "constant", "temperature": 1.0})), "t=1 != base"
    hd = load_model(d).model.layers[0].self_attn.head_dim
    pinned = {k: v for l in range(2) for k, v in (
        ("model.layers.%d.self_attn.focal_tau.weight" % l, torch.zeros(64)),
        ("model.layers.%d.self_attn.focal_tau.bias" % l, torch.tensor([math.sqrt(hd)])))}
    for red in ("token", "sequence_mean"):
        got = logits_with({"mode": "learned", "tau_min": 1e-3, "tau_max": 1e6, "reduction": red}, pinned)
        assert same(base, got), "pinned learned tau != base (%s)" % red
    diff = max(float((a - b).abs().max()) for a, b in zip(base, logits_with(FOCAL_MODELS["focal_const"])))
    assert diff > 1e-2, "t=0.4 did not change the logits: scale patch is not applied"
    print("self-check ok: t=1 and pinned tau are bit-identical to base; t=0.4 moves logits by %.3g" % diff)


# Greedy-generation goldens (token reduction only: HF's generate would take a
# sequence_mean over the new token alone, which is not the harness's definition).
GREEDY_MODELS = ("gqa_untied", "tied_theta_llama3", "focal_learned_token", "bf16_headdim_sharded")


@torch.no_grad()
def write_greedy_golden(name, prompts, new_tokens=12):
    d = os.path.join(MODELS, name)
    model = load_model(d)
    focal = FOCAL_MODELS.get(name)
    apply_focal(model, focal, read_tensors(d) if focal else None)
    lines = ["# HF transformers greedy decoding (generate, do_sample=False, KV cache); generated by "
             "tests/reference/make_reference.py"]
    for p in prompts:
        out = model.generate(torch.tensor([p]), max_new_tokens=new_tokens, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
        lines += ["prompt " + " ".join(map(str, p)),
                  "greedy " + " ".join(map(str, out[0, len(p):].tolist()))]
    with open(os.path.join(GOLDEN, name + "_greedy.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("  %-24s greedy golden written" % (name + "_greedy"))


def build_all():
    seqs = random_sequences(320)
    for name, (cfg, seed, dtype, shards) in BASE_MODELS.items():
        # deepcopy: transformers 5 writes rope_theta into the rope_scaling dict it is given
        cfg_obj = AutoConfig.for_model(**copy.deepcopy({k: v for k, v in cfg.items() if k != "architectures"}))
        model = getattr(transformers, cfg["architectures"][0])(cfg_obj)
        init_weights(model, seed)
        sd = model.state_dict()
        if cfg["tie_word_embeddings"]:
            sd.pop("lm_head.weight")  # HF stores tied weights once
        save_checkpoint(name, cfg, sd, dtype, shards)
    gqa = read_tensors(os.path.join(MODELS, "gqa_untied"))
    for seed, (name, focal) in enumerate(FOCAL_MODELS.items(), start=201):
        cfg = dict(GQA, focal_attention=focal)
        tensors = dict(gqa)
        if focal["mode"] == "learned":
            tensors.update(calibrate_learned(focal, seqs, seed))
        save_checkpoint(name, cfg, tensors, torch.float32)

    self_check(seqs)
    for name in list(BASE_MODELS) + list(FOCAL_MODELS):
        d = os.path.join(MODELS, name)
        model = load_model(d)
        focal = FOCAL_MODELS.get(name)
        hooks = apply_focal(model, focal, read_tensors(d) if focal else None)
        write_golden(name, model, seqs, d)
        for l, h in enumerate(hooks):  # clip statistics over the golden sequences
            raw = torch.cat([r for r, _ in h.taus])
            low = int((raw < h.tau_min).sum())
            high = int((raw > h.tau_max).sum()) if h.tau_max is not None else 0
            print("    layer %d: %d taus, raw %.3f..%.3f, clipped low %d, high %d" % (
                l, raw.numel(), float(raw.min()), float(raw.max()), low, high))
            if focal["reduction"] == "token":
                assert low > 0 and high > 0, "learned tau must hit both clip bounds"
            else:
                assert 0 < low < raw.numel(), "sequence_mean taus should straddle tau_min"
    for name in GREEDY_MODELS:
        write_greedy_golden(name, seqs[1:3])
    if os.path.isdir(STORIES):
        stories_goldens(STORIES)
    else:
        print("note: %s not present yet; stories260K goldens skipped" % os.path.relpath(STORIES, REPO))


TOKENIZE_TEXTS = ["Once upon a time, there was a little girl named Lily.", " leading space",
                  "line one\nline two", "", "In 1999, 42 cats ate 3.5 fish?! (yes)"]


def stories_goldens(model_dir, name="stories260K"):
    """stories260K: sentencepiece-encoded sentences + one random sequence; tokenizer golden too."""
    import sentencepiece as spm
    from transformers import AutoTokenizer
    sp_path = os.path.join(model_dir, "tokenizer.model")
    if not os.path.exists(sp_path):
        sp_path = os.path.join(REPO, "..", "shared", "models", "stories260K", "tok512.model")
    sp = spm.SentencePieceProcessor(model_file=sp_path)
    model = load_model(model_dir)
    seqs = [[sp.bos_id()] + sp.encode(t) for t in
            ("Once upon a time, there was a little girl named Lily.", "The cat sat on the mat. It was happy.")]
    seqs += random_sequences(model.config.vocab_size, lengths=(40,))
    write_golden(name, model, seqs, model_dir)
    tok = AutoTokenizer.from_pretrained(model_dir)
    lines = []
    for t in TOKENIZE_TEXTS:
        ids = tok(t)["input_ids"]
        if ids != [sp.bos_id()] + sp.encode(t):  # surfaced, not fatal: the C++ side should know
            print("  note: HF and sentencepiece+BOS differ on %r: %s vs %s"
                  % (t, ids, [sp.bos_id()] + sp.encode(t)))
        lines += ["text " + json.dumps(t), "ids " + " ".join(map(str, ids))]
    with open(os.path.join(GOLDEN, name + "_tokenize.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("  %-24s tokenizer golden written" % (name + "_tokenize"))
    # Greedy from BOS, 200 new tokens (llama2.c's test: run -t 0.0 -n 200), by HF generate.
    with torch.no_grad():
        out = model.generate(torch.tensor([[sp.bos_id()]]), max_new_tokens=200, do_sample=False,
                             eos_token_id=None, pad_token_id=0)
    ids = out[0, 1:].tolist()
    with open(os.path.join(GOLDEN, name + "_greedy.txt"), "w") as f:
        f.write("# HF transformers greedy decoding from BOS, 200 new tokens; generated by "
                "tests/reference/make_reference.py\n")
        f.write("ids " + " ".join(map(str, ids)) + "\n")
        f.write("text " + json.dumps(tok.decode(ids)) + "\n")
    print("  %-24s greedy golden written" % (name + "_greedy"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", help="existing HF directory to make a golden for")
    ap.add_argument("--name", help="golden name (tests/testdata/golden/forward/<name>.txt)")
    args = ap.parse_args()
    print("transformers %s, torch %s" % (transformers.__version__, torch.__version__))
    if not args.model_dir:
        build_all()
    elif args.name == "stories260K":
        stories_goldens(args.model_dir)
    else:
        model = load_model(args.model_dir)
        with open(os.path.join(args.model_dir, "config.json")) as f:
            focal = json.load(f).get("focal_attention")
        apply_focal(model, focal, read_tensors(args.model_dir) if focal else None)
        write_golden(args.name or os.path.basename(os.path.normpath(args.model_dir)), model,
                     random_sequences(model.config.vocab_size), args.model_dir)


if __name__ == "__main__":
    sys.exit(main())
