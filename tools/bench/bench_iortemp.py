"""Benchmarks for iortemp (Sec. 4): Brent vs log-spaced grid for Q(T); exact vs 5000-step GD calibration.

1. Adversary temperature optimisation: attack evaluations Brent's search (decade probing + bounded Brent)
   needs to reach its optimum Q(T), versus the number of points a log-spaced grid over the same log10 T
   range needs before its best point is as low (grids of 2^k + 1 points, nested, so every grid is a refinement).
   Victim: the toy tiny BERT served overconfident (T_d = 0.005); attack DeepWordBug (default) or word swap.
2. Calibration: ``calibrate_temperature(method="exact")`` vs the paper's gradient descent (lr 0.01,
   5000 iterations): wall time and NLL reached, on planted logits and on T_d-scaled versions of them.

Usage: OMP_NUM_THREADS=1 uv run python tools/bench/bench_iortemp.py [--paper-size]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import log_softmax

import iortemp
from iortemp._toy import SYNONYMS, trained_toy_classifier


def bench_search(n_val: int, max_grid_level: int, seed: int, attack: str) -> None:
    clf, (_, (xva, yva), _) = trained_toy_classifier(seed=seed)
    up = iortemp.TemperatureScaled(clf, 0.005)
    atk = (iortemp.TextAttackRecipe(recipe="deepwordbug") if attack == "deepwordbug"
           else iortemp.GreedyWordSwap(candidates=SYNONYMS))
    x, y = xva[:n_val], yva[:n_val]
    cache: dict[float, float] = {}
    attack_time = []

    def q(t: float) -> float:
        key = round(math.log10(t), 9)
        if key not in cache:
            t0 = time.perf_counter()
            cache[key] = iortemp.evaluate_attack(up, x, y, atk, temperature=t, seed=seed).adversarial_accuracy
            attack_time.append(time.perf_counter() - t0)
        return cache[key]

    lo, hi = -8.0, 8.0
    res = iortemp.search_temperature(q, init_temperature=1.0, log10_bounds=(lo, hi), max_evaluations=16)
    # evaluations Brent needed until it first reached its final optimum
    first_hit = next(i + 1 for i, (t, _) in enumerate(_in_order(res, cache)) if _q(cache, t) <= res.adversarial_accuracy)
    print(f"[search] Q at T=1 (plain): {_q(cache, 1.0):.3f}; Brent optimum Q={res.adversarial_accuracy:.3f} at "
          f"T={res.temperature:.3g} after {first_hit} evaluations ({res.evaluations} incl. convergence checks)")
    grid_evals = None
    for level in range(1, max_grid_level + 1):
        pts = np.linspace(lo, hi, 2**level + 1)
        best = min(q(10.0**p) for p in pts)
        if best <= res.adversarial_accuracy:
            grid_evals = len(pts)
            print(f"[search] log-spaced grid reaches Q={best:.3f} with {grid_evals} points "
                  f"(spacing {(hi - lo) / 2**level:.3g} decades)")
            break
    if grid_evals is None:
        print(f"[search] grid of {2**max_grid_level + 1} points did not reach Q={res.adversarial_accuracy:.3f}")
        grid_evals = 2**max_grid_level + 1
    print(f"[search] ratio grid/Brent evaluations: {grid_evals / first_hit:.2f}x "
          f"(one evaluation = one attack on {n_val} texts, mean {np.mean(attack_time):.2f} s)")


def _in_order(res, cache):
    # cache keys were inserted in evaluation order
    return [(10.0**k, v) for k, v in cache.items()]


def _q(cache, t):
    return cache[round(math.log10(t), 9)]


def bench_calibration(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 3, size=(n, 4))
    p = np.exp(log_softmax(z / 1.8, axis=1))
    y = (p.cumsum(1) > rng.random((n, 1))).argmax(1)
    for name, logits in (("planted T=1.8", z), ("served T_d=0.005", z / 0.005), ("served T_d=2e6", z / 2e6)):
        t0 = time.perf_counter()
        te = iortemp.calibrate_temperature(logits, y)
        dt_e = time.perf_counter() - t0
        t0 = time.perf_counter()
        tg = iortemp.calibrate_temperature(logits, y, method="gd")
        dt_g = time.perf_counter() - t0
        ne, ng = iortemp.temperature_nll(logits, y, te), iortemp.temperature_nll(logits, y, tg)
        print(f"[calib] {name:18s} exact T={te:.4g} NLL={ne:.5f} in {dt_e * 1e3:.1f} ms | "
              f"GD T={tg:.4g} NLL={ng:.5f} in {dt_g * 1e3:.0f} ms | speed-up {dt_g / dt_e:.0f}x, "
              f"NLL excess of GD {ng - ne:+.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper-size", action="store_true", help="validation set of 1066 (RT) / 10000 logits")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attack", choices=["deepwordbug", "wordswap"], default="deepwordbug",
                    help="attack defining Q(T): TextAttack's DeepWordBug (paper) or the offline greedy word swap")
    a = ap.parse_args()
    bench_calibration(10000 if a.paper_size else 2000, a.seed)
    bench_search(150 if a.paper_size else 40, 6 if a.paper_size else 5, a.seed, a.attack)


if __name__ == "__main__":
    main()
