#!/usr/bin/env python3
"""PyTorch's side of tools/bench: the twin of ag_bench.cpp, with the same command line
and the same one-line JSON output.

    /usr/bin/python3 tools/benchmarks/torch_bench.py --workload N --threads T --reps R --warmup W
        [--quantize none|dynamic-int8] [--autocast none|bf16] [--batch N]

Workloads (float32, same shapes and model as ag_bench):
  1  copy-task training step, d_model 64, 4 heads, d_ff 256, 2+2 layers, batch 80, length 10
  2  the same at d_model 512, 8 heads, d_ff 2048
  3  nn.MultiheadAttention forward + backward, B 16, L = S = 256, E 256, 8 heads
  4  nn.MultiheadAttention forward + backward, B 1, L = S = 4096, E 256, 4 heads, causal
  5  torch.matmul 1024 x 1024 x 1024 (for reference; the target compares attograd with
     a direct cblas_sgemm, which ag_bench measures)
  6  greedy decoding of 1000 copy-task sequences without a KV cache (nn.Transformer has
     none), as tools/check_copy_model.py decodes
  7  decoder-only GPT training step: vocab 65, context 64, width 128, 4 pre-norm blocks
     (LayerNorm, nn.MultiheadAttention causal, GELU MLP 4x), 4 heads, learned positions,
     untied bias-free head, batch 32, dropout 0.1; AdamW (3e-3, betas 0.9/0.99, decay 0.1),
     clip 1, cross entropy on random windows
  8  greedy decoding with that GPT (eval) at batch 1, one start token then 63 new tokens,
     recomputing the whole prefix for every token (no KV cache)
  9  the same at batch 32
 10  one point of tools/bench --sweep: MultiheadAttention forward + backward at the
     --L, --B, --E, --heads, --causal given
 11  grouped-query attention forward + backward, B 16, L 256, E 256, 8 query heads sharing
     2 key/value heads, causal; PyTorch 1.13 has neither GQA nor
     scaled_dot_product_attention, so it is written with tensor ops (GQA below)
 12  greedy decoding at batch 32 with a LLaMA-style GPT (RMSNorm and rotary positions by
     hand, GQA 8 heads / 2 kv heads, SwiGLU, no biases): vocab 65, context 64, width 128,
     4 blocks; one start token, 63 new tokens, recomputing the prefix for every token
 13  greedy decoding at batch 1 with the 151M LLaMA of ag_bench's workload 13 (issue 26):
     width 1024, 16 heads of 64 (no GQA), 12 blocks, SwiGLU 2736, RMSNorm, rotary, no
     biases, vocab 65, context 64, random weights; one start token, 63 new tokens with a
     KV cache (written by hand: keys and values concatenated per layer, as
     nn::DecoderKVCache grows them)
 14  the same at batch 32
 13, 14 with --quantize dynamic-int8: torch.quantization.quantize_dynamic(model,
     {nn.Linear}, dtype=torch.qint8) (fbgemm: u8 activations per tensor with a zero point,
     int8 weights per tensor, reduce_range)
 16  CNN training step: the Fashion-MNIST example's default classifier (a small ResNet:
     conv 3x3 1 -> 32 + BatchNorm + ReLU, torchvision BasicBlocks 32, 64 stride 2, 128
     stride 2, mean over the pixels, Linear(128, 10)) in train mode on one fixed random
     batch (128, 1, 28, 28); cross entropy, backward, SGD (Nesterov momentum 0.9, weight
     decay 5e-4 on the conv and Linear weights only, lr 0.008); --batch N; --autocast bf16:
     the forward and the loss under torch.autocast("cpu", dtype=torch.bfloat16), the f32
     step timed too, interleaved, as "extra.f32"
 17  F.conv2d forward + backward: input (8, 64, 56, 56) requiring grad, weight (64, 64, 3,
     3), padding 1, no bias, backward from ones; --batch N
 18  nn.LSTM(512, 512, num_layers=2) forward + backward on a random time-major input
     (100, 32, 512); loss = output.sum(), backward to every parameter, gradients set to
     None before each repetition; --batch N
 19  nn.GRU(512, 512, num_layers=2) inference at batch 1 (eval, torch.no_grad): a
     repetition is 100 calls of one time step each (1, 1, 512), the hidden state carried
     from call to call (a streaming decoder), from zeros

Threads: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are set to T before torch is imported
(this Debian build calls OpenBLAS, whose pool torch.set_num_threads does not size), then
torch.set_num_threads(T).

Memory: rss_before_kb is the resident set after `import torch`, before the workload
builds anything; peak_rss_kb is resource.getrusage's ru_maxrss; peak_delta_kb their
difference. Exits with status 3 when PyTorch cannot be imported.
"""
import argparse
import json
import math
import os
import resource
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", type=int, required=True, choices=range(1, 20))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    for k, v in (("L", 256), ("B", 16), ("E", 256), ("heads", 8), ("causal", 0)):  # workload 10
        p.add_argument(f"--{k}", type=int, default=v)
    p.add_argument("--quantize", default="none", choices=("none", "dynamic-int8"))  # workloads 13, 14
    p.add_argument("--autocast", default="none", choices=("none", "bf16"))  # workload 16
    p.add_argument("--batch", type=int, default=0)  # workloads 16, 17, 18 (0: 128, 8 and 32)
    a = p.parse_args()
    if a.workload == 15:
        p.error("workload 15 (memory bandwidth) is ag_bench's only")
    if a.quantize != "none" and a.workload not in (13, 14):
        p.error("--quantize (torch.quantization.quantize_dynamic) is for workloads 13 and 14 only")
    if a.autocast != "none" and a.workload != 16:
        p.error("--autocast is for workload 16 here (torch_bench.py's GPT step has none)")
    if a.batch < 0 or (a.batch and a.workload not in (16, 17, 18)):
        p.error("--batch takes a positive batch, for workloads 16, 17 and 18")
    return a


