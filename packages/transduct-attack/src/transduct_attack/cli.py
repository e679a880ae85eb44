"""``transduct-attack``: the paper's experiment, or attacks against one transductive defense.

    transduct-attack experiment --preset demo --small  # the paper's tables on scikit-learn digits (demo extra)
    transduct-attack demo --defense rmc               # offline, scikit-learn digits (needs the demo extra)
    transduct-attack demo --defense dann --data mnist.npz --preset mnist

``--data`` takes an ``.npz`` with ``x_train, y_train, x_test, y_test`` (float NCHW in [0, 1], int labels);
``--model`` a TorchScript file of the base model (otherwise a small CNN is trained here). ``--preset``
applies the paper's attack budgets (A.2–A.5).
"""

from __future__ import annotations

import argparse
import sys

PRESETS = {
    # eps, PGD steps, PGD step size, T, DANN's alpha_max (paper A.2, A.4, A.5)
    "digits": {"eps": 0.2, "steps": 10, "step_size": None, "T": 2, "dann_alpha": 1.0},
    "mnist": {"eps": 0.3, "steps": 100, "step_size": 0.01, "T": 9, "dann_alpha": 0.1},
    "cifar10": {"eps": 8 / 255, "steps": 40, "step_size": 1 / 255, "T": 9, "dann_alpha": 1.0},
}
DEFENSES = ("rmc", "dent", "dann", "tadv", "urejectron", "static")
ATTACKS = ("none", "pgd", "aa", "aa-adaptive", "fpa", "gmsa-avg", "gmsa-min")


def _load_data(path: str | None):
    import torch

    from robustsuite_common.extras import optional_import

    if path is None:
        sklearn_datasets = optional_import("sklearn.datasets", extra="transduct-attack[demo]",
                                           feature="the offline demo")
        d = sklearn_datasets.load_digits()
        x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
        y = torch.tensor(d.target, dtype=torch.int64)
        perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
        return x[perm[:1200]], y[perm[:1200]], x[perm[1200:]], y[perm[1200:]]
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in ("x_train", "y_train", "x_test", "y_test") if k not in z.files]
        if missing:
            raise ValueError(f"--data {path}: missing arrays {missing} (found {z.files})")
        return tuple(torch.as_tensor(z[k]) for k in ("x_train", "y_train", "x_test", "y_test"))


#: the ``--small`` overrides of ``experiment``: every table in about a minute of CPU on the 8×8 digits
SMALL = {"robustness": {"autoattack": False}, "attack": {"pgd_steps": 3},
         "rmc": {"points": 6, "k": 16, "max_epochs": 2, "train_points": 300, "aug_steps": 3, "T": 1,
                 "calibration_k": 16},
         "dann": {"points": 30, "train_points": 300, "epochs": 2, "T": 1},
         "tadv": {"points": 30, "train_points": 300, "epochs": 1, "adv_steps": 2, "T": 1},
         "dent": {"points": 16, "batch_size": 16, "train_points": 300, "base_epochs": 1, "base_adv_steps": 2, "T": 0,
                  "aa": False},
         "urejectron": {"points": 30, "train_points": 300, "epochs": 1, "T": 1}}


def digits_inputs(seed: int = 0, epochs: int = 10):
    """The experiment's inputs on scikit-learn's digits (the ``demo`` extra): a standard and an adversarially
    trained (L∞ 0.1, PGD-5) SmallCNN, trained here in seconds, and the train/test splits with the class names."""
    import torch

    from . import experiment as E
    from .networks import SmallCNN, build
    from .training import train_classifier

    xtr, ytr, xte, yte = _load_data(None)
    names = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

    def cnn(adversarial_eps: float):
        g = torch.Generator().manual_seed(seed)
        net = build(lambda: SmallCNN(in_channels=1, n_classes=10, image_size=8), g)
        return train_classifier(net, xtr, ytr, epochs=epochs, generator=g, adversarial_eps=adversarial_eps,
                                adv_steps=5)

    models = E.Models(standard=cnn(0.0), adversarial=cnn(0.1))
    data = E.Data(train=E.Split(xtr, ytr, label_names=names), test=E.Split(xte, yte, label_names=names),
                  name="scikit-learn digits")
    return models, data


