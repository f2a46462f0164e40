#!/usr/bin/python3
"""Regenerates the PyTorch reference tensors in tests/fixtures/ (see its README.md).

Every file is float64, built from a fixed torch.manual_seed, and written as safetensors
by this script itself (8-byte little-endian header length, compact JSON header with the
keys sorted and __metadata__ last, padded with spaces to a multiple of 8, then the raw
little-endian data in key order), so a rerun gives byte-identical files.

Needs Debian's PyTorch (apt install python3-torch; made with torch 1.13). The C++ build
and the tests never need PyTorch: they only read the committed files.

  tools/make_fixtures.py                 # rewrite tests/fixtures/*.safetensors
  tools/make_fixtures.py --out DIR       # write them somewhere else
  tools/make_fixtures.py --check         # regenerate into a temp dir, compare bytes
  tools/make_fixtures.py --only NAME ... # just these files
"""
import argparse
import filecmp
import json
import math
import os
import struct
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "tests", "fixtures")

# ---- safetensors writer -----------------------------------------------------------

_DTYPES = {torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL"}


def save(path, tensors, metadata=None):
    """Writes {key: tensor} with keys in sorted order, data in the same order."""
    header, blobs, offset = {}, [], 0
    for key in sorted(tensors):
        t = tensors[key].detach().contiguous().cpu()
        if t.dtype not in _DTYPES:
            raise TypeError(f"{path}: {key} has dtype {t.dtype}; only float64, int64, bool are written")
        data = t.numpy().astype(t.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
        header[key] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def params_of(module, prefix="param."):
    return {prefix + n: p.detach().clone() for n, p in module.named_parameters()}


def grads_of(module):
    return {"grad.param." + n: p.grad.detach().clone() for n, p in module.named_parameters()}


def randomize_vectors(module, scale=0.1):
    """Gives every 1-D parameter (biases, norm weights) scale * randn, in parameter order,
    so that no bias is zero and no norm weight is one."""
    with torch.no_grad():
        for _, p in module.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn(p.shape) * scale)


def skip_draws(n):
    """Consumes n 32-bit draws of the global generator. The script that first made
    mha_self_causal and mha_cross_kdim_vdim drew one small random integer per batch row
    between the inputs and the upstream gradient (its value is not stored in the files);
    replaying the draws keeps the upstream G bit-identical."""
    torch.randint(0, 2, (n,))


def torch_mask(allowed):
    """This project's bool mask (true = may attend) -> torch's (true = masked out)."""
    return allowed.logical_not()


# ---- the fixtures that the C++ tests already use ----------------------------------------

def masked_softmax():
    # The 3x3 score rows of note 002 under a causal mask, a padding mask and both.
    scores = torch.tensor([[7.0, -8.0, 6.0], [-3.0, 2.0, 4.0], [1.0, 6.0, -2.0]])
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    padding = torch.tensor([True, True, False]).expand(3, 3)  # the last key is padding
    masks = {"causal": causal, "padding": padding, "both": causal & padding}
    out = {"input.scores": scores}
    for name, m in masks.items():
        out["mask." + name] = m.clone()
        out["output." + name] = torch.softmax(scores.masked_fill(~m, -math.inf), dim=-1)
    return out, None


def mha_worked_example():
    # Note 004's worked example: d_model 4, h 2, B 1, L 2, weights [d_in, d_out], no bias.
    x = torch.tensor([[[1.0, 0.0, -1.0, 0.5], [0.5, 1.0, 0.0, -0.5]]])
    w_q = torch.tensor([[1.0, 0, 0, 1], [0, 1, 1, 0], [0, 0, 1, 0], [1, 0, 0, 0]])
    w_k = torch.tensor([[0.0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 1]])
    w_v = torch.tensor([[1.0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0]])
    w_o = torch.eye(4)
    B, L, E, h = 1, 2, 4, 2
    d = E // h

    def split(t):  # (B, L, E) -> (B, h, L, d)
        return t.reshape(B, L, h, d).transpose(1, 2)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)  # (B, h, L, L)
    concat = (a @ v).transpose(1, 2).reshape(B, L, E)
    out = concat @ w_o
    meta = {"note": "weights are [d_in, d_out]: Q = X @ w_q (transpose for a torch-layout Linear)",
            "d_model": "4", "num_heads": "2", "bias": "False"}
    return {"input.x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o,
            "attn_weights": a, "concat": concat, "output": out}, meta


