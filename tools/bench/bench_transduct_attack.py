"""Benchmark of GMSA (transduct-attack): wall time against the sum of its parts, memory against T.

1. Wall time: GMSA-AVG and GMSA-MIN against DANN on scikit-learn's digits, each against a reimplementation of
   the authors' GMSA loop (``reference_gmsa``: AVG accumulates gradients model by model as in A.1.3, MIN
   backpropagates the minimum of the stacked losses through one graph) run in the same process with the same
   generator seed; both ratios come from the same run (best of ``--repeats``), and "identical" checks that the
   package returns exactly the reference's round errors and selected U^(k).
2. Memory: peak bytes of autograd-saved activations while computing one ensemble gradient over M = T+1
   models, model by model (GMSA, flat in T) against the one-graph baseline that sums the losses of all
   models before a single backward (grows linearly in T). On CUDA, peak allocated memory is also printed.

    uv run python tools/bench/bench_transduct_attack.py            # small, about a minute on 2 cores
    uv run python tools/bench/bench_transduct_attack.py --paper    # T = 9, PGD 100 steps (paper A.2–A.5)
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

import transduct_attack as ta  # noqa: E402
from transduct_attack.networks import DomainAdversarialNet, SmallCNN, build  # noqa: E402
from transduct_attack.pgd import ensemble_gradient  # noqa: E402


def digits(device):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None].to(device)
    y = torch.tensor(d.target).to(device)
    return x[:1200], y[:1200], x[1200:], y[1200:]


def _project(x_adv, x, eps):
    return torch.minimum(torch.maximum(x_adv, x - eps), x + eps).clamp(0.0, 1.0)


def reference_gmsa(defense, x, y, *, eps, T, steps, mode, generator):
    """A reimplementation of the authors' GMSA loop (Algorithm 2, A.1.3), written independently of the package:
    AVG accumulates the gradient model by model (A.1.3); MIN stacks the per-sample losses of all models in one
    graph and backpropagates their minimum once; MIN's step count is multiplied by (i + 1) at the base step size.
    Returns the candidate U^(i) and the attacker's 0-1 error of F^(i+1) on it, for every round."""
    import torch.nn.functional as F

    models = [defense.base_model]
    alpha = 2.5 * eps / steps
    candidates, errors = [], []
    for i in range(T + 1):
        n_steps = steps * (i + 1) if mode == "min" else steps
        noise = torch.rand(x.shape, generator=generator, device=generator.device, dtype=x.dtype).to(x.device)
        x_adv = _project(x + (2 * noise - 1) * eps, x, eps)
        for _ in range(n_steps):
            if mode == "avg":
                grad = torch.zeros_like(x)
                for m in models:
                    xr = x_adv.detach().requires_grad_(True)
                    grad += torch.autograd.grad(F.cross_entropy(m(xr), y, reduction="none").sum(), xr)[0]
                grad = grad / len(models)
            else:
                xr = x_adv.detach().requires_grad_(True)
                losses = torch.stack([F.cross_entropy(m(xr), y, reduction="none") for m in models])
                grad = torch.autograd.grad(losses.min(0).values.sum(), xr)[0]
            x_adv = _project(x_adv + alpha * grad.sign(), x, eps)
        adaptation = defense.adapt(x_adv, state=None, generator=generator)
        with torch.no_grad():
            errors.append(float((adaptation.model(x_adv).argmax(1) != y).float().mean()))
        candidates.append(x_adv)
        models.append(adaptation.model)
    return candidates, errors


