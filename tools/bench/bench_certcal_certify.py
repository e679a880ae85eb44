"""Benchmark: certify throughput against the physical floor of N plain forward passes.

The floor is the time the base model needs for the same number of noisy forward passes at its best batch
size (measured here over a few batch sizes); certify batches across inputs and noise draws, so its ratio to
the floor should be close to 1. Also reports the naive reference loop (one input at a time, Cohen et al.'s
code structure) measured in the same run.

    uv run python tools/bench/bench_certcal_certify.py              # 64 inputs x (100 + 2000) draws
    uv run python tools/bench/bench_certcal_certify.py --paper      # 500 inputs x (100 + 100000) draws
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

import certcal
from certcal._demo import DigitsCNN


def clock(device: torch.device) -> Callable[[], float]:
    """CPU time of this process on CPU (robust to other jobs sharing the cores), wall time on a GPU."""
    return time.perf_counter if device.type == "cuda" else time.process_time


def best_of(repeats: int, fn: Callable[[], float]) -> float:
    return min(fn() for _ in range(repeats))


@torch.no_grad()
def floor_seconds(model: torch.nn.Module, x: torch.Tensor, total: int, batch: int, sigma: float) -> float:
    g = torch.Generator(device=x.device).manual_seed(0)
    now = clock(x.device)
    t = now()
    done = 0
    while done < total:
        k = min(batch, total - done)
        xb = x[torch.arange(done, done + k, device=x.device) % x.shape[0]]
        model(xb + sigma * torch.randn(xb.shape, generator=g, device=x.device)).argmax(1)
        done += k
    if x.device.type == "cuda":
        torch.cuda.synchronize()
    return now() - t


@torch.no_grad()
def naive_seconds(model: torch.nn.Module, x: torch.Tensor, n0: int, n: int, batch: int, sigma: float) -> float:
    """One input at a time, its draws in batches (the structure of Cohen et al.'s reference code)."""
    g = torch.Generator(device=x.device).manual_seed(0)
    now = clock(x.device)
    t = now()
    for i in range(x.shape[0]):
        for num in (n0, n):
            left = num
            counts = torch.zeros(10, dtype=torch.int64, device=x.device)
            while left > 0:
                k = min(batch, left)
                xb = x[i:i + 1].repeat(k, 1, 1, 1)
                pred = model(xb + sigma * torch.randn(xb.shape, generator=g, device=x.device)).argmax(1)
                counts += torch.bincount(pred, minlength=10)
                left -= k
    if x.device.type == "cuda":
        torch.cuda.synchronize()
    return now() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=32)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5, help="best of this many (interleaved) timings")
    ap.add_argument("--n0", type=int, default=100)
    ap.add_argument("--paper", action="store_true", help="500 inputs, n = 100000 (Cohen et al.'s setting)")
    ap.add_argument("--naive-batch", type=int, default=400, help="draws per forward in the naive loop")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    if args.paper:
        args.inputs, args.n = 500, 100_000
    device = torch.device(args.device)
    torch.manual_seed(0)
    model = DigitsCNN().to(device).eval()
    x = torch.rand(args.inputs, 1, 8, 8, device=device)
    sigma = 0.25
    total = args.inputs * (args.n0 + args.n)
    floor_seconds(model, x, 4096, 1024, sigma)  # warm-up
    now = clock(device)
    floors = {b: best_of(2, lambda b=b: floor_seconds(model, x, total, b, sigma))
              for b in (256, 1024, 4096, 16384)}
    best_b = min(floors, key=floors.get)
    floor = floors[best_b]

    def run_certify(scores: bool, stream: str = "batch") -> float:
        t = now()
        certcal.certify(model, x, sigma=sigma, n0=args.n0, n=args.n, batch_size=best_b, seed=0, return_scores=scores,
                        stream=stream)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return now() - t

    # interleave the timings (floor, certify, certify + scores, reference loop) so that load from other
    # processes on a shared machine hits all of them alike; keep the best of each
    times: dict[str, list[float]] = {"floor": [], "certify": [], "scores": [], "per_input": [], "naive": []}
    for _ in range(args.repeats):
        times["floor"].append(floor_seconds(model, x, total, best_b, sigma))
        times["certify"].append(run_certify(False))
        times["scores"].append(run_certify(True))
        times["per_input"].append(run_certify(False, "per_input"))
        times["naive"].append(naive_seconds(model, x, args.n0, args.n, args.naive_batch, sigma))
    floor = min(min(times["floor"]), floor)
    cert_t, cert_s, naive = min(times["certify"]), min(times["scores"]), min(times["naive"])
    per_input = min(times["per_input"])
    print(f"certify benchmark: {args.inputs} inputs x ({args.n0} + {args.n}) draws = {total} forward passes, "
          f"device={device}, {'wall' if device.type == 'cuda' else 'CPU'} time, best of {args.repeats}")
    for b, s in floors.items():
        print(f"  floor, batch {b:>6}: {s:7.3f} s  ({total / s:,.0f} img/s)")
    print(f"  certify (batch {best_b}):          {cert_t:7.3f} s  ratio to floor {cert_t / floor:5.2f}")
    print(f"  certify + scores (batch {best_b}): {cert_s:7.3f} s  ratio to floor {cert_s / floor:5.2f}")
    print(f"  certify, stream='per_input' (shardable; batch {best_b}): {per_input:7.3f} s  ratio to floor "
          f"{per_input / floor:5.2f}, to the batch stream {per_input / cert_t:5.2f}")
    print(f"  naive per-input loop (batch {args.naive_batch}): {naive:7.3f} s  ratio to floor {naive / floor:5.2f}"
          f"  (certify is {naive / cert_t:.1f}x faster)")


if __name__ == "__main__":
    main()
