"""Tables 3 and 4: the defenses that retrain from scratch on each test batch (DANN, A.4; TADV, A.5), played on
the first points of the test split in one batch."""

from __future__ import annotations

from robustsuite_common.config import config_hash

from ..tables import TableCell, dann_table, tadv_table
from ._common import (
    ATTACKS,
    COLUMNS,
    Out,
    StoreCells,
    cells_of,
    cp_row,
    paper_of,
    row_labels,
    static_attacks,
    static_checks,
)


def single_batch_rows(out: Out, key: str, tab, static_model, label: str, seed: int, xte, paper: dict) -> list[list]:
    name = f"{tab.defense} ({label})"
    cells = cells_of(tab, seed, (*(f"static {a}" for a in tab.attacks("static")), "none", *ATTACKS))
    base = out.base_view(static_model, xte, cells["none"].indices)
    static_checks(out, key, tab, f"static {label}", seed)
    rows = []
    for a, c in cells.items():
        defense, attack = row_labels(a, name, f"static {label}")
        rows.append(cp_row(defense, attack, c, paper_of(paper, a)))
        out.log_cell(key, defense, attack, c, base, None if a.startswith("static") else cells["none"])
    out.add_metrics(key, {a: cells[a] for a in ("none", *ATTACKS)}, name)
    out.bars[name] = [cells[a].accuracy for a in ATTACKS]
    out.compare(name, tab, seed)
    return rows


def dann(out: Out, cfg, models, xtr, ytr, xte, yte, *, store, progress, paper, fp) -> None:
    d, eps, seed = cfg.dann, cfg.threat.eps, cfg.seed
    n, m = d.points, d.train_points or xtr.shape[0]
    memo = StoreCells(store, f"dann-{config_hash(d, cfg.threat, cfg.attack, fp, seed)}", TableCell.from_dict)
    tab = dann_table(models.standard, xtr[:m], ytr[:m], xte, yte, eps=eps, n=n, epochs=d.epochs, lr=d.lr,
                     alpha_max=d.alpha_max, width=d.width, T=d.T, pgd_steps=cfg.attack.pgd_steps, seed=seed,
                     static_attacks=static_attacks(cfg, out.warnings), progress=progress, cells=memo)
    rows = single_batch_rows(out, "dann", tab, models.standard, "standard base", seed, xte, paper["dann"])
    out.table("dann", f"Table 3 analogue: DANN retrained per batch ({n} points, one batch, T={d.T}, L∞ eps {eps})",
              COLUMNS, rows)


def tadv(out: Out, cfg, xtr, ytr, xte, yte, *, store, progress, paper, fp) -> None:
    # The static AT baseline is trained with TADV's own recipe and a fixed seed (the paper compares TADV with
    # Madry et al.'s AT of the same architecture); at_model would not be a like-for-like baseline.
    t, te, seed = cfg.tadv, cfg.threat.at_eps, cfg.seed
    n, m = t.points, t.train_points or xtr.shape[0]
    memo = StoreCells(store, f"tadv-{config_hash(t, cfg.threat, cfg.attack, fp, seed)}", TableCell.from_dict)
    tab = tadv_table(xtr[:m], ytr[:m], xte, yte, eps=te, n=n, epochs=t.epochs, adv_steps=t.adv_steps,
                     hidden=t.hidden, T=t.T, pgd_steps=cfg.attack.pgd_steps, seed=seed,
                     static_attacks=static_attacks(cfg, out.warnings), progress=progress, cells=memo)
    rows = single_batch_rows(out, "tadv", tab, tab.static_model, "AT MLP", seed, xte, paper["tadv"])
    out.table("tadv", f"Table 4 analogue: TADV vs static AT ({n} points, one batch, L∞ eps {te})", COLUMNS, rows)
