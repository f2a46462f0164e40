# Generates tests/ops/pointwise_specials.h: torch 1.13 values of the pointwise unary ops
# at special inputs, from the scalar path (1-element tensors), f64 and f32.
import math, struct, torch
import torch.nn.functional as F
S = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-310, math.inf, -math.inf, math.nan, 20.0, -20.0, 1e30]
OPS = [
 ("tan", torch.tan), ("asin", torch.asin), ("acos", torch.acos), ("atan", torch.atan),
 ("sinh", torch.sinh), ("cosh", torch.cosh), ("asinh", torch.asinh), ("acosh", torch.acosh),
 ("atanh", torch.atanh), ("log2", torch.log2), ("log10", torch.log10), ("log1p", torch.log1p),
 ("expm1", torch.expm1), ("exp2", torch.exp2), ("floor", torch.floor), ("ceil", torch.ceil),
 ("round", torch.round), ("round decimals 1", lambda x: torch.round(x, decimals=1)),
 ("round decimals -1", lambda x: torch.round(x, decimals=-1)),
 ("trunc", torch.trunc), ("frac", torch.frac), ("isinf", torch.isinf), ("isnan", torch.isnan),
 ("sign", torch.sign), ("isfinite", torch.isfinite),
 ("silu", F.silu), ("softplus", F.softplus), ("softplus beta 2 threshold 5", lambda x: F.softplus(x, 2, 5)),
 ("leaky_relu", F.leaky_relu), ("leaky_relu 0.2", lambda x: F.leaky_relu(x, 0.2)),
 ("elu", F.elu), ("elu 0.5", lambda x: F.elu(x, 0.5)), ("celu", F.celu), ("celu 0.5", lambda x: F.celu(x, 0.5)),
 ("selu", F.selu), ("relu6", F.relu6), ("hardtanh", F.hardtanh),
 ("hardtanh -2 0.5", lambda x: F.hardtanh(x, -2., 0.5)), ("hardsigmoid", F.hardsigmoid),
 ("hardswish", F.hardswish), ("mish", F.mish), ("logsigmoid", F.logsigmoid), ("softsign", F.softsign),
 ("gelu", F.gelu), ("gelu tanh", lambda x: F.gelu(x, approximate="tanh")),
]
def lit(v):
    if math.isnan(v): return "kNaN"
    if math.isinf(v): return "kInf" if v > 0 else "-kInf"
    if v == 0: return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    return float(v).hex()
def ulps(a, b, dt):
    if math.isnan(a) and math.isnan(b): return 0
    if a == b: return 0
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b): return 1e9
    f = 'f' if dt == torch.float32 else 'd'; i = 'i' if f == 'f' else 'q'
    ia = struct.unpack(i, struct.pack(f, a))[0]; ib = struct.unpack(i, struct.pack(f, b))[0]
    return abs(ia - ib)
out = []
worst = {}
for name, fn in OPS:
    rows = {}
    for dt in (torch.float64, torch.float32):
        vals = []
        for k, s in enumerate(S):
            v = fn(torch.tensor([s], dtype=dt)).double().item()
            vals.append(v)
            # torch's own vector path: the special at each position of 33
            for p in range(33):
                x = torch.full((33,), 0.25, dtype=dt); x[p] = s
                w = fn(x)[p].double().item()
                u = ulps(v, w, dt)
                if u and abs(v - w) > 1e-300:
                    key = (name, str(dt)); worst[key] = max(worst.get(key, (0,))[0], u), s
        rows[dt] = vals
    # d/dx at each special (f64, 1-element tensors); None for ops without a gradient
    grads = None
    if name not in ("isinf", "isnan", "sign", "isfinite"):
        grads = []
        for s in S:
            x = torch.tensor([s], dtype=torch.float64, requires_grad=True)
            fn(x).backward(torch.ones(1, dtype=torch.float64))
            grads.append(x.grad.item())
    rows["grad"] = grads
    out.append((name, rows))
