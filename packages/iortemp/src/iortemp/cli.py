"""Small command line: ``iortemp demo`` (offline toy reproduction) and ``iortemp calibrate`` (T_a from logits)."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def _demo(args) -> int:
    import iortemp
    from iortemp._toy import SYNONYMS, trained_toy_classifier

    clf, (_, (xva, yva), (xte, yte)) = trained_toy_classifier(seed=args.seed)
    systems = {"base": clf, "↓conf": iortemp.TemperatureScaled(clf, 2e6), "↑conf": iortemp.TemperatureScaled(clf, 0.005)}
    attacks = {"wordswap": iortemp.GreedyWordSwap(candidates=SYNONYMS)}
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
        plain = tab.value(s, "plain", first)
        best = min(tab.value(s, m, first) for m in ("cal", "opt"))
        verdict = "ILLUSION OF ROBUSTNESS" if plain - best > args.threshold else "no illusion"
        print(f"{s}: plain {100 * plain:.1f}% -> best adversary temperature {100 * best:.1f}%: {verdict}")
    return 0


def _calibrate(args) -> int:
    import iortemp

    z = np.load(args.logits)
    y = np.load(args.labels)
    t = iortemp.calibrate_temperature(z, y, method=args.method)
    print(json.dumps({"temperature": t, "nll_before": iortemp.temperature_nll(z, y, 1.0),
                      "nll_after": iortemp.temperature_nll(z, y, t)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="iortemp", description="Illusion of robustness: temperature scaling tools")
    sub = ap.add_subparsers(dest="cmd", required=True)
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
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
