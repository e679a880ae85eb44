"""Small command line: ``iortemp experiment`` (the paper's experiment on the package's offline toy data),
``iortemp demo`` (the toy Table 2/3 grid) and ``iortemp calibrate`` (T_a from saved logits). Bad input (a missing
file, a bad option or config value) prints ``iortemp: error: ...`` and exits with status 2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


class UsageError(ValueError):
    """Bad input from the command line (exit status 2)."""


def _toy(seed: int):
    from robustsuite_common.experiment import Split

    from ._toy import trained_toy_classifier

    clf, ((xtr, ytr), (xva, yva), (xte, yte)) = trained_toy_classifier(seed=seed)
    names = ("negative", "positive")
    return clf, [Split(x, y, label_names=names) for x, y in ((xtr, ytr), (xva, yva), (xte, yte))]


def _experiment(args) -> int:
    from robustsuite_common.config import ConfigError, from_dict

    from . import experiment as ex

    overrides: dict = {}
    if args.config is not None:
        path = Path(args.config)
        if not path.is_file():
            raise UsageError(f"--config: no such file: {path}")
        try:
            if path.suffix == ".toml":
                import tomllib

                overrides = tomllib.loads(path.read_text(encoding="utf-8"))
            else:
                overrides = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise UsageError(f"--config: {path} is not valid {path.suffix.lstrip('.') or 'JSON'}: {err}") from None
    quick = {"text": {"attacks": {"names": [a.strip() for a in args.attacks.split(",")]}}}
    if args.n is not None:
        quick["text"] |= {"n_test": args.n, "n_val": args.n}
    quick["systems"] = {"search": {"attack": quick["text"]["attacks"]["names"][0]}}
    quick["sweep"] = {"attack": quick["text"]["attacks"]["names"][0]}
    try:
        cfg = from_dict(ex.Config, _merge(quick, overrides), base=ex.preset(args.preset), where="config")
    except ConfigError as err:
        raise UsageError(str(err)) from None
    clf, (train, val, test) = _toy(cfg.seed)
    result = ex.run(ex.Models(text=clf), ex.Data(test=test, val=val, train=train), cfg, progress=args.progress)
    if args.out is not None:
        result.save(args.out)
    if args.json:
        json.dump(result.to_dict(), sys.stdout)
        print()
        return 0
    for w in result.warnings:
        print(f"WARNING: {w}")
    print(result.summary)
    t = result.tables["ior_verdict"]
    print("\t".join(t.columns))
    for row in t.rows:
        print("\t".join("" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    return 0


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _demo(args) -> int:
    import iortemp
    from iortemp._toy import SYNONYMS, trained_toy_classifier

    if args.n < 1:
        raise UsageError(f"--n must be >= 1, got {args.n}")
    clf, (_, (xva, yva), (xte, yte)) = trained_toy_classifier(seed=args.seed)
    systems = {"base": clf, "↓conf": iortemp.TemperatureScaled(clf, temperature=2e6), "↑conf": iortemp.TemperatureScaled(clf, temperature=0.005)}
    attacks: dict[str, Any] = {"wordswap": iortemp.GreedyWordSwap(candidates=SYNONYMS)}
    if args.deepwordbug:
        attacks["deepwordbug"] = iortemp.TextAttackRecipe(recipe="deepwordbug")
    tab = iortemp.illusion_table(systems, attacks, xte[: args.n], yte[: args.n], val_inputs=xva[: args.n],
                                 val_labels=yva[: args.n], max_evaluations=args.max_evaluations, seed=args.seed,
                                 progress=args.progress)
    if args.json:
        json.dump(tab.to_dict(), sys.stdout, indent=1)
        print()
        return 0
    names = list(attacks)
    print(f"{'system':8s} {'adv':5s} {'T_a':>10s} {'clean':>7s} " + " ".join(f"{a:>12s}" for a in names)
          + f" {'P(c|x)':>10s}")
    for r in tab.rows:
        accs = " ".join(f"{100 * r['adversarial_accuracy'][a]:12.2f}" for a in names)
        mode = "-" if r["mode"] == "plain" else r["mode"]
        print(f"{r['system']:8s} {mode:5s} {r['temperature']:10.3g} {100 * r['clean_accuracy']:7.2f} {accs} "
              f"{100 * r['clean_confidence']:10.5f}")
    first = names[0]
    for s in systems:
        v = tab.verdict(s, first, args.threshold)
        verdict = "ILLUSION OF ROBUSTNESS" if v["illusion"] else "no illusion"
        print(f"{s}: plain {v['plain']['estimate'] * 100:.1f}% -> best adversary temperature "
              f"{v['best']['estimate'] * 100:.1f}%: {verdict} (McNemar p = {v['mcnemar']['p_value']:.3g})")
    return 0


def _calibrate(args) -> int:
    import iortemp

    arrays = []
    for name in ("logits", "labels"):
        path = Path(getattr(args, name))
        if not path.is_file():
            raise UsageError(f"{name}: no such file: {path}")
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except (ValueError, OSError) as err:
            raise UsageError(f"{name}: {path} is not a .npy array: {err}") from None
    z, y = arrays
    t = iortemp.calibrate_temperature(z, y, method=args.method)
    print(json.dumps({"temperature": t, "nll_before": iortemp.temperature_nll(z, y, temperature=1.0),
                      "nll_after": iortemp.temperature_nll(z, y, temperature=t)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread unless ROBUSTSUITE_THREADS says otherwise: same numbers on any machine
    ap = argparse.ArgumentParser(prog="iortemp", description="Illusion of robustness: temperature scaling tools")
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("experiment", help="the paper's experiment (iortemp.experiment.run) on the offline toy data")
    e.add_argument("--preset", default="demo", help="named preset: demo, paper, paper-cpu (default demo)")
    e.add_argument("--config", help="JSON or TOML file of config overrides (e.g. {\"text\": {\"n_test\": 20}})")
    e.add_argument("--attacks", default="wordswap", help="comma-separated text attacks (default wordswap: offline)")
    e.add_argument("--n", type=int, help="test and validation texts")
    e.add_argument("--out", help="write the result as JSON here")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.add_argument("--progress", action="store_true")
    e.set_defaults(func=_experiment)
    d = sub.add_parser("demo", help="offline toy reproduction of Tables 2/3 (base, ↓conf, ↑conf; plain/cal/opt)")
    d.add_argument("--n", type=int, default=60, help="test and validation texts (default 60)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-evaluations", type=int, default=6, help="Brent budget of attack evaluations")
    d.add_argument("--threshold", type=float, default=0.05, help="IOR threshold on the accuracy drop")
    d.add_argument("--deepwordbug", action="store_true", help="also run TextAttack's DeepWordBug (offline)")
    d.add_argument("--json", action="store_true", help="print the table as JSON")
    d.add_argument("--progress", action="store_true")
    d.set_defaults(func=_demo)
    c = sub.add_parser("calibrate", help="NLL-optimal temperature (Eq. 9) from saved logits and labels (.npy)")
    c.add_argument("logits")
    c.add_argument("labels")
    c.add_argument("--method", choices=["exact", "gd"], default="exact")
    c.set_defaults(func=_calibrate)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, ValueError, TypeError, FileNotFoundError) as err:
        print(f"iortemp: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
