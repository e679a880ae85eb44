"""The defenses that retrain from scratch on each test batch, in the paper's evaluation: DANN (A.4, Table 3) and
TADV (A.5, Table 4), their recipes on the caller's data (:func:`dann_table`, :func:`tadv_table`) and the
experiment's tables, played on the first points of the test split in one batch."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import torch
from torch import nn

from robustsuite_common.checks import check_int
from robustsuite_common.config import config_hash

from ..dann import DANN
from ..model_space import attack_suite
from ..networks import MLP, DomainAdversarialNet, build
from ..tables import TABLE_ATTACKS, DefenseTable, TableCell, check_data, defense_table, with_static
from ..tadv import TADV
from ..training import train_classifier
from ._common import (
    ATTACKS,
    COLUMNS,
    Out,
    StoreCells,
    cells_of,
    static_attacks,
    static_checks,
)

__all__ = ["dann_table", "tadv_table", "single_batch_rows", "dann", "tadv"]


def dann_table(base_model: nn.Module, x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
               y_test: torch.Tensor, *, eps: float = 0.3, n: int = 10_000, epochs: int = 100, lr: float = 1e-3,
               alpha_max: float = 0.1, width: int = 16, T: int = 9, pgd_steps: int = 100, seed: int = 0,
               static_attacks: Sequence[str] = ("none", "pgd"), progress: bool = False,
               cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 3: DANN (A.4) trained from scratch on D = (x_train, y_train) and the perturbed batch, a
    :class:`~transduct_attack.networks.DomainAdversarialNet` of ``width`` (Adam ``lr``, ``epochs``, α_max),
    ``base_model`` the standard model (transfer target, F^(0)); the first ``n`` test points in one batch;
    static rows: ``base_model``. Defaults: the paper's MNIST values (10,000 points, 100 epochs, α_max 0.1)."""
    check_data(base_model, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    c, hw, kk = x_train.shape[1], tuple(x_train.shape[-2:]), int(y_train.max()) + 1
    dann = DANN(x_train, y_train, base_model=base_model, epochs=epochs, lr=lr, alpha_max=alpha_max,
                make_network=lambda g: build(lambda: DomainAdversarialNet(
                    in_channels=c, n_classes=kk, image_size=hw, width=width), g, device=x_train.device))
    return defense_table(dann, with_static(attack_suite(steps=pgd_steps, T=T), static_attacks), x_test, y_test,
                         eps=eps, n=n, batch_size=n, seeds=(seed,), draw=False, static_model=base_model,
                         static_attacks=static_attacks, defense_attacks=TABLE_ATTACKS, progress=progress,
                         cells=cells)


def tadv_table(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, *,
               eps: float = 0.3, n: int = 10_000, epochs: int = 100, adv_steps: int = 40, hidden: int = 64,
               T: int = 9, pgd_steps: int = 100, seed: int = 0, static_attacks: Sequence[str] = ("none", "pgd"),
               progress: bool = False, cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 4: TADV (A.5) against static adversarial training of the same architecture, an
    :class:`~transduct_attack.networks.MLP` of ``hidden`` units: the static baseline is trained on D with TADV's
    own recipe (``epochs``, PGD ``adv_steps`` at ``eps``, 50 % clean) from ``seed``, TADV retrains it from scratch
    on each batch; the first ``n`` test points in one batch. Defaults: the paper's MNIST values (eps 0.3, 100
    epochs, PGD 40 steps, T 9)."""
    check_data(None, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    hidden, kk = check_int("hidden", hidden, ge=1), int(y_train.max()) + 1
    features = int(x_train[0].numel())

    def make_mlp(g: torch.Generator) -> nn.Module:
        return build(lambda: MLP(in_features=features, n_classes=kk, hidden=hidden), g, device=x_train.device)

    gen = torch.Generator().manual_seed(int(seed))
    static_at = train_classifier(make_mlp(gen), x_train, y_train, epochs=epochs, generator=gen,
                                 adversarial_eps=eps, adv_steps=adv_steps)
    tadv = TADV(x_train, y_train, base_model=static_at, eps=eps, epochs=epochs, adv_steps=adv_steps,
                make_model=make_mlp)
    return defense_table(tadv, with_static(attack_suite(steps=pgd_steps, T=T), static_attacks), x_test, y_test,
                         eps=eps, n=n, batch_size=n, seeds=(seed,), draw=False, static_model=static_at,
                         static_attacks=static_attacks, defense_attacks=TABLE_ATTACKS, progress=progress,
                         cells=cells)


def single_batch_rows(out: Out, key: str, tab, static_model, label: str, seed: int, xte, paper: dict) -> list[list]:
    name = f"{tab.defense} ({label})"
    cells = cells_of(tab, seed, (*(f"static {a}" for a in tab.attacks("static")), "none", *ATTACKS))
    base = out.base_view(static_model, xte, cells["none"].indices)
    static_checks(out, key, tab, f"static {label}", seed)
    rows = out.cell_rows(key, cells, name, f"static {label}", paper, base)
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
