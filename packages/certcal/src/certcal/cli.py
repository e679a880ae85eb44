"""Small standalone CLI: ``certcal experiment --preset P`` (the paper's experiment, ``certcal.experiment``,
offline on scikit-learn's digits; ``certcal demo`` and ``python -m certcal.experiment`` are the same), ``certcal
cce`` (CBS/CCE from saved bounds), ``certcal overview`` (``certcal.overview`` of a small CNN on the digits; ``python
-m certcal.overview`` the same) and ``certcal act`` (the ACT comparison on digits, several seeds). A missing file
or a bad argument prints ``certcal: error: ...`` and exits with status 2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from robustsuite_common.io import write_json


def _load_bounds(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not path.is_file():
        raise FileNotFoundError(f"bounds file {path} does not exist")
    if path.suffix == ".npz":
        with np.load(path) as f:
            missing = {"lower", "upper", "correct"} - set(f.files)
            if missing:
                raise ValueError(f"{path} lacks arrays {sorted(missing)} (need lower, upper, correct)")
            return f["lower"], f["upper"], f["correct"]
    if path.suffix == ".csv":
        data = np.genfromtxt(path, delimiter=",", names=True)
        names = set(data.dtype.names or ())
        if not {"lower", "upper", "correct"} <= names:
            raise ValueError(f"{path} needs a header with columns lower, upper, correct")
        return data["lower"], data["upper"], data["correct"]
    raise ValueError(f"bounds file must be .npz or .csv, got {path.suffix!r}")


def _cmd_cce(args: argparse.Namespace) -> int:
    from . import certified_brier_score, certified_calibration_error

    lower, upper, correct = _load_bounds(Path(args.bounds))
    out: dict[str, Any] = {"n": int(len(lower)), "n_bins": args.n_bins,
                           "cbs": certified_brier_score(lower, upper, correct), "cce": {}}
    for m in args.method:
        out["cce"][m] = certified_calibration_error(lower, upper, correct, n_bins=args.n_bins, method=m).value
    print(json.dumps(out, indent=2))
    if args.out:
        write_json(Path(args.out), out)
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from robustsuite_common.config import override, parse_sets
    from robustsuite_common.experiment import DirStore

    from . import experiment

    cfg = override(experiment.preset(args.preset), parse_sets(args.set, example="certify.n=1000"), seed=args.seed)
    models, data = experiment.digits(config=cfg, seed=args.seed)
    store = DirStore(args.checkpoints) if args.checkpoints else None
    res = experiment.run(models, data, cfg, store=store, progress=not args.quiet)
    for w in res.warnings:
        print(f"WARNING: {w}")
    print(res.summary)
    for table in res.tables.values():
        print(f"\n{table.name}: {table.title}\n| " + " | ".join(table.columns) + " |")
        for row in table.rows:
            print("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
    if args.out:
        res.save(Path(args.out))
    return 0


def _cmd_overview(args: argparse.Namespace) -> int:
    from robustsuite_common.config import override, parse_sets
    from robustsuite_common.experiment import DirStore

    from . import overview
    from ._demo import digits_splits, train_digits_cnn

    cfg = override(overview.preset(args.preset), parse_sets(args.set, example="n_boot=2000"))
    train, test = digits_splits(0)
    model = train_digits_cnn(train.x, train.y, 0.0, seed=0)
    store = DirStore(args.checkpoints) if args.checkpoints else None
    res = overview.run(overview.Models(model, name="digits-cnn"), overview.Data(test, name="sklearn-digits"), cfg,
                       store=store, progress=not args.quiet)
    for w in res.warnings:
        print(f"WARNING: {w}")
    print(res.summary)
    if args.out:
        res.save(Path(args.out))
    return 0


def _cmd_act(args: argparse.Namespace) -> int:
    from . import ACTComparisonConfig, act_comparison
    from ._demo import load_digits_split, train_digits_cnn

    xtr, ytr, xte, yte = load_digits_split(0)
    base = train_digits_cnn(xtr, ytr, args.sigma, seed=0)
    cfg = ACTComparisonConfig(methods=args.methods, seeds=args.seeds, sigma=args.sigma, eps=args.epsilon,
                              radii=args.radii, epochs=args.epochs, n=args.n, n_boot=args.n_boot,
                              grid={"lr": args.lr_grid}, selection_margin=args.selection_margin)
    res = act_comparison(base, xtr, ytr, xte[: args.n_test], yte[: args.n_test], config=cfg,
                         progress=lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True))
    print(f"ACT comparison: digits, sigma={args.sigma}, epsilon={args.epsilon}, {args.epochs} epochs, "
          f"seeds {list(args.seeds)}, {args.n_test} test inputs, n={args.n}; 95% intervals")

    def f(v: float | None, lo: float | None, hi: float | None) -> str:
        if v is None:
            return "-"
        return f"{100 * v:.1f}" if lo is None or hi is None else f"{100 * v:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"

    print("| method | radius | CA % | CBS % | CCE % |\n| --- | --- | --- | --- | --- |")
    for r in res.rows:
        print(f"| {r.method} | {r.radius:g} | "
              f"{f(r.certified_accuracy, r.certified_accuracy_ci_low, r.certified_accuracy_ci_high)} | "
              f"{f(r.cbs, r.cbs_ci_low, r.cbs_ci_high)} | {f(r.cce, r.cce_ci_low, r.cce_ci_high)} |")
    if args.out:
        write_json(Path(args.out), res.to_dict())
    return 0


def add_experiment_arguments(d: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``certcal experiment`` (and ``python -m certcal.experiment``) on ``d``."""
    d.add_argument("--preset", default="demo", choices=["demo", "paper", "paper-cpu"])
    d.add_argument("--set", action="append", default=[], metavar="DOTTED.KEY=VALUE",
                   help="config override, JSON value (repeatable): --set certify.n=1000 --set act.enabled=false")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--checkpoints", help="directory to checkpoint finished pieces in (resume an interrupted run)")
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.add_argument("--out", help="write the result (certcal.experiment.Result) as JSON here")
    d.set_defaults(func=_cmd_experiment)
    return d


