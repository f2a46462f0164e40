"""The GQA and LLaMA-style models of tools/benchmarks/torch_bench.py (workloads 11-14),
written in plain PyTorch 1.13 as examples/lm/gpt.h builds them (1.13 has no RMSNorm, GQA or
rotary embedding). Imported by torch_bench.py after it has set the thread counts."""
import torch
from torch import nn
import torch.nn.functional as F


# h query heads, g key/value heads, d = E / h. As tools/check_lm_model.py writes them.
def causal_mask(T):
    """(T, T) float: 0 on and below the diagonal, -inf above (added to the scores)."""
    return torch.full((T, T), float("-inf")).triu(1)


def rotate_half(x):  # [x1, x2] -> [-x2, x1] on the last dim
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class GQA(nn.Module):
    """q E -> E, k and v E -> g*d; kv heads repeated to h (query heads i*h/g .. read kv head i)."""

    def __init__(self, E, heads, kv_heads, bias=True):
        super().__init__()
        self.h, self.g, self.d = heads, kv_heads, E // heads
        self.q_proj = nn.Linear(E, E, bias=bias)
        self.k_proj = nn.Linear(E, kv_heads * self.d, bias=bias)
        self.v_proj = nn.Linear(E, kv_heads * self.d, bias=bias)
        self.out_proj = nn.Linear(E, E, bias=bias)

    def forward(self, x, mask, cos=None, sin=None):  # (B, T, E), (T, T) additive, (T, d) -> (B, T, E)
        B, T, E = x.shape
        split = lambda t, n: t.reshape(B, T, n, self.d).transpose(1, 2)  # (B, n, T, d)
        q, k, v = split(self.q_proj(x), self.h), split(self.k_proj(x), self.g), split(self.v_proj(x), self.g)
        if cos is not None:
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.h // self.g
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)  # (B, h, T, d)
        scores = q @ k.transpose(-1, -2) * self.d ** -0.5 + mask  # (B, h, T, T)
        y = scores.softmax(-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, E))


class RMSNorm(nn.Module):
    """y = x * rsqrt(mean(x^2) + eps) * weight (torch 2.4's nn.RMSNorm; 1.13 has none)."""

    def __init__(self, E, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(E))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaBlock(nn.Module):
    def __init__(self, E, heads, kv_heads, hidden):
        super().__init__()
        self.ln_1, self.ln_2 = RMSNorm(E), RMSNorm(E)
        self.attn = GQA(E, heads, kv_heads, bias=False)
        self.w1, self.w3 = nn.Linear(E, hidden, bias=False), nn.Linear(E, hidden, bias=False)
        self.w2 = nn.Linear(hidden, E, bias=False)

    def forward(self, x, mask, cos, sin):  # (B, T, E) -> (B, T, E)
        h = x + self.attn(self.ln_1(x), mask, cos, sin)
        a = self.ln_2(h)
        return h + self.w2(F.silu(self.w1(a)) * self.w3(a))


class Llama(nn.Module):
    """Pre-norm RMSNorm blocks, rotary positions, GQA, SwiGLU (hidden 2/3 of 4E rounded up to 8)."""

    def __init__(self, vocab, context, E, heads, kv_heads, layers):
        super().__init__()
        d, hidden = E // heads, (2 * 4 * E // 3 + 7) // 8 * 8
        self.tok_emb = nn.Embedding(vocab, E)
        self.blocks = nn.ModuleList(LlamaBlock(E, heads, kv_heads, hidden) for _ in range(layers))
        self.ln_f = RMSNorm(E)
        self.head = nn.Linear(E, vocab, bias=False)
        # (context, d): HF LLaMA's layout, the d/2 frequencies base^(-2i/d) written twice
        inv_freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        angles = torch.arange(context, dtype=torch.float64)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())

    def forward(self, ids):  # (B, T) -> (B, T, V)
        T = ids.shape[1]
        x, mask = self.tok_emb(ids), causal_mask(T)
        for b in self.blocks:
            x = b(x, mask, self.cos[:T], self.sin[:T])
        return self.head(self.ln_f(x))


def llama_step(model, ids, caches, pos):
    """One cached decoding step: ids (B, 1) at position pos -> logits (B, V). caches[i] holds
    block i's keys and values (B, h, pos, d), or None; it gains this position's."""
    x = model.tok_emb(ids)  # (B, 1, E)
    cos, sin = model.cos[pos:pos + 1], model.sin[pos:pos + 1]  # (1, d)
    for i, b in enumerate(model.blocks):
        a = b.attn
        B, T, E = x.shape
        split = lambda t, n: t.reshape(B, T, n, a.d).transpose(1, 2)  # (B, n, 1, d)
        y = b.ln_1(x)
        q, k, v = split(a.q_proj(y), a.h), split(a.k_proj(y), a.g), split(a.v_proj(y), a.g)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if caches[i] is not None:
            k, v = torch.cat([caches[i][0], k], 2), torch.cat([caches[i][1], v], 2)  # (B, g, pos + 1, d)
        caches[i] = (k, v)
        rep = a.h // a.g
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2) * a.d ** -0.5).softmax(-1) @ v  # (B, h, 1, d)
        h = x + a.out_proj(att.transpose(1, 2).reshape(B, T, E))
        z = b.ln_2(h)
        x = h + b.w2(F.silu(b.w1(z)) * b.w3(z))
    return model.head(model.ln_f(x))[:, -1]  # (B, V)
