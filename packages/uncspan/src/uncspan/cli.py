"""``uncspan`` command: the offline demo on scikit-learn's digits (standard vs PGD-trained CNN).

    uncspan demo --out runs/uncspan --steps 50 --n 300

trains both tiny models (seconds), prints the Table IV-style leaderboard, s-ECE under/clean/over and the
open-set (digits 8–9 held out of training) and OOD (patches of scikit-learn's sample photos) tables, and
writes ``results.json`` plus the figures to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _atomic_savefig(fig, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".png")
    os.close(fd)
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


def demo(out: Path | None, *, eps: float, steps: int, n: int, epochs: int, seed: int, progress: bool) -> dict:
    import numpy as np
    import torch

    from . import (
        ood_under_attack,
        plot_entropy_distributions,
        plot_reliability_diagrams,
        rank_models,
        signed_ece,
    )
    from ._demo import load_digits_split, photo_patches, train_digits_model

    xtr, ytr, xte, yte = load_digits_split(seed)
    models = {
        "digits-cnn": train_digits_model(xtr, ytr, epochs=epochs, seed=seed),
        "digits-cnn-at": train_digits_model(xtr, ytr, adversarial=True, eps=0.1, epochs=epochs, seed=seed),
    }
    x, y = xte[:n], yte[:n]
    board = rank_models(models, x, y, eps, steps=steps, seed=seed, progress=progress)
    sece = {}
    for name, sp in board.spans.items():
        yn = y.numpy()
        sece[name] = {k: signed_ece(getattr(sp, f"conf_{k}"), getattr(sp, f"pred_{k}") == yn)
                      for k in ("under", "clean", "over")}
    # open set: train on digits 0-7, hold out 8-9
    known = tuple(range(8))
    oxtr, oytr, oxte, _ = load_digits_split(seed, classes=known)
    _, _, all_x, all_y = load_digits_split(seed)
    x_open = all_x[np.isin(all_y.numpy(), (8, 9))]
    osr_model = train_digits_model(oxtr, oytr, n_classes=8, epochs=epochs, seed=seed)
    osr = ood_under_attack(osr_model, oxte[:n], x_open[:n], [0.0, eps / 2, eps], steps=steps, seed=seed)
    ood = ood_under_attack(osr_model, oxte[:n], photo_patches(n, seed), [0.0, eps / 2, eps], steps=steps, seed=seed)
    result = {"leaderboard": board.to_dict(), "signed_ece": sece, "open_set": osr.to_dict(), "ood": ood.to_dict(),
              "config": {"eps": eps, "steps": steps, "n": n, "epochs": epochs, "seed": seed,
                         "torch": torch.__version__}}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        _atomic_write(out / "results.json", json.dumps(result, indent=2))
        _atomic_savefig(plot_entropy_distributions(board.spans), out / "entropy_distributions.png")
        _atomic_savefig(plot_reliability_diagrams(board.spans, y), out / "reliability_diagrams.png")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="uncspan", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="offline demo on sklearn digits")
    d.add_argument("--out", type=Path, default=None, help="directory for results.json and figures")
    d.add_argument("--eps", type=float, default=0.1, help="L∞ budget in [0,1] pixel units (default 0.1)")
    d.add_argument("--steps", type=int, default=50, help="attack steps (paper: 150)")
    d.add_argument("--n", type=int, default=300, help="test points attacked")
    d.add_argument("--epochs", type=int, default=20, help="training epochs of the tiny models")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    res = demo(args.out, eps=args.eps, steps=args.steps, n=args.n, epochs=args.epochs, seed=args.seed,
               progress=args.progress)
    lb = res["leaderboard"]
    print(f"Uncertainty-span leaderboard (L∞ eps={lb['eps']}, {lb['steps']} steps), sorted by MUS")
    print(f"{'model':<16}{'clean':>8}{'robust':>8}{'MUS μ':>8}{'MUS σ':>8}{'MSUS μ':>8}{'MSUS σ':>8}")
    for r in lb["rows"]:
        print(f"{r['model']:<16}{r['clean_acc']:>8.3f}{r['robust_acc']:>8.3f}{r['mus_mean']:>8.3f}"
              f"{r['mus_std']:>8.3f}{r['msus_mean']:>8.3f}{r['msus_std']:>8.3f}")
    print("\ns-ECE (negative = over-confident)")
    for name, v in res["signed_ece"].items():
        print(f"{name:<16} under {v['under']:+.3f}  clean {v['clean']:+.3f}  over {v['over']:+.3f}")
    print("\nOutliers under the over-confidence attack: open set (digits 8-9 unseen), OOD (photo patches)")
    print(f"{'set':<9}{'eps':>6}{'AUROC':>8}{'AUPR-IN':>9}{'AUPR-OUT':>9}{'FPR95':>7}")
    for kind in ("open_set", "ood"):
        for r in res[kind]["rows"]:
            print(f"{kind:<9}{r['eps']:>6.3f}{r['auroc']:>8.3f}{r['aupr_in']:>9.3f}{r['aupr_out']:>9.3f}"
                  f"{r['fpr_at_95_tpr']:>7.3f}")
    if args.out is not None:
        print(f"\nwrote {args.out / 'results.json'} and figures")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
