#!/usr/bin/env python3
"""Rebuilds the lm example's character-level GPT (or LSTM / GRU model, --arch) in PyTorch
from attograd's exported state dict and checks that its logits on a held-out batch
match attograd's.

    /usr/bin/python3 tools/check_lm_model.py [runs/lm] [--tol 1e-4]

Needs PyTorch (Debian: apt-get install python3-torch); run by hand, never by the build
or the tests. Reads <run>/model.safetensors and <run>/eval.safetensors (x: held-out
windows (B, T) i64, logits: attograd's (B, T, V) f32, and the model's sizes as
metadata) written by examples/lm. The PyTorch model is written out here from its
definition (pre-norm blocks with LayerNorm or RMSNorm, causal grouped-query attention
with learned or rotary positions, GELU or SwiGLU MLP, optionally tied head: the
configuration is read from eval.safetensors' metadata), or for --arch lstm / gru an
embedding, torch.nn.LSTM / GRU (batch_first) and a Linear head, with the same parameter
names, and loaded with load_state_dict(strict=True).
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


class RMSNorm(nn.Module):
    """y = x * rsqrt(mean(x^2) + eps) * weight (torch 2.4's nn.RMSNorm; 1.13 has none)."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(T, d, base=10000.0):
    """(cos, sin), each (T, d): HF LLaMA's layout, the d/2 frequencies written twice."""
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]  # (T, d/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, d)
    return angles.cos().float(), angles.sin().float()


def apply_rope(x, cos, sin):  # x (B, h, T, d)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class CausalSelfAttention(nn.Module):
    """Grouped-query attention: h query heads, g key/value heads (g == h: multi-head)."""

    def __init__(self, d_model, heads, kv_heads, rope):
        super().__init__()
        self.heads, self.kv_heads, self.rope = heads, kv_heads, rope
        d = d_model // heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, kv_heads * d)
        self.v_proj = nn.Linear(d_model, kv_heads * d)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):  # (B, T, E)
        B, T, E = x.shape
        d = E // self.heads
        split = lambda t, n: t.reshape(B, T, n, d).transpose(1, 2)  # (B, n, T, d)
        q = split(self.q_proj(x), self.heads)
        k, v = split(self.k_proj(x), self.kv_heads), split(self.v_proj(x), self.kv_heads)
        if self.rope:
            cos, sin = rope_tables(T, d)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        rep = self.heads // self.kv_heads  # query heads i*rep .. (i+1)*rep-1 read kv head i
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)  # (B, h, T, d)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)  # (B, h, T, T)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        y = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, E))


class MLP(nn.Module):
    def __init__(self, d_model, ratio=4):
        super().__init__()
        self.fc = nn.Linear(d_model, ratio * d_model)
        self.proj = nn.Linear(ratio * d_model, d_model)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class SwiGLU(nn.Module):
    """LLaMA's feed-forward: w2(silu(w1(x)) * w3(x)), hidden 2/3 of 4E rounded up to 8."""

    def __init__(self, d_model, ratio=4):
        super().__init__()
        hidden = (2 * ratio * d_model // 3 + 7) // 8 * 8
        self.w1 = nn.Linear(d_model, hidden)
        self.w2 = nn.Linear(hidden, d_model)
        self.w3 = nn.Linear(d_model, hidden)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def make_norm(d_model, kind):
    return nn.LayerNorm(d_model) if kind == "layer" else RMSNorm(d_model)


class Block(nn.Module):
    def __init__(self, d_model, heads, kv_heads, norm, pos, mlp):
        super().__init__()
        self.ln_1 = make_norm(d_model, norm)
        self.attn = CausalSelfAttention(d_model, heads, kv_heads, pos == "rope")
        self.ln_2 = make_norm(d_model, norm)
        self.mlp = MLP(d_model) if mlp == "gelu" else SwiGLU(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, context, d_model, heads, layers, kv_heads, norm, pos, mlp, tie):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(context, d_model) if pos == "learned" else None
        self.blocks = nn.ModuleList([Block(d_model, heads, kv_heads, norm, pos, mlp) for _ in range(layers)])
        self.ln_f = make_norm(d_model, norm)
        self.head = nn.Linear(d_model, vocab, bias=False)
        if tie:
            self.head.weight = self.tok_emb.weight

    def forward(self, ids):  # (B, T) -> (B, T, V)
        x = self.tok_emb(ids)
        if self.pos_emb is not None:
            x = x + self.pos_emb(torch.arange(ids.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


class RnnLM(nn.Module):
    """examples/lm/rnn_lm.h: tok_emb -> LSTM or GRU (batch_first) -> head (with bias)."""

    def __init__(self, arch, vocab, embed, hidden, layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, embed)
        self.rnn = (nn.LSTM if arch == "lstm" else nn.GRU)(embed, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):  # (B, T) -> (B, T, V), from a zero state
        return self.head(self.rnn(self.tok_emb(ids))[0])


def main():
    ap = argparse.ArgumentParser(description="Check the lm example's logits against PyTorch.")
    ap.add_argument("run", nargs="?", default="runs/lm", help="the lm --out folder")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed |difference| of a logit")
    a = ap.parse_args()
    run, tol = a.run, a.tol
    state, _ = load_file(f"{run}/model.safetensors")
    ev, meta = load_file(f"{run}/eval.safetensors")
    if meta.get("arch", "transformer") in ("lstm", "gru"):
        sizes = {k: int(meta[k]) for k in ("vocab", "embed", "hidden", "layers")}
        arch = {"arch": meta["arch"]}
        model = RnnLM(**arch, **sizes).eval()
    else:
        sizes = {k: int(meta[k]) for k in ("vocab", "context", "d_model", "heads", "layers")}
        # Files from before the architecture options hold the default configuration.
        arch = {"kv_heads": int(meta.get("kv_heads", sizes["heads"])), "norm": meta.get("norm", "layer"),
                "pos": meta.get("pos", "learned"), "mlp": meta.get("mlp", "gelu"), "tie": meta.get("tie", "0") == "1"}
        model = GPT(**sizes, **arch).eval()
    model.load_state_dict(state, strict=True)
    with torch.no_grad():
        ours = ev["logits"]
        theirs = model(ev["x"])
    diff = (theirs - ours).abs().max().item()
    loss = F.cross_entropy(theirs[:, :-1].reshape(-1, sizes["vocab"]), ev["x"][:, 1:].reshape(-1)).item()
    print(f"{run}: {sum(p.numel() for p in model.parameters())} parameters, sizes {sizes}, {arch}")
    print(f"logits {tuple(ours.shape)}: max |attograd - PyTorch| = {diff:.3e} (tolerance {tol:g})")
    print(f"PyTorch's loss on the window's own next characters: {loss:.4f} nats/char")
    # The figures for examples/lm/README.md (copied to examples/lm/results/torch-check.json).
    with open(f"{run}/torch_check.json", "w") as f:
        json.dump({"max_abs_logit_difference": diff, "tolerance": tol, "torch_loss_nats": loss,
                   "torch_version": torch.__version__, "command": " ".join(sys.argv)}, f, indent=2)
        f.write("\n")
    print(f"wrote {run}/torch_check.json")
    if not diff <= tol:
        print("MISMATCH")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