ARGS = parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
try:
    import torch
    from torch import nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"torch_bench: PyTorch is not installed for {sys.executable} ({e}); "
          "Debian: apt-get install python3-torch", file=sys.stderr)
    sys.exit(3)


def current_rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGESIZE") // 1024)


def run_reps(main, companions=()):
    """Warm-up, then ARGS.reps timed calls of main (and of each companion right after it)."""
    for _ in range(ARGS.warmup):
        main()
        for _, f in companions:
            f()
    times, extra = [], {name: [] for name, _ in companions}
    for _ in range(ARGS.reps):
        t0 = time.perf_counter()
        main()
        times.append(time.perf_counter() - t0)
        for name, f in companions:
            t0 = time.perf_counter()
            f()
            extra[name].append(time.perf_counter() - t0)
    return times, extra


# ---- the copy-task model (examples/copy/seq2seq.h) -----------------------------------
# B batch, S source length, T target length, E d_model, V vocabulary.
VOCAB, LEN, BATCH = 11, 10, 80


def sinusoidal_positions(max_len, E):
    pe = torch.zeros(max_len, E)  # (max_len, E)
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(0, E, 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, i / E)
    pe[:, 0::2] = torch.sin(angle).float()
    pe[:, 1::2] = torch.cos(angle).float()
    return pe


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, d_ff, dropout=0.1, max_len=64):
        super().__init__()
        self.d_model = d_model
        self.src_embed = nn.Embedding(vocab, d_model)
        self.tgt_embed = nn.Embedding(vocab, d_model)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model))
        self.drop = nn.Dropout(dropout)
        self.transformer = nn.Transformer(d_model, heads, layers, layers, d_ff, dropout=dropout, batch_first=True)
        self.generator = nn.Linear(d_model, vocab)
        nn.init.normal_(self.src_embed.weight, 0.0, 1.0 / math.sqrt(d_model))
        nn.init.normal_(self.tgt_embed.weight, 0.0, 1.0 / math.sqrt(d_model))

    def embed(self, table, ids):  # (B, n) -> (B, n, E)
        return self.drop(table(ids) * math.sqrt(self.d_model) + self.pe[: ids.shape[1]])

    def forward(self, src, tgt_in):  # (B, S), (B, T) -> (B, T, V)
        T = tgt_in.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = masked
        src_pad = src == 0  # PyTorch's key_padding_mask: True = padding
        h = self.transformer(self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt_in),
                             tgt_mask=causal, src_key_padding_mask=src_pad,
                             tgt_key_padding_mask=tgt_in == 0, memory_key_padding_mask=src_pad)
        return self.generator(h)

    @torch.no_grad()
    def greedy_decode(self, src, steps, start=1):  # (B, S) -> (B, steps)
        pad = src == 0
        memory = self.transformer.encoder(self.embed(self.src_embed, src), src_key_padding_mask=pad)
        ys = torch.full((src.shape[0], 1), start, dtype=torch.long)
        for _ in range(steps):
            T = ys.shape[1]
            causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            h = self.transformer.decoder(self.embed(self.tgt_embed, ys), memory, tgt_mask=causal,
                                         memory_key_padding_mask=pad)
            nxt = self.generator(h[:, -1]).argmax(-1, keepdim=True)
            ys = torch.cat([ys, nxt], 1)
        return ys[:, 1:]


