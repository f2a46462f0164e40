#!/usr/bin/python3
"""Regenerates the PyTorch reference tensors in tests/fixtures/ (see its README.md): the
model fixtures the parity tests use (masked softmax, MultiheadAttention, Transformer,
Embedding -> Linear -> LayerNorm -> cross-entropy) and the op-semantics fixtures of
issue 10 (ops_special_values, ops_ties, ops_pad, ops_einsum, ops_losses, ops_scan_reduce,
double_backward) and the LLaMA blocks of issue 11 (rope, rms_norm, swiglu).

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
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "tests", "fixtures"))

# ---- safetensors writer -----------------------------------------------------------

_DTYPES = {torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL"}
# The conversion fixtures (tools/make_half_fixtures.py) also write these.
HALF_DTYPES = {**_DTYPES, torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}


def save(path, tensors, metadata=None, dtypes=_DTYPES):
    """Writes {key: tensor} with keys in sorted order, data in the same order; the tensors'
    dtypes must be among `dtypes` (by default float64, int64, bool)."""
    header, blobs, offset = {}, [], 0
    for key in sorted(tensors):
        t = tensors[key].detach().contiguous().cpu()
        if t.dtype not in dtypes:
            names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
            raise TypeError(f"{path}: {key} has dtype {t.dtype}; only {names} are written")
        raw = t.view(torch.int16) if t.dtype in (torch.bfloat16, torch.float16) else t  # numpy has no bf16: the bits
        data = raw.numpy().astype(raw.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
        header[key] = {"dtype": dtypes[t.dtype], "shape": list(t.shape),
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


def fixture_main(doc, filename, make, default_dtype=None, no_grad=False):
    """The main() of a one-file fixture script: parses --out, makes PyTorch deterministic
    and single-threaded, runs make() -> (tensors, metadata) and saves it as filename."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default tests/fixtures)")
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    if default_dtype is not None:
        torch.set_default_dtype(default_dtype)
    with torch.set_grad_enabled(not no_grad):
        tensors, meta = make()
    path = os.path.join(args.out, filename)
    save(path, tensors, meta)
    print("wrote", path)
    return 0


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
    # The 3x3 score rows of nn/ATTENTION.md under a causal mask, a padding mask and both.
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
    # The worked example of nn/ATTENTION.md: d_model 4, h 2, B 1, L 2, weights [d_in, d_out], no bias.
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


# ---- issue 10: the op library's semantics (see tests/fixtures/README.md) ----------------

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-310, math.inf, -math.inf, math.nan,
           20.0, -20.0, 1e30]
POW_EXPONENTS = ["-1", "-0.3", "0", "0.3", "2", "0.5", "3"]

UNARY = {
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "abs": torch.abs, "sign": torch.sign, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "erf": torch.erf, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh,
    "cosh": torch.cosh, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
    "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p, "expm1": torch.expm1,
    "exp2": torch.exp2, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
    "trunc": torch.trunc, "frac": torch.frac, "silu": F.silu, "softplus": F.softplus,
    "elu": F.elu, "selu": F.selu, "mish": F.mish, "logsigmoid": F.logsigmoid, "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
}


def _elementwise_grad(fn, *xs):
    """Gradients of sum(fn(*xs)) with respect to every x (fresh leaves)."""
    leaves = [x.clone().requires_grad_() for x in xs]
    out = fn(*leaves)
    return torch.autograd.grad(out.sum(), leaves, allow_unused=True)


def ops_special_values():
    x = torch.tensor(SPECIAL)
    finite = x[torch.isfinite(x)]
    t = {"input.x": x, "input.x_finite": finite}
    for e in POW_EXPONENTS:
        t[f"pow.{e}.out"] = torch.pow(x, float(e))
        t[f"pow.{e}.grad"] = _elementwise_grad(lambda v: torch.pow(v, float(e)), finite)[0]
    # pow(tensor, tensor) on every (base, exponent) pair of the special values.
    base, expo = torch.meshgrid(x, x, indexing="ij")
    t.update({"pow_tt.base": base.reshape(-1), "pow_tt.exponent": expo.reshape(-1),
              "pow_tt.out": torch.pow(base, expo).reshape(-1)})
    fb, fe = torch.meshgrid(finite, finite, indexing="ij")
    fb, fe = fb.reshape(-1), fe.reshape(-1)
    gb, ge = _elementwise_grad(torch.pow, fb, fe)
    t.update({"pow_tt.finite.base": fb, "pow_tt.finite.exponent": fe,
              "pow_tt.grad.base": gb, "pow_tt.grad.exponent": ge})
    for name, fn in UNARY.items():
        t[name + ".out"] = fn(x)
        t[name + ".grad"] = _elementwise_grad(fn, finite)[0]
    meta = {"values": str(SPECIAL), "finite": "input.x_finite = input.x[isfinite(input.x)]",
            "grad": "<op>.grad = d sum(op(x_finite)) / d x_finite, as PyTorch computes it (NaN kept)",
            "pow_exponents": ",".join(POW_EXPONENTS), "ops": ",".join(UNARY),
            "softplus": "beta 1, threshold 20", "elu": "alpha 1", "gelu": "erf form",
            "gelu_tanh": "gelu(approximate='tanh')"}
    return t, meta


