#!/usr/bin/python3
"""Writes tests/fixtures/torch_indexing.safetensors: Python indexing (x[...] and
x[...] = v) in PyTorch, for tests/ops/test_advanced_indexing.cpp, which writes each case
as LibTorch's x.index({...}) / x.index_put_({...}, v) with the same name.

Every case indexes x = arange(120).reshape(4, 5, 6) + 0.5 (float64, requires grad):
  get.<case>.out     x[spec]
  get.<case>.grad    d/dx sum(x[spec] * w), w = arange(1, n + 1) in x[spec]'s shape
  put.<case>.out     y = x * 1; y[spec] = v (or index_put_(..., accumulate=True))
  put.<case>.grad_x  d/dx sum(y * w), w = arange(1, 121) in x's shape
  put.<case>.grad_v  d/dv of the same
  put.<case>.v       the values written
The index tensors are literals in both files (the specs must agree).

Same writer as tools/make_fixtures.py (byte-identical reruns); made with torch 1.13.

  tools/make_index_fixtures.py            # rewrite tests/fixtures/torch_indexing.safetensors
  tools/make_index_fixtures.py --out DIR  # write it somewhere else
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import fixture_main  # noqa: E402

L = torch.long
i1 = torch.tensor([2, 0, -1, 2], dtype=L)
a2 = torch.tensor([[0, 4], [1, 2]], dtype=L)
b2 = torch.tensor([[5, 0], [-1, 3]], dtype=L)
r3 = torch.tensor([0, 3, 1], dtype=L)
c3 = torch.tensor([1, 2, 5], dtype=L)
col = torch.tensor([[0], [2], [3]], dtype=L)
row = torch.tensor([1, 4], dtype=L)
m4 = torch.tensor([True, False, True, True])
m45 = torch.tensor([[(i * 5 + j) % 3 == 0 for j in range(5)] for i in range(4)])
empty = torch.tensor([], dtype=L)

GET = {
    "basic_mix": lambda x: x[:, None, 0, 1::2],
    "ellipsis_last": lambda x: x[..., 2],
    "ellipsis_mid": lambda x: x[1, ..., 1:4],
    "negative_int_and_slices": lambda x: x[-1, -3:, ::3],
    "slice_clamped": lambda x: x[1:100, -100:2],
    "all_ellipsis": lambda x: x[...],
    "zero_d_int_tensor": lambda x: x[torch.tensor(2)],
    "bool_true": lambda x: x[True, 1],
    "bool_false": lambda x: x[False],
    "adv_one_repeated": lambda x: x[i1],
    "adv_two_adjacent": lambda x: x[:, a2, b2],
    "adv_nonadjacent": lambda x: x[r3, :, c3],
    "adv_broadcast": lambda x: x[col, row],
    "adv_then_slice": lambda x: x[i1, 1:3],
    "none_then_adv": lambda x: x[None, i1, ..., 0],
    "int_between_adv": lambda x: x[r3, 1, c3],
    "mask_rows": lambda x: x[m4],
    "mask_2d": lambda x: x[m45],
    "mask_and_index": lambda x: x[m4, :, c3],
    "empty_index": lambda x: x[empty],
}

PUT = {  # name: (spec applied as y[spec] = v, v's shape or a number, accumulate)
    "basic_broadcast": (lambda y, v: y.__setitem__((slice(None), 1, slice(None, None, 2)), v), (3,), False),
    "adv_rows": (lambda y, v: y.__setitem__(r3, v), (5, 6), False),
    "mask_scalar": (lambda y, v: y.__setitem__(m45, v), 7.0, False),
    "adv_nonadjacent": (lambda y, v: y.__setitem__((r3, slice(None), c3), v), (3, 5), False),
    "accumulate_repeated": (lambda y, v: y.index_put_((i1, torch.tensor([0, 1, 2, 1], dtype=L)), v,
                                                       accumulate=True), (4, 6), True),
}


def make():
    t = {}
    for name, fn in GET.items():
        x = (torch.arange(120, dtype=torch.float64).reshape(4, 5, 6) + 0.5).requires_grad_()
        out = fn(x)
        w = torch.arange(1, out.numel() + 1, dtype=torch.float64).reshape(out.shape)
        (out * w).sum().backward()
        t[f"get.{name}.out"] = out.detach().clone()
        t[f"get.{name}.grad"] = x.grad.clone()
    for name, (fn, vshape, _) in PUT.items():
        x = (torch.arange(120, dtype=torch.float64).reshape(4, 5, 6) + 0.5).requires_grad_()
        if isinstance(vshape, float):
            v = torch.tensor(vshape, dtype=torch.float64, requires_grad=True)
        else:
            n = 1
            for s in vshape:
                n *= s
            v = (torch.arange(n, dtype=torch.float64).reshape(vshape) * -1.0 - 1.0).requires_grad_()
        y = x * 1
        fn(y, v)
        w = torch.arange(1, 121, dtype=torch.float64).reshape(4, 5, 6)
        (y * w).sum().backward()
        t[f"put.{name}.out"] = y.detach().clone()
        t[f"put.{name}.grad_x"] = x.grad.clone()
        t[f"put.{name}.grad_v"] = v.grad.clone()
        t[f"put.{name}.v"] = v.detach().clone()
    return t, {"torch": torch.__version__, "x": "arange(120).reshape(4, 5, 6) + 0.5, float64"}


def main():
    return fixture_main(__doc__, "torch_indexing.safetensors", make)


if __name__ == "__main__":
    sys.exit(main())
