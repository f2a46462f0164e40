#!/usr/bin/python3
"""Loads tests/fixtures/attograd_bf16.safetensors, written by attograd's save_safetensors
(tests/nn/test_half_model.cpp), in PyTorch and checks it (issue 25: attograd's bf16 file
loads in PyTorch):

- the header: every dtype is a name PyTorch / Hugging Face write (BF16, F16, F32), the
  data_offsets tile the data buffer in order, the buffer starts 8-byte aligned;
- the values: torch's own x.bfloat16() / x.half() of `values.f32` equal attograd's
  `values.bf16` / `values.f16` bit for bit (NaN as NaN: torch's vectorized loop writes
  0xFFFF, attograd 0x7FC0);
- the model: torch.nn.Sequential(Linear(16, 32), GELU(), LayerNorm(32), Linear(32, 8)),
  .to(torch.bfloat16), load_state_dict(strict=True) from the file's parameters, forward on
  `input`: within 2 ulps of attograd's `output` at the output's scale (max |output|): torch
  1.13's bf16 layer_norm is not "f32 then round once" (1 ulp at scale 1, see
  tests/ops/test_half_parity.cpp), attograd's is.

Parses the file itself (json header + torch.frombuffer), so the safetensors package is not
needed; when it is installed, safetensors.torch.load_file must give the same tensors.
Exit status 0 when every check passes. Needs Debian's python3-torch.

  tools/check_half_file.py [FILE]
"""
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "tests", "fixtures", "attograd_bf16.safetensors")
DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64}
MODEL_KEYS = ["0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"]


def load(path):
    """(tensors by name in file order, metadata, problems)."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    problems = []
    if (8 + n) % 8:
        problems.append(f"data buffer starts at {8 + n}, not 8-byte aligned")
    meta = header.pop("__metadata__", {})
    tensors, end = {}, 0
    for key, e in header.items():  # json keeps the file's order
        if e["dtype"] not in DTYPES:
            problems.append(f"{key}: dtype {e['dtype']} is not one PyTorch writes here")
            continue
        dt = DTYPES[e["dtype"]]
        begin, stop = e["data_offsets"]
        count = 1
        for s in e["shape"]:
            count *= s
        if begin != end or stop - begin != count * torch.tensor([], dtype=dt).element_size():
            problems.append(f"{key}: data_offsets {e['data_offsets']} do not follow {end} for shape {e['shape']}")
        end = stop
        tensors[key] = torch.frombuffer(bytearray(data[begin:stop]), dtype=dt).reshape(e["shape"])
    if end != len(data):
        problems.append(f"data buffer is {len(data)} bytes, the offsets cover {end}")
    return tensors, meta, problems


def same_bits(a, b):
    """Bit-identical 16-bit tensors, any NaN equal to any NaN."""
    nan = torch.isnan(a.float()) & torch.isnan(b.float())
    return bool(torch.equal(a.view(torch.int16)[~nan], b.view(torch.int16)[~nan]))


def ulps_at_scale(got, want):
    """max |got - want| in bf16 ulps of max |want| (2^(floor(log2 s) - 7))."""
    scale = want.float().abs().max().item()
    spacing = 2.0 ** (int(torch.floor(torch.log2(torch.tensor(max(scale, 2.0 ** -126)))).item()) - 7)
    return (got.float() - want.float()).abs().max().item() / spacing


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    t, meta, problems = load(path)
    print(f"{path}: {len(t)} tensors, metadata {meta}")
    for k in MODEL_KEYS + ["input", "output"]:
        if t.get(k) is None or t[k].dtype != torch.bfloat16:
            problems.append(f"{k}: missing or not BF16")
    if not problems:
        if not same_bits(t["values.f32"].bfloat16(), t["values.bf16"]):
            problems.append("values.bf16 differs from torch's values.f32.bfloat16()")
        if not same_bits(t["values.f32"].half(), t["values.f16"]):
            problems.append("values.f16 differs from torch's values.f32.half()")
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32),
                                    torch.nn.Linear(32, 8)).to(torch.bfloat16)
        model.load_state_dict({k: t[k] for k in MODEL_KEYS}, strict=True)
        with torch.no_grad():
            out = model(t["input"])
        u = ulps_at_scale(out, t["output"])
        differ = int((out != t["output"]).sum())
        print(f"torch bf16 forward vs attograd's output: {u} ulps at scale max|out|, "
              f"{differ} of {out.numel()} values differ")
        if u > 2:
            problems.append(f"torch's bf16 forward is {u} ulps (at scale) from attograd's output")
    try:
        from safetensors.torch import load_file
    except ImportError:
        print("safetensors package not installed: skipped its reader")
    else:
        other = load_file(path)
        as_bytes = lambda x: x.contiguous().reshape(-1).view(torch.uint8)  # noqa: E731
        if set(other) != set(t) or any(not torch.equal(as_bytes(other[k]), as_bytes(t[k])) for k in t):
            problems.append("safetensors.torch.load_file reads other tensors")
        else:
            print("safetensors.torch.load_file reads the same tensors")
    for p in problems:
        print("FAIL", p)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