def _grad_of(out, inputs, upstream=None):
    """Gradients of sum(out * upstream) (or of out itself when it is a scalar)."""
    if upstream is None:
        return torch.autograd.grad(out, inputs)
    return torch.autograd.grad((out * upstream).sum(), inputs)


def ops_ties():
    torch.manual_seed(10)
    t = {}
    # maximum / minimum: elementwise, ties at positions 0, 3, 5 (gradient split evenly).
    a = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -0.0])
    b = torch.tensor([1.0, 3.0, 2.0, 4.0, 0.0, 6.0, 0.0])
    g = torch.randn(7)
    t.update({"binary.a": a, "binary.b": b, "binary.upstream": g})
    for name, fn in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
        la, lb = a.clone().requires_grad_(), b.clone().requires_grad_()
        out = fn(la, lb)
        ga, gb = _grad_of(out, [la, lb], g)
        t.update({name + ".out": out.detach(), name + ".grad.a": ga, name + ".grad.b": gb})
    # Full and per-dimension reductions of a (3, 4) matrix with ties.
    x = torch.tensor([[1.0, 5.0, 5.0, 2.0],
                      [5.0, 0.0, -1.0, 0.0],
                      [3.0, 3.0, 3.0, -1.0]])
    t["reduce.x"] = x
    for name, fn in [("max", torch.max), ("min", torch.min), ("amax", torch.amax),
                     ("amin", torch.amin)]:
        lx = x.clone().requires_grad_()
        out = fn(lx)  # full reduction: 0-d
        t[name + ".all.out"] = out.detach().reshape(1)
        t[name + ".all.grad"] = _grad_of(out, [lx])[0]
    for dim in (0, 1):
        gdim = torch.randn(x.shape[1 - dim])
        t[f"reduce.dim{dim}.upstream"] = gdim
        for name, fn in [("max", torch.max), ("min", torch.min)]:
            lx = x.clone().requires_grad_()
            values, indices = fn(lx, dim=dim)
            t[f"{name}.dim{dim}.values"] = values.detach()
            t[f"{name}.dim{dim}.indices"] = indices
            t[f"{name}.dim{dim}.grad"] = _grad_of(values, [lx], gdim)[0]
        for name, fn in [("amax", torch.amax), ("amin", torch.amin)]:
            lx = x.clone().requires_grad_()
            out = fn(lx, dim=dim)
            t[f"{name}.dim{dim}.out"] = out.detach()
            t[f"{name}.dim{dim}.grad"] = _grad_of(out, [lx], gdim)[0]
    # sort / argsort, stable, with ties, NaN, -inf and signed zeros.
    v = torch.tensor([3.0, 1.0, math.nan, 2.0, 1.0, 3.0, -math.inf, math.nan, 0.0, -0.0, 2.0])
    gv = torch.randn(v.shape[0])
    t.update({"sort.input": v, "sort.upstream": gv})
    for name, desc in [("asc", False), ("desc", True)]:
        lv = v.clone().requires_grad_()
        values, indices = torch.sort(lv, stable=True, descending=desc)
        t[f"sort.{name}.values"] = values.detach()
        t[f"sort.{name}.indices"] = indices
        t[f"sort.{name}.grad"] = _grad_of(values, [lv], gv)[0]
        t[f"argsort.{name}"] = torch.argsort(v, stable=True, descending=desc)
    m = torch.tensor([[2.0, 1.0, 2.0, 0.0], [1.0, 1.0, -1.0, 1.0]])  # sort along dim 1
    t["sort2d.input"] = m
    t["sort2d.asc.values"], t["sort2d.asc.indices"] = torch.sort(m, dim=1, stable=True)
    t["sort2d.dim0.values"], t["sort2d.dim0.indices"] = torch.sort(m, dim=0, stable=True)
    # topk with ties (which tied index PyTorch picks is what it returned here).
    k = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 0.0])
    gk = torch.randn(3)
    t.update({"topk.input": k, "topk.upstream": gk})
    for name, largest in [("largest", True), ("smallest", False)]:
        lk = k.clone().requires_grad_()
        values, indices = torch.topk(lk, 3, largest=largest, sorted=True)
        t[f"topk.{name}.values"] = values.detach()
        t[f"topk.{name}.indices"] = indices
        t[f"topk.{name}.grad"] = _grad_of(values, [lk], gk)[0]
    # cummax / cummin (issue 24): ties (the later index wins), NaN (propagates with its
    # index; a later NaN takes the index), +-inf, along dim 1 and dim 0 (negative dims in
    # the test); integer and bool inputs (values keep the dtype).
    c = torch.tensor([[1.0, 3.0, 3.0, 2.0, math.nan, 5.0, math.nan, 1.0],
                      [2.0, 2.0, -1.0, -1.0, math.inf, -math.inf, 0.0, -0.0]])
    gc = torch.randn(c.shape)
    t.update({"cum.input": c, "cum.upstream": gc})
    for name, fn in [("cummax", torch.cummax), ("cummin", torch.cummin)]:
        for dim in (0, 1):
            lc = c.clone().requires_grad_()
            values, indices = fn(lc, dim)
            t[f"{name}.dim{dim}.values"] = values.detach()
            t[f"{name}.dim{dim}.indices"] = indices
            t[f"{name}.dim{dim}.grad"] = _grad_of(values, [lc], gc)[0]
    ci = torch.tensor([[2, 2, 1, 2, -3, 7], [0, -1, -1, 5, 5, 0]])
    cb = torch.tensor([[True, False, False, True], [False, False, True, True]])
    t.update({"cum.int": ci, "cum.bool": cb})
    for name, fn in [("cummax", torch.cummax), ("cummin", torch.cummin)]:
        t[f"{name}.int.values"], t[f"{name}.int.indices"] = fn(ci, 1)
        t[f"{name}.bool.values"], t[f"{name}.bool.indices"] = fn(cb, 1)
    meta = {"grad": "of sum(out * upstream); full reductions (*.all.*): of the 0-d result",
            "topk": "k 3, sorted", "sort": "stable=True; NaN sorts as the largest value",
            "cum": "cummax/cummin(cum.input, dim) (grad of sum(values * cum.upstream)); "
                   "cum.int and cum.bool along dim 1"}
    return t, meta


