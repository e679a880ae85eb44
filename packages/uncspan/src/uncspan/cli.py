"""``uncspan`` command: the offline demo on scikit-learn's digits (standard vs PGD-trained CNN), and the
RobustBench leaderboard mode (Table IV with intervals for zoo models whose checkpoints are on disk).

    uncspan demo --out runs/uncspan --steps 50 --n 300
    uncspan leaderboard --model-dir models --data cifar10_test.pt --names Peng2023Robust Wang2023Better_WRN-70-16

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
    board = rank_models(models, x, y, eps, steps=steps, seed=seed, progress=progress,
                        adversarially_trained={"digits-cnn": False, "digits-cnn-at": True})
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


def _load_data(path: Path, n: int | None):
    """``x`` (N, C, H, W) floats in [0, 1] and ``y`` (N,) integers from a ``.pt`` dict (tensors only,
    ``weights_only=True``) or an ``.npz`` archive with arrays ``x`` and ``y``."""
    import numpy as np
    import torch

    if path.suffix == ".npz":
        with np.load(path) as z:
            x, y = torch.as_tensor(z["x"], dtype=torch.float32), torch.as_tensor(z["y"], dtype=torch.int64)
    elif path.suffix in (".pt", ".pth"):
        d = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(d, dict) or "x" not in d or "y" not in d:
            raise ValueError(f"--data {path}: expected a dict with tensors 'x' and 'y'")
        x, y = d["x"].float(), d["y"].long()
    else:
        raise ValueError(f"--data must be a .pt or .npz file; got {path}")
    return (x[:n], y[:n]) if n else (x, y)


def leaderboard(args) -> dict:
    """Rank RobustBench zoo models with local checkpoints by MUS (strongest attack, intervals)."""
    import torch

    from . import robustbench_leaderboard

    x, y = _load_data(args.data, args.n)
    flags = {**{m: True for m in args.adversarially_trained}, **{m: False for m in args.standard}}
    board = robustbench_leaderboard(
        args.names, x, y, model_dir=args.model_dir, dataset=args.dataset, threat_model=args.threat_model,
        eps=args.eps, steps=args.steps, seed=args.seed, restarts=args.restarts, optimizer=args.optimizer,
        adversarially_trained={k: v for k, v in flags.items() if k in args.names}, device=args.device,
        batch_size=args.batch_size, progress=args.progress)
    res = {"leaderboard": board.to_dict(),
           "config": {"model_dir": str(args.model_dir), "data": str(args.data), "n": int(len(y)),
                      "dataset": args.dataset, "threat_model": args.threat_model, "eps": args.eps,
                      "steps": args.steps, "restarts": args.restarts, "optimizer": args.optimizer,
                      "seed": args.seed, "torch": torch.__version__}}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(args.out, json.dumps(res, indent=2))
    return res


def _print_leaderboard(lb: dict) -> None:
    print(f"Uncertainty-span leaderboard ({lb['norm']} eps={lb['eps']:g}, {lb['steps']} steps), sorted by MUS; "
          f"[95 % intervals]")
    print(f"{'model':<34}{'clean':>22}{'robust':>22}{'MUS':>22}{'MSUS':>8}")
    for r in lb["rows"]:
        cells = [f"{r[c]:.3f} [{r[c + '_ci_low']:.3f},{r[c + '_ci_high']:.3f}]"
                 for c in ("clean_acc", "robust_acc", "mus_mean")]
        print(f"{r['model']:<34}" + "".join(f"{c:>22}" for c in cells) + f"{r['msus_mean']:>8.3f}")
    for name, why in lb.get("skipped", {}).items():
        print(f"skipped {name}: {why}")


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
    lbp = sub.add_parser("leaderboard", help="rank RobustBench models with local checkpoints by MUS (Table IV)")
    lbp.add_argument("--model-dir", type=Path, required=True, help="RobustBench model_dir (<dir>/<dataset>/<threat>/<name>.pt)")
    lbp.add_argument("--names", nargs="+", required=True, help="RobustBench model names")
    lbp.add_argument("--data", type=Path, required=True, help=".pt dict or .npz with x (N,C,H,W) in [0,1] and y (N,)")
    lbp.add_argument("--n", type=int, default=None, help="first n test points (paper: 8000)")
    lbp.add_argument("--dataset", default="cifar10", choices=["cifar10", "cifar100", "imagenet"])
    lbp.add_argument("--threat-model", default="Linf", choices=["Linf", "L2", "corruptions"])
    lbp.add_argument("--eps", type=float, default=8 / 255, help="budget (paper: 8/255 CIFAR-10, 4/255 ImageNet)")
    lbp.add_argument("--steps", type=int, default=150)
    lbp.add_argument("--restarts", type=int, default=1, help="random restarts per objective (strongest attack)")
    lbp.add_argument("--optimizer", default="pgd", choices=["pgd", "apgd"])
    lbp.add_argument("--adversarially-trained", nargs="*", default=[], metavar="NAME", help="declared adversarially trained")
    lbp.add_argument("--standard", nargs="*", default=[], metavar="NAME", help="declared standard (not adversarially trained)")
    lbp.add_argument("--seed", type=int, default=0)
    lbp.add_argument("--device", default="cpu")
    lbp.add_argument("--batch-size", type=int, default=256)
    lbp.add_argument("--out", type=Path, default=None, help="write the leaderboard as JSON here")
    lbp.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "leaderboard":
        res = leaderboard(args)
        _print_leaderboard(res["leaderboard"])
        if args.out is not None:
            print(f"\nwrote {args.out}")
        return 0
    res = demo(args.out, eps=args.eps, steps=args.steps, n=args.n, epochs=args.epochs, seed=args.seed,
               progress=args.progress)
    _print_leaderboard(res["leaderboard"])
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