def copy_batch(B, gen):
    """Copy task of examples/copy/data.h at full length: src = [1, c...], tgt = src."""
    src = torch.randint(2, VOCAB, (B, LEN), generator=gen)
    src[:, 0] = 1
    return src, src[:, :-1], src[:, 1:]  # src (B, S), tgt_in (B, T), tgt_out (B, T)


# ---- 1, 2: copy-task training step -------------------------------------------------
def copy_training(d_model, heads, d_ff):
    torch.manual_seed(1)
    model = Seq2Seq(VOCAB, d_model, heads, 2, d_ff)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    warmup, factor = 200, 2.0  # Noam, as optim::NoamScheduler(opt, d_model, 2.0, 200)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: factor * d_model ** -0.5 * min(max(s, 1) ** -0.5, max(s, 1) * warmup ** -1.5))
    gen = torch.Generator().manual_seed(7920)

    def step():
        src, tgt_in, tgt_out = copy_batch(BATCH, gen)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt_out.reshape(-1), ignore_index=0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss.item()

    times, extra = run_reps(step)
    return times, extra, {"d_model": d_model, "heads": heads, "d_ff": d_ff, "batch": BATCH, "len": LEN}


# ---- 3, 4: MultiheadAttention forward + backward ----------------------------------
def mha(B, L, E, heads, causal):
    torch.manual_seed(0)
    attn = nn.MultiheadAttention(E, heads, batch_first=True)
    x = torch.randn(B, L, E, requires_grad=True)  # (B, L, E)
    dout = torch.ones(B, L, E)
    mask = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1) if causal else None  # (L, S)

    def step():
        attn.zero_grad(set_to_none=True)
        x.grad = None
        out, _ = attn(x, x, x, attn_mask=mask, need_weights=False)  # (B, L, E)
        out.backward(dout)

    times, extra = run_reps(step)
    return times, extra, {"B": B, "L": L, "E": E, "heads": heads, "causal": causal}


# ---- 5: matmul -------------------------------------------------------------------------
def matmul():
    n = 1024
    torch.manual_seed(0)
    a, b = torch.randn(n, n), torch.randn(n, n)
    times, extra = run_reps(lambda: torch.matmul(a, b))
    return times, extra, {"n": n}


# ---- 6: greedy decoding without a cache ---------------------------------------------
def decoding():
    torch.manual_seed(1)
    model = Seq2Seq(VOCAB, 64, 4, 2, 256)
    model.eval()
    n, steps = 1000, LEN - 1
    src, _, _ = copy_batch(n, torch.Generator().manual_seed(12345))
    times, extra = run_reps(lambda: model.greedy_decode(src, steps))
    return times, extra, {"sequences": n, "steps": steps, "tokens": n * steps}