def ops_pad():
    torch.manual_seed(11)
    cases = {  # n-d padding: input shape, pad (last dim first, as F.pad takes it)
        "1d": ((2, 2, 5), (2, 1)),
        "2d": ((1, 2, 4, 5), (1, 2, 2, 0)),
        "3d": ((1, 2, 3, 4, 5), (1, 0, 0, 2, 1, 1)),
    }
    t = {}
    for nd, (shape, pad) in cases.items():
        x = torch.randn(*shape)
        t[f"{nd}.input"] = x
        t[f"{nd}.pad"] = torch.tensor(pad)
        for mode in ("constant", "reflect", "replicate"):
            lx = x.clone().requires_grad_()
            kw = {"value": 1.5} if mode == "constant" else {}
            out = F.pad(lx, pad, mode=mode, **kw)
            g = torch.randn(out.shape)
            t[f"{nd}.{mode}.out"] = out.detach()
            t[f"{nd}.{mode}.upstream"] = g
            t[f"{nd}.{mode}.grad"] = _grad_of(out, [lx], g)[0]
    meta = {"constant_value": "1.5", "loss": "sum(out * upstream)",
            "pad": "F.pad order: (last_left, last_right, 2nd-last_left, 2nd-last_right, ...)"}
    return t, meta


EINSUM = [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]),
          ("ii->", [(4, 4)]), ("ij->ji", [(3, 4)]),
          ("bhld,bhsd->bhls", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,ij->", [(3, 4), (3, 4)]),
          ("bij->bj", [(2, 3, 4)]), ("...ij,...jk->...ik", [(2, 3, 2, 4), (3, 4, 2)])]


def ops_einsum():
    torch.manual_seed(12)
    t, meta = {}, {"loss": "sum(output * upstream); a 0-d output is stored with shape [1]"}
    for i, (eq, shapes) in enumerate(EINSUM):
        xs = [torch.randn(*s, requires_grad=True) for s in shapes]
        out = torch.einsum(eq, *xs)
        g = torch.randn(out.shape)
        grads = _grad_of(out, xs, g)
        meta[f"e{i}"] = eq
        t[f"e{i}.output"] = out.detach().reshape(out.shape if out.dim() else (1,))
        t[f"e{i}.upstream"] = g.reshape(g.shape if g.dim() else (1,))
        for j, (x, gx) in enumerate(zip(xs, grads)):
            t[f"e{i}.input.{j}"] = x.detach()
            t[f"e{i}.grad.input.{j}"] = gx
    return t, meta


def _loss_case(t, key, fn, inputs, reductions=("none", "mean", "sum")):
    """out and input gradients of fn(*inputs, reduction=r) for each reduction: of
    sum(out * upstream) for 'none' (upstream stored under key.none.upstream), of out for
    the scalar ones. inputs: {name: tensor}; float ones get gradients."""
    for r in reductions:
        leaves = {n: (v.clone().requires_grad_() if v.is_floating_point() else v)
                  for n, v in inputs.items()}
        out = fn(**leaves, reduction=r)
        diff = [n for n, v in leaves.items() if v.requires_grad]
        if out.dim() == 0:
            grads = torch.autograd.grad(out, [leaves[n] for n in diff])
            t[f"{key}.{r}.out"] = out.detach().reshape(1)
        else:
            g = torch.randn(out.shape)
            grads = torch.autograd.grad((out * g).sum(), [leaves[n] for n in diff])
            t[f"{key}.{r}.out"] = out.detach()
            t[f"{key}.{r}.upstream"] = g
        for n, gx in zip(diff, grads):
            t[f"{key}.{r}.grad.{n}"] = gx


