"""Benchmarks for iortemp (Sec. 4): Brent vs log-spaced grid for Q(T); exact vs 5000-step GD calibration.

1. Adversary temperature optimisation, counted honestly: every attack evaluation of the *whole* search
   (decade probes, walk and Brent stage, cache hits free) and its wall time, against a log-spaced grid over
   the same log10 T range with its own cache and timer:
   * grid reaching the same Q: nested grids of 2^k + 1 points until the best grid point is as low as the
     search's optimum (the count is the final grid's size: nested grids share their points);
   * grid at the same resolution of T_a: points needed for the grid spacing to equal the search's lattice
     step ``xatol`` (counted; its time is that count times the measured mean time of one evaluation, printed
     as a projection, not measured).
   Both searches start as the method does: from the NLL-calibrated temperature of the validation set
   (``--start cal``), or from T = 1 (``--start one``). Victim: the toy tiny BERT served overconfident
   (T_d = 0.005); attack DeepWordBug (default) or the offline greedy word swap.
2. Calibration: ``calibrate_temperature(method="exact")`` vs the paper's gradient descent (lr 0.01,
   5000 iterations): wall time and NLL reached, on planted logits and on T_d-scaled versions of them.

3. ``--pwws N``: PWWS (offline WordNet) on N texts of a text classifier (default the shipped
   ``builtin:wordnet-roberta``, loaded through robustsuite) for the three served systems (base, ↓conf, ↑conf) at
   the plain and the calibrated temperature — the six PWWS runs of one seed of the demo table — without and
   with ``CachedTextClassifier`` (per-text logits shared by all systems and temperatures), each after a warm-up
   that loads TextAttack and WordNet. Prints CPU seconds per text, model texts computed, and the ratio; the
   adversarial accuracies of both runs must agree.

4. ``--paper-cpu``: the CPU time of the ``paper-cpu`` preset of ``iortemp.experiment``, estimated without running
   it: each piece (the three served systems' tables, DDi-AT's fine-tuning, the ddi-at system with Table 4, the
   Fig. 1 sweep, the vision part with AutoAttack) is run at a small size on the demo's models and scaled
   linearly to the preset's sizes (attack costs per text, fine-tuning per text-epoch, vision per image).

Usage: OMP_NUM_THREADS=1 uv run python tools/bench/bench_iortemp.py [--paper-size] [--attack wordswap]
       OMP_NUM_THREADS=1 uv run python tools/bench/bench_iortemp.py --pwws 20
       OMP_NUM_THREADS=1 uv run python tools/bench/bench_iortemp.py --paper-cpu
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import log_softmax

import iortemp
from iortemp._toy import SYNONYMS, trained_toy_classifier


class _Counted:
    """Q(T) with its own cache, evaluation count and wall-time of the evaluations."""

    def __init__(self, fn):
        self.fn, self.cache, self.seconds = fn, {}, 0.0

    def __call__(self, t: float) -> float:
        key = round(math.log10(t), 9)
        if key not in self.cache:
            t0 = time.perf_counter()
            self.cache[key] = self.fn(t)
            self.seconds += time.perf_counter() - t0
        return self.cache[key]


def bench_search(n_val: int, max_grid_level: int, seed: int, attack: str, start: str, xatol: float) -> None:
    clf, (_, (xva, yva), _) = trained_toy_classifier(seed=seed)
    up = iortemp.TemperatureScaled(clf, temperature=0.005)
    atk = (iortemp.TextAttackRecipe(recipe="deepwordbug") if attack == "deepwordbug"
           else iortemp.GreedyWordSwap(candidates=SYNONYMS))
    x, y = xva[:n_val], yva[:n_val]

    def q(t: float) -> float:
        return iortemp.evaluate_attack(up, x, y, atk, temperature=t, seed=seed).adversarial_accuracy

    lo, hi = -8.0, 8.0
    t_start = iortemp.calibrate_temperature(iortemp.logits64(up, x), y) if start == "cal" else 1.0
    brent = _Counted(q)
    w0 = time.perf_counter()
    res = iortemp.search_temperature(brent, init_temperature=t_start, log10_bounds=(lo, hi), xatol=xatol,
                                     max_evaluations=16)
    brent_wall = time.perf_counter() - w0
    per_eval = brent.seconds / max(1, len(brent.cache))
    print(f"[search] start T={t_start:.3g} (Q={next(iter(brent.cache.values())):.3f}); Brent search: Q={res.adversarial_accuracy:.3f} "
          f"at T={res.temperature:.3g}, {res.evaluations} evaluations in total, {brent_wall:.1f} s wall "
          f"(one evaluation = one attack on {n_val} texts, mean {per_eval:.2f} s)")
    grid = _Counted(q)
    w0 = time.perf_counter()
    grid_evals = None
    for level in range(1, max_grid_level + 1):
        pts = np.linspace(lo, hi, 2**level + 1)
        best = min(grid(10.0**p) for p in pts)
        if best <= res.adversarial_accuracy:
            grid_evals = len(grid.cache)
            break
    grid_wall = time.perf_counter() - w0
    if grid_evals is None:
        grid_evals = len(grid.cache)
        print(f"[search] grid of {grid_evals} points did not reach Q={res.adversarial_accuracy:.3f} "
              f"(best {min(grid.cache.values()):.3f}) in {grid_wall:.1f} s")
    else:
        print(f"[search] grid reaching the same Q: {grid_evals} evaluations, {grid_wall:.1f} s wall")
    print(f"[search] same Q: grid/Brent evaluations {grid_evals / res.evaluations:.2f}x, "
          f"wall time {grid_wall / brent_wall:.2f}x")
    fine = int(round((hi - lo) / xatol)) + 1
    print(f"[search] same resolution of T_a ({xatol} decades): grid needs {fine} evaluations = "
          f"{fine / res.evaluations:.1f}x Brent's; projected {fine * per_eval:.0f} s vs Brent's {brent_wall:.1f} s "
          f"measured")


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
        ne, ng = iortemp.temperature_nll(logits, y, temperature=te), iortemp.temperature_nll(logits, y, temperature=tg)
        print(f"[calib] {name:18s} exact T={te:.4g} NLL={ne:.5f} in {dt_e * 1e3:.1f} ms | "
              f"GD T={tg:.4g} NLL={ng:.5f} in {dt_g * 1e3:.0f} ms | speed-up {dt_g / dt_e:.0f}x, "
              f"NLL excess of GD {ng - ne:+.2e}")


def bench_pwws(n: int, model_spec: str, data_spec: str) -> None:
    from robustsuite.loaders import load_dataset, load_model

    base, ds = load_model(model_spec), load_dataset(data_spec)
    x, y = list(ds.test.x[:n]), ds.test.y[:n].numpy()
    xv, yv = list(ds.val.x[:40]), ds.val.y[:40].numpy()
    pwws = iortemp.text_attack("pwws")
    pwws(base, x[:2], y[:2])  # warm-up: TextAttack import, WordNet reader

    class Counting:
        def __init__(self, inner):
            self.inner, self.model, self.tokenizer, self.texts = inner, inner.model, inner.tokenizer, 0

        def __call__(self, texts):
            self.texts += len(texts)
            return self.inner(texts)

    out = {}
    for label, cached in (("uncached", False), ("cached", True)):
        counted = Counting(base)
        served = iortemp.CachedTextClassifier(counted) if cached else counted
        c0 = time.process_time()
        accs = []
        for model in iortemp.served_systems(served).values():
            t_cal = iortemp.calibrate_temperature(iortemp.logits64(model, xv), yv)
            for t in (1.0, t_cal):
                accs.append(iortemp.evaluate_attack(model, x, y, pwws, temperature=t).adversarial_accuracy)
        cpu = time.process_time() - c0
        out[label] = (cpu, counted.texts, accs)
        print(f"[pwws] {label:8s} {n} texts x 6 runs: {cpu:.1f} CPU s ({cpu / (6 * n):.3f} s per text-run), "
              f"{counted.texts} texts through the model; adversarial accuracies {[round(a, 3) for a in accs]}")
    (cu, tu, au), (cc, tc, ac) = out["uncached"], out["cached"]
    print(f"[pwws] cached / uncached: CPU {cc / cu:.2f}x, model texts {tc / tu:.2f}x; accuracies agree: {au == ac}")


def bench_paper_cpu() -> None:
    from dataclasses import replace

    from iortemp import experiment as ex
    from robustsuite.loaders import load_dataset, load_model
    from robustsuite_common.config import override

    def named(ds):
        return [s if s.label_names is not None else replace(s, label_names=tuple(ds.classes))
                for s in (ds.train, ds.val, ds.test)]

    (tr, va, te), (_, vva, vte) = named(load_dataset("builtin:wordnet-topics")), named(load_dataset("builtin:fashion-mnist"))
    text, vision = load_model("builtin:wordnet-roberta"), load_model("builtin:fashion-cnn")
    paper = ex.preset("paper-cpu")
    data = ex.Data(test=te, val=va, train=tr, vision_test=vte, vision_val=vva)
    tiny = {"n_test": 2, "n_val": 2, "attacks": {"names": ["deepwordbug"], "seeds": [0]}}

    def cpu(changes: dict, with_vision: bool = False) -> float:
        c0 = time.process_time()
        ex.run(ex.Models(text=text, vision=vision if with_vision else None), data, override(paper, changes),
               progress=False)
        return time.process_time() - c0

    n, n_train = 20, 80
    off = {"ddi_at": {"enabled": False}, "sweep": {"enabled": False}}
    warm = cpu({"text": {"n_test": 2, "n_val": 2}, **off})  # imports TextAttack, reads WordNet: once per process
    text3 = cpu({"text": {"n_test": n, "n_val": n // 2}, **off})
    text4 = cpu({"text": {"n_test": n, "n_val": n // 2}, "ddi_at": {"train_size": n_train, "epochs": 1},
                 "sweep": {"enabled": False}})
    ddi = cpu({"text": tiny, "ddi_at": {"train_size": n_train, "epochs": 1}, "sweep": {"enabled": False}})
    sweep = cpu({"text": {**tiny, "n_test": n}, "systems": {"search": {"max_evaluations": 1}},
                 "ddi_at": {"enabled": False}})
    vis = cpu({"text": tiny, **off, "vision": {"n": 50}}, with_vision=True)
    scale_text = paper.text.n_test / n
    scale_train = paper.ddi_at.train_size * paper.ddi_at.epochs / n_train
    parts = {"one-time imports": warm, "base/↓conf/↑conf tables": text3 * scale_text,
             "DDi-AT fine-tuning": ddi * scale_train, "ddi-at table + Table 4": (text4 - text3 - ddi) * scale_text,
             "Fig. 1 sweep": sweep * scale_text, "vision (PGD + AutoAttack)": vis * paper.vision.n / 50}
    for k, v in parts.items():
        print(f"[paper-cpu] {k}: {v:.0f} s CPU")
    print(f"[paper-cpu] estimated total: {sum(parts.values()):.0f} s CPU = {sum(parts.values()) / 3600:.2f} CPU-hours "
          f"(measured at n_test={n}, {n_train} training texts x 1 epoch, 50 images; scaled linearly)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper-size", action="store_true", help="validation set of 1066 (RT) / 10000 logits")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attack", choices=["deepwordbug", "wordswap"], default="deepwordbug",
                    help="attack defining Q(T): TextAttack's DeepWordBug (paper) or the offline greedy word swap")
    ap.add_argument("--start", choices=["cal", "one"], default="cal",
                    help="start temperature of the search: NLL-calibrated (the method's default) or T = 1")
    ap.add_argument("--xatol", type=float, default=0.05, help="search lattice step / Brent tolerance (decades)")
    ap.add_argument("--skip-calibration", action="store_true")
    ap.add_argument("--pwws", type=int, default=0, metavar="N", help="only the PWWS profile on N texts")
    ap.add_argument("--model", default="builtin:wordnet-roberta", help="model spec for --pwws")
    ap.add_argument("--dataset", default="builtin:wordnet-topics", help="dataset spec for --pwws")
    ap.add_argument("--paper-cpu", action="store_true", help="only the paper-cpu preset's CPU estimate")
    a = ap.parse_args()
    if a.paper_cpu:
        bench_paper_cpu()
        return
    if a.pwws:
        bench_pwws(a.pwws, a.model, a.dataset)
        return
    if not a.skip_calibration:
        bench_calibration(10000 if a.paper_size else 2000, a.seed)
    bench_search(150 if a.paper_size else 40, 6 if a.paper_size else 5, a.seed, a.attack, a.start, a.xatol)


if __name__ == "__main__":
    main()
