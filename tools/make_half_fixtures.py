#!/usr/bin/python3
"""Writes tests/fixtures/half_conversion.safetensors: PyTorch's f32 -> bf16 / f16 and
f64 -> bf16 / f16 conversions (`x.bfloat16()`, `x.half()`) and back to f32, on inputs
built from bit patterns: round-to-nearest-even ties (bf16 and f16, even and odd), +-0,
+-inf, NaNs (quiet, signalling, negative, with payloads), bf16 overflow (f32 max rounds to
inf), f16 overflow (65504 stays, 65520 is the tie that rounds to inf), f16 subnormals and
their ties (2^-25 rounds to 0, 1.5 * 2^-24 to 2 * 2^-24), f32 subnormals, min/max normals,
random values over 16 decades and random bit patterns. tests/core/test_half.cpp compares
attograd's conversions with these bits.

Keys (all 1-D, same length per group):
  input          F32  the inputs
  bf16, f16      BF16 / F16  torch's x.bfloat16() / x.half() (raw little-endian bits)
  bf16.f32       F32  x.bfloat16().float()
  f16.f32        F32  x.half().float()
  input.f64      F64  doubles whose f64 -> half rounding differs from rounding once
                      (1 + 2^-8 + 2^-40 ...) and random doubles
  f64.bf16, f64.f16   BF16 / F16  torch's cast of input.f64 (it goes through f32)

PyTorch's contiguous f32 -> bf16 loop is vectorized and writes 0xFFFF for every NaN,
its scalar path (torch.full, strided copies) 0x7FC0; attograd writes 0x7FC0 always, so
the test compares NaNs as NaNs and every other value bit for bit.

Own writer (the one of tools/make_fixtures.py writes F64/I64/BOOL only), same format:
keys sorted, compact JSON padded to 8 bytes, __metadata__ last; byte-identical reruns.
Needs Debian's python3-torch (made with torch 1.13).

  tools/make_half_fixtures.py            # rewrite tests/fixtures/half_conversion.safetensors
  tools/make_half_fixtures.py --out DIR  # write it somewhere else
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import DEFAULT_OUT, HALF_DTYPES, save  # noqa: E402


def f32_from_bits(bits):
    signed = [b - (1 << 32) if b >= 1 << 31 else b for b in bits]
    return torch.tensor(signed, dtype=torch.int32).view(torch.float32)


def special_bits():
    b = [
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000,              # +-0, +-inf
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC12345, 0xFFBFFFFF,  # NaNs
        0x3F800000, 0xBF800000, 0x40490FDB,                          # 1, -1, pi
        # bf16 ties (16 dropped bits = 0x8000): even stays, odd rounds up; just below/above
        0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0xBF818000, 0x4B7F8000,
        # bf16 overflow: f32 max rounds to inf; the tie above bf16's max (odd) too
        0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0xFF7FFFFF, 0x7F7F0000,
        # f32 subnormals (bf16 keeps them) and the min normal
        0x00000001, 0x80000001, 0x00007FFF, 0x00008000, 0x00018000, 0x007FFFFF, 0x00800000,
        # f16 ties in the normal range (13 dropped bits = 0x1000)
        0x3F801000, 0x3F803000, 0x3F801001, 0x3F800FFF, 0xC0003000,
        # f16 max 65504, 65519.996 (stays), 65520 (the tie: inf), 65536, -65520, 1e5
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0xC77FF000, 0x47C35000,
        # f16 min normal 2^-14, just below it, max subnormal, smallest 2^-24
        0x38800000, 0x387FFFFF, 0x387FC000, 0x33800000,
        # f16 subnormal ties: 2^-25 -> 0, 1.5 * 2^-24 -> 2^-23, 2.5 * 2^-24 -> 2^-23,
        # just above 2^-25 -> 2^-24, 3 * 2^-26, 2^-26, tie rounding into the min normal
        0x33000000, 0x33C00000, 0x34200000, 0x33000001, 0x32C00000, 0x32800000, 0x387FE000,
        0xB3C00000, 0xB3000000,
    ]
    return b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    torch.manual_seed(25)
    special = f32_from_bits(special_bits())
    mags = torch.pow(10.0, torch.empty(2000, dtype=torch.float64).uniform_(-8, 8)).float()
    spread = torch.randn(2000) * mags
    small = torch.randn(500) * 2.0 ** -20  # f16 subnormals
    raw_bits = torch.randint(-(1 << 31), 1 << 31, (2000,), dtype=torch.int64).to(torch.int32).view(torch.float32)
    x = torch.cat([special, spread, small, raw_bits])

    d_special = torch.tensor([1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, 1 + 3 * 2**-9 - 2**-40, 65520 - 2**-30,
                              2**-25 + 2**-60, -(1 + 2**-8 + 2**-40), 1e300, -1e-300, 0.1, 1 / 3],
                             dtype=torch.float64)
    d_rand = torch.randn(1000, dtype=torch.float64) * torch.pow(10.0, torch.empty(1000, dtype=torch.float64).uniform_(-6, 6))
    d = torch.cat([d_special, d_rand])

    tensors = {
        "input": x,
        "bf16": x.bfloat16(),
        "f16": x.half(),
        "bf16.f32": x.bfloat16().float(),
        "f16.f32": x.half().float(),
        "input.f64": d,
        "f64.bf16": d.bfloat16(),
        "f64.f16": d.half(),
    }
    meta = {"torch": torch.__version__, "script": "tools/make_half_fixtures.py",
            "special": len(special_bits())}
    os.makedirs(args.out, exist_ok=True)
    save(os.path.join(args.out, "half_conversion.safetensors"), tensors, meta, dtypes=HALF_DTYPES)


if __name__ == "__main__":
    main()
