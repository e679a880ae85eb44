"""transduct-attack section: transductive defenses under transfer attacks, FPA and GMSA (paper 003).

Tables shaped like the paper's Tables 1 (RMC), 3 (DANN) and 4 (TADV) on the embedded digits: clean accuracy
and robust accuracy of the static base models and of each transductive defense under the transfer PGD
attack, FPA, GMSA-AVG and GMSA-MIN, played in the naturally ordered, non-leaking game with private
randomness. Each (table, row, attack) cell is a unit of work checkpointed in the work directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from ..report import Section, Table

NAME = "transduct_attack"
TITLE = "Transductive defenses under adaptive attacks (RMC, DANN, TADV vs FPA/GMSA)"
PAPER = "003"
DEFAULTS: dict = {
    "model": "builtin:digits-cnn",          # standard base model (RMC row 1, DANN's base)
    "at_model": "builtin:digits-cnn-at",    # adversarially trained base (RMC row 2, TADV's static AT)
    "dataset": "builtin:digits",
    "eps": 0.2,                             # L∞ budget of the RMC and DANN tables (breaks the standard CNN)
    "tadv_eps": 0.1,                        # L∞ budget of the TADV table (adversarial training at 0.1)
    "T": 2,                                 # FPA/GMSA iterations (paper: 9)
    "dann_T": 8,                            # DANN: GMSA needs T near the paper's 9 (T <= 4 left it level with transfer)
    "pgd_steps": 10,                        # paper: 100–200
    "rmc_points": 24, "rmc_batch": 6, "rmc_k": 128, "rmc_epochs": 10,
    "dann_points": 100, "dann_epochs": 20, "dann_train": 1200, "dann_width": 16,
    "tadv_points": 100, "tadv_epochs": 10, "tadv_train": 1200,
    "tables": ["rmc", "dann", "tadv"],
}

_ATTACKS = ("pgd", "fpa", "gmsa-avg", "gmsa-min")


def _attacks(ta, p: dict, T: int) -> dict:
    pgd = ta.PGD(steps=int(p["pgd_steps"]))
    return {"none": ta.NoAttack(), "pgd": ta.TransferPGD(solver=pgd), "fpa": ta.FPA(T=T, solver=pgd),
            "gmsa-avg": ta.GMSA(mode="avg", T=T, solver=pgd), "gmsa-min": ta.GMSA(mode="min", T=T, solver=pgd)}


def _cell(ctx, key: str, compute) -> float:
    """One checkpointed unit of work: a referee accuracy (resumed from the work dir when present)."""
    path = Path(ctx.work_dir()) / f"{key}.json"
    if path.exists():
        return float(json.loads(path.read_text())["accuracy"])
    result = compute()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result.to_dict()))
    os.replace(tmp, path)
    return float(result.accuracy)


def run(ctx, params: dict) -> Section:
    import transduct_attack as ta
    from transduct_attack.networks import MLP, DomainAdversarialNet, build

    p = {**DEFAULTS, **params}
    eps = float(p["eps"])
    ds = ctx.dataset(p["dataset"])
    dev = ctx.device
    xtr, ytr = ds.train.x.to(dev), ds.train.y.to(dev)
    xte, yte = ds.test.x.to(dev), ds.test.y.to(dev)
    std, at = ctx.model(p["model"]).eval(), ctx.model(p["at_model"]).eval()
    attacks = _attacks(ta, p, int(p["T"]))
    dann_attacks = _attacks(ta, p, int(p["dann_T"]))
    seed = int(ctx.seed)

    def play(attack: str, defense, n: int, batch: int, budget: float | None = None, table: dict | None = None):
        return ta.play_game((table or attacks)[attack], defense, xte[:n], yte[:n],
                            eps=eps if budget is None else budget, batch_size=batch, seed=seed,
                            progress=ctx.progress)

    def static(model, name: str, n: int, budget: float | None = None) -> tuple[float, float]:
        d = ta.StaticDefense(model)
        e = eps if budget is None else budget
        return (_cell(ctx, f"static-{name}-{n}-none", lambda: play("none", d, n, n, e)),
                _cell(ctx, f"static-{name}-{n}-{e}-pgd", lambda: play("pgd", d, n, n, e)))

    tables, notes, metrics, bars = [], [], {}, {}
    cols_attacks = ["PGD", "FPA", "GMSA-AVG", "GMSA-MIN"]

    if "rmc" in p["tables"]:
        n, b = int(p["rmc_points"]), int(p["rmc_batch"])
        rows = []
        for label, model, name in (("Standard", std, "std"), ("Adv. trained", at, "at")):
            rmc = ta.RMC(model, xtr, ytr, k=int(p["rmc_k"]), aug_eps=eps, aug_steps=int(p["pgd_steps"]),
                         aug_step_size=None, lr=2e-3, max_epochs=int(p["rmc_epochs"]), patience=2, seed=seed)
            s_acc, s_rob = static(model, name, n)
            acc = _cell(ctx, f"rmc-{name}-none", lambda rmc=rmc: play("none", rmc, n, b))
            rob = [_cell(ctx, f"rmc-{name}-{a}", lambda a=a, rmc=rmc: play(a, rmc, n, b)) for a in _ATTACKS]
            rows.append([label, s_acc, acc, s_rob, *rob])
            bars[f"RMC ({name})"] = rob
            metrics.update({f"rmc_{name}_accuracy": acc, **{f"rmc_{name}_{a.replace('-', '_')}": r
                                                             for a, r in zip(_ATTACKS, rob, strict=True)}})
        tables.append(Table("rmc", f"Table 1 analogue: RMC ({n} points, {b} per round, stateful, non-leaking)",
                            ["base model", "static acc", "RMC acc", "static PGD (white-box)",
                             *[f"RMC {c}" for c in cols_attacks]], rows))

    if "dann" in p["tables"]:
        n, m = int(p["dann_points"]), int(p["dann_train"])
        w = int(p["dann_width"])
        dann = ta.DANN(xtr[:m], ytr[:m], base_model=std, epochs=int(p["dann_epochs"]), alpha_max=1.0,
                       make_network=lambda g: build(lambda: DomainAdversarialNet(width=w), g, device=dev))
        (sa, sr), (aa, ar) = static(std, "std", n), static(at, "at", n)
        acc = _cell(ctx, "dann-none", lambda: play("none", dann, n, n))
        rob = [_cell(ctx, f"dann-{a}", lambda a=a: play(a, dann, n, n, table=dann_attacks)) for a in _ATTACKS]
        bars["DANN"] = rob
        metrics.update({"dann_accuracy": acc, **{f"dann_{a.replace('-', '_')}": r
                                                 for a, r in zip(_ATTACKS, rob, strict=True)}})
        tables.append(Table("dann", f"Table 3 analogue: DANN retrained per batch ({n} points, one batch, "
                            f"T={p['dann_T']})",
                            ["standard acc", "AT acc", "DANN acc", "standard PGD", "AT PGD",
                             *[f"DANN {c}" for c in cols_attacks]], [[sa, aa, acc, sr, ar, *rob]]))

    if "tadv" in p["tables"]:
        # The static AT baseline is trained with TADV's own recipe and a fixed seed (the paper compares TADV
        # with Madry et al.'s AT of the same architecture); at_model would not be a like-for-like baseline.
        n, m, te = int(p["tadv_points"]), int(p["tadv_train"]), float(p["tadv_eps"])

        def make(g):
            return build(lambda: MLP(hidden=64), g, device=dev)

        gen = torch.Generator().manual_seed(seed)
        static_at = ta.train_classifier(make(gen), xtr[:m], ytr[:m], epochs=int(p["tadv_epochs"]), generator=gen,
                                        adversarial_eps=te, adv_steps=5)
        tadv = ta.TADV(xtr[:m], ytr[:m], base_model=static_at, eps=te, epochs=int(p["tadv_epochs"]), adv_steps=5,
                       make_model=make)
        aa, ar = static(static_at, "tadv-at", n, te)
        acc = _cell(ctx, "tadv-none", lambda: play("none", tadv, n, n, te))
        rob = [_cell(ctx, f"tadv-{a}", lambda a=a: play(a, tadv, n, n, te)) for a in _ATTACKS]
        bars["TADV"] = rob
        metrics.update({"tadv_accuracy": acc, "static_at_pgd": ar, **{f"tadv_{a.replace('-', '_')}": r
                                                                      for a, r in zip(_ATTACKS, rob, strict=True)}})
        tables.append(Table("tadv", f"Table 4 analogue: TADV vs static AT, MLP, eps={te} ({n} points, one batch)",
                            ["AT acc", "TADV acc", "AT PGD (white-box)", *[f"TADV {c}" for c in cols_attacks]],
                            [[aa, acc, ar, *rob]]))

    figures = []
    if bars:
        import matplotlib.pyplot as plt
        import numpy as np

        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        width = 0.8 / len(bars)
        for i, (label, vals) in enumerate(bars.items()):
            ax.bar(np.arange(4) + i * width, vals, width, label=label)
        ax.set_xticks(np.arange(4) + 0.4 - width / 2, cols_attacks)
        ax.set_ylabel("robust accuracy")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8)
        ax.set_title(f"Transductive defenses on {p['dataset']} (L∞ eps {eps}; TADV {p['tadv_eps']})")
        figures.append(ctx.figure(fig, "robustness", "Robust accuracy of each transductive defense under the "
                                  "transfer PGD attack, FPA, GMSA-AVG and GMSA-MIN"))
    notes.append(f"Budgets are scaled down from the paper (T={p['T']} for RMC/TADV and {p['dann_T']} for DANN instead "
                 f"of 9, PGD {p['pgd_steps']} steps, few epochs); the game is naturally ordered and non-leaking, "
                 "with private randomness per round.")
    if "dann" in p["tables"]:
        notes.append("DANN on 8×8 digits: examples crafted on the standard CNN already transfer to any retrained "
                     "network at eps 0.2 (and at smaller eps white-box PGD itself fails), so the GMSA-vs-transfer "
                     "gap is ~0.1–0.2 here instead of the paper's ~90 points on MNIST (see the package README).")
    notes.append("RMC rounds carry several points (the paper adapts on one point per round) to fit the demo budget.")
    worst = {k: min(v) for k, v in bars.items()}
    summary = "; ".join(f"{k}: worst robust accuracy {v:.0%}" for k, v in worst.items()) or "no table selected"
    return Section(title=TITLE, summary=summary + f" (L∞ eps={eps}, TADV eps={p['tadv_eps']}).", metrics=metrics,
                   tables=tables,
                   figures=figures, notes=notes)
