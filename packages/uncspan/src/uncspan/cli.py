"""``uncspan`` command: the paper's experiment offline on scikit-learn's digits, and the RobustBench leaderboard mode
(Table IV with intervals for zoo models whose checkpoints are on disk).

    uncspan experiment --out runs/uncspan                  # uncspan.experiment, preset "demo", on the digits models
    uncspan experiment --preset paper-cpu --set leaderboard.n=60 --set attack.steps=5 --set sweep.eps=[0,0.1]
    uncspan leaderboard --model-dir models --data cifar10_test.pt --names Peng2023Robust Wang2023Better_WRN-70-16

``experiment`` (``demo`` is its old name, kept as an alias; ``python -m uncspan.experiment`` is the same command)
trains the tiny digits models (seconds: a standard and a PGD-trained CNN, an OSR CNN on digits 0–7), runs
``uncspan.experiment.run`` with the named preset and ``--set`` overrides, prints the warnings, the summary and the
tables, and with ``--out`` writes ``result.json``, the figures and a checkpoint store (a second run resumes).
Bad input (a missing file, an unknown setting, a value out of range) prints ``uncspan: error: ...`` and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


class UsageError(ValueError):
    """Bad input on the command line (exit status 2)."""


def experiment(args: argparse.Namespace) -> int:
    """``uncspan experiment``: :func:`uncspan.experiment.run` with a preset and ``--set`` overrides on the digits."""
    from robustsuite_common.config import override, parse_sets

    from . import experiment as exp
    from ._demo import digits_experiment

    try:
        cfg = override(exp.preset(args.preset), parse_sets(args.set, example="attack.steps=50"), seed=args.seed)
    except ValueError as err:
        raise UsageError(str(err)) from None
    models, data = digits_experiment(epochs=args.epochs, seed=args.seed)
    store = None
    if args.out is not None:
        from robustsuite_common.experiment import DirStore

        args.out.mkdir(parents=True, exist_ok=True)
        store = DirStore(args.out / "store")
    res = exp.run(models, data, cfg, store=store, progress=args.progress)
    _print(res)
    if args.out is not None:
        res.save(args.out / "result.json")
        try:
            figs = exp.figures(res)
        except ImportError as err:
            figs = []
            print(f"\nfigures skipped: {err}")
        else:
            from robustsuite_common.io import atomic_write

            for f in figs:
                atomic_write(args.out / f"{f.name}.png", lambda p, fig=f.figure: fig.savefig(p, format="png", dpi=110))
        print(f"\nwrote {args.out / 'result.json'}" + ("" if not figs else " and figures"))
    return 0


def _print(res) -> None:
    for w in res.warnings:
        print(f"WARNING: {w}")
    print(res.summary)
    span = res.tables["span"]
    print(f"\n{span.title}; [95 % intervals]")
    robust = "robust (" + span.records()[0]["robust_attack"].split(" ")[0] + ")"
    print(f"{'model':<24}{'clean':>22}{robust:>28}{'PGD':>22}{'MUS':>22}{'MSUS':>8}")
    for r in span.records():
        cells = ["–" if r[c] is None else f"{r[c]:.3f} [{r[c + '_ci_low']:.3f},{r[c + '_ci_high']:.3f}]"
                 for c in ("clean_acc", "robust_acc", "pgd_robust_acc", "mus_mean")]
        print(f"{r['model']:<24}{cells[0]:>22}{cells[1]:>28}{cells[2]:>22}{cells[3]:>22}{r['msus_mean']:>8.3f}")
    print("\ns-ECE (negative = over-confident)")
    for r in res.tables["signed_ece"].records():
        print(f"{r['model']:<24} under {r['under']:+.3f}  clean {r['clean']:+.3f}  over {r['over']:+.3f}")
    if res.tables["ood_osr"].rows:
        print("\nOutliers under the over-confidence attack (Table V)")
        print(f"{'model':<18}{'set':<9}{'eps':>6}{'AUROC':>22}{'FPR95':>7}")
        for r in res.tables["ood_osr"].records():
            print(f"{r['model']:<18}{r['outliers']:<9}{r['eps']:>6.3f}"
                  f"{r['auroc']:>8.3f} [{r['auroc_ci_low']:.3f},{r['auroc_ci_high']:.3f}]{r['fpr_at_95_tpr']:>7.3f}")
    for n in res.notes:
        print(f"note: {n}")


def _load_data(path: Path, n: int | None):
    """``x`` (N, C, H, W) floats in [0, 1] and ``y`` (N,) integers from a ``.pt`` dict (tensors only,
    ``weights_only=True``) or an ``.npz`` archive with arrays ``x`` and ``y``."""
    import numpy as np
    import torch

    if not path.is_file():
        raise UsageError(f"--data {path}: no such file")
    if path.suffix == ".npz":
        with np.load(path) as z:
            if "x" not in z or "y" not in z:
                raise UsageError(f"--data {path}: expected arrays 'x' and 'y'")
            x, y = torch.as_tensor(z["x"], dtype=torch.float32), torch.as_tensor(z["y"], dtype=torch.int64)
    elif path.suffix in (".pt", ".pth"):
        d = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(d, dict) or "x" not in d or "y" not in d:
            raise UsageError(f"--data {path}: expected a dict with tensors 'x' and 'y'")
        x, y = d["x"].float(), d["y"].long()
    else:
        raise UsageError(f"--data must be a .pt or .npz file; got {path}")
    return (x[:n], y[:n]) if n else (x, y)


def leaderboard(args) -> dict:
    """Rank RobustBench zoo models with local checkpoints by MUS (strongest attack, intervals)."""
    import torch

    from . import RankConfig, robustbench_leaderboard

    if not args.model_dir.is_dir():
        raise UsageError(f"--model-dir {args.model_dir}: no such directory")
    x, y = _load_data(args.data, args.n)
    flags = {**{m: True for m in args.adversarially_trained}, **{m: False for m in args.standard}}
    config = RankConfig(eps=args.eps, steps=args.steps, seed=args.seed, restarts=args.restarts, optimizer=args.optimizer,
                        attack=args.attack, batch_size=args.batch_size, progress=args.progress)
    board = robustbench_leaderboard(
        args.names, x, y, model_dir=args.model_dir, dataset=args.dataset, threat_model=args.threat_model,
        config=config, adversarially_trained={k: v for k, v in flags.items() if k in args.names}, device=args.device)
    res = {"leaderboard": board.to_dict(),
           "config": {"model_dir": str(args.model_dir), "data": str(args.data), "n": int(len(y)),
                      "dataset": args.dataset, "threat_model": args.threat_model, "eps": args.eps,
                      "steps": args.steps, "restarts": args.restarts, "optimizer": args.optimizer,
                      "attack": args.attack, "seed": args.seed, "torch": torch.__version__}}
    if args.out is not None:
        from robustsuite_common.io import write_json

        write_json(args.out, res)
    return res


def _print_leaderboard(lb: dict) -> None:
    print(f"Uncertainty-span leaderboard ({lb['norm']} eps={lb['eps']:g}, {lb['steps']} steps), sorted by MUS; "
          f"[95 % intervals]")
    print(f"{'model':<34}{'clean':>22}{'robust':>22}{'PGD':>22}{'MUS':>22}{'MSUS':>8}")
    for r in lb["rows"]:
        cells = ["–" if r[c] is None else f"{r[c]:.3f} [{r[c + '_ci_low']:.3f},{r[c + '_ci_high']:.3f}]"
                 for c in ("clean_acc", "robust_acc", "pgd_robust_acc", "mus_mean")]
        print(f"{r['model']:<34}" + "".join(f"{c:>22}" for c in cells) + f"{r['msus_mean']:>8.3f}")
    if lb["rows"]:
        print(f"robust: {lb['rows'][0]['robust_attack']}")
    for name, why in lb.get("skipped", {}).items():
        print(f"skipped {name}: {why}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="uncspan", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("experiment", aliases=["demo"], help="the paper's experiment offline on scikit-learn's digits "
                       "(demo: its old name)")
    d.add_argument("--preset", default="demo", help="uncspan.experiment preset (demo, paper, paper-cpu)")
    d.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting, dotted (attack.steps=50, sweep.eps=[0,0.1]); repeatable")
    d.add_argument("--out", type=Path, default=None, help="directory for result.json, figures and checkpoints")
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
    lbp.add_argument("--attack", default="autoattack", choices=["autoattack", "pgd"],
                     help="robust accuracy: standard AutoAttack (default, PGD beside it) or PGD alone")
    lbp.add_argument("--adversarially-trained", nargs="*", default=[], metavar="NAME", help="declared adversarially trained")
    lbp.add_argument("--standard", nargs="*", default=[], metavar="NAME", help="declared standard (not adversarially trained)")
    lbp.add_argument("--seed", type=int, default=0)
    lbp.add_argument("--device", default="cpu")
    lbp.add_argument("--batch-size", type=int, default=256)
    lbp.add_argument("--out", type=Path, default=None, help="write the leaderboard as JSON here")
    lbp.add_argument("--progress", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread unless ROBUSTSUITE_THREADS says otherwise: same numbers on any machine
    args = _parser().parse_args(argv)  # argparse itself exits 2 on unknown options
    try:
        if args.command == "leaderboard":
            res = leaderboard(args)
            _print_leaderboard(res["leaderboard"])
            if args.out is not None:
                print(f"\nwrote {args.out}")
            return 0
        return experiment(args)
    except (UsageError, ValueError, TypeError, FileNotFoundError, NotADirectoryError) as err:
        print(f"uncspan: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