def add_overview_arguments(d: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``certcal overview`` (and ``python -m certcal.overview``) on ``d``."""
    d.add_argument("--preset", default="demo", choices=["demo", "paper", "paper-cpu"])
    d.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config override, JSON value (repeatable): --set n_boot=2000")
    d.add_argument("--checkpoints", help="directory to checkpoint AutoAttack's batches in (resume)")
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.add_argument("--out", help="write the result (certcal.overview.Result) as JSON here")
    d.set_defaults(func=_cmd_overview)
    return d


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="certcal", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cce", help="certified Brier score and calibration error from saved bounds")
    c.add_argument("bounds", help=".npz with arrays lower, upper, correct (or .csv with those columns)")
    c.add_argument("--n-bins", type=int, default=15)
    c.add_argument("--method", action="append", choices=["exact", "admm", "dece", "brier", "milp"],
                   help="repeatable; default exact")
    c.add_argument("--out", help="also write the JSON here")
    c.set_defaults(func=_cmd_cce)
    for name in ("experiment", "demo"):  # one implementation; "demo" is the former name
        add_experiment_arguments(sub.add_parser(
            name, help="the paper's experiment (certcal.experiment) on scikit-learn's digits, offline (needs "
                       "certcal[demo])" + ("; the same as 'experiment'" if name == "demo" else "")))
    add_overview_arguments(sub.add_parser(
        "overview", help="a model's calibration-and-robustness overview (certcal.overview) of a small CNN on "
                         "scikit-learn's digits, offline (needs certcal[demo])"))
    a = sub.add_parser("act", help="ACT comparison (Table 2 layout) on scikit-learn's digits, several seeds")
    a.add_argument("--methods", nargs="+",
                   default=["none", "gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact"])
    a.add_argument("--lr-grid", type=float, nargs="+", default=[1e-3],
                   help="weight learning rates to select from (App. I.3 grid; default one value)")
    a.add_argument("--selection-margin", type=float, default=0.03,
                   help="the paper's rule: models within this CA margin of the best, lowest CCE / CBS")
    a.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a.add_argument("--sigma", type=float, default=0.25)
    a.add_argument("--epsilon", type=float, default=0.25)
    a.add_argument("--epochs", type=int, default=2)
    a.add_argument("--n", type=int, default=1000, help="Monte-Carlo draws per input")
    a.add_argument("--n-test", type=int, default=200)
    a.add_argument("--radii", type=float, nargs="+", default=[0.0, 0.1, 0.25, 0.5])
    a.add_argument("--n-boot", type=int, default=100)
    a.add_argument("--out", help="write the table as JSON here")
    a.set_defaults(func=_cmd_act)
    return p


def main(argv: list[str] | None = None, *, parser: argparse.ArgumentParser | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); ``parser``: another parser whose commands set ``func``
    (``python -m certcal.experiment`` passes the experiment's alone)."""
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread unless ROBUSTSUITE_THREADS says otherwise: same numbers on any machine
    args = (parser or build_parser()).parse_args(argv)
    if getattr(args, "command", None) == "cce" and not args.method:
        args.method = ["exact"]
    try:
        return int(args.func(args))
    except (ValueError, TypeError, ImportError, OSError) as exc:  # a bad argument, a missing or unreadable file
        print(f"certcal: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
