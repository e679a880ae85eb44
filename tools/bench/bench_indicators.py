"""What the verdict's indicators add to the AutoAttack they follow: CPU seconds of standard AutoAttack and of the
indicators' probes (FGSM, PGD, the APGD-CE ε sweep, doubled iterations, the unbounded attack, gradients,
determinism) on the same points of the shipped adversarially trained CNN, measured in one run, with their ratio.

    uv run python tools/bench/bench_indicators.py             # 50 test images of builtin:fashion-cnn-at at ε 0.1
    uv run python tools/bench/bench_indicators.py --n 200 --json docs/benchmarks/indicators/bench.json
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50, help="test images attacked")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--iterations", type=int, default=20, help="the indicators' PGD/APGD iterations (the overview's "
                    "default)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()

    import numpy as np
    import torch

    from robustsuite.data import load_dataset
    from robustsuite.zoo import load_model
    from robustsuite_common.autoattack import autoattack
    from robustsuite_common.indicators import probe

    torch.set_num_threads(1)
    model = load_model("builtin:fashion-cnn-at")
    split = load_dataset("builtin:fashion-mnist").test
    x, y = split.x[:args.n], np.asarray(split.y[:args.n])
    t0, w0 = _cpu(), time.perf_counter()
    r = autoattack(model, x, y, eps=args.eps, seed=0, batch_size=args.n)
    t1, w1 = _cpu(), time.perf_counter()
    probe(model, x, y, eps=args.eps, n_iter=args.iterations)
    t2, w2 = _cpu(), time.perf_counter()
    import datetime
    import subprocess
    import sys

    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() or None
    out = {"what": "the verdict's indicators against the standard AutoAttack they follow, same points",
           "command": " ".join(["uv run python tools/bench/bench_indicators.py", *sys.argv[1:]]), "commit": commit,
           "machine": {"cpus": os.cpu_count(), "torch": torch.__version__, "threads": 1,
                       "load_average_before": [round(v, 2) for v in os.getloadavg()]},
           "date": datetime.date.today().isoformat(),
           "figures": {"n": args.n, "eps": args.eps, "iterations": args.iterations,
                       "robust_accuracy": r.robust_accuracy, "autoattack_cpu_s": round(t1 - t0, 2),
                       "indicators_cpu_s": round(t2 - t1, 2), "autoattack_wall_s": round(w1 - w0, 2),
                       "indicators_wall_s": round(w2 - w1, 2),
                       "indicators_over_autoattack": round((t2 - t1) / max(t1 - t0, 1e-9), 3)}}
    f = out["figures"]
    print(f"standard AutoAttack on {args.n} images: {f['autoattack_cpu_s']} CPU-s; the indicators' probes: "
          f"{f['indicators_cpu_s']} CPU-s = {f['indicators_over_autoattack']:.2f}x AutoAttack")
    if args.json:
        from robustsuite_common.io import write_json

        write_json(args.json, out)


if __name__ == "__main__":
    main()