def ops_losses():
    torch.manual_seed(13)
    t = {}
    N, C = 5, 4
    # binary_cross_entropy(input probabilities, soft targets, weight [N, C]).
    p = torch.sigmoid(torch.randn(N, C))
    y = torch.rand(N, C)
    w = torch.rand(N, C) + 0.5
    t.update({"bce.input": p, "bce.target": y, "bce.weight": w})
    _loss_case(t, "bce", lambda input, reduction: F.binary_cross_entropy(
        input, y, weight=w, reduction=reduction), {"input": p})
    # binary_cross_entropy_with_logits(weight [C] broadcast, pos_weight [C]).
    z = torch.randn(N, C) * 2
    y2 = (torch.rand(N, C) > 0.5).double()
    w2 = torch.rand(C) + 0.5
    pw = torch.rand(C) * 2 + 0.25
    t.update({"bce_logits.input": z, "bce_logits.target": y2, "bce_logits.weight": w2,
              "bce_logits.pos_weight": pw})
    _loss_case(t, "bce_logits", lambda input, reduction: F.binary_cross_entropy_with_logits(
        input, y2, weight=w2, pos_weight=pw, reduction=reduction), {"input": z})
    # cross_entropy with class indices and class weights.
    logits = torch.randn(N, C) * 2
    target = torch.tensor([0, 3, 1, 3, 2])
    cw = torch.tensor([0.5, 1.0, 2.0, 1.5])
    t.update({"ce.input": logits, "ce.target": target, "ce.class_weight": cw})
    for variant, kw in [("weight", {}), ("weight_ignore", {"ignore_index": 3}),
                        ("weight_ignore_smooth", {"ignore_index": 3, "label_smoothing": 0.2}),
                        ("smooth", {"label_smoothing": 0.2, "weight": None})]:
        kw = dict({"weight": cw}, **kw)
        _loss_case(t, f"ce.{variant}", lambda input, reduction, kw=kw: F.cross_entropy(
            input, target, reduction=reduction, **kw), {"input": logits})
    # cross_entropy with probability targets [N, C].
    probs = torch.softmax(torch.randn(N, C), dim=1)
    t["ce_prob.target"] = probs
    for variant, kw in [("plain", {}), ("smooth", {"label_smoothing": 0.2}),
                        ("weight_smooth", {"label_smoothing": 0.2, "weight": cw})]:
        _loss_case(t, f"ce_prob.{variant}", lambda input, reduction, kw=kw: F.cross_entropy(
            input, probs, reduction=reduction, **kw), {"input": logits})
    # nll_loss on log-probabilities, class weights, ignore_index 3.
    logp = F.log_softmax(torch.randn(N, C), dim=1)
    t["nll.input"] = logp
    _loss_case(t, "nll", lambda input, reduction: F.nll_loss(
        input, target, weight=cw, ignore_index=3, reduction=reduction), {"input": logp})
    # Regression losses; differences spread over every regime of beta 0.5 / delta 1.5.
    a = torch.randn(N, C) * 1.5
    b = torch.randn(N, C) * 1.5
    t.update({"reg.input": a, "reg.target": b})
    for key, fn in [("l1", F.l1_loss), ("smooth_l1", lambda x, y, reduction: F.smooth_l1_loss(
            x, y, reduction=reduction, beta=0.5)), ("huber", lambda x, y, reduction: F.huber_loss(
            x, y, reduction=reduction, delta=1.5))]:
        _loss_case(t, key, lambda input, target, reduction, fn=fn: fn(input, target, reduction=reduction),
                   {"input": a, "target": b})
    # kl_div(input = log q, target = p or log p), batchmean (and none, sum).
    logq = F.log_softmax(torch.randn(N, C), dim=1)
    pt = torch.softmax(torch.randn(N, C), dim=1)
    t.update({"kl.input": logq, "kl.target": pt, "kl.log_target": pt.log()})
    _loss_case(t, "kl", lambda input, target, reduction: F.kl_div(
        input, target, reduction=reduction, log_target=False), {"input": logq, "target": pt},
        reductions=("none", "batchmean", "sum"))
    _loss_case(t, "kl_log", lambda input, target, reduction: F.kl_div(
        input, target, reduction=reduction, log_target=True), {"input": logq, "target": pt.log()},
        reductions=("none", "batchmean", "sum"))
    # cosine_similarity(dim 1, eps 1e-8): row 4 of x1 is tiny, so eps matters.
    x1 = torch.randn(N, C)
    x1[4] = x1[4] * 1e-9
    x2 = torch.randn(N, C)
    lx1, lx2 = x1.clone().requires_grad_(), x2.clone().requires_grad_()
    cs = F.cosine_similarity(lx1, lx2, dim=1, eps=1e-8)
    gcs = torch.randn(N)
    g1, g2 = _grad_of(cs, [lx1, lx2], gcs)
    t.update({"cosine.x1": x1, "cosine.x2": x2, "cosine.out": cs.detach(), "cosine.upstream": gcs,
              "cosine.grad.x1": g1, "cosine.grad.x2": g2})
    # normalize(p 2, dim 1, eps 1e-12): row 2 is zero.
    xn = torch.randn(N, C)
    xn[2] = 0.0
    lxn = xn.clone().requires_grad_()
    nz = F.normalize(lxn, p=2.0, dim=1)
    gn = torch.randn(N, C)
    t.update({"normalize.input": xn, "normalize.out": nz.detach(), "normalize.upstream": gn,
              "normalize.grad": _grad_of(nz, [lxn], gn)[0]})
    meta = {"reductions": "<loss>.<reduction>.out; 'none' gradients are of sum(out * upstream), "
                          "scalar ones of out (stored with shape [1])",
            "bce": "binary_cross_entropy(input, bce.target, weight=bce.weight)",
            "bce_logits": "binary_cross_entropy_with_logits(input, target, weight [C], pos_weight [C])",
            "ce": "cross_entropy(ce.input, ce.target); weight: weight=ce.class_weight; ignore: ignore_index=3; "
                  "smooth: label_smoothing=0.2",
            "ce_prob": "cross_entropy(ce.input, ce_prob.target (probabilities)); smooth 0.2; weight ce.class_weight",
            "nll": "nll_loss(nll.input, ce.target, weight=ce.class_weight, ignore_index=3)",
            "smooth_l1": "beta 0.5", "huber": "delta 1.5",
            "kl": "kl_div(kl.input, kl.target, log_target=False)",
            "kl_log": "kl_div(kl.input, kl.log_target, log_target=True)",
            "cosine": "cosine_similarity(x1, x2, dim=1, eps=1e-8)",
            "normalize": "normalize(x, p=2, dim=1, eps=1e-12)"}
    return t, meta


