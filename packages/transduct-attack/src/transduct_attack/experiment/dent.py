"""DENT (appendix A.3) in the paper's evaluation: the recipe of Table 2 on the caller's data (:func:`dent_base_model`,
:func:`dent_table`, :func:`dent_adaptation`) and the experiment's Table 2: DENT+ over an adversarially trained
BatchNorm CNN, with the AA and DENT-AA rows, and how far DENT adapts on the clean stream."""

from __future__ import annotations

import importlib.util
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int
from robustsuite_common.config import config_hash
from robustsuite_common.experiment import TORCH, Metric, cached
from robustsuite_common.intervals import proportion

from .._validate import as_input
from ..attacks import AdaptiveAutoAttack, TransferAutoAttack
from ..dent import DENT
from ..model_space import attack_suite
from ..networks import BNCNN, SmallCNN, build
from ..pgd import PGDEnsemble
from ..tables import MODEL_SPACE_ATTACKS, DefenseTable, TableCell, check_data, defense_table, with_static
from ..training import train_classifier
from ._common import (
    COLUMNS,
    LABEL,
    Out,
    StoreCells,
    cells_of,
    cp_interval,
    paired_text,
    static_attacks,
    static_checks,
)

__all__ = ["dent_base_model", "dent_table", "DentAdaptation", "dent_adaptation", "dent"]


def dent_base_model(x_train: torch.Tensor, y_train: torch.Tensor, *, eps: float, epochs: int, adv_steps: int = 40,
                    seed: int = 0, architecture: str = "small-cnn", width: int = 16) -> nn.Module:
    """The adversarially trained BatchNorm CNN that DENT adapts in the Table 2 analogue (the paper uses
    RobustBench's CIFAR-10 AT models): ``architecture="small-cnn"`` (a
    :class:`~transduct_attack.networks.SmallCNN`, BatchNorm after its two convolutions) or ``"bn-every-conv"``
    (a :class:`~transduct_attack.networks.BNCNN`: six convolutions, BatchNorm after each), trained from ``seed`` on
    (x_train, y_train) with 50 % clean / 50 % PGD (``adv_steps`` steps at ``eps``)."""
    check_data(None, x_train=x_train, y_train=y_train)
    check_choice("architecture", architecture, ("small-cnn", "bn-every-conv"))
    gen = torch.Generator().manual_seed(int(seed))
    c, k = x_train.shape[1], int(y_train.max()) + 1
    if architecture == "bn-every-conv":
        net = build(lambda: BNCNN(in_channels=c, n_classes=k, width=check_int("width", width, ge=1)), gen,
                    device=x_train.device)
    else:
        net = build(lambda: SmallCNN(in_channels=c, n_classes=k, image_size=tuple(x_train.shape[-2:])), gen,
                    device=x_train.device)
    return train_classifier(net, x_train, y_train, epochs=epochs, generator=gen, adversarial_eps=eps,
                            adv_steps=adv_steps)


