#!/usr/bin/python3
"""Reference values for tests/optim/test_optim.cpp from real torch.optim (PyTorch 1.13).

Not used by the build or the tests: run it by hand when the optimizer tests change,

    /usr/bin/python3 tools/optim_reference.py > /tmp/optim_ref.inc

(Debian: apt-get install python3-torch) and paste its output into kTorchTrajectories
in tests/optim/test_optim.cpp. The initial values, gradients and configurations below must
stay identical to the test's (p0, grad_at, kConfigs in tests/optim/optim_test_util.h).

For each configuration it prints the parameter, a (2, 3) float64 tensor, after each of
kSteps optimizer steps, as a C++ initializer.

    /usr/bin/python3 tools/optim_reference.py --more > /tmp/optim_more.inc

prints the same for EXTRA_CONFIGS (RMSprop, Adagrad) and then, for SCHEDULES, the lr
(and momentum) each scheduler sets, for tests/optim/test_optim_more.cpp (kTorchMore) and
tests/optim/test_optim_more/schedules.cpp (kTorchSchedules); same p0, grad_at and
configurations.

    /usr/bin/python3 tools/optim_reference.py --variants > /tmp/optim_variants.inc

prints VARIANT_CONFIGS (Adamax, NAdam, RAdam) for tests/optim/test_optim_variants.cpp
(kTorchVariants).
"""
import sys

import torch

N = 6           # elements of the parameter, shape (2, 3)
K_STEPS = 6     # optimizer steps
SCALES = [2.0, 1.0, 0.5, 1.5, 0.25, 0.125]  # shrinking gradients make amsgrad matter


def p0(i):
    # -0.75, 0.5, 0, -0.5, 0.75, 0.25: exact in binary
    return 0.25 * ((i * 5) % 7) - 0.75


def grad_at(k, i):
    # multiples of 1/32 in [-2, 2], some of them 0: exact in binary
    return SCALES[k] * ((((3 * i + 5 * k) % 9) - 4) / 4.0)


# name, torch.optim class, keyword arguments (same order and values as kConfigs)
CONFIGS = [
    ("sgd", torch.optim.SGD, dict(lr=0.1)),
    ("sgd_wd", torch.optim.SGD, dict(lr=0.1, weight_decay=0.05)),
    ("sgd_momentum", torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    ("sgd_dampening", torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("sgd_nesterov", torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("sgd_nesterov_wd", torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("sgd_all", torch.optim.SGD, dict(lr=0.1, momentum=0.5, dampening=0.5, weight_decay=0.1)),
    ("adam", torch.optim.Adam, dict(lr=0.01)),
    ("adam_wd", torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    ("adam_amsgrad", torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.9), amsgrad=True)),
    ("adam_amsgrad_wd", torch.optim.Adam,
     dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.05, amsgrad=True)),
    ("adamw", torch.optim.AdamW, dict(lr=0.01, weight_decay=0.01)),
    ("adamw_amsgrad", torch.optim.AdamW, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
]


# name, class, keyword arguments (same order and values as kMoreConfigs)
EXTRA_CONFIGS = [
    ("rmsprop", torch.optim.RMSprop, dict(lr=0.01)),
    ("rmsprop_wd", torch.optim.RMSprop, dict(lr=0.01, alpha=0.9, weight_decay=0.1)),
    ("rmsprop_momentum", torch.optim.RMSprop, dict(lr=0.01, alpha=0.8, momentum=0.9, eps=1e-6)),
    ("rmsprop_centered", torch.optim.RMSprop, dict(lr=0.01, alpha=0.9, centered=True)),
    ("rmsprop_all", torch.optim.RMSprop,
     dict(lr=0.02, alpha=0.7, eps=1e-4, weight_decay=0.05, momentum=0.5, centered=True)),
    ("adagrad", torch.optim.Adagrad, dict(lr=0.1)),
    ("adagrad_decay", torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.5, weight_decay=0.1)),
    ("adagrad_init", torch.optim.Adagrad, dict(lr=0.05, initial_accumulator_value=0.5, eps=1e-3)),
]

# name, class, keyword arguments (same order and values as kVariantConfigs in
# tests/optim/test_optim_variants.cpp): printed with --variants.
VARIANT_CONFIGS = [
    ("adamax", torch.optim.Adamax, dict(lr=0.02)),
    ("adamax_wd", torch.optim.Adamax, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("nadam", "NAdam2", dict(lr=0.02)),
    ("nadam_all", "NAdam2", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.05, momentum_decay=0.01)),
    ("radam", torch.optim.RAdam, dict(lr=0.02)),
    ("radam_rect", torch.optim.RAdam, dict(lr=0.01, betas=(0.8, 0.5), weight_decay=0.1)),
]

S = torch.optim.lr_scheduler
K_SCHED = 12  # scheduler steps


def plateau_metrics():
    # improves, stalls (equal, then within the rel threshold), worsens, improves again
    return [5.0, 4.0, 4.0, 3.9999, 4.5, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0]


# name, optimizer factory, scheduler factory (same order and values as kScheduleConfigs);
# each prints the lr (and momentum / beta1) before the first step and after each step.
SCHEDULES = [
    ("multistep", lambda p: torch.optim.SGD([p], lr=0.1),
     lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5)),
    ("exponential", lambda p: torch.optim.SGD([p], lr=0.1), lambda o: S.ExponentialLR(o, gamma=0.9)),
    ("onecycle_cos", lambda p: torch.optim.SGD([p], lr=0.1, momentum=0.9),
     lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=K_SCHED)),
    ("onecycle_linear", lambda p: torch.optim.Adam([p], lr=0.1),
     lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=K_SCHED + 1, pct_start=0.25, anneal_strategy="linear",
                            div_factor=10.0, final_div_factor=100.0)),
    ("onecycle_three", lambda p: torch.optim.SGD([p], lr=0.1, momentum=0.9),
     lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=K_SCHED, three_phase=True, base_momentum=0.8,
                            max_momentum=0.9)),
    ("onecycle_nomom", lambda p: torch.optim.Adagrad([p], lr=0.1),
     lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=K_SCHED + 2, cycle_momentum=False, pct_start=0.5)),
    ("plateau_min", lambda p: torch.optim.SGD([p], lr=0.1),
     lambda o: S.ReduceLROnPlateau(o, patience=1, factor=0.5)),
    ("plateau_max_abs", lambda p: torch.optim.SGD([p], lr=0.1),
     lambda o: S.ReduceLROnPlateau(o, mode="max", patience=0, factor=0.5, threshold=0.5, threshold_mode="abs",
                                   cooldown=2, min_lr=0.02)),
]


