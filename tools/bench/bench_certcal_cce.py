"""Benchmark: exact certified calibration error vs the paper's ADMM (and the baselines) on N samples x M bins.

The paper reports ADMM under 2 minutes for 7,000 samples x 15 bins on an RTX 3090 (App. G.1). Certificate
bounds are synthetic but shaped like Gaussian-smoothing ones: clean confidences z ~ Beta(5, 1), correctness
~ Bernoulli(z), bounds Phi(Phi^-1(z) -/+ r / sigma). Prints time and value per method and ratios against
the exact solver measured in the same run.

    uv run python tools/bench/bench_certcal_cce.py                 # 2000 x 15, r/sigma in {0.2, 0.5, 1, 2}
    uv run python tools/bench/bench_certcal_cce.py --paper         # 7000 x 15 (the paper's size)
    uv run python tools/bench/bench_certcal_cce.py --dece          # with the dECE baseline (slow)

Methods: "admm" is one run of the paper's one-size-fits-all setting (2 initialisations), "admm-grid" the
16-run grid of App. I.1 (``certcal.admm_grid``, solved as one batch), "admm-grid-clip" the same grid with
the paper's clip projection of z instead of our closed-form polish.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import norm

import certcal


def instance(n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = np.clip(rng.beta(5, 1, n), 1e-6, 1 - 1e-6)
    c = (rng.uniform(size=n) < z).astype(int)
    lo = norm.cdf(norm.ppf(z) - shift)
    up = norm.cdf(norm.ppf(z) + shift)
    return lo, up, c, z


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="samples (paper: 7000)")
    ap.add_argument("--paper", action="store_true", help="the paper's size: 7000 samples x 15 bins")
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--shifts", type=float, nargs="+", default=[0.2, 0.5, 1.0, 2.0], help="r / sigma values")
    ap.add_argument("--admm-steps", type=int, default=3000)
    ap.add_argument("--dece", action="store_true", help="also run the dECE baseline (slow)")
    ap.add_argument("--milp", action="store_true", help="also run the HiGHS MILP (only for small --n)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.paper:
        args.n, args.bins = 7000, 15

    print(f"CCE benchmark: N={args.n}, M={args.bins}, ADMM {args.admm_steps} steps (1 setting x 2 inits; "
          f"grid: 16 runs), device={args.device}")
    print(f"{'r/sigma':>7} {'method':>9} {'value %':>8} {'time s':>8} {'value/exact':>11} {'time/exact':>10}")
    for shift in args.shifts:
        lo, up, c, z = instance(args.n, shift, args.seed)
        methods = ["exact", "admm", "admm-grid", "admm-grid-clip", "brier"] + (["dece"] if args.dece else []) + (["milp"] if args.milp else [])
        results = {}
        for m in methods:
            t = time.perf_counter()
            polish = not m.endswith("-clip")
            admm = (certcal.admm_grid(steps=args.admm_steps, polish=polish) if "grid" in m
                    else certcal.ADMMConfig(steps=args.admm_steps))
            res = certcal.certified_calibration_error(lo, up, c, n_bins=args.bins, method=m.split("-")[0], confidences=z,
                                                      device=args.device, admm=admm)
            results[m] = (res.value, time.perf_counter() - t)
            if m.startswith("admm"):
                # the ADMM answer is feasible, so it can never beat the exact optimum
                assert res.value <= results["exact"][0] + 1e-12
        ev, et = results["exact"]
        for m, (v, t) in results.items():
            print(f"{shift:7.2f} {m:>9} {100 * v:8.3f} {t:8.3f} {v / ev:11.4f} {t / et:10.1f}")


if __name__ == "__main__":
    main()
