"""Paper Table 3 (defenses ranked by mean Δ, Eq. 2) measured on builtin:wordnet-roberta / builtin:wordnet-topics.

Runs the package's ``one_one_defense`` (1-1 (α, α) and (α, β)) and ``leave_one_out_defense`` (LOO) with the
adversarial-training recipe of §4.3: each defended model is fine-tuned from the shipped (clean-trained) model on
the clean training texts plus one attacked copy each, attackers and levels low/mid/high in equal shares. Prints a
Markdown table with the paper's Table 3 numbers (percentage points) beside ours and writes the JSON results.

    uv run python tools/bench/zeroe_defense_tables.py --out /tmp/zeroe_defense.json

Offline: needs only the shipped builtin model and data (robustsuite).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

# Paper Table 3: mean robustness improvement over all attackers, percentage points (rounded), per task.
PAPER_TABLE3 = {"1-1 (α, α)": {"POS": 16, "NLI": 20, "TC": 12},
                "LOO": {"POS": 4, "NLI": 10, "TC": 9},
                "1-1 (α, β)": {"POS": 1, "NLI": 3, "TC": 7}}


def _boot(vals: list[float], seed: int, n_boot: int = 2000) -> tuple[float, float, float]:
    v = np.asarray(vals, dtype=np.float64)
    rng = np.random.default_rng(seed)
    b = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(axis=1)
    lo, hi = np.quantile(b, [0.025, 0.975])
    return float(v.mean()), float(lo), float(hi)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=1000, help="training texts (each plus one attacked copy)")
    ap.add_argument("--n-test", type=int, default=200)
    ap.add_argument("--one-one", default="intrude,visual,disemvowel,truncate", help="1-1 attackers (α and β)")
    ap.add_argument("--loo", default="intrude,visual,disemvowel,truncate", help="LOO held-out attackers")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-clean-copies", action="store_true", help="train on attacked copies only")
    ap.add_argument("--out", type=Path, default=None, help="JSON file for the full results")
    a = ap.parse_args(argv)
    if a.n_train < 10 or a.n_test < 10 or a.epochs < 1:
        raise SystemExit("--n-train/--n-test must be >= 10 and --epochs >= 1")

    import zeroe_perturb as zp
    from robustsuite import runners
    from zeroe_perturb.defense import FineTuneConfig, leave_one_out_defense, one_one_defense

    ctx = runners.RunContext(run_dir=Path("/tmp"), method="zeroe_perturb", seed=a.seed)
    clf = ctx.model("builtin:wordnet-roberta")
    ds = ctx.dataset("builtin:wordnet-topics")
    rng = np.random.default_rng(a.seed)
    tr = np.sort(rng.choice(len(ds.train.x), size=a.n_train, replace=False))
    te = np.sort(rng.choice(len(ds.test.x), size=a.n_test, replace=False))
    tr_x, tr_y = [ds.train.x[i] for i in tr], np.asarray(ds.train.y)[tr]
    te_x, te_y = [ds.test.x[i] for i in te], np.asarray(ds.test.y)[te]
    cfg = FineTuneConfig(epochs=a.epochs, lr=a.lr, batch_size=32, max_length=int(getattr(clf, "max_length", 64)))
    common = dict(levels=[0.2, 0.5, 0.8], config=cfg, seed=a.seed, clean_model=clf.model,
                  clean_copies=not a.no_clean_copies)
    t0 = time.process_time()
    oo = one_one_defense(clf.model, clf.tokenizer, tr_x, tr_y, te_x, te_y, train_attacks=a.one_one.split(","),
                         **common)
    loo = leave_one_out_defense(clf.model, clf.tokenizer, tr_x, tr_y, te_x, te_y, attacks=list(zp.ATTACKS),
                                held_out=a.loo.split(","), **common)
    cpu = time.process_time() - t0
    cells_oo = oo.deltas
    diag = [v for (x, y, p), v in cells_oo.items() if p > 0 and x == y]
    off = [v for (x, y, p), v in cells_oo.items() if p > 0 and x != y]
    loo_v = [v for (_, _, p), v in loo.deltas.items() if p > 0]
    ours = {"1-1 (α, α)": _boot(diag, a.seed), "LOO": _boot(loo_v, a.seed), "1-1 (α, β)": _boot(off, a.seed)}
    clean_oo = {x: cells_oo[(x, x, 0.0)] for x in a.one_one.split(",")}
    clean_loo = {k[0]: v for k, v in loo.deltas.items() if k[2] == 0.0}
    print(f"clean s(0) = {oo.clean_score:.3f} on {a.n_test} test texts; {a.n_train} training texts "
          f"(+ attacked copies: {not a.no_clean_copies}); epochs {a.epochs}, lr {a.lr}; CPU {cpu:.0f} s\n")
    print("| defense | paper POS (pp) | paper NLI (pp) | paper TC (pp) | ours: mean Δ (pp) [95 % bootstrap] |")
    print("|---|---|---|---|---|")
    for name in sorted(ours, key=lambda n: -ours[n][0]):
        m, lo, hi = ours[name]
        pt = PAPER_TABLE3[name]
        print(f"| {name} | {pt['POS']} | {pt['NLI']} | {pt['TC']} | {100 * m:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] |")
    print("\nClean-score change of the defended models (σ(0)/s(0) − 1, pp):",
          {k: round(100 * v, 1) for k, v in {**clean_oo, **clean_loo}.items()})
    print("\n1-1 Δ at p = 0.8 (rows: trained on α, columns: tested on β), pp:")
    names = a.one_one.split(",")
    print("| α \\ β | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for x in names:
        print(f"| {x} | " + " | ".join(f"{100 * cells_oo[(x, y, 0.8)]:+.1f}" for y in names) + " |")
    print("\nLOO Δ (pp) per held-out attacker at p = 0.2 / 0.5 / 0.8:")
    for b in a.loo.split(","):
        print(f"- {b}: " + " / ".join(f"{100 * loo.delta(f'loo-{b}', b, p):+.1f}" for p in (0.2, 0.5, 0.8)))
    if a.out:
        a.out.write_text(json.dumps({"one_one": oo.to_dict(), "leave_one_out": loo.to_dict(),
                                     "ours": ours, "paper_table3": PAPER_TABLE3, "cpu_s": cpu,
                                     "args": {k: str(v) for k, v in vars(a).items()}}, indent=1))


if __name__ == "__main__":
    main()
