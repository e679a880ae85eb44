"""The ACT table of packages/certcal/README.md on the Fashion-MNIST default (paper §5.3, Table 7 / App. J.1).

Fine-tunes the shipped ``builtin:fashion-cnn-noise-0.25`` with each method on a reduced hyper-parameter grid
and several seeds, certifies the first test images, applies the paper's selection rule (3 % CA band, best
calibration) and prints the table with 95 % intervals plus every grid model's numbers.

    OMP_NUM_THREADS=1 uv run python tools/certcal_act_table.py --out /tmp/certcal-act.json \\
        --checkpoint-dir /tmp/certcal-act-ckpt            # ~30 min on 2 shared CPU cores; resumable
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import certcal
from robustsuite.runners import RunContext


def _f(v, lo=None, hi=None) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}" if lo is None else f"{100 * v:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=["none", "smoothadv", "brier_act", "acce_act"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--lr-grid", nargs="+", type=float, default=[2e-4, 1e-3])
    ap.add_argument("--epsilon", type=float, default=0.5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--n-train", type=int, default=512)
    ap.add_argument("--n-test", type=int, default=80)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--radii", nargs="+", type=float, default=[0.0, 0.125, 0.25, 0.375, 0.5])
    ap.add_argument("--checkpoint-dir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    ctx = RunContext(run_dir=Path(tempfile.mkdtemp()), method="certcal", seed=0, device=torch.device("cpu"))
    base = ctx.model("builtin:fashion-cnn-noise-0.25").eval()
    ds = ctx.dataset("builtin:fashion-mnist")
    idx = torch.as_tensor(np.random.default_rng(0).permutation(ds.train.x.shape[0])[: args.n_train])
    xtr, ytr = ds.train.x[idx], ds.train.y[idx]
    xte, yte = ds.test.x[: args.n_test], ds.test.y[: args.n_test]
    res = certcal.act_comparison(
        base, xtr, ytr, xte, yte, methods=args.methods, seeds=args.seeds, sigma=0.25, epsilon=args.epsilon,
        radii=args.radii, epochs=args.epochs, batch_size=128, num_noise=2, attack_steps=2, warmup_epochs=1,
        grid={"lr": args.lr_grid}, selection_margin=0.03, n0=50, n=args.n, alpha=0.001, certify_batch_size=450,
        n_boot=args.n_boot, checkpoint_dir=args.checkpoint_dir,
        progress=lambda m: print(f"  [{time.perf_counter() - t0:6.0f} s] {m}", file=sys.stderr, flush=True))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"ACT on builtin:fashion-mnist from builtin:fashion-cnn-noise-0.25: sigma 0.25, eps {args.epsilon}, "
          f"{args.epochs} epoch(s) on {args.n_train} train images, lr grid {args.lr_grid}, seeds {args.seeds}, "
          f"{args.n_test} test images, n = {args.n}; selection: 3 % CA band, lowest CCE / CBS; 95 % intervals")
    print(f"wall {wall:.0f} s, process CPU {cpu:.0f} s")
    print("\n| method | radius | CA % | CBS % | CCE % | CCE per seed % | selected lr per seed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in res.rows:
        per = " / ".join(_f(v) for v in r.cce_per_seed)
        sel = " / ".join("-" if s is None else f"{s.get('lr', '-'):g}" if s else "base" for s in r.selected)
        print(f"| {r.method} | {r.radius:g} | "
              f"{_f(r.certified_accuracy, r.certified_accuracy_ci_low, r.certified_accuracy_ci_high)} | "
              f"{_f(r.cbs, r.cbs_ci_low, r.cbs_ci_high)} | {_f(r.cce, r.cce_ci_low, r.cce_ci_high)} | {per} | {sel} |")
    print("\nevery grid model (CA % / CBS % / CCE %, * = within the 3 % CA band):")
    for m in res.models:
        print(f"  {m.method:10s} {json.dumps(m.params):14s} seed {m.seed} r {m.radius:<5g} "
              f"{_f(m.certified_accuracy)} / {_f(m.cbs)} / {_f(m.cce)}{' *' if m.eligible else ''}")
    if args.out:
        Path(args.out).write_text(json.dumps({**res.to_dict(), "wall_s": wall, "cpu_s": cpu}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