def ops_scan_reduce():
    torch.manual_seed(14)
    t = {}
    x = torch.randn(3, 4)
    for dim in (0, 1):
        lx = x.clone().requires_grad_()
        out = torch.cumsum(lx, dim)
        g = torch.randn(out.shape)
        t.update({f"cumsum.dim{dim}.out": out.detach(), f"cumsum.dim{dim}.upstream": g,
                  f"cumsum.dim{dim}.grad": _grad_of(out, [lx], g)[0]})
    t["scan.x"] = x
    # cumprod with a zero inside (one zero, and two zeros) along dim 1.
    cp = torch.tensor([[2.0, -0.5, 0.0, 3.0, 1.5], [0.5, 0.0, 2.0, 0.0, -1.0],
                       [1.5, 2.0, -1.0, 0.5, 3.0]])
    lcp = cp.clone().requires_grad_()
    out = torch.cumprod(lcp, 1)
    g = torch.randn(out.shape)
    t.update({"cumprod.input": cp, "cumprod.out": out.detach(), "cumprod.upstream": g,
              "cumprod.grad": _grad_of(out, [lcp], g)[0]})
    # logcumsumexp along dim 1 with -inf entries (a leading -inf and one inside).
    lc = torch.tensor([[-math.inf, 0.5, 1.0, -math.inf, 2.0], [1.0, -2.0, 3.0, 0.0, -1.0]])
    llc = lc.clone().requires_grad_()
    out = torch.logcumsumexp(llc, 1)
    g = torch.randn(out.shape)
    t.update({"logcumsumexp.input": lc, "logcumsumexp.out": out.detach(),
              "logcumsumexp.upstream": g, "logcumsumexp.grad": _grad_of(out, [llc], g)[0]})
    # prod: no zero, one zero, two zeros (full reduction and along dim 1).
    for name, v in [("nozero", [1.5, -2.0, 0.5, 3.0]), ("one_zero", [1.5, 0.0, -2.0, 3.0]),
                    ("two_zeros", [0.0, 2.0, 0.0, -1.5])]:
        pv = torch.tensor(v)
        lp = pv.clone().requires_grad_()
        out = torch.prod(lp)
        t.update({f"prod.{name}.input": pv, f"prod.{name}.out": out.detach().reshape(1),
                  f"prod.{name}.grad": _grad_of(out, [lp])[0]})
    pm = torch.tensor([[1.5, 0.0, -2.0], [0.0, 2.0, 0.0], [0.5, 3.0, -1.0]])
    lpm = pm.clone().requires_grad_()
    out = torch.prod(lpm, 1)
    g = torch.randn(3)
    t.update({"prod.dim1.input": pm, "prod.dim1.out": out.detach(), "prod.dim1.upstream": g,
              "prod.dim1.grad": _grad_of(out, [lpm], g)[0]})
    # std / var with correction 0, 1, 2: over everything and along dim 1.
    sv = torch.randn(3, 5)
    t["stdvar.input"] = sv
    gd = torch.randn(3)
    t["stdvar.dim1.upstream"] = gd
    for name, fn in [("std", torch.std), ("var", torch.var)]:
        for c in (0, 1, 2):
            lsv = sv.clone().requires_grad_()
            out = fn(lsv, dim=None, correction=c)
            t[f"{name}.c{c}.all.out"] = out.detach().reshape(1)
            t[f"{name}.c{c}.all.grad"] = _grad_of(out, [lsv])[0]
            lsv = sv.clone().requires_grad_()
            out = fn(lsv, dim=1, correction=c)
            t[f"{name}.c{c}.dim1.out"] = out.detach()
            t[f"{name}.c{c}.dim1.grad"] = _grad_of(out, [lsv], gd)[0]
    # any / all along each dim and over everything.
    bm = torch.tensor([[True, False, False], [False, False, False], [True, True, True],
                       [False, True, False]])
    t["anyall.input"] = bm
    for name, fn in [("any", torch.any), ("all", torch.all)]:
        t[f"{name}.all"] = fn(bm).reshape(1)
        for dim in (0, 1):
            t[f"{name}.dim{dim}"] = fn(bm, dim=dim)
    meta = {"loss": "gradients of sum(out * upstream); of out itself for *.all.* and prod.<case>",
            "std_var": "correction c: divide by N - c (N = 15 for all, 5 for dim 1)",
            "scalars": "0-d results are stored with shape [1]"}
    return t, meta