def _mha_meta(mha, self_attention):
    return {"embed_dim": mha.embed_dim, "num_heads": mha.num_heads, "kdim": mha.kdim,
            "vdim": mha.vdim, "bias": mha.in_proj_bias is not None or mha.out_proj.bias is not None,
            "add_bias_kv": mha.bias_k is not None, "self_attention": self_attention,
            "batch_first": mha.batch_first, "dropout": mha.dropout, "loss": "sum(output * upstream)"}


def _mha_run(mha, inputs, query, key, value, **masks):
    """Forward with per-head weights, upstream = randn_like(output), loss sum(out * G)."""
    out, w = mha(query, key, value, need_weights=True, average_attn_weights=False, **masks)
    g = torch.randn_like(out)  # out is a transposed view: randn_like keeps its strides
    (out * g).sum().backward()
    t = params_of(mha)
    t.update(grads_of(mha))
    for n, x in inputs.items():
        t["input." + n] = x.detach().clone()
        t["grad.input." + n] = x.grad.clone()
    t.update({"output": out.detach(), "attn_weights": w.detach(), "upstream": g})
    return t


def mha_self_causal():
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    randomize_vectors(mha)
    x = torch.randn(2, 5, 8, requires_grad=True)  # (B, L, E)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    padding = torch.arange(5) < torch.tensor([[4], [3]])  # (B, S) lengths 4, 3
    skip_draws(2)
    t = _mha_run(mha, {"x": x}, x, x, x, attn_mask=torch_mask(causal),
                 key_padding_mask=torch_mask(padding))
    t.update({"mask.attn": causal, "mask.padding": padding})
    return t, _mha_meta(mha, True)


def mha_cross_kdim_vdim():
    torch.manual_seed(2)
    mha = torch.nn.MultiheadAttention(8, 4, kdim=5, vdim=7, batch_first=True)
    randomize_vectors(mha)
    q = torch.randn(3, 4, 8, requires_grad=True)  # (B, L, E)
    k = torch.randn(3, 6, 5, requires_grad=True)  # (B, S, kdim)
    v = torch.randn(3, 6, 7, requires_grad=True)  # (B, S, vdim)
    padding = torch.arange(6) < torch.tensor([[5], [3], [5]])
    skip_draws(3)
    t = _mha_run(mha, {"query": q, "key": k, "value": v}, q, k, v,
                 key_padding_mask=torch_mask(padding))
    t["mask.padding"] = padding
    return t, _mha_meta(mha, False)


def mha_additive_nobias():
    torch.manual_seed(3)
    mha = torch.nn.MultiheadAttention(6, 3, bias=False, batch_first=True)
    q = torch.randn(2, 3, 6, requires_grad=True)
    k = torch.randn(2, 4, 6, requires_grad=True)
    v = torch.randn(2, 4, 6, requires_grad=True)
    additive = torch.randn(3, 4) * 0.5  # (L, S)
    additive[0, 3] = -math.inf
    t = _mha_run(mha, {"query": q, "key": k, "value": v}, q, k, v, attn_mask=additive)
    t["mask.attn_additive"] = additive
    return t, _mha_meta(mha, False)


