"""Analytic GEMM flops of tools/bench's workloads (forward; forward + backward counts 3x):
the GFLOP/s columns of its report divide these by the measured times."""


def copy_step_flops(E, F, B=80, S=10, T=9, V=11, layers=2):
    """Matmul flops of one copy-task forward: S source and T = len - 1 target positions."""
    ns, nt = B * S, B * T
    attn_self = lambda n, L: 2 * n * E * 3 * E + 2 * 2 * B * L * L * E + 2 * n * E * E  # in_proj, QK^T, AV, out
    ffn = lambda n: 2 * 2 * n * E * F
    enc = attn_self(ns, S) + ffn(ns)
    cross = 2 * nt * E * E + 2 * ns * E * 2 * E + 2 * 2 * B * T * S * E + 2 * nt * E * E
    dec = attn_self(nt, T) + cross + ffn(nt)
    return layers * (enc + dec) + 2 * nt * E * V


def mha_flops(B, L, E):
    """Self-attention forward, dense scores (a causal mask does not reduce the count)."""
    return 2 * B * L * E * 3 * E + 2 * 2 * B * L * L * E + 2 * B * L * E * E


def gqa_flops(B, L, E, heads, kv_heads):
    """mha_flops with the key and value projections narrowed to E * kv_heads / heads."""
    kv = E * kv_heads // heads
    return 2 * B * L * E * (E + 2 * kv) + 2 * 2 * B * L * L * E + 2 * B * L * E * E



def gpt_step_flops(B=32, T=64, E=128, layers=4, V=65):
    """Matmul flops of one GPT forward: per block QKV, scores, AV, out, MLP 4x; the head."""
    n = B * T
    block = 2 * n * E * 3 * E + 2 * 2 * B * T * T * E + 2 * n * E * E + 2 * 2 * n * E * 4 * E
    return layers * block + 2 * n * E * V