import sys
for k, v in sorted(worst.items()): print("torch vector/scalar differ:", k, v, file=sys.stderr)
with open(sys.argv[1], "w") as f:
    f.write("#pragma once\n// clang-format off\n// (clang-format leaves this generated table as written: one row per line.)\n// Generated once by tools/gen_pointwise_specials.py (/usr/bin/python3, torch 1.13; the\n"
            "// tests never run it). Values of each op at kSpecials,\n"
            "// computed on 1-element tensors (PyTorch's scalar path), as f64 and as f32 (widened).\n"
            "#include <limits>\n\nnamespace pointwise_specials {\n"
            "inline constexpr double kInf = std::numeric_limits<double>::infinity();\n"
            "inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();\n"
            "inline constexpr double kSpecials[15] = {" + ", ".join(lit(s) for s in S) + "};\n"
            "// grad: d/dx in f64 (all zeros for ops without a gradient, has_grad false).\n"
            "struct Expected { const char* op; double f64[15]; double f32[15]; bool has_grad; double grad[15]; };\n"
            "inline const Expected kExpected[] = {\n")
    for name, rows in out:
        gr = rows["grad"]
        f.write('    {"%s",\n     {%s},\n     {%s},\n     %s, {%s}},\n' % (name, ", ".join(lit(v) for v in rows[torch.float64]),
                                                   ", ".join(lit(v) for v in rows[torch.float32]),
                                                   "true" if gr else "false", ", ".join(lit(v) for v in (gr or [0.0] * 15))))
    f.write("};\n}  // namespace pointwise_specials\n")

# Binary ops over every pair (a, b) of S (a major): values f64, f32; gradients f64.
BIN = [("atan2", torch.atan2), ("copysign", torch.copysign), ("logaddexp", torch.logaddexp),
       ("fmod", torch.fmod), ("remainder", torch.remainder),
       ("clamp min", lambda a, b: torch.clamp(a, min=b)), ("clamp max", lambda a, b: torch.clamp(a, max=b)),
       ("isclose", torch.isclose), ("isclose equal_nan", lambda a, b: torch.isclose(a, b, equal_nan=True))]
with open(sys.argv[1], "a") as f:
    f.write("\nnamespace pointwise_specials {\n"
            "// Binary ops at every pair (kSpecials[i], kSpecials[j]), index 15 i + j.\n"
            "struct ExpectedBinary { const char* op; double f64[225]; double f32[225]; double grad_a[225]; double grad_b[225]; };\n"
            "inline const ExpectedBinary kExpectedBinary[] = {\n")
    for name, fn in BIN:
        rows = {}
        for dt in (torch.float64, torch.float32):
            a = torch.tensor([x for x in S for _ in S], dtype=dt)
            b = torch.tensor([y for _ in S for y in S], dtype=dt)
            # one element at a time: PyTorch's scalar path
            rows[dt] = [fn(a[i:i+1], b[i:i+1]).double().item() for i in range(225)]
        ga, gb = [], []
        for i in range(225 if not name.startswith("isclose") else 0):
            a = torch.tensor([S[i // 15]], dtype=torch.float64, requires_grad=True)
            b = torch.tensor([S[i % 15]], dtype=torch.float64, requires_grad=True)
            fn(a, b).backward(torch.ones(1, dtype=torch.float64))
            ga.append(a.grad.item()); gb.append(b.grad.item() if b.grad is not None else 0.0)
        f.write('    {"%s",\n     {%s},\n     {%s},\n     {%s},\n     {%s}},\n' % (
            name, ", ".join(lit(v) for v in rows[torch.float64]), ", ".join(lit(v) for v in rows[torch.float32]),
            ", ".join(lit(v) for v in ga or [0.0] * 225), ", ".join(lit(v) for v in gb or [0.0] * 225)))
    f.write("};\n}  // namespace pointwise_specials\n")
