#!/usr/bin/python3
"""Writes tests/fixtures/torch_tensor_methods.txt: the public method and attribute names
of torch.Tensor (dir(torch.Tensor) without a leading underscore), sorted, one a line.

tests/ops/test_tensor_methods.cpp reads it and checks that every public attograd op whose
name is among them has a method form on ag::Tensor (or a listed reason why not), so that
a new op without its method fails that test. Made with Debian's python3-torch 1.13.

  tools/make_torch_method_list.py            # rewrite the fixture
  tools/make_torch_method_list.py --check    # compare with the committed file, exit 1 on a difference
  tools/make_torch_method_list.py --out F    # write elsewhere
"""
import argparse
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "torch_tensor_methods.txt"


def method_names():
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=FIXTURE)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = "".join(n + "\n" for n in method_names())
    if args.check:
        same = FIXTURE.read_text() == text
        print(f"{FIXTURE.name}: {'same' if same else 'DIFFERENT'} (torch {torch.__version__})")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(method_names())} names, torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
