#!/usr/bin/env python3
"""Rebuilds the lm example's character-level GPT in PyTorch from attograd's exported
state dict and checks that its logits on a held-out batch match attograd's.

    /usr/bin/python3 tools/check_lm_model.py [runs/lm] [--tol 1e-4]

Needs PyTorch (Debian: apt-get install python3-torch); run by hand, never by the build
or the tests. Reads <run>/model.safetensors and <run>/eval.safetensors (x: held-out
windows (B, T) i64, logits: attograd's (B, T, V) f32, and the model's sizes as
metadata) written by examples/lm. The PyTorch model is written out here from its
definition (pre-norm blocks, causal scaled_dot_product attention, GELU MLP), with the
same parameter names, and loaded with load_state_dict(strict=True).
"""
import argparse
import json
import math
import struct
import sys

import torch
from torch import nn
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}


def load_file(path):
    """safetensors: 8-byte little-endian header length, JSON header, raw data."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", None) or {}
    data = raw[8 + n :]
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=DTYPES[info["dtype"]]) if b > a else torch.empty(0, dtype=DTYPES[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    return out, meta


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):  # (B, T, E)
        B, T, E = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        split = lambda t: t.reshape(B, T, self.heads, E // self.heads).transpose(1, 2)  # (B, h, T, d)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(E // self.heads)  # (B, h, T, T)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        y = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, E))


class MLP(nn.Module):
    def __init__(self, d_model, ratio=4):
        super().__init__()
        self.fc = nn.Linear(d_model, ratio * d_model)
        self.proj = nn.Linear(ratio * d_model, d_model)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, context, d_model, heads, layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([Block(d_model, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, ids):  # (B, T) -> (B, T, V)
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser(description="Check the lm example's logits against PyTorch.")
    ap.add_argument("run", nargs="?", default="runs/lm", help="the lm --out folder")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed |difference| of a logit")
    a = ap.parse_args()
    run, tol = a.run, a.tol
    state, _ = load_file(f"{run}/model.safetensors")
    ev, meta = load_file(f"{run}/eval.safetensors")
    sizes = {k: int(meta[k]) for k in ("vocab", "context", "d_model", "heads", "layers")}
    model = GPT(**sizes).eval()
    model.load_state_dict(state, strict=True)
    with torch.no_grad():
        ours = ev["logits"]
        theirs = model(ev["x"])
    diff = (theirs - ours).abs().max().item()
    loss = F.cross_entropy(theirs[:, :-1].reshape(-1, sizes["vocab"]), ev["x"][:, 1:].reshape(-1)).item()
    print(f"{run}: {sum(p.numel() for p in model.parameters())} parameters, sizes {sizes}")
    print(f"logits {tuple(ours.shape)}: max |attograd - PyTorch| = {diff:.3e} (tolerance {tol:g})")
    print(f"PyTorch's loss on the window's own next characters: {loss:.4f} nats/char")
    if not diff <= tol:
        print("MISMATCH")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