def double_backward():
    t = {}
    # (1) Hessian-vector product of a 2-layer tanh MLP, loss = sum over the batch of out^2.
    torch.manual_seed(15)
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    x = torch.randn(5, 4)
    names = [n for n, _ in mlp.named_parameters()]
    params = list(mlp.parameters())
    vs = [torch.randn(p.shape) for p in params]
    loss = (mlp(x) ** 2).sum()
    grads = torch.autograd.grad(loss, params, create_graph=True)
    hv = torch.autograd.grad(grads, params, vs)
    t["hvp.input.x"] = x
    t["hvp.loss"] = loss.detach().reshape(1)
    for n, p, v, g, h in zip(names, params, vs, grads, hv):
        t.update({"hvp.param." + n: p.detach().clone(), "hvp.v.param." + n: v,
                  "hvp.grad.param." + n: g.detach(), "hvp.hv.param." + n: h})
    # (2) WGAN-GP gradient penalty of a Linear(6,16)-LeakyReLU(0.2)-Linear(16,1) critic.
    torch.manual_seed(16)
    critic = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.LeakyReLU(0.2),
                                 torch.nn.Linear(16, 1))
    real, fake = torch.randn(4, 6), torch.randn(4, 6)
    alpha = torch.rand(4, 1)
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_()
    d = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)[0]  # (4, 6)
    penalty = ((d.norm(2, dim=1) - 1) ** 2).mean()
    cnames = [n for n, _ in critic.named_parameters()]
    # The last bias does not reach d (critic is affine in it): its gradient is stored as zeros.
    cgrads = torch.autograd.grad(penalty, list(critic.parameters()), allow_unused=True)
    t.update({"wgan_gp.input.real": real, "wgan_gp.input.fake": fake, "wgan_gp.input.alpha": alpha,
              "wgan_gp.x_hat": x_hat.detach(), "wgan_gp.grad_x_hat": d.detach(),
              "wgan_gp.penalty": penalty.detach().reshape(1)})
    for n, p, g in zip(cnames, critic.parameters(), cgrads):
        t["wgan_gp.param." + n] = p.detach().clone()
        t["wgan_gp.grad.param." + n] = torch.zeros_like(p) if g is None else g
    # (3) MultiheadAttention double backward.
    torch.manual_seed(17)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    randomize_vectors(mha)
    q = torch.randn(2, 3, 8, requires_grad=True)  # (B, L, E)
    k = torch.randn(2, 4, 8, requires_grad=True)  # (B, S, E)
    v = torch.randn(2, 4, 8, requires_grad=True)
    out, _ = mha(q, k, v, need_weights=False)
    G = torch.randn(out.shape)
    g_q, g_w = torch.autograd.grad((out * G).sum(), [q, mha.in_proj_weight], create_graph=True)
    V1, V2 = torch.randn(g_q.shape), torch.randn(g_w.shape)
    s = (g_q * V1).sum() + (g_w * V2).sum()
    mnames = [n for n, _ in mha.named_parameters()]
    leaves = list(mha.parameters()) + [q, k, v]
    second = torch.autograd.grad(s, leaves, allow_unused=True)
    t.update({"mha.input.query": q.detach(), "mha.input.key": k.detach(), "mha.input.value": v.detach(),
              "mha.output": out.detach(), "mha.upstream": G, "mha.v.input.query": V1,
              "mha.v.param.in_proj_weight": V2, "mha.first.grad.input.query": g_q.detach(),
              "mha.first.grad.param.in_proj_weight": g_w.detach(), "mha.s": s.detach().reshape(1)})
    for n, p in mha.named_parameters():
        t["mha.param." + n] = p.detach().clone()
    for n, g, leaf in zip(mnames + ["input.query", "input.key", "input.value"], second, leaves):
        key = ("mha.grad." + n) if n.startswith("input.") else ("mha.grad.param." + n)
        t[key] = torch.zeros_like(leaf) if g is None else g
    meta = {"hvp": "Sequential(Linear(4,8), Tanh, Linear(8,1)); loss = sum(mlp(x)^2) over batch 5; "
                   "hv = autograd.grad(autograd.grad(loss, params, create_graph=True), params, v)",
            "wgan_gp": "critic Sequential(Linear(6,16), LeakyReLU(0.2), Linear(16,1)); "
                       "x_hat = alpha*real + (1-alpha)*fake; d = grad(critic(x_hat).sum(), x_hat); "
                       "penalty = ((||d||_2 over dim 1) - 1)^2 .mean(); grad.param = d penalty / d param",
            "mha": "MultiheadAttention(8, 2, batch_first=True), B 2, L 3, S 4, no masks; "
                   "g_q, g_w = grad(sum(out * upstream), [query, in_proj_weight], create_graph=True); "
                   "s = sum(g_q * v.input.query) + sum(g_w * v.param.in_proj_weight); "
                   "grad.* = d s / d every parameter and input (zeros where unused)"}
    return t, meta


