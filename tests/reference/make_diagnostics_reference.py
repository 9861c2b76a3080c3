#!/usr/bin/env python3
"""Writes the HF-transformers golden for the compare diagnostics (logit agreement and attention
entropy / key mass) on the bundled stories260K against its t = 0.4 retrofit.

Run from the repo root:  python3 tests/reference/make_diagnostics_reference.py
  -> tests/testdata/golden/diagnostics/stories260K_t0.4.txt

For each of three sentences (BOS + sentencepiece ids):
  kl ROW VALUE         KL(base || focal) of the next-token distributions at every position,
                       softmax in float64 of HF's float32 logits;
  entropy MODEL L H V  entropy (nats) of layer L head H's attention at the last position, from
                       HF's eager attention probabilities (output_attentions), in float64;
  mass MODEL L H V     those probabilities summed over key positions [2, 6).
Focal attention is emulated as in make_reference.py (self_attn.scaling = 1/(t*sqrt(d))).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import make_reference as mr  # noqa: E402

OUT = os.path.join(mr.REPO, "tests", "testdata", "golden", "diagnostics", "stories260K_t0.4.txt")
SENTENCES = ("Once upon a time, there was a little girl named Lily.",
             "Tom had a big red ball. He threw it to his dog and the dog ran after it",
             "The sun was warm and the birds were singing in the tall green trees")
MASS_RANGE = (2, 6)


@torch.no_grad()
def forward(model, tokens):
    out = model(torch.tensor([tokens]), output_attentions=True)
    return out.logits[0].double(), [a[0].double() for a in out.attentions]  # [T,V], L x [H,T,T]


def main():
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(mr.STORIES, "tokenizer.model"))
    base = mr.load_model(mr.STORIES)
    focal = mr.load_model(mr.STORIES)
    mr.apply_focal(focal, {"mode": "constant", "temperature": 0.4})
    lines = ["# KL(base || focal t=0.4) per position; attention entropy and mass on keys [%d, %d) "
             "at the last position, per layer and head (HF transformers %s, torch %s, float32 eager; "
             "statistics in float64)" % (MASS_RANGE + (mr.transformers.__version__, torch.__version__))]
    for text in SENTENCES:
        tokens = [sp.bos_id()] + sp.encode(text)
        lines.append("seq " + " ".join(str(t) for t in tokens))
        lb, ab = forward(base, tokens)
        lf, af = forward(focal, tokens)
        pb, pf = torch.log_softmax(lb, -1), torch.log_softmax(lf, -1)
        kl = (pb.exp() * (pb - pf)).sum(-1)
        for row, v in enumerate(kl.tolist()):
            lines.append("kl %d %.9e" % (row, max(v, 0.0)))
        for name, atts in (("base", ab), ("focal", af)):
            for layer, a in enumerate(atts):
                last = a[:, -1, :]  # [H, T]
                ent = -(last * torch.log(last.clamp_min(1e-300))).sum(-1)
                mass = last[:, MASS_RANGE[0]:MASS_RANGE[1]].sum(-1)
                for h in range(last.shape[0]):
                    lines.append("entropy %s %d %d %.9e" % (name, layer, h, ent[h].item()))
                    lines.append("mass %s %d %d %.9e" % (name, layer, h, mass[h].item()))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.relpath(OUT, mr.REPO))


if __name__ == "__main__":
    main()