def transformer_post_norm():
    torch.manual_seed(4)
    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                 dim_feedforward=16, dropout=0.0, activation="relu",
                                 batch_first=True, norm_first=False)
    randomize_vectors(model)
    src = torch.randn(2, 5, 8, requires_grad=True)  # (B, S, E)
    tgt = torch.randn(2, 4, 8, requires_grad=True)  # (B, L, E)
    src_padding = torch.arange(5) < torch.tensor([[5], [4]])
    tgt_padding = torch.arange(4) < torch.tensor([[4], [2]])
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    out = model(src, tgt, tgt_mask=torch_mask(causal), src_key_padding_mask=torch_mask(src_padding),
                tgt_key_padding_mask=torch_mask(tgt_padding),
                memory_key_padding_mask=torch_mask(src_padding))
    g = torch.randn_like(out)
    (out * g).sum().backward()
    t = params_of(model)
    t.update(grads_of(model))
    t.update({"input.src": src.detach(), "input.tgt": tgt.detach(), "grad.input.src": src.grad,
              "grad.input.tgt": tgt.grad, "mask.src_padding": src_padding,
              "mask.tgt_padding": tgt_padding, "mask.tgt_causal": causal,
              "output": out.detach(), "upstream": g})
    meta = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 2,
            "dim_feedforward": 16, "dropout": 0.0, "activation": "relu", "norm_first": False,
            "batch_first": True, "layer_norm_eps": 1e-05,
            "masks": "src padding masks encoder self-attention and decoder cross-attention keys; "
                     "tgt padding and tgt causal mask decoder self-attention",
            "loss": "sum(output * upstream)"}
    return t, meta


def layers_and_loss():
    torch.manual_seed(5)
    linear = torch.nn.Linear(6, 5)
    embedding = torch.nn.Embedding(11, 6)
    layer_norm = torch.nn.LayerNorm(5)
    with torch.no_grad():
        layer_norm.weight.copy_(1 + 0.1 * torch.randn(5))
        layer_norm.bias.copy_(0.1 * torch.randn(5))
    tokens = torch.randint(0, 11, (3, 4))  # (B, T)
    tokens[0, 3] = 0
    targets = torch.randint(1, 5, (3, 4))
    targets[1, 2] = 0  # ignored
    logits = layer_norm(linear(embedding(tokens)))  # (B, T, C)
    loss = F.cross_entropy(logits.reshape(-1, 5), targets.reshape(-1), ignore_index=0,
                           label_smoothing=0.1)
    loss.backward()
    mods = {"embedding": embedding, "linear": linear, "layer_norm": layer_norm}
    t = {}
    for name, m in mods.items():
        for n, p in m.named_parameters():
            t[f"param.{name}.{n}"] = p.detach().clone()
            t[f"grad.param.{name}.{n}"] = p.grad.clone()
    t.update({"input.tokens": tokens, "input.targets": targets, "logits": logits.detach(),
              "loss": loss.detach().reshape(1)})
    meta = {"model": "logits = layer_norm(linear(embedding(tokens))); loss = cross_entropy(logits, "
                     "targets, ignore_index=0, label_smoothing=0.1, mean over non-ignored)",
            "layer_norm_eps": 1e-05}
    return t, meta


# ---- driver ---------------------------------------------------------------------

FIXTURES = [masked_softmax, mha_worked_example, mha_self_causal, mha_cross_kdim_vdim,
            mha_additive_nobias, transformer_post_norm, layers_and_loss]


def make(out_dir, only=None):
    os.makedirs(out_dir, exist_ok=True)
    torch.set_default_dtype(torch.float64)
    written = []
    for fn in FIXTURES:
        if only and fn.__name__ not in only:
            continue
        tensors, meta = fn()
        path = os.path.join(out_dir, fn.__name__ + ".safetensors")
        save(path, tensors, meta)
        written.append(fn.__name__ + ".safetensors")
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default tests/fixtures)")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temp folder and compare byte for byte with --out")
    ap.add_argument("--only", nargs="*", help="fixture names to make (default: all)")
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    if not args.check:
        for name in make(args.out, args.only):
            print("wrote", os.path.join(args.out, name))
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        names = make(tmp, args.only)
        for name in names:
            ref = os.path.join(args.out, name)
            if not os.path.exists(ref):
                print(f"MISSING  {ref}")
                bad += 1
            elif not filecmp.cmp(ref, os.path.join(tmp, name), shallow=False):
                print(f"DIFFERS  {name}")
                bad += 1
            else:
                print(f"same     {name}")
        if not args.only:  # a committed file that the script no longer makes
            for name in sorted(os.listdir(args.out)):
                if name.endswith(".safetensors") and name not in names:
                    print(f"EXTRA    {name} (not made by this script)")
                    bad += 1
    print(f"{bad} difference(s)" if bad else f"all {len(names)} files identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
