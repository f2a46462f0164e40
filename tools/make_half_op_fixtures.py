#!/usr/bin/python3
"""Writes PyTorch 1.13's bf16 / f16 results for the ops where rounding order matters
(issue 25), and a bf16 model file written by PyTorch:

  half_ops.safetensors               matmul, softmax, log_softmax, layer_norm, attention,
                                     MultiheadAttention; tests/ops/test_half_ops.cpp
  torch_bf16_encoder.safetensors     a TransformerEncoderLayer's state_dict in BF16, as
                                     PyTorch / Hugging Face ship it (state_dict keys only)
  torch_bf16_encoder_io.safetensors  its input and PyTorch's bf16 and f32 forwards;
                                     tests/nn/test_half_model.cpp

half_ops keys, per dtype d in bf16, f16 and case c (inputs stored in d):
  <d>.<c>.input.<name>  the inputs, in d
  <d>.<c>.out           PyTorch's result in d (see below for f16)
  <d>.<c>.once          the same op in f32 on the exactly widened inputs, rounded once to d
                        (PyTorch's CPU rule for the 16-bit floats: compute in f32, round once)
Cases: mm ([16, 256] @ [256, 16]), bmm ([2, 8, 256] @ [2, 256, 8]): K = 256 so that the
accumulation order shows; softmax, log_softmax over the last dim of [8, 128] (randn * 4);
layer_norm over the last dim of [8, 96] with weight and bias, eps 1e-5; attn: the math of
torch 1.13's nn.MultiheadAttention (F._scaled_dot_product_attention: q / sqrt(d), bmm with
k^T, softmax, bmm with v) on q [1, 2, 8, 32], k, v [1, 2, 10, 32], every step in d (so
the scores and the weights are rounded to d); `attn.weights` the weights. bf16 only:
mha, torch.nn.MultiheadAttention(32, 4, batch_first=True).to(torch.bfloat16) on query
[2, 6, 32], key and value [2, 9, 32] (cross-attention), need_weights=False;
`bf16.mha.param.<name>` its parameters (PyTorch's names), `bf16.mha.once` the f32 module
on the widened parameters and inputs, rounded once.

PyTorch 1.13 has no CPU f16 kernel for these ops ("addmm_impl_cpu_" not implemented for
'Half', and the same for softmax, log_softmax and layer_norm), so for f16 `out` is `once`, except for attn, whose f16 `out` and `weights` round each
step of the math to f16 (each step computed in f32, as torch's bf16 kernels do: the script
checks that this emulation gives torch's bf16 attention bit for bit).

The model: nn.TransformerEncoderLayer(32, 4, dim_feedforward 64, dropout 0, activation
"gelu", batch_first=True), post-norm, biases 0.1 * randn and LayerNorm weights
1 + 0.1 * randn, then .to(torch.bfloat16); its state_dict (PyTorch's keys and layout, BF16)
with metadata {"format": "pt"}. The io file: `input.src` BF16 [2, 7, 32], `output` BF16
(the bf16 module's eval forward with grad enabled, so torch's Python path, not the fused
fast path), `output.f32` F32 (the module in f32 on the widened bf16 weights and input).

Same writer and format as tools/make_fixtures.py (keys sorted, compact JSON padded to 8
bytes, __metadata__ last); every file is rebuilt byte for byte (`--check`).
Needs Debian's python3-torch (made with torch 1.13.1).

  tools/make_half_op_fixtures.py          # rewrite the three files in tests/fixtures
  tools/make_half_op_fixtures.py --check  # regenerate into a temp folder, compare bytes
  tools/make_half_op_fixtures.py --out DIR
"""
import argparse
import filecmp
import math
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import DEFAULT_OUT, HALF_DTYPES, save  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
FILES = ["half_ops.safetensors", "torch_bf16_encoder.safetensors", "torch_bf16_encoder_io.safetensors"]


def attention(q, k, v):
    """torch 1.13's F._scaled_dot_product_attention (what nn.MultiheadAttention runs),
    per head: q / sqrt(d), scores = q @ k^T, softmax, @ v. Every step in q's dtype."""
    q = q / math.sqrt(q.shape[-1])
    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return w @ v, w


def attention_steps(q, k, v, dt):
    """The same with each step in f32 rounded to dt: what torch's bf16 kernels give (checked
    below), and the f16 reference that torch 1.13 cannot compute natively."""
    r = lambda t: t.to(dt).float()  # noqa: E731
    # torch 1.13 converts a Python scalar to the tensor's dtype first: q / bf16(sqrt(d))
    q = r(q.float() / r(torch.tensor(math.sqrt(q.shape[-1]))))
    w = r(torch.softmax(r(q @ k.float().transpose(-2, -1)), dim=-1))
    return r(w @ v.float()).to(dt), w.to(dt)


