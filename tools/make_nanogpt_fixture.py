#!/usr/bin/python3
"""Writes tests/fixtures/nanogpt_port.safetensors: a short PyTorch program, nanoGPT's
model (Karpathy's model.py: CausalSelfAttention with the tril buffer and masked_fill,
MLP, Block, GPT with nn.ModuleDict / nn.ModuleList and tied embedding weights) used with
the things a port needs: masks, indexing (logits of the last position x[:, [-1], :],
the buffer's bias[:, :, :T, :T]), hooks (a forward hook that records block 0's output, a
tensor hook that halves the gradient of the token embeddings, a full backward hook that
records block 1's grad_output, retain_grad on the logits) and activation checkpointing
(torch.utils.checkpoint around each block). tests/nn/test_nanogpt_port.cpp is the same
program line for line in attograd; both run in float64 with dropout 0.

Keys: param.<name> (the state dict, PyTorch's names; lm_head.weight is tied to
transformer.wte.weight), input.tokens, input.targets (one -1: ignore_index), out.logits,
out.loss, out.last_logits (the inference path, logits of the last position only),
out.block0 (forward hook), out.block1_grad_output (full backward hook),
out.logits_grad (retain_grad), grad.<name> (after loss.backward()), and the same loss and
gradients with checkpointing under ckpt.loss / ckpt.grad.<name>.

Same writer as tools/make_fixtures.py (byte-identical reruns); made with torch 1.13.

  tools/make_nanogpt_fixture.py            # rewrite tests/fixtures/nanogpt_port.safetensors
  tools/make_nanogpt_fixture.py --out DIR  # write it somewhere else
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import fixture_main  # noqa: E402


class Config:
    block_size = 8
    vocab_size = 11
    n_layer = 2
    n_head = 2
    n_embd = 8
    dropout = 0.0
    bias = True
    checkpoint = False


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long)
        tok_emb = self.transformer.wte(idx)
        if tok_emb.requires_grad:
            tok_emb.register_hook(lambda g: g * 0.5)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            if self.config.checkpoint:
                x = torch.utils.checkpoint.checkpoint(block, x)
            else:
                x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss


def make():
    torch.manual_seed(0)
    config = Config()
    model = GPT(config)
    # Larger weights than nanoGPT's init, so every part of the graph matters.
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape) * 0.3)
    t = {"param." + k: v.clone() for k, v in model.state_dict().items()}
    idx = torch.randint(0, config.vocab_size, (2, 6))
    targets = torch.randint(0, config.vocab_size, (2, 6))
    targets[1, 4] = -1
    t["input.tokens"], t["input.targets"] = idx, targets

    recorded = {}
    h0 = model.transformer.h[0].register_forward_hook(lambda m, inp, out: recorded.__setitem__("block0", out))
    h1 = model.transformer.h[1].register_full_backward_hook(
        lambda m, gin, gout: recorded.__setitem__("block1_grad_output", gout[0]))
    logits, loss = model(idx, targets)
    logits.retain_grad()
    loss.backward()
    h0.remove()
    h1.remove()
    t["out.logits"], t["out.loss"] = logits.detach(), loss.detach()
    t["out.block0"] = recorded["block0"].detach()
    t["out.block1_grad_output"] = recorded["block1_grad_output"].detach()
    t["out.logits_grad"] = logits.grad.clone()
    for name, p in model.named_parameters():
        t["grad." + name] = p.grad.clone()
    with torch.no_grad():
        t["out.last_logits"], _ = model(idx)

    model.zero_grad()
    config.checkpoint = True
    _, loss = model(idx, targets)
    loss.backward()
    t["ckpt.loss"] = loss.detach()
    for name, p in model.named_parameters():
        t["ckpt.grad." + name] = p.grad.clone()
    return t, {"torch": torch.__version__, "dtype": "float64", "dropout": 0.0}


def main():
    return fixture_main(__doc__, "nanogpt_port.safetensors", make, default_dtype=torch.float64)


if __name__ == "__main__":
    sys.exit(main())