def _experiment(args) -> int:
    from robustsuite_common.config import from_dict, nest, parse_sets

    from . import experiment as E

    overrides = nest(parse_sets(args.set or [], example="rmc.points=8"), base=SMALL if args.small else None)
    cfg = from_dict(E.Config, {**overrides, "seed": args.seed}, base=E.preset(args.preset), where="--set")
    if args.epochs < 1:
        raise ValueError(f"--epochs must be >= 1, got {args.epochs}")
    models, data = digits_inputs(seed=args.seed, epochs=args.epochs)
    store = E.DirStore(args.store) if args.store else None
    result = E.run(models, data, cfg, store=store, progress=not args.quiet)
    for w in result.warnings:
        print(f"WARNING: {w}")
    for table in result.tables.values():
        print(f"\n{table.title}")
        print(" | ".join(table.columns))
        for row in table.rows:
            print(" | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
    print(f"\n{result.summary}")
    if args.out:
        result.save(args.out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; a bad argument or input prints an error and exits with status 2 (no traceback)."""
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread (ROBUSTSUITE_THREADS): torch is imported already, so
    # setting OMP_NUM_THREADS here (as this CLI did) had no effect; use_threads calls torch.set_num_threads
    parser = argparse.ArgumentParser(prog="transduct-attack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("experiment", help="the paper's tables (transduct_attack.experiment) on the digits")
    exp.add_argument("--preset", default="demo", help="demo, paper or paper-cpu (sizes for Fashion-MNIST)")
    exp.add_argument("--small", action="store_true", help="small sizes for the 8x8 digits (about a minute)")
    exp.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config field, e.g. rmc.points=8")
    exp.add_argument("--seed", type=int, default=0)
    exp.add_argument("--epochs", type=int, default=10, help="training epochs of the two digits CNNs")
    exp.add_argument("--store", default=None, help="checkpoint directory (resume an interrupted run)")
    exp.add_argument("--out", default=None, help="write the result as JSON")
    exp.add_argument("--quiet", action="store_true", help="no progress bars")
    demo = sub.add_parser("demo", help="play attacks against one defense")
    demo.add_argument("--defense", choices=DEFENSES, default="rmc")
    demo.add_argument("--attacks", default="none,pgd,fpa,gmsa-avg,gmsa-min",
                      help=f"comma-separated subset of {ATTACKS}")
    demo.add_argument("--preset", choices=sorted(PRESETS), default="digits")
    demo.add_argument("--eps", type=float, default=None)
    demo.add_argument("--T", type=int, default=None)
    demo.add_argument("--points", type=int, default=60)
    demo.add_argument("--batch-size", type=int, default=None, help="points per round (default: RMC 6, others all)")
    demo.add_argument("--epochs", type=int, default=10, help="training epochs of base models and of Γ")
    demo.add_argument("--leak-state", action="store_true")
    demo.add_argument("--adversarial-order", action="store_true")
    demo.add_argument("--data", default=None, help=".npz with x_train, y_train, x_test, y_test")
    demo.add_argument("--model", default=None, help="TorchScript base model (default: train a small CNN)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--json", default=None, help="write the results as JSON to this path")
    args = parser.parse_args(argv)
    try:
        if args.command == "experiment":
            return _experiment(args)
        return _demo(parser, args)
    except (ValueError, TypeError, FileNotFoundError, KeyError) as err:
        print(f"transduct-attack: error: {err}", file=sys.stderr)
        return 2
    except ImportError as err:
        print(f"transduct-attack: error: {err}", file=sys.stderr)
        return 2


def _demo(parser, args) -> int:
    import torch

    import transduct_attack as ta
    from transduct_attack.networks import SmallCNN, build

    attacks = [a.strip() for a in args.attacks.split(",") if a.strip()]
    bad = [a for a in attacks if a not in ATTACKS]
    if bad:
        parser.error(f"unknown attacks {bad}; choose from {ATTACKS}")
    preset = dict(PRESETS[args.preset])
    eps = preset["eps"] if args.eps is None else args.eps
    T = preset["T"] if args.T is None else args.T
    xtr, ytr, xte, yte = _load_data(args.data)
    c, side, k = xtr.shape[1], tuple(xtr.shape[-2:]), int(ytr.max()) + 1
    g = torch.Generator().manual_seed(args.seed)

    def fresh(gen):
        return build(lambda: SmallCNN(in_channels=c, n_classes=k, image_size=side), gen)

    adversarial_base = args.defense in ("tadv", "dent")
    if args.model:
        base = torch.jit.load(args.model).eval()
    else:
        base = ta.train_classifier(fresh(g), xtr, ytr, epochs=args.epochs, generator=g,
                                   adversarial_eps=eps if adversarial_base else 0.0, adv_steps=5)
    if args.defense == "rmc":
        defense = ta.RMC(base, xtr, ytr, k=128, aug_eps=eps, aug_steps=preset["steps"], lr=2e-3,
                         aug_step_size=preset["step_size"], max_epochs=10, patience=2, seed=args.seed)
    elif args.defense == "dent":
        defense = ta.DENT(base)
    elif args.defense == "dann":
        defense = ta.DANN(xtr, ytr, base_model=base, epochs=args.epochs,
                          alpha_max=preset["dann_alpha"])
    elif args.defense == "tadv":
        defense = ta.TADV(xtr, ytr, base_model=base, eps=eps, epochs=args.epochs, adv_steps=5)
    elif args.defense == "urejectron":
        defense = ta.URejectron(base, xtr, epochs=3)
    else:
        defense = ta.StaticDefense(base)
    pgd = ta.PGD(steps=preset["steps"], step_size=preset["step_size"])
    makers = {"none": ta.NoAttack, "pgd": lambda: ta.TransferPGD(solver=pgd),
              "aa": lambda: ta.TransferAutoAttack(version="custom", attacks=["apgd-ce", "apgd-t"]),
              "aa-adaptive": lambda: ta.AdaptiveAutoAttack(version="custom", attacks=["apgd-ce"]),  # DENT-AA
              "fpa": lambda: ta.FPA(T=T, solver=pgd), "gmsa-avg": lambda: ta.GMSA(mode="avg", T=T, solver=pgd),
              "gmsa-min": lambda: ta.GMSA(mode="min", T=T, solver=pgd)}
    threat = ta.ThreatModel(leak_state=args.leak_state, order="adversarial" if args.adversarial_order else "natural")
    n = min(args.points, xte.shape[0])
    batch = args.batch_size or (6 if args.defense == "rmc" else n)
    results = []
    print(f"{defense.name} on {n} test points, L∞ eps={eps:.4g}, T={T}, {batch} points per round")
    print(f"{'attack':10s} {'accuracy':>9s} {'err on S':>9s} {'rej clean':>10s}")
    for name in attacks:
        r = ta.play_game(makers[name](), defense, xte[:n], yte[:n], eps=eps, batch_size=batch, seed=args.seed,
                         threat_model=threat)
        results.append(r.to_dict())

        def fmt(v):
            return "-" if v is None else f"{v:.3f}"

        print(f"{name:10s} {r.accuracy:9.3f} {fmt(r.error_accepted):>9s} {fmt(r.rejection_rate):>10s}")
    if args.json:
        from robustsuite_common.io import write_json

        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