def op_cases():
    """{case: (inputs {name: f32 tensor}, fn(*inputs) -> tensor or (tensor, weights))}."""
    g = torch.Generator().manual_seed(2501)

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=g) * scale + shift

    x_sm = randn(8, 128, scale=4.0)
    return {
        "mm": ({"a": randn(16, 256), "b": randn(256, 16)}, lambda a, b: a @ b),
        "bmm": ({"a": randn(2, 8, 256), "b": randn(2, 256, 8)}, lambda a, b: a @ b),
        "softmax": ({"x": x_sm}, lambda x: torch.softmax(x, -1)),
        "log_softmax": ({"x": x_sm}, lambda x: torch.log_softmax(x, -1)),
        "layer_norm": ({"x": randn(8, 96, scale=2.0, shift=0.5), "weight": randn(96, scale=0.1, shift=1.0),
                        "bias": randn(96, scale=0.1)},
                       lambda x, w, b: F.layer_norm(x, (96,), w, b, 1e-5)),
        "attn": ({"q": randn(1, 2, 8, 32), "k": randn(1, 2, 10, 32), "v": randn(1, 2, 10, 32)}, attention),
    }


def make_ops():
    tensors = {}
    for dname, dt in DTYPES.items():
        for case, (inputs, fn) in op_cases().items():
            xs = {n: t.to(dt) for n, t in inputs.items()}
            order = list(inputs)  # the fn's argument order
            once = fn(*[xs[n].float() for n in order])
            native = fn(*[xs[n] for n in order]) if dt == torch.bfloat16 else None
            if case == "attn":  # torch's bf16 steps are f32-then-round each; f16 emulates them
                steps = attention_steps(*[xs[n] for n in order], dt)
                if native is not None:
                    assert all(torch.equal(a, b) for a, b in zip(native, steps)), "bf16 attention steps"
                native = steps
            for n, t in xs.items():
                tensors[f"{dname}.{case}.input.{n}"] = t
            if case == "attn":
                tensors[f"{dname}.attn.weights"] = native[1]
                once, native = once[0], native[0]
            tensors[f"{dname}.{case}.once"] = once.to(dt)
            tensors[f"{dname}.{case}.out"] = native if native is not None else once.to(dt)
    torch.manual_seed(2502)
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    with torch.no_grad():
        mha.in_proj_bias.copy_(torch.randn(96) * 0.1)
        mha.out_proj.bias.copy_(torch.randn(32) * 0.1)
    mha = mha.to(torch.bfloat16).eval()
    q = torch.randn(2, 6, 32).bfloat16()
    kv = torch.randn(2, 9, 32).bfloat16()
    out = mha(q, kv, kv, need_weights=False)[0]  # grad enabled: the Python path
    mha32 = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
    mha32.load_state_dict({n: p.float() for n, p in mha.state_dict().items()})
    once = mha32(q.float(), kv.float(), kv.float(), need_weights=False)[0]
    for n, p in mha.named_parameters():
        tensors[f"bf16.mha.param.{n}"] = p
    tensors.update({"bf16.mha.input.query": q, "bf16.mha.input.kv": kv, "bf16.mha.out": out,
                    "bf16.mha.once": once.bfloat16()})
    meta = {"torch": torch.__version__, "script": "tools/make_half_op_fixtures.py", "layer_norm_eps": "1e-05",
            "f16": "out = once (torch 1.13 has no CPU f16 kernel for these ops)",
            "mha": "MultiheadAttention(32, 4, batch_first=True) in bf16, cross-attention, need_weights=False"}
    return tensors, meta


def make_model():
    torch.manual_seed(2503)
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, activation="gelu",
                                             batch_first=True)
    with torch.no_grad():
        for n, p in layer.named_parameters():
            if n.startswith("norm"):
                p.copy_(torch.randn(p.shape) * 0.1 + (1.0 if n.endswith("weight") else 0.0))
            elif p.dim() == 1:
                p.copy_(torch.randn(p.shape) * 0.1)
    layer = layer.to(torch.bfloat16).eval()
    src = torch.randn(2, 7, 32).bfloat16()
    out = layer(src)  # parameters require grad: torch's Python path, not the fused fast path
    layer32 = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, activation="gelu",
                                               batch_first=True).eval()
    layer32.load_state_dict({n: p.float() for n, p in layer.state_dict().items()})
    out32 = layer32(src.float())
    state = {n: p.detach() for n, p in layer.state_dict().items()}
    io = {"input.src": src, "output": out, "output.f32": out32}
    io_meta = {"torch": torch.__version__, "script": "tools/make_half_op_fixtures.py",
               "model": "TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0, activation=gelu, "
                        "batch_first=True), eval, in bf16 (output) and in f32 on the same weights (output.f32)"}
    return state, {"format": "pt"}, io, io_meta


def make(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    tensors, meta = make_ops()
    save(os.path.join(out_dir, FILES[0]), tensors, meta, dtypes=HALF_DTYPES)
    state, state_meta, io, io_meta = make_model()
    save(os.path.join(out_dir, FILES[1]), state, state_meta, dtypes=HALF_DTYPES)
    save(os.path.join(out_dir, FILES[2]), io, io_meta, dtypes=HALF_DTYPES)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="regenerate into a temp folder and compare bytes with --out")
    args = ap.parse_args()
    if not args.check:
        make(args.out)
        for name in FILES:
            print("wrote", os.path.join(args.out, name))
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        make(tmp)
        for name in FILES:
            same = filecmp.cmp(os.path.join(tmp, name), os.path.join(args.out, name), shallow=False)
            print("same" if same else "DIFFERS", name)
            bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
