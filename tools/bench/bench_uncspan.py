"""Benchmark of the uncspan attacks against the physical floor: a bare loop of the same number of
forward+backward passes (gradient w.r.t. the input) on the same model and batch.

Each measurement runs in a fresh subprocess so that its peak memory is its own (CPU: growth of the
process's peak RSS over its level after imports and warm-up; CUDA: torch.cuda.max_memory_allocated). Printed figures are ratios to the floor measured in the
same run, plus the entropy reached by PGD and APGD (quality at equal cost), and by the strongest under-confidence
setting (Eq. 11 + entropy objectives, one random restart each, per-sample best: 4 runs, so about 4x the floor).

The ratios are of CPU seconds (one torch thread: what the attack demands of the machine, which another process's load
barely moves), the median over ``--repeats`` rounds, each round running every kind once in a rotated order so that
a change of load spreads over all of them; the wall-clock ratio is printed beside it.

    uv run python tools/bench/bench_uncspan.py            # small: 64 CIFAR-sized inputs, 30 steps (~3 min)
    uv run python tools/bench/bench_uncspan.py --paper    # paper's attack length: 150 steps, 256 inputs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _model(width: int):
    import torch
    from torch import nn

    g = torch.Generator().manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(4 * width, 10),
    )
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (2.0 / max(p[0].numel(), 1)) ** 0.5)
    return net.eval()


def measure(kind: str, n: int, steps: int, width: int, device: str) -> dict:
    import torch
    import torch.nn.functional as F

    import uncspan

    dev = torch.device(device)
    model = _model(width).to(dev)
    x = torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(1)).to(dev)
    eps = 8 / 255
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
    # warm-up (allocator, kernels; for an attack, one short call: its lazy imports) outside the timed region
    xa = x.clone().requires_grad_(True)
    torch.autograd.grad(F.log_softmax(model(xa), -1).mean(), xa)
    del xa
    if kind != "floor":
        goal = kind.split("-")[0]
        (uncspan.OverConfidenceAttack if goal == "over" else uncspan.UnderConfidenceAttack)(steps=1)(model, x[:2], eps)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict = {"kind": kind}
    if kind == "floor":
        # the same number of forward+backward passes as the attack (steps + 1 with gradient), bare
        xa = x.clone()
        for _ in range(steps + 1):
            xa = xa.detach().requires_grad_(True)
            g = torch.autograd.grad(-F.log_softmax(model(xa), -1).mean(-1).sum(), xa)[0]
            xa = (xa - 1e-3 * g.sign()).clamp(0, 1)
    else:
        goal, optimizer = kind.split("-")
        if goal == "strongest":  # issue 14: both under-confidence objectives, one random restart each
            res = uncspan.UnderConfidenceAttack(steps=steps, optimizer=optimizer, batch_size=n, restarts=1,
                                                objective=uncspan.STRONGEST_UNDER_OBJECTIVES)(model, x, eps, seed=0)
        else:
            cls = uncspan.OverConfidenceAttack if goal == "over" else uncspan.UnderConfidenceAttack
            res = cls(steps=steps, optimizer=optimizer, batch_size=n)(model, x, eps)
        out["mean_entropy"] = float(res.entropy_adv.mean())
    if dev.type == "cuda":
        torch.cuda.synchronize()
        out["peak_mem_mb"] = torch.cuda.max_memory_allocated() / 2**20
    else:
        # growth of the process's peak RSS over its level after imports, model and warm-up
        out["peak_mem_mb"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0, 1e-3)
    out["seconds"], out["cpu_seconds"] = time.perf_counter() - t0, time.process_time() - c0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", action="store_true", help="150 steps (paper §V-A), 256 inputs, wider model")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--width", type=int, default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3, help="rounds; each kind's median is reported")
    ap.add_argument("--json", default=None, help="write the record here (e.g. docs/benchmarks/demo/bench_uncspan.json)")
    ap.add_argument("--note", default="", help="what else ran on the machine (recorded as is)")
    ap.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    n = a.n or (256 if a.paper else 64)
    steps = a.steps or (150 if a.paper else 30)
    width = a.width or (32 if a.paper else 16)
    if a.measure:
        print(json.dumps(measure(a.measure, n, steps, width, a.device)))
        return
    kinds = ["floor", "over-pgd", "under-pgd", "over-apgd", "under-apgd", "strongest-pgd"]
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    for r in range(a.repeats):
        for k in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
            cmd = [sys.executable, __file__, "--measure", k, "--n", str(n), "--steps", str(steps), "--width",
                   str(width), "--device", a.device]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            runs[k].append(json.loads(out))
    res = {k: {f: statistics.median(r[f] for r in v) for f in v[0] if f != "kind"} for k, v in runs.items()}
    floor = res["floor"]
    print(f"uncspan attack benchmark: {n} inputs 3x32x32, CNN width {width}, {steps} steps, device {a.device}, "
          f"median of {a.repeats} rounds")
    print(f"floor: {steps + 1} bare forward+backward passes = {floor['cpu_seconds']:.3f} CPU-s "
          f"({floor['seconds']:.3f} s wall), peak {floor['peak_mem_mb']:.0f} MB")
    print(f"{'attack':<14}{'CPU-s':>8}{'cpu/floor':>11}{'wall/floor':>12}{'peak MB':>9}{'mem/floor':>11}{'mean H':>9}")
    for k in kinds[1:]:
        r = res[k]
        print(f"{k:<14}{r['cpu_seconds']:>8.3f}{r['cpu_seconds'] / floor['cpu_seconds']:>11.2f}"
              f"{r['seconds'] / floor['seconds']:>12.2f}{r['peak_mem_mb']:>9.0f}"
              f"{r['peak_mem_mb'] / floor['peak_mem_mb']:>11.2f}{r['mean_entropy']:>9.4f}")
    if a.json:
        import platform

        git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        record = {
            "what": "uncspan's attacks against the floor: the same number of bare forward+backward passes (gradient "
                    "w.r.t. the input) on the same model and batch, each measured in a fresh subprocess; CPU-second "
                    f"ratios, median of {a.repeats} rotated rounds",
            "command": " ".join(["uv run python tools/bench/bench_uncspan.py", *sys.argv[1:]]),
            "commit": git, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "note": a.note},
            "setting": {"n": n, "steps": steps, "width": width, "device": a.device, "repeats": a.repeats},
            "target": "cpu/floor <= 1.1 for each single attack (strongest-pgd is 4 runs)",
            "floor": {"passes": steps + 1, **{k: round(v, 4) for k, v in floor.items()}},
            "figures": {k: {"cpu_seconds": round(res[k]["cpu_seconds"], 4), "wall_seconds": round(res[k]["seconds"], 4),
                            "cpu_over_floor": round(res[k]["cpu_seconds"] / floor["cpu_seconds"], 3),
                            "wall_over_floor": round(res[k]["seconds"] / floor["seconds"], 3),
                            "peak_mb": round(res[k]["peak_mem_mb"], 1), "mean_entropy": round(res[k]["mean_entropy"], 4)}
                        for k in kinds[1:]},
        }
        with open(a.json, "w", encoding="utf-8") as f:
            f.write(json.dumps(record, indent=2) + "\n")
        print(f"wrote {a.json}")

if __name__ == "__main__":
    main()
