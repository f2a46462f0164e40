#!/usr/bin/python3
"""Regenerates the PyTorch reference tensors in tests/fixtures/ (see its README.md): the
model fixtures the parity tests use (masked softmax, MultiheadAttention, Transformer,
Embedding -> Linear -> LayerNorm -> cross-entropy) and the op-semantics fixtures of
issue 10 (ops_special_values, ops_ties, ops_pad, ops_einsum, ops_losses, ops_scan_reduce,
double_backward), the LLaMA blocks of issue 11 (rope, rms_norm, swiglu) and the
convolutional family of issue 40 (cnn_ops, cnn_modules) and the recurrent networks of
issue 41 (rnn_modules), and the learning-rate schedules and L-BFGS of issue 42
(lr_schedulers, lbfgs).

Every file is float64, built from a fixed torch.manual_seed, and written as safetensors
by this script itself (8-byte little-endian header length, compact JSON header with the
keys sorted and __metadata__ last, padded with spaces to a multiple of 8, then the raw
little-endian data in key order), so a rerun gives byte-identical files.

The fixtures themselves live in tools/fixtures/, one module per concern (common: the
writer and shared helpers; models; ops_semantics; ops_losses; double_backward; llama; cnn;
rnn; schedulers; lbfgs);
this script lists them in FIXTURES and writes them.

Needs Debian's PyTorch (apt install python3-torch; made with torch 1.13). The C++ build
and the tests never need PyTorch: they only read the committed files.

  tools/make_fixtures.py                 # rewrite tests/fixtures/*.safetensors
  tools/make_fixtures.py --out DIR       # write them somewhere else
  tools/make_fixtures.py --check         # regenerate into a temp dir, compare bytes
  tools/make_fixtures.py --only NAME ... # just these files
"""
import argparse
import filecmp
import os
import sys
import tempfile

import torch

# DEFAULT_OUT, HALF_DTYPES, fixture_main, randomize_vectors and save are imported from here
# by the other tools/make_*.py scripts.
from fixtures.cnn import cnn_modules, cnn_ops
from fixtures.common import DEFAULT_OUT, HALF_DTYPES, fixture_main, randomize_vectors, save  # noqa: F401
from fixtures.double_backward import double_backward
from fixtures.llama import gqa, rms_norm, rope, swiglu
from fixtures.models import (layers_and_loss, masked_softmax, mha_additive_nobias, mha_cross_kdim_vdim,
                             mha_self_causal, mha_worked_example, transformer_post_norm)
from fixtures.ops_losses import ops_losses, ops_scan_reduce
from fixtures.ops_semantics import ops_einsum, ops_pad, ops_special_values, ops_ties
from fixtures.rnn import rnn_modules
from fixtures.lbfgs import lbfgs
from fixtures.schedulers import lr_schedulers

# ---- driver ---------------------------------------------------------------------

FIXTURES = [masked_softmax, mha_worked_example, mha_self_causal, mha_cross_kdim_vdim,
            mha_additive_nobias, transformer_post_norm, layers_and_loss,
            ops_special_values, ops_ties, ops_pad, ops_einsum, ops_losses, ops_scan_reduce,
            double_backward, gqa, rope, rms_norm, swiglu, cnn_ops, cnn_modules, rnn_modules,
            lr_schedulers, lbfgs]


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