def gqa():
    # Grouped-query attention (issue 11). torch 1.13 has no enable_gqa, so the reference
    # is the composite with K/V repeated over the query heads by repeat_interleave. E 8,
    # h 4, B 2, L 3, S 5 (cross-attention: separate key and value inputs), for g in 4, 2, 1;
    # a lower-right causal mask (query i sees keys j <= i + S - L) and a key_padding_mask.
    E, h, B, L, S = 8, 4, 2, 3, 5
    d = E // h
    causal = torch.ones(L, S, dtype=torch.bool).tril(S - L)  # (L, S), true = may attend
    key_padding = torch.arange(S) >= torch.tensor([[5], [4]])  # (B, S), true = ignore (lengths 5, 4)
    t = {"mask.attn": causal, "mask.key_padding": key_padding}
    for g in (4, 2, 1):
        torch.manual_seed(20 + g)
        proj = torch.nn.ModuleDict({"q_proj": torch.nn.Linear(E, E), "k_proj": torch.nn.Linear(E, g * d),
                                    "v_proj": torch.nn.Linear(E, g * d), "out_proj": torch.nn.Linear(E, E)})
        randomize_vectors(proj)
        query = torch.randn(B, L, E, requires_grad=True)
        key = torch.randn(B, S, E, requires_grad=True)
        value = torch.randn(B, S, E, requires_grad=True)
        q = proj["q_proj"](query).view(B, L, h, d).transpose(1, 2)  # (B, h, L, d)
        k = proj["k_proj"](key).view(B, S, g, d).transpose(1, 2).repeat_interleave(h // g, dim=1)
        v = proj["v_proj"](value).view(B, S, g, d).transpose(1, 2).repeat_interleave(h // g, dim=1)
        allowed = causal & ~key_padding.view(B, 1, 1, S)  # (B, 1, L, S)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, -math.inf)
        w = torch.softmax(scores, dim=-1)  # (B, h, L, S)
        out = proj["out_proj"]((w @ v).transpose(1, 2).reshape(B, L, E))
        up = torch.randn_like(out)
        (out * up).sum().backward()
        p = f"g{g}."
        t.update({p + "param." + n: x.detach().clone() for n, x in proj.named_parameters()})
        t.update({p + "grad.param." + n: x.grad.clone() for n, x in proj.named_parameters()})
        for n, x in (("query", query), ("key", key), ("value", value)):
            t[p + "input." + n] = x.detach().clone()
            t[p + "grad.input." + n] = x.grad.clone()
        t.update({p + "output": out.detach(), p + "attn_weights": w.detach(), p + "upstream": up})
    meta = {"embed_dim": E, "num_heads": h, "num_kv_heads": "4, 2, 1 (key prefix g4., g2., g1.)",
            "reference": "composite attention with K/V repeat_interleave'd over heads (torch 1.13)",
            "causal": "lower_right", "loss": "sum(output * upstream)"}
    return t, meta


# ---- issue 11: LLaMA's building blocks (see tests/fixtures/README.md) -------------------

def _rotate_half(x):
    """Hugging Face's LLaMA: [x1, x2] -> [-x2, x1] over the halves of the last dim."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope():
    # HF's LlamaRotaryEmbedding + apply_rotary_pos_emb (tables in float64 here; HF builds
    # inv_freq in float32), positions offset .. offset + L - 1 taken from a table of
    # max_position rows through position_ids, as HF's cached decoding does.
    torch.manual_seed(21)
    B, h, L, d, max_position = 2, 2, 5, 8, 16
    t = {}
    for name, base, offset in [("base10000.offset0", 10000.0, 0), ("base500.offset7", 500.0, 7)]:
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        pos = torch.arange(max_position, dtype=torch.float64)
        freqs = torch.einsum("i,j->ij", pos, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)  # (max_position, d)
        position_ids = torch.arange(offset, offset + L)
        cos, sin = emb.cos()[position_ids], emb.sin()[position_ids]  # (L, d)
        q = torch.randn(B, h, L, d, requires_grad=True)
        out = q * cos + _rotate_half(q) * sin
        G = torch.randn(out.shape)
        (gq,) = torch.autograd.grad((out * G).sum(), [q])
        t.update({f"{name}.cos": cos, f"{name}.sin": sin, f"{name}.input.x": q.detach(),
                  f"{name}.output": out.detach(), f"{name}.upstream": G, f"{name}.grad.input.x": gq})
    meta = {"model": "out = x * cos + rotate_half(x) * sin, rotate_half([x1, x2]) = [-x2, x1]; "
                     "cos/sin rows = positions offset..offset+L-1, inv_freq = 1/base^(2i/d), "
                     "columns i and i+d/2 share frequency i (HF LlamaRotaryEmbedding)",
            "shapes": "x (B 2, h 2, L 5, d 8); grad = d sum(out * upstream) / d x"}
    return t, meta


def _rms_norm(x, n_dims, weight, eps):
    """PyTorch 2.4's rms_norm composite (torch 1.13 has none)."""
    dims = tuple(range(-n_dims, 0))
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y if weight is None else y * weight


def rms_norm():
    torch.manual_seed(22)
    t = {}
    for name, shape, norm, affine, eps in [("last_dim", (3, 4, 8), (8,), True, 1e-6),
                                           ("two_dims_no_weight", (3, 4, 8), (4, 8), False, None)]:
        x = (torch.randn(shape) * 2 + 0.5).requires_grad_()
        w = (1 + 0.1 * torch.randn(norm)).requires_grad_() if affine else None
        out = _rms_norm(x, len(norm), w, eps)
        G = torch.randn(out.shape)
        leaves = [x] + ([w] if affine else [])
        grads = torch.autograd.grad((out * G).sum(), leaves)
        t.update({f"{name}.input.x": x.detach(), f"{name}.output": out.detach(),
                  f"{name}.upstream": G, f"{name}.grad.input.x": grads[0]})
        if affine:
            t.update({f"{name}.param.weight": w.detach(), f"{name}.grad.param.weight": grads[1]})
    meta = {"model": "y = x * rsqrt(mean(x^2 over normalized dims) + eps) * weight (PyTorch 2.4 rms_norm)",
            "last_dim": "normalized_shape (8,), weight, eps 1e-6",
            "two_dims_no_weight": "normalized_shape (4, 8), no weight, eps None = finfo(float64).eps"}
    return t, meta


def swiglu():
    # LLaMA's FeedForward: w2(silu(w1(x)) * w3(x)), Linear layers without bias.
    torch.manual_seed(23)
    dim, hidden = 6, 10
    mods = {n: torch.nn.Linear(i, o, bias=False)
            for n, i, o in [("w1", dim, hidden), ("w2", hidden, dim), ("w3", dim, hidden)]}
    x = torch.randn(2, 3, dim, requires_grad=True)  # (B, L, E)
    out = mods["w2"](F.silu(mods["w1"](x)) * mods["w3"](x))
    G = torch.randn(out.shape)
    (out * G).sum().backward()
    t = {"input.x": x.detach(), "output": out.detach(), "upstream": G, "grad.input.x": x.grad.clone()}
    for n, m in mods.items():
        t[f"param.{n}.weight"] = m.weight.detach().clone()
        t[f"grad.param.{n}.weight"] = m.weight.grad.clone()
    meta = {"model": "out = w2(silu(w1(x)) * w3(x)), w1, w3 Linear(6, 10), w2 Linear(10, 6), no bias",
            "loss": "sum(out * upstream)"}
    return t, meta


# ---- driver ---------------------------------------------------------------------

FIXTURES = [masked_softmax, mha_worked_example, mha_self_causal, mha_cross_kdim_vdim,
            mha_additive_nobias, transformer_post_norm, layers_and_loss,
            ops_special_values, ops_ties, ops_pad, ops_einsum, ops_losses, ops_scan_reduce,
            double_backward, gqa, rope, rms_norm, swiglu]


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
    known = [fn.__name__ for fn in FIXTURES]
    for name in args.only or []:
        if name not in known:
            ap.error(f"unknown fixture '{name}'; known: {', '.join(known)}")
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