def schedule(make_opt, make_sched):
    p = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = make_opt(p)
    sched = make_sched(opt)
    g = opt.param_groups[0]

    def mom():
        return g["betas"][0] if "betas" in g else g.get("momentum", 0.0)
    out = [(g["lr"], mom())]
    for k in range(K_SCHED):
        opt.step()
        if isinstance(sched, S.ReduceLROnPlateau):
            sched.step(plateau_metrics()[k])
        else:
            sched.step()
        out.append((g["lr"], mom()))
    return out


class NAdam2(torch.optim.Optimizer):
    """torch.optim.NAdam as PyTorch 2.x computes it (single tensor). 1.13's
    _single_tensor_nadam takes mu_product_next = mu_product * mu * mu_next, counting mu
    twice (fixed in 2.0: mu_product * mu_next); attograd follows 2.x, so its reference is
    this line-for-line copy of 2.x's loop, in 1.13's tensors."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd, eps, psi = group["lr"], group["weight_decay"], group["eps"], group["momentum_decay"]
            for param in group["params"]:
                st = self.state[param]
                if not st:
                    st["step"], st["mu_product"] = 0, 1.0
                    st["exp_avg"], st["exp_avg_sq"] = torch.zeros_like(param), torch.zeros_like(param)
                st["step"] += 1
                step = st["step"]
                grad = param.grad
                bias_correction2 = 1 - beta2 ** step
                if wd != 0:
                    grad = grad.add(param, alpha=wd)
                mu = beta1 * (1. - 0.5 * (0.96 ** (step * psi)))
                mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * psi)))
                st["mu_product"] *= mu
                mu_product_next = st["mu_product"] * mu_next
                st["exp_avg"].mul_(beta1).add_(grad, alpha=1 - beta1)
                st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = st["exp_avg_sq"].div(bias_correction2).sqrt().add_(eps)
                param.addcdiv_(grad, denom, value=-lr * (1. - mu) / (1. - st["mu_product"]))
                param.addcdiv_(st["exp_avg"], denom, value=-lr * mu_next / (1. - mu_product_next))


def trajectory(cls, kwargs):
    if cls == "NAdam2":
        cls = NAdam2
    p = torch.tensor([p0(i) for i in range(N)], dtype=torch.float64).reshape(2, 3)
    p.requires_grad_(True)
    opt = cls([p], **kwargs)
    out = []
    for k in range(K_STEPS):
        p.grad = torch.tensor([grad_at(k, i) for i in range(N)], dtype=torch.float64).reshape(2, 3)
        opt.step()
        out.append(p.detach().reshape(-1).tolist())
    return out


def main():
    more = "--more" in sys.argv[1:]
    variants = "--variants" in sys.argv[1:]
    flag = " --more" if more else " --variants" if variants else ""
    print(f"// Generated by tools/optim_reference.py{flag} with torch {torch.__version__}:")
    print("// the parameter after each step, float64.")
    for name, cls, kwargs in (EXTRA_CONFIGS if more else VARIANT_CONFIGS if variants else CONFIGS):
        print(f'{{"{name}",')
        print("  {")
        for row in trajectory(cls, kwargs):
            print("    {" + ", ".join(repr(v) for v in row) + "},")
        print("  }},")
    if not more:
        return
    print("// ---- schedules: (lr, momentum or beta1) before the first step and after each step")
    for name, make_opt, make_sched in SCHEDULES:
        print(f'{{"{name}",')
        print("  {")
        for lr, m in schedule(make_opt, make_sched):
            print(f"    {{{lr!r}, {float(m)!r}}},")
        print("  }},")


if __name__ == "__main__":
    main()
