#!/usr/bin/env python3
"""Rebuilds the copy-task model in PyTorch, loads attograd's exported state dict and
checks that greedy decoding gives the same tokens on the same held-out sequences.

    /usr/bin/python3 tools/check_copy_model.py [runs/copy]

Needs PyTorch (Debian: apt-get install python3-torch); run by hand, never by the build
or the tests. Reads <run>/model.safetensors and <run>/eval.safetensors written by
examples/copy_task. Uses safetensors.torch when installed, else a small reader of the
same format (8-byte little-endian header length, JSON header, raw data).
"""
import json
import math
import struct
import sys

import torch
from torch import nn

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}


def load_file(path):
    try:
        from safetensors.torch import load_file as st_load
        return st_load(path), None
    except ImportError:
        pass
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", None)
    data = raw[8 + n :]
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=DTYPES[info["dtype"]]) if b > a else torch.empty(0, dtype=DTYPES[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    return out, meta


class Seq2Seq(nn.Module):
    """The model of examples/copy/seq2seq.h, with the same parameter names."""

    def __init__(self, vocab, d_model, heads, layers, d_ff, max_len):
        super().__init__()
        self.d_model = d_model
        self.src_embed = nn.Embedding(vocab, d_model)
        self.tgt_embed = nn.Embedding(vocab, d_model)
        self.register_buffer("pe", torch.zeros(max_len, d_model))
        self.drop = nn.Dropout(0.0)
        self.transformer = nn.Transformer(d_model, heads, layers, layers, d_ff, dropout=0.0, batch_first=True)
        self.generator = nn.Linear(d_model, vocab)

    def embed(self, table, ids):
        return table(ids) * math.sqrt(self.d_model) + self.pe[: ids.shape[1]]

    @torch.no_grad()
    def greedy_decode(self, src, steps, start=1):
        pad = src == 0  # PyTorch's key_padding_mask: True = padding
        memory = self.transformer.encoder(self.embed(self.src_embed, src), src_key_padding_mask=pad)
        ys = torch.full((src.shape[0], 1), start, dtype=torch.long)
        for _ in range(steps):
            T = ys.shape[1]
            causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = masked
            h = self.transformer.decoder(self.embed(self.tgt_embed, ys), memory, tgt_mask=causal,
                                         memory_key_padding_mask=pad)
            nxt = self.generator(h[:, -1]).argmax(-1, keepdim=True)
            ys = torch.cat([ys, nxt], 1)
        return ys[:, 1:]


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else "runs/copy"
    state, _ = load_file(f"{run}/model.safetensors")
    ev, meta = load_file(f"{run}/eval.safetensors")
    cfg = {k: int(v) for k, v in (meta or {}).items()}
    model = Seq2Seq(cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["layers"], cfg["d_ff"], state["pe"].shape[0])
    model.load_state_dict(state, strict=True)
    model.eval()
    src, decoded, target = ev["src"], ev["decoded"], ev["target"]
    ours = model.greedy_decode(src, decoded.shape[1])
    same = (ours == decoded).all(dim=1)
    exact = ((ours == target) | (target == 0)).all(dim=1)
    print(f"{run}: {len(src)} held-out sequences")
    print(f"  PyTorch decodes the same tokens as attograd for {int(same.sum())}/{len(src)} sequences")
    print(f"  PyTorch exact-sequence accuracy {100 * exact.float().mean():.1f}%")
    if not bool(same.all()):
        bad = int((~same).nonzero()[0])
        print(f"  first difference: sequence {bad}: attograd {decoded[bad].tolist()} PyTorch {ours[bad].tolist()}")
        sys.exit(1)


if __name__ == "__main__":
    main()
