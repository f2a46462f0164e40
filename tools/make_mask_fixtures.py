#!/usr/bin/python3
"""Writes tests/fixtures/torch_masks.safetensors: PyTorch's own masks (the names and
meanings of torch.nn.MultiheadAttention and torch.nn.Transformer: a bool attn_mask /
src_mask / tgt_mask / memory_mask is true where attention is NOT allowed, a float one is
added, a *key_padding_mask is true on padding) through small float64 modules, so that
tests/nn/test_transformer.cpp can pass the same masks through the same call a port
writes and match the outputs.

Groups of keys (each module's weights under its prefix, PyTorch's names):
  mha.*   nn.MultiheadAttention(8, 2, batch_first=True), self-attention on x (2, 5, 8);
          outputs mha.output.bool (attn_mask = triu(ones(5, 5), 1).bool(), key_padding_mask)
          and mha.output.float (float attn_mask, key_padding_mask), with per-head weights
  enc.*   nn.TransformerEncoderLayer(8, 2, 16, dropout 0, batch_first) on src (2, 5, 8):
          enc.output.bool (src_mask bool, src_key_padding_mask), enc.output.float
  dec.*   nn.TransformerDecoderLayer(8, 2, 16, dropout 0, batch_first, norm_first) on
          tgt (2, 4, 8), memory (2, 5, 8): dec.output (tgt_mask bool, memory_mask bool,
          tgt_key_padding_mask, memory_key_padding_mask)
  tf.*    nn.Transformer(8, 2, 2, 2, 16, dropout 0, batch_first) on src (2, 5, 8),
          tgt (2, 4, 8): tf.output.bool (every mask, bool) and tf.output.float
          (tgt_mask = generate_square_subsequent_mask(4), float src_mask)
Masks are stored as given to PyTorch: bool ones under mask.<name>, float ones under
float_mask.<name>.

Same writer and conventions as tools/make_fixtures.py (float64, fixed seed, byte-identical
reruns); needs Debian's python3-torch (made with torch 1.13).

  tools/make_mask_fixtures.py            # rewrite tests/fixtures/torch_masks.safetensors
  tools/make_mask_fixtures.py --out DIR  # write it somewhere else
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import fixture_main, randomize_vectors  # noqa: E402


def params(module, prefix):
    return {prefix + n: p.detach().clone() for n, p in module.named_parameters()}


def pad_mask(lengths, n):
    """PyTorch's key padding mask: (B, n) bool, true on padding (position >= length)."""
    return torch.arange(n) >= torch.tensor(lengths).view(-1, 1)


def make():
    torch.manual_seed(24)
    t = {}
    B, S, T, E = 2, 5, 4, 8
    causal_s = torch.triu(torch.ones(S, S), 1).bool()  # true above the diagonal: not allowed
    causal_t = torch.triu(torch.ones(T, T), 1).bool()
    src_kpm, tgt_kpm = pad_mask([5, 3], S), pad_mask([4, 2], T)
    float_s = torch.randn(S, S) * 0.5
    float_s[0, 4] = -float("inf")
    memory_mask = torch.zeros(T, S, dtype=torch.bool)
    memory_mask[1, 0] = memory_mask[2, 2] = memory_mask[3, 1] = True  # a few (query, key) cut
    t.update({"mask.causal_s": causal_s, "mask.causal_t": causal_t, "mask.src_key_padding": src_kpm,
              "mask.tgt_key_padding": tgt_kpm, "float_mask.src": float_s, "mask.memory": memory_mask})
    src, tgt = torch.randn(B, S, E), torch.randn(B, T, E)
    t.update({"input.src": src, "input.tgt": tgt})

    mha = torch.nn.MultiheadAttention(E, 2, batch_first=True)
    randomize_vectors(mha)
    t.update(params(mha, "mha.param."))
    out, w = mha(src, src, src, key_padding_mask=src_kpm, need_weights=True, attn_mask=causal_s,
                 average_attn_weights=False)
    t.update({"mha.output.bool": out.detach(), "mha.weights.bool": w.detach()})
    out, w = mha(src, src, src, key_padding_mask=src_kpm, need_weights=True, attn_mask=float_s,
                 average_attn_weights=False)
    t.update({"mha.output.float": out.detach(), "mha.weights.float": w.detach()})

    enc = torch.nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True)
    randomize_vectors(enc)
    t.update(params(enc, "enc.param."))
    t["enc.output.bool"] = enc(src, causal_s, src_kpm).detach()
    t["enc.output.float"] = enc(src, float_s, src_kpm).detach()

    dec = torch.nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    randomize_vectors(dec)
    t.update(params(dec, "dec.param."))
    memory = torch.randn(B, S, E)
    t["input.memory"] = memory
    t["dec.output"] = dec(tgt, memory, causal_t, memory_mask, tgt_kpm, src_kpm).detach()

    tf = torch.nn.Transformer(E, 2, 2, 2, 16, dropout=0.0, batch_first=True)
    randomize_vectors(tf)
    t.update(params(tf, "tf.param."))
    t["tf.output.bool"] = tf(src, tgt, causal_s, causal_t, memory_mask, src_kpm, tgt_kpm, src_kpm).detach()
    square = tf.generate_square_subsequent_mask(T)  # float, -inf above the diagonal
    t["float_mask.square_t"] = square
    t["tf.output.float"] = tf(src, tgt, float_s, square, None, src_kpm, tgt_kpm, src_kpm).detach()
    meta = {"torch": torch.__version__, "batch_first": True, "dropout": 0.0, "d_model": E, "nhead": 2,
            "dim_feedforward": 16, "dec.norm_first": True,
            "masks": "PyTorch's: bool attn/src/tgt/memory masks true = not allowed, float added, "
                     "key padding masks true = padding"}
    return t, meta


def main():
    return fixture_main(__doc__, "torch_masks.safetensors", make, default_dtype=torch.float64, no_grad=True)


if __name__ == "__main__":
    sys.exit(main())
