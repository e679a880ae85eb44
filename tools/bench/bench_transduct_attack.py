"""Benchmark of GMSA (transduct-attack): wall time against the sum of its parts, memory against T.

1. Wall time: GMSA-AVG and GMSA-MIN against DANN on scikit-learn's digits. The baseline, measured in the
   same run, is the sum of GMSA's parts run on their own: the T+1 runs of Γ plus PGD on the growing model
   set (1, 2, ..., T+1 models; for MIN with (i+1)-scaled steps). Ratio ≈ 1 means the framework itself
   (referee, selection, bookkeeping) costs nothing noticeable.
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
from transduct_attack.networks import MLP, DomainAdversarialNet, SmallCNN, build  # noqa: E402
from transduct_attack.pgd import ensemble_gradient  # noqa: E402


def digits(device):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None].to(device)
    y = torch.tensor(d.target).to(device)
    return x[:1200], y[:1200], x[1200:], y[1200:]


class Timed(ta.TransductiveDefense):
    """Wraps a Γ and accumulates the wall time of its ``adapt`` calls."""

    def __init__(self, inner):
        self.inner, self.seconds, self.calls = inner, 0.0, 0
        self.name, self.stateful, self.rejects = inner.name, inner.stateful, inner.rejects

    @property
    def base_model(self):
        return self.inner.base_model

    def adapt(self, x, *, state, generator):
        t = time.perf_counter()
        out = self.inner.adapt(x, state=state, generator=generator)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return out


class TimedPGD(ta.PGD):
    seconds = 0.0

    def run(self, *args, **kwargs):
        t = time.perf_counter()
        out = super().run(*args, **kwargs)
        TimedPGD.seconds += time.perf_counter() - t
        return out


def wall_time(args, device):
    xtr, ytr, xte, yte = digits(device)
    x, y = xte[: args.points], yte[: args.points]
    g = torch.Generator().manual_seed(0)
    std = ta.train_classifier(build(lambda: MLP(hidden=64), g, device=device), xtr, ytr, epochs=10, generator=g)
    dann = ta.DANN(xtr, ytr, base_model=std, epochs=args.gamma_epochs, alpha_max=1.0,
                   make_network=lambda gen: build(lambda: DomainAdversarialNet(encoder="mlp"), gen, device=device))
    print(f"== wall time: GMSA vs DANN, {args.points} points, T={args.T}, PGD {args.steps} steps ==")
    print(f"{'mode':10s} {'GMSA s':>9s} {'Γ s':>8s} {'PGD s':>8s} {'ratio to in-run parts':>22s} "
          f"{'parts alone s':>14s} {'ratio to parts alone':>21s}")
    for mode in ("avg", "min"):
        timed = Timed(dann)
        TimedPGD.seconds = 0.0
        solver = TimedPGD(steps=args.steps)
        t = time.perf_counter()
        res = ta.GMSA(mode=mode, T=args.T, solver=solver)(x, y, eps=args.eps, defense=timed,
                                                        generator=torch.Generator().manual_seed(1))
        total = time.perf_counter() - t
        gamma_s, pgd_s = timed.seconds, TimedPGD.seconds
        # baseline: the same parts, run on their own
        models = [std]
        t = time.perf_counter()
        gen = torch.Generator().manual_seed(1)
        for i in range(args.T + 1):
            x_i = ta.PGD(steps=args.steps).run(models, x, y, eps=args.eps, generator=gen, aggregate=mode,
                                              steps_scale=(i + 1) if mode == "min" else 1)
            models.append(dann.adapt(x_i, state=None, generator=gen).model)
        alone = time.perf_counter() - t
        print(f"gmsa-{mode:5s} {total:9.2f} {gamma_s:8.2f} {pgd_s:8.2f} {total / (gamma_s + pgd_s):22.3f} "
              f"{alone:14.2f} {total / alone:21.3f}   (selected round {res.selected_round})")


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
    print(f"{'T':>3s} {'models':>6s} {'GMSA MiB':>9s} {'one-graph MiB':>14s} {'one-graph / GMSA':>17s}"
          + ("  cuda GMSA / one-graph MiB" if device.type == "cuda" else ""))
    gen = torch.Generator().manual_seed(0)
    pool = [build(lambda: SmallCNN(width=32), gen, device=device).eval() for _ in range(max(args.mem_T) + 1)]
    for T in args.mem_T:
        models = pool[: T + 1]
        with SavedBytes() as ours:
            ensemble_gradient(models, x, y, ta.cross_entropy, "avg")
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
        print(f"{T:3d} {T + 1:6d} {ours.peak / 2**20:9.2f} {naive.peak / 2**20:14.2f} "
              f"{naive.peak / max(ours.peak, 1):17.2f}{extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper", action="store_true", help="paper sizes: T=9, PGD 100 steps, 30 Γ epochs")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    args.T, args.steps, args.gamma_epochs, args.points = (9, 100, 30, 200) if args.paper else (3, 10, 3, 100)
    args.eps = 0.2
    args.mem_batch = 512 if args.paper else 256
    args.mem_T = [0, 1, 3, 9, 19] if args.paper else [0, 1, 3, 9]
    device = torch.device(args.device)
    wall_time(args, device)
    memory(args, device)


if __name__ == "__main__":
    main()