# ---- 7, 8, 9: the GPT (examples/lm/gpt.h with its GPT-2 switches) ---------------------
GPT_VOCAB, CONTEXT, GPT_E, GPT_HEADS, GPT_LAYERS, GPT_BATCH = 65, 64, 128, 4, 4, 32


class Block(nn.Module):
    def __init__(self, E, heads, dropout):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(E), nn.LayerNorm(E)
        self.attn = nn.MultiheadAttention(E, heads, dropout=dropout, batch_first=True)
        self.fc, self.proj = nn.Linear(E, 4 * E), nn.Linear(4 * E, E)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):  # (B, T, E), (T, T) bool -> (B, T, E)
        a = self.ln_1(x)
        h = x + self.drop(self.attn(a, a, a, attn_mask=mask, need_weights=False)[0])
        return h + self.drop(self.proj(F.gelu(self.fc(self.ln_2(h)))))


class GPT(nn.Module):
    def __init__(self, vocab, context, E, heads, layers, dropout):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab, E), nn.Embedding(context, E)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(E, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(E)
        self.head = nn.Linear(E, vocab, bias=False)

    def forward(self, ids):  # (B, T) -> (B, T, V)
        T = ids.shape[1]
        x = self.drop(self.tok_emb(ids) + self.pos_emb(torch.arange(T)))
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = masked
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln_f(x))


def make_gpt():
    torch.manual_seed(1)
    return GPT(GPT_VOCAB, CONTEXT, GPT_E, GPT_HEADS, GPT_LAYERS, 0.1)


def gpt_training():
    model = make_gpt()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=0.1)
    gen = torch.Generator().manual_seed(7920)

    def step():
        w = torch.randint(0, GPT_VOCAB, (GPT_BATCH, CONTEXT + 1), generator=gen)  # (B, T + 1) windows
        logits = model(w[:, :-1])  # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, GPT_VOCAB), w[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    times, extra = run_reps(step)
    return times, extra, {"vocab": GPT_VOCAB, "context": CONTEXT, "d_model": GPT_E, "heads": GPT_HEADS,
                          "layers": GPT_LAYERS, "batch": GPT_BATCH, "dropout": 0.1}


def gpt_decoding(B):
    model = make_gpt()
    model.eval()
    return decode_times(model, B)


def decode_times(model, B):
    """B sequences from one start token to the full context, recomputing the prefix."""
    steps = CONTEXT - 1

    @torch.no_grad()
    def decode():
        ids = torch.ones(B, 1, dtype=torch.long)  # (B, 1) start tokens
        for _ in range(steps):
            ids = torch.cat([ids, model(ids)[:, -1].argmax(-1, keepdim=True)], 1)
        return ids

    times, extra = run_reps(decode)
    return times, extra, {"batch": B, "steps": steps, "tokens": B * steps, "context": CONTEXT}


# ---- 11, 12: grouped-query attention and the LLaMA-style GPT (examples/lm/gpt.h) -----------
from torch_llama import GQA, Llama, causal_mask, llama_step  # noqa: E402  (after torch is set up)


def gqa(B, L, E, heads, kv_heads):
    torch.manual_seed(0)
    attn = GQA(E, heads, kv_heads)
    x = torch.randn(B, L, E, requires_grad=True)  # (B, L, E)
    dout = torch.ones(B, L, E)
    mask = causal_mask(L)

    def step():
        attn.zero_grad(set_to_none=True)
        x.grad = None
        attn(x, mask).backward(dout)

    times, extra = run_reps(step)
    return times, extra, {"B": B, "L": L, "E": E, "heads": heads, "kv_heads": kv_heads, "causal": True,
                          "parameters": sum(p.numel() for p in attn.parameters())}


