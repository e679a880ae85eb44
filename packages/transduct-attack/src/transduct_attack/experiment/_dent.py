"""Table 2: DENT+ over an adversarially trained BatchNorm CNN (A.3), with the AA and DENT-AA rows, and how far
DENT adapts on the clean stream."""

from __future__ import annotations

import importlib.util

from robustsuite_common.config import config_hash
from robustsuite_common.experiment import TORCH, Metric, cached
from robustsuite_common.intervals import proportion

from .. import tables as T
from ..dent import DENT
from ._common import (
    COLUMNS,
    LABEL,
    Out,
    StoreCells,
    cells_of,
    cp_interval,
    cp_row,
    paired_text,
    paper_of,
    row_labels,
    static_attacks,
    static_checks,
)


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
                      T.TableCell.from_dict)
    aa_attacks = list(d.aa_attacks)  # empty: standard AutoAttack
    tab = T.dent_table(base, xte, yte, eps=te, n=n, batch_size=b, T=d.T, pgd_steps=cfg.attack.pgd_steps,
                       n_untargeted=d.solver_untargeted, n_targeted=d.solver_targeted,
                       aa_attacks=aa_attacks if with_aa else None, aa_iterations=d.aa_iterations or None,
                       aa_restarts=d.aa_restarts or None, static_autoattack="autoattack" in static_attacks(cfg, out.warnings),
                       seed=seed, progress=progress, cells=memo)
    keys = [*(f"static {a}" for a in tab.attacks("static")), *tab.attacks("defense")]
    cells = cells_of(tab, seed, keys)
    view = out.base_view(base, xte, cells["none"].indices)
    static_checks(out, "dent", tab, f"static AT {arch}", seed)
    rows = []
    # the AA rows name a reduced AutoAttack in the row itself (the demo's is APGD-CE alone; issue 27)
    reduced = (f" [{' + '.join(x.upper() for x in d.aa_attacks)}, {d.aa_iterations or 'default'} iterations]"
               if d.aa_attacks else "")
    for a in keys:
        defense, attack = row_labels(a, f"DENT (AT {arch})", f"static AT {arch}")
        attack += reduced if a in ("aa", "static aa", "dent-aa") else ""
        rows.append(cp_row(defense, attack, cells[a], paper_of(paper["dent"], a)))
        out.log_cell("dent", defense, attack, cells[a], view, None if a.startswith("static") else cells["none"])
    out.add_metrics("dent", {a: c for a, c in cells.items() if not a.startswith("static")}, "DENT")
    out.add_metrics("dent", {a: c for a, c in cells.items() if a.startswith("static")}, f"static AT {arch}")
    aa_text = (f"AutoAttack {list(d.aa_attacks) or 'standard'}, {d.aa_iterations or 'its own'} iterations, "
               f"{d.aa_restarts or 'its own'} restart(s)")
    out.table("dent", f"Table 2 analogue: DENT (AdaMod, {d.steps} steps, lr {d.lr}, β3 0.6) over an adversarially "
                      f"trained {about} ({d.base_epochs} epochs of PGD-{d.base_adv_steps} training on {m} points), "
                      f"L∞ eps {te}, {n} points drawn with seed {seed} in batches of {b}, A.3's PGD ensemble "
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


def _base(cfg, x, y, *, store, fp):
    """The adversarially trained base DENT adapts, trained here (deterministic in the seed) and checkpointed in
    ``store`` (its state dict) under a key of what it depends on."""
    d = cfg.dent
    kw = {"eps": cfg.threat.at_eps, "adv_steps": d.base_adv_steps, "seed": cfg.seed, "architecture": d.base,
          "width": d.base_width}
    key = f"dent-base-{config_hash(d.base, d.base_width, d.train_points, d.base_epochs, kw, fp)}"
    state = cached(store, key, lambda: T.dent_base_model(x, y, epochs=d.base_epochs, **kw).state_dict(), TORCH)
    net = T.dent_base_model(x, y, epochs=0, **kw)
    net.load_state_dict(state)
    return net.eval()
