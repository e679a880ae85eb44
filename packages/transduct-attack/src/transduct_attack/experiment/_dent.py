"""Table 2: DENT+ over an adversarially trained BatchNorm CNN (A.3), with the AA and DENT-AA rows, and how far
DENT adapts on the clean stream."""

from __future__ import annotations

import importlib.util

from robustsuite_common.config import config_hash
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import proportion

from .. import tables as T
from ..dent import DENT
from ._common import COLUMNS, LABEL, Out, StoreCells, cells_of, cp_interval, cp_row, paired_text, row_labels


def dent(out: Out, cfg, xtr, ytr, xte, yte, *, store, progress, paper, fp) -> None:
    d, te, seed = cfg.dent, cfg.threat.at_eps, cfg.seed
    n, m, b = d.points, d.train_points, d.batch_size
    base = T.dent_base_model(xtr[:m], ytr[:m], eps=te, epochs=d.base_epochs, adv_steps=d.base_adv_steps, seed=seed)
    with_aa = d.aa and importlib.util.find_spec("pyautoattack") is not None
    if not with_aa:
        out.notes.append("DENT-AA and the AA rows of Table 2 are not run: they need the 'autoattack' extra "
                         "(pyautoattack), which is not importable here, or dent.aa is off.")
    memo = StoreCells(store, f"dent-{config_hash(d, cfg.threat, cfg.attack, fp, seed, with_aa)}",
                      T.TableCell.from_dict)
    aa_attacks = list(d.aa_attacks) if d.aa_attacks else None
    tab = T.dent_table(base, xte, yte, eps=te, n=n, batch_size=b, T=d.T, pgd_steps=cfg.attack.pgd_steps,
                       n_untargeted=d.solver_untargeted, n_targeted=d.solver_targeted,
                       aa_attacks=aa_attacks if with_aa else None, aa_iterations=d.aa_iterations or None,
                       aa_restarts=d.aa_restarts or None, seed=seed, progress=progress, cells=memo)
    keys = [*(f"static {a}" for a in tab.attacks("static")), *tab.attacks("defense")]
    cells = cells_of(tab, seed, keys)
    view = out.base_view(base, xte, cells["none"].indices)
    rows = []
    for a in keys:
        defense, attack = row_labels(a, "DENT (AT SmallCNN-BN)", "static AT SmallCNN-BN")
        rows.append(cp_row(defense, attack, cells[a], paper["dent"].get(a)))
        out.log_cell("dent", defense, attack, cells[a], view, None if a.startswith("static") else cells["none"])
    out.add_metrics("dent", {a: c for a, c in cells.items() if not a.startswith("static")}, "DENT")
    out.add_metrics("dent", {a: c for a, c in cells.items() if a.startswith("static")}, "static AT SmallCNN-BN")
    aa_text = (f"AutoAttack {list(d.aa_attacks) or 'standard'}, {d.aa_iterations or 'its own'} iterations, "
               f"{d.aa_restarts or 'its own'} restart(s)")
    out.table("dent", f"Table 2 analogue: DENT (AdaMod, 6 steps, β3 0.6) over an adversarially trained BatchNorm "
                      f"CNN, L∞ eps {te}, {n} points drawn with seed {seed} in batches of {b}, A.3's PGD ensemble "
                      f"({d.solver_untargeted} untargeted + {d.solver_targeted} targeted CW runs), T = {d.T}; AA "
                      f"rows: {aa_text} (paper: CIFAR-10, Wu et al. base, standard AA, 1000 points)",
              [*COLUMNS[:-1], "paper (CIFAR-10)"], rows)
    # DENT adapts: the affine shift on each clean batch of the stream, and the clean predictions it changes
    ad = T.dent_adaptation(DENT(base), tab, xte)
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
    strongest = tab.strongest(("pgd", *T.MODEL_SPACE_ATTACKS), seed)
    text = (f"DENT adapts (affines moved by {ad.mean_gamma_change:.1e} in γ, {ad.mean_beta_change:.1e} in β; "
            f"{ad.n_changed}/{ad.n} clean predictions changed, clean accuracy "
            f"{cells['static none'].accuracy:.2f} -> {cells['none'].accuracy:.2f}); {LABEL[strongest]} "
            f"{cells[strongest].accuracy:.2f} vs static white-box PGD {cells['static pgd'].accuracy:.2f}")
    if with_aa:
        c = tab.compare_cells("dent-aa", strongest, seed=seed, boot_seed=seed)
        text += (f"; DENT-AA {cells['dent-aa'].accuracy:.2f} is {c.verdict} {LABEL[strongest]} "
                 f"({paired_text(c)}), transfer AA {cells['aa'].accuracy:.2f}")
    out.comparisons.append(text)