def llama_decoding(B):
    torch.manual_seed(1)
    model = Llama(GPT_VOCAB, CONTEXT, GPT_E, 8, 2, GPT_LAYERS).eval()
    times, extra, info = decode_times(model, B)
    return times, extra, dict(info, parameters=sum(p.numel() for p in model.parameters()))


def llama_150m_decoding(B):
    torch.manual_seed(1)
    model = Llama(GPT_VOCAB, CONTEXT, 1024, 16, 16, 12).eval()
    params = sum(p.numel() for p in model.parameters())
    if ARGS.quantize == "dynamic-int8":
        model = torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    steps = CONTEXT - 1

    @torch.no_grad()
    def decode():
        caches = [None] * len(model.blocks)
        ids = torch.ones(B, 1, dtype=torch.long)  # (B, 1) start tokens
        out, nxt = [ids], llama_step(model, ids, caches, 0).argmax(-1, keepdim=True)
        for i in range(steps):
            out.append(nxt)
            if i + 1 < steps:
                nxt = llama_step(model, nxt, caches, i + 1).argmax(-1, keepdim=True)
        return torch.cat(out, 1)  # (B, context)

    times, extra = run_reps(decode)
    return times, extra, {"batch": B, "steps": steps, "tokens": B * steps, "context": CONTEXT,
                          "parameters": params, "quantize": ARGS.quantize,
                          "quantized_engine": torch.backends.quantized.engine}


# ---- 16: CNN training step (the Fashion-MNIST example's classifier) --------------------
# B batch, C channels, 28 x 28 pixels. The example's default, ResNet-9 narrowed (Page's
# DAWNBench net), with its names: stacks of conv 3x3 -> BatchNorm -> ReLU (-> max pool 2).
def conv_bn_relu(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class FashionCNN(nn.Module):
    def __init__(self, widths=(32, 64, 128), classes=10):
        super().__init__()
        c0, c1, c2, c3 = widths[0] // 2, *widths
        self.prep = nn.Sequential(*conv_bn_relu(1, c0))  # (B, c0, 28, 28)
        self.layer1 = nn.Sequential(*conv_bn_relu(c0, c1), nn.MaxPool2d(2))  # (B, c1, 14, 14)
        self.res1 = nn.Sequential(*conv_bn_relu(c1, c1), *conv_bn_relu(c1, c1))
        self.layer2 = nn.Sequential(*conv_bn_relu(c1, c2), nn.MaxPool2d(2))  # (B, c2, 7, 7)
        self.layer3 = nn.Sequential(*conv_bn_relu(c2, c3), nn.MaxPool2d(2))  # (B, c3, 3, 3)
        self.res3 = nn.Sequential(*conv_bn_relu(c3, c3), *conv_bn_relu(c3, c3))
        self.fc = nn.Linear(c3, classes)

    def forward(self, x):  # (B, 1, 28, 28) -> (B, classes)
        h = self.layer1(self.prep(x))
        h = h + self.res1(h)
        h = self.layer3(self.layer2(h))
        h = h + self.res3(h)
        return self.fc(h.amax((2, 3)))  # global max pool


def cnn_training():
    B = ARGS.batch or 128
    torch.manual_seed(1)
    model = FashionCNN()
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=0.008, momentum=0.9, nesterov=True)
    gen = torch.Generator().manual_seed(7920)
    x = torch.randn(B, 1, 28, 28, generator=gen)  # (B, 1, 28, 28)
    y = torch.randint(0, 10, (B,), generator=gen)  # (B,)

    def step(amp):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)  # logits (B, 10)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    # Under --autocast the f32 step is timed too, interleaved ("extra.f32"), as ag_bench does.
    if ARGS.autocast == "none":
        times, extra = run_reps(lambda: step(False))
    else:
        times, extra = run_reps(lambda: step(True), [("f32", lambda: step(False))])
    return times, extra, {"batch": B, "parameters": sum(p.numel() for p in model.parameters()),
                          "autocast": ARGS.autocast}