def wall_time(args, device):
    xtr, ytr, xte, yte = digits(config=device)
    x, y = xte[: args.points], yte[: args.points]
    g = torch.Generator().manual_seed(0)
    std = ta.train_classifier(build(lambda: SmallCNN(width=16), g, device=device), xtr, ytr, epochs=5,
                              generator=g)
    dann = ta.DANN(xtr[: args.gamma_train], ytr[: args.gamma_train], base_model=std, epochs=args.gamma_epochs,
                   alpha_max=1.0,
                   make_network=lambda gen: build(lambda: DomainAdversarialNet(width=16), gen, device=device))
    print(f"== wall time: GMSA vs the authors' loop (reimplemented), DANN, {args.points} points, T={args.T}, "
          f"PGD {args.steps} steps, best of {args.repeats} ==")
    print(f"{'mode':10s} {'package s':>10s} {'reference s':>12s} {'package / reference':>20s} {'identical':>10s}")
    for mode in ("avg", "min"):
        ours_s, ref_s = [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            res = ta.GMSA(mode=mode, T=args.T, solver=ta.PGD(steps=args.steps))(
                x, y, eps=args.eps, defense=dann, generator=torch.Generator().manual_seed(1))
            ours_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            cands, errors = reference_gmsa(dann, x, y, eps=args.eps, T=args.T, steps=args.steps, mode=mode,
                                           generator=torch.Generator().manual_seed(1))
            ref_s.append(time.perf_counter() - t)
        same = (tuple(errors) == res.round_errors and torch.equal(cands[res.selected_round], res.x_adv))
        print(f"gmsa-{mode:5s} {min(ours_s):10.2f} {min(ref_s):12.2f} {min(ours_s) / min(ref_s):20.3f} "
              f"{str(same):>10s}   (round errors {', '.join(f'{e:.2f}' for e in errors)})")


class SavedBytes:
    """Peak bytes of tensors saved for backward that are alive at the same time."""

    def __init__(self):
        self.live = 0
        self.peak = 0

    def _pack(self, t):
        meter = self
        n = t.numel() * t.element_size()

        class Holder:
            __slots__ = ("t",)

            def __init__(self, tensor):
                self.t = tensor
                meter.live += n
                meter.peak = max(meter.peak, meter.live)

            def __del__(self):
                meter.live -= n

        return Holder(t)

    def __enter__(self):
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda h: h.t)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)


def one_graph_gradient(models, x, y):
    xr = x.detach().requires_grad_(True)
    loss = sum(ta.cross_entropy(m(xr), y).sum() for m in models) / len(models)
    return torch.autograd.grad(loss, xr)[0]


def memory(args, device):
    x = torch.rand(args.mem_batch, 1, 8, 8, device=device)
    y = torch.randint(0, 10, (args.mem_batch,), device=device)
    print(f"\n== peak autograd-saved memory of one ensemble gradient, batch {args.mem_batch}, SmallCNN ==")
    print(f"{'T':>3s} {'models':>6s} {'AVG MiB':>8s} {'MIN MiB':>8s} {'one-graph MiB':>14s} {'one-graph / AVG':>16s}"
          + ("  cuda GMSA / one-graph MiB" if device.type == "cuda" else ""))
    gen = torch.Generator().manual_seed(0)
    pool = [build(lambda: SmallCNN(width=32), gen, device=device).eval() for _ in range(max(args.mem_T) + 1)]
    for T in args.mem_T:
        models = pool[: T + 1]
        with SavedBytes() as ours:
            ensemble_gradient(models, x, y, ta.cross_entropy, "avg")
        with SavedBytes() as ours_min:
            ensemble_gradient(models, x, y, ta.cross_entropy, "min")
        with SavedBytes() as naive:
            one_graph_gradient(models, x, y)
        extra = ""
        if device.type == "cuda":
            peaks = []
            for fn in (lambda ms=models: ensemble_gradient(ms, x, y, ta.cross_entropy, "avg"),
                       lambda ms=models: one_graph_gradient(ms, x, y)):
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                fn()
                torch.cuda.synchronize()
                peaks.append(torch.cuda.max_memory_allocated() / 2**20)
            extra = f"  {peaks[0]:9.1f} / {peaks[1]:9.1f}"
        print(f"{T:3d} {T + 1:6d} {ours.peak / 2**20:8.2f} {ours_min.peak / 2**20:8.2f} {naive.peak / 2**20:14.2f} "
              f"{naive.peak / max(ours.peak, 1):16.2f}{extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper", action="store_true", help="paper sizes: T=9, PGD 100 steps, 30 Γ epochs")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    args.T, args.steps, args.gamma_epochs, args.points = (9, 100, 30, 200) if args.paper else (3, 10, 1, 100)
    args.gamma_train = 1200 if args.paper else 300
    args.repeats = 3
    args.eps = 0.2
    args.mem_batch = 512 if args.paper else 256
    args.mem_T = [0, 1, 3, 9, 19] if args.paper else [0, 1, 3, 9]
    device = torch.device(args.device)
    wall_time(args, device)
    memory(args, device)


if __name__ == "__main__":
    main()
