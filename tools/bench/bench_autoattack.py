"""Benchmark of our AutoAttack wrapper (``robustsuite_common.autoattack.autoattack``: input checks, clean forward,
model adapter, projection, robust forward) against calling pyautoattack directly on the same model, inputs, ε and
seed (``AutoAttack(...).run_standard_evaluation``): the wrapper's overhead as a ratio (issue 37 asks ≤ 1.05×).

Both runs are timed in this process, alternately, after one untimed warm-up of each, with one torch intra-op thread
(``ROBUSTSUITE_THREADS``); the figure printed is the median ratio over ``--repeats`` pairs, and the robust accuracy of
both (they must agree: same attack, same seed).

    uv run python tools/bench/bench_autoattack.py                       # 64 images, the shipped CNN, standard
    uv run python tools/bench/bench_autoattack.py --model builtin:fashion-cnn-at --n 16 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from robustsuite_common.threads import use_threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="builtin:fashion-cnn")
    ap.add_argument("--n", type=int, default=64, help="test images")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--version", default="standard")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    a = ap.parse_args()
    threads = use_threads()
    import torch
    from pyautoattack import AutoAttack

    from robustsuite.loaders import load_dataset, load_model
    from robustsuite_common.autoattack import autoattack

    model = load_model(a.model).eval()
    test = load_dataset("builtin:fashion-mnist").test.head(a.n)
    x, y = test.x.contiguous(), torch.as_tensor(test.y)
    for p in model.parameters():
        p.requires_grad_(False)

    def ours() -> float:
        return autoattack(model, x, y, eps=a.eps, version=a.version, seed=0, batch_size=len(x)).robust_accuracy

    def direct() -> float:
        adversary = AutoAttack(model, norm="Linf", eps=a.eps, version=a.version, seed=0, device=torch.device("cpu"))
        adversary.verbose = False
        with torch.random.fork_rng():
            out = adversary.run_standard_evaluation(x, y, batch_size=len(x))
        x_adv = out[0] if isinstance(out, tuple) else out
        with torch.no_grad():
            return float((model(x_adv).argmax(1) == y).float().mean())

    ours(), direct()  # warm-up: allocator, first-call costs
    ratios, times = [], {"ours": [], "direct": []}
    accuracy = {}
    for _ in range(a.repeats):
        for name, fn in (("ours", ours), ("direct", direct)):
            t0 = time.perf_counter()
            accuracy[name] = fn()
            times[name].append(time.perf_counter() - t0)
        ratios.append(times["ours"][-1] / times["direct"][-1])
    fig = {"model": a.model, "n": a.n, "eps": a.eps, "version": a.version, "threads": threads,
           "seconds_ours": statistics.median(times["ours"]), "seconds_direct": statistics.median(times["direct"]),
           "ratio_median": statistics.median(ratios), "ratios": ratios, "robust_accuracy": accuracy}
    if a.json:
        print(json.dumps(fig))
        return
    print(f"AutoAttack {a.version}, {a.model}, {a.n} images, Linf eps={a.eps}, {threads} thread(s), "
          f"{a.repeats} alternating pairs")
    print(f"direct pyautoattack: {fig['seconds_direct']:.2f} s   ours: {fig['seconds_ours']:.2f} s   "
          f"ratio ours/direct (median): {fig['ratio_median']:.3f}  (each pair: "
          + ", ".join(f"{r:.3f}" for r in ratios) + ")")
    print(f"robust accuracy: ours {accuracy['ours']:.3f}, direct {accuracy['direct']:.3f}")


if __name__ == "__main__":
    main()