# ---- 17: conv2d forward + backward (a ResNet stage's 3x3 layer) ----------------------------
def conv_layer():
    N, C, H = ARGS.batch or 8, 64, 56
    torch.manual_seed(0)
    x = torch.randn(N, C, H, H, requires_grad=True)  # (N, C, H, W)
    w = (torch.randn(C, C, 3, 3) / math.sqrt(9 * C)).requires_grad_()  # (C, C, 3, 3)
    dout = torch.ones(N, C, H, H)

    def step():
        x.grad = w.grad = None
        F.conv2d(x, w, None, 1, 1).backward(dout)  # (N, C, H, W)

    times, extra = run_reps(step)
    return times, extra, {"batch": N, "channels": C, "size": H, "kernel": 3, "padding": 1}


# ---- 18: LSTM forward + backward (T 100, B 32, I = H = 512, 2 layers, time-major) ----------
def lstm_training():
    T, B, H, L = 100, ARGS.batch or 32, 512, 2
    torch.manual_seed(0)
    lstm = nn.LSTM(H, H, num_layers=L)
    x = torch.randn(T, B, H)  # (T, B, I), not requiring grad

    def step():
        lstm.zero_grad(set_to_none=True)
        out, _ = lstm(x)  # (T, B, H)
        out.sum().backward()

    times, extra = run_reps(step)
    return times, extra, {"steps": T, "batch": B, "input_size": H, "hidden_size": H, "layers": L,
                          "parameters": sum(p.numel() for p in lstm.parameters())}


# ---- 19: GRU inference at B 1, one step per call (a streaming decoder) ------------------------
def gru_streaming():
    T, H, L = 100, 512, 2
    torch.manual_seed(0)
    gru = nn.GRU(H, H, num_layers=L).eval()
    x = torch.randn(T, 1, H)  # (T, 1, I): one step per call

    @torch.no_grad()
    def stream():
        h = torch.zeros(L, 1, H)  # (L, 1, H), carried from call to call
        for s in range(T):
            _, h = gru(x[s:s + 1], h)  # out (1, 1, H) unused
        return h

    times, extra = run_reps(stream)
    return times, extra, {"steps": T, "batch": 1, "input_size": H, "hidden_size": H, "layers": L,
                          "parameters": sum(p.numel() for p in gru.parameters())}


def main():
    torch.set_num_threads(ARGS.threads)
    rss_before = current_rss_kb()
    w = ARGS.workload
    if w == 1:
        times, extra, info = copy_training(64, 4, 256)
    elif w == 2:
        times, extra, info = copy_training(512, 8, 2048)
    elif w == 3:
        times, extra, info = mha(16, 256, 256, 8, False)
    elif w == 4:
        times, extra, info = mha(1, 4096, 256, 4, True)
    elif w == 5:
        times, extra, info = matmul()
    elif w == 6:
        times, extra, info = decoding()
    elif w == 7:
        times, extra, info = gpt_training()
    elif w in (8, 9):
        times, extra, info = gpt_decoding(1 if w == 8 else 32)
    elif w == 10:
        times, extra, info = mha(ARGS.B, ARGS.L, ARGS.E, ARGS.heads, bool(ARGS.causal))
    elif w == 11:
        times, extra, info = gqa(16, 256, 256, 8, 2)
    elif w == 12:
        times, extra, info = llama_decoding(32)
    elif w in (13, 14):
        times, extra, info = llama_150m_decoding(1 if w == 13 else 32)
    elif w == 16:
        times, extra, info = cnn_training()
    elif w == 17:
        times, extra, info = conv_layer()
    elif w == 18:
        times, extra, info = lstm_training()
    else:
        times, extra, info = gru_streaming()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    info["torch_version"] = torch.__version__
    print(json.dumps({"framework": "pytorch", "workload": w, "threads": ARGS.threads, "reps": ARGS.reps,
                      "warmup": ARGS.warmup, "times": times, "extra": extra, "info": info,
                      "rss_before_kb": rss_before, "peak_rss_kb": peak, "peak_delta_kb": peak - rss_before}))


if __name__ == "__main__":
    main()