def dent_table(base_model: nn.Module, x_test: torch.Tensor, y_test: torch.Tensor, *, eps: float = 8 / 255,
               n: int = 1000, batch_size: int = 128, T: int = 9, pgd_steps: int = 100, n_untargeted: int = 5,
               n_targeted: int | None = None, aa_attacks: Sequence[str] | None = None, aa_iterations: int | None = None,
               aa_restarts: int | None = None, static_autoattack: bool = False, seed: int = 0,
               progress: bool = False, cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 2: DENT (A.3; the authors' AdaMod settings, :class:`DENT`'s defaults) over ``base_model``, ``n``
    points drawn from ``seed`` in batches of ``batch_size``; transfer PGD, FPA and GMSA solved by A.3's
    :class:`PGDEnsemble` (``n_untargeted`` untargeted + ``n_targeted`` targeted CW runs of ``pgd_steps``;
    None: every other class). ``aa_attacks`` (e.g. ``["apgd-ce"]``, or ``[]`` for standard AutoAttack; extra
    ``autoattack``) adds the AA rows:
    static white-box AA, transfer AA and DENT-AA (:class:`AdaptiveAutoAttack`), with ``aa_iterations`` /
    ``aa_restarts`` (None: AutoAttack's own). ``static_autoattack`` adds the static model under standard
    AutoAttack (its robust accuracy as the field reports it). Defaults: the paper's CIFAR-10 values (8/255, 1000
    points, batches of 128, 5 + 9 subroutines, T 9)."""
    check_data(base_model, x_test=x_test, y_test=y_test)
    solver = PGDEnsemble(steps=pgd_steps, n_untargeted=n_untargeted, n_targeted=n_targeted)
    attacks = attack_suite(T=T, solver=solver)
    static = ["none", "pgd"]
    if aa_attacks is not None:
        version, chosen = ("custom", list(aa_attacks)) if aa_attacks else ("standard", None)
        attacks["aa"] = TransferAutoAttack(version=version, attacks=chosen, n_iter=aa_iterations,
                                           n_restarts=aa_restarts)
        attacks["dent-aa"] = AdaptiveAutoAttack(version=version, attacks=chosen, n_iter=aa_iterations,
                                                n_restarts=aa_restarts)
        static.append("aa")
    if static_autoattack:
        static.append("autoattack")
        attacks = with_static(attacks, static)
    played = [a for a in attacks if a != "autoattack"]
    # DENT is stateless across rounds, so the costly AutoAttack rows are played one batch per game: a long cell
    # resumes batch by batch from ``cells``
    split = ("aa", "dent-aa") if aa_attacks is not None else ()
    return defense_table(DENT(base_model), attacks, x_test, y_test, eps=eps, n=n, batch_size=batch_size,
                         seeds=(seed,), draw=True, static_model=base_model, static_attacks=static,
                         defense_attacks=played, split_attacks=split, progress=progress, cells=cells)


@dataclass(frozen=True)
class DentAdaptation:
    """How far DENT adapts on the clean stream of a :func:`dent_table`, per batch: mean \\|Δγ\\|, \\|Δβ\\| of the
    per-sample BatchNorm affines against the base model's (:meth:`DENT.affine_change`), clean accuracy of the
    static model and of DENT, and the clean predictions DENT changes (``changed`` of ``n``, Clopper-Pearson)."""

    batch_size: int
    gamma_change: tuple[float, ...]
    beta_change: tuple[float, ...]
    static_accuracy: tuple[float, ...]
    dent_accuracy: tuple[float, ...]
    changed: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def mean_gamma_change(self) -> float:
        return float(np.mean(self.gamma_change))

    @property
    def mean_beta_change(self) -> float:
        return float(np.mean(self.beta_change))

    @property
    def n_changed(self) -> int:
        return int(sum(self.changed))

    @property
    def n(self) -> int:
        return int(sum(self.sizes))

    @property
    def changed_ci(self) -> tuple[float, float]:
        return proportion(self.n_changed, self.n).ci

    def to_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "gamma_change": list(self.gamma_change),
                "beta_change": list(self.beta_change), "static_accuracy": list(self.static_accuracy),
                "dent_accuracy": list(self.dent_accuracy), "changed": list(self.changed), "sizes": list(self.sizes),
                "mean_gamma_change": self.mean_gamma_change, "mean_beta_change": self.mean_beta_change,
                "n_changed": self.n_changed, "n": self.n, "changed_ci": list(self.changed_ci)}


def dent_adaptation(dent: DENT, table: DefenseTable, x_test: torch.Tensor, *, generator_seed: int = 0) -> DentAdaptation:
    """DENT adapts (Table 2's premise): on each clean batch of ``table``'s stream, the affine shift of
    :meth:`DENT.adapt` (its generator from ``generator_seed``; DENT's adaptation draws no randomness) and the
    clean predictions it changes against the static model (``table``'s "static"/"none" and "defense"/"none")."""
    if not isinstance(dent, DENT):
        raise TypeError(f"dent must be a DENT, got {type(dent).__name__}")
    if not isinstance(table, DefenseTable):
        raise TypeError(f"table must be a DefenseTable, got {type(table).__name__}")
    check_images("x_test", x_test)
    x_test = as_input(dent.base_model, x_test)
    static, adapted = table.cell("static", "none"), table.cell("defense", "none")
    changed = static.game.predictions != adapted.game.predictions
    ok_s, ok_d = static.game.correct, adapted.game.correct
    idx = torch.as_tensor(adapted.indices, dtype=torch.int64, device=x_test.device)
    cols: dict[str, list] = {k: [] for k in ("g", "b", "s", "d", "c", "m")}
    for start in range(0, table.n, table.batch_size):
        sl = slice(start, min(start + table.batch_size, table.n))
        g, b = dent.affine_change(dent.adapt(x_test[idx[sl]], state=None,
                                             generator=torch.Generator().manual_seed(int(generator_seed))))
        for key, v in zip("gbsdcm", (g, b, float(ok_s[sl].mean()), float(ok_d[sl].mean()), int(changed[sl].sum()),
                                     len(changed[sl])), strict=True):
            cols[key].append(v)
    return DentAdaptation(batch_size=table.batch_size, gamma_change=tuple(cols["g"]), beta_change=tuple(cols["b"]),
                          static_accuracy=tuple(cols["s"]), dent_accuracy=tuple(cols["d"]),
                          changed=tuple(cols["c"]), sizes=tuple(cols["m"]))


def dent(out: Out, cfg, xtr, ytr, xte, yte, *, store, progress, paper, fp) -> None:
    d, te, seed = cfg.dent, cfg.threat.at_eps, cfg.seed
    n, m, b = d.points, d.train_points or xtr.shape[0], d.batch_size
    base = _base(cfg, xtr[:m], ytr[:m], store=store, fp=fp)
    arch = "SmallCNN-BN" if d.base == "small-cnn" else "BN-CNN-6"
    about = ("a SmallCNN with BatchNorm after its 2 convolutions" if d.base == "small-cnn" else
             f"BN-CNN-6 (6 convolutions of width {d.base_width}-{4 * d.base_width}, BatchNorm after each)")
    with_aa = d.aa and importlib.util.find_spec("pyautoattack") is not None
    if not with_aa:
        out.notes.append("DENT-AA and the AA rows of Table 2 are not run: they need the 'autoattack' extra "
                         "(pyautoattack), which is not importable here, or dent.aa is off.")
    memo = StoreCells(store, f"dent-{config_hash(d, cfg.threat, cfg.attack, fp, seed, with_aa)}",
                      TableCell.from_dict)
    aa_attacks = list(d.aa_attacks)  # empty: standard AutoAttack
    tab = dent_table(base, xte, yte, eps=te, n=n, batch_size=b, T=d.T, pgd_steps=cfg.attack.pgd_steps,
                       n_untargeted=d.solver_untargeted, n_targeted=d.solver_targeted,
                       aa_attacks=aa_attacks if with_aa else None, aa_iterations=d.aa_iterations or None,
                       aa_restarts=d.aa_restarts or None, static_autoattack="autoattack" in static_attacks(cfg, out.warnings),
                       seed=seed, progress=progress, cells=memo)
    keys = [*(f"static {a}" for a in tab.attacks("static")), *tab.attacks("defense")]
    cells = cells_of(tab, seed, keys)
    view = out.base_view(base, xte, cells["none"].indices)
    static_checks(out, "dent", tab, f"static AT {arch}", seed)
    # the AA rows name a reduced AutoAttack in the row itself (the demo's is APGD-CE alone; issue 27)
    reduced = (f" [{' + '.join(x.upper() for x in d.aa_attacks)}, {d.aa_iterations or 'default'} iterations]"
               if d.aa_attacks else "")
    rows = out.cell_rows("dent", cells, f"DENT (AT {arch})", f"static AT {arch}", paper["dent"], view,
                         suffix=dict.fromkeys(("aa", "static aa", "dent-aa"), reduced))
    out.add_metrics("dent", {a: c for a, c in cells.items() if not a.startswith("static")}, "DENT")
    out.add_metrics("dent", {a: c for a, c in cells.items() if a.startswith("static")}, f"static AT {arch}")
    aa_text = (f"AutoAttack {list(d.aa_attacks) or 'standard'}, {d.aa_iterations or 'its own'} iterations, "
               f"{d.aa_restarts or 'its own'} restart(s)" + (", one game per batch" if n > b else ""))
    out.table("dent", f"Table 2 analogue: DENT (AdaMod, {d.steps} steps, lr {d.lr}, β3 0.6) over an adversarially "
                      f"trained {about} ({d.base_epochs} epochs of PGD-{d.base_adv_steps} training on {m} points), "
                      f"L∞ eps {te}, {n} points drawn with seed {seed} in batches of {b}, A.3's PGD ensemble "
                      f"({d.solver_untargeted} untargeted + {d.solver_targeted} targeted CW runs), T = {d.T}; AA "
                      f"rows: {aa_text} (paper: CIFAR-10, Wu et al. base, standard AA, 1000 points)",
              [*COLUMNS[:-1], "paper (CIFAR-10)"], rows)
    # DENT adapts: the affine shift on each clean batch of the stream, and the clean predictions it changes
    ad = dent_adaptation(DENT(base), tab, xte)
    arows = [[j, ad.gamma_change[j], ad.beta_change[j], ad.static_accuracy[j], ad.dent_accuracy[j],
              ad.changed[j] / ad.sizes[j], *proportion(ad.changed[j], ad.sizes[j]).ci]
             for j in range(len(ad.sizes))]
    out.table("dent_adaptation", f"DENT adapts: per clean batch of {b} of Table 2's stream, mean |Δγ| and |Δβ| of "
                                 f"the per-sample BatchNorm affines against the base model's (AdaMod's first step "
                                 f"moves each by (1-β3)·lr = 2.4e-3, later steps by at most about lr = 0.006; 6 "
                                 f"steps), clean accuracy before (static) and after (DENT) adaptation, and the "
                                 f"fraction of clean predictions DENT changes",
              ["batch", "mean |Δγ|", "mean |Δβ|", "static accuracy", "DENT accuracy", "predictions changed",
               "predictions changed_ci_low", "predictions changed_ci_high"], arows,
              units={"mean |Δγ|": "", "mean |Δβ|": "", "static accuracy": "fraction", "DENT accuracy": "fraction",
                     "predictions changed": "fraction"}, bounds={"predictions changed": (0.0, 1.0)})
    out.metrics["dent_affine_gamma_change"] = Metric(ad.mean_gamma_change, "DENT: mean |Δγ| of the adapted "
                                                     "BatchNorm scales", "")
    out.metrics["dent_affine_beta_change"] = Metric(ad.mean_beta_change, "DENT: mean |Δβ| of the adapted "
                                                    "BatchNorm shifts", "")
    out.metrics["dent_predictions_changed"] = Metric.of(
        cp_interval(ad.n_changed / ad.n, ad.changed_ci), "DENT: share of clean predictions DENT changes", "fraction")
    strongest = tab.strongest(("pgd", *MODEL_SPACE_ATTACKS), seed)
    text = (f"DENT adapts (affines moved by {ad.mean_gamma_change:.1e} in γ, {ad.mean_beta_change:.1e} in β; "
            f"{ad.n_changed}/{ad.n} clean predictions changed, clean accuracy "
            f"{cells['static none'].accuracy:.2f} -> {cells['none'].accuracy:.2f}); {LABEL[strongest]} "
            f"{cells[strongest].accuracy:.2f} vs static white-box PGD {cells['static pgd'].accuracy:.2f}")
    if with_aa:
        c = tab.compare_cells("dent-aa", strongest, seed=seed, boot_seed=seed)
        text += (f"; DENT-AA {cells['dent-aa'].accuracy:.2f} is {c.verdict} {LABEL[strongest]} "
                 f"({paired_text(c)}), transfer AA {cells['aa'].accuracy:.2f}")
    out.comparisons.append(text)


def _base(cfg, x, y, *, store, fp):
    """The adversarially trained base DENT adapts, trained here (deterministic in the seed) and checkpointed in
    ``store`` (its state dict) under a key of what it depends on."""
    d = cfg.dent
    kw = {"eps": cfg.threat.at_eps, "adv_steps": d.base_adv_steps, "seed": cfg.seed, "architecture": d.base,
          "width": d.base_width}
    key = f"dent-base-{config_hash(d.base, d.base_width, d.train_points, d.base_epochs, kw, fp)}"
    state = cached(store, key, lambda: dent_base_model(x, y, epochs=d.base_epochs, **kw).state_dict(), TORCH)
    net = dent_base_model(x, y, epochs=0, **kw)
    net.load_state_dict(state)
    return net.eval()
