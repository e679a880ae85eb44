"""The verdict's ``transductive-gain`` check inside the experiment (``audit.enabled``): the user's model
(``models.adversarial``) as its user declares it (``audit.adaptive``), on ``audit.points`` test points drawn from the
seed, its games checkpointed in the store; the games' accuracies as the table ``transductive_gain``."""

from __future__ import annotations

import torch

from robustsuite_common.config import config_hash
from robustsuite_common.verdict import Check

from .. import tables as T
from ..audit import LABEL, _gain, not_applicable
from ..dent import DENT
from ..repeats import draw_points
from ._common import Out, StoreCells, cp_row

EVIDENCE = "transduct_attack section: table 'transductive_gain' and the per-sample records 'transductive_gain'"


def check_audit(cfg, models) -> None:
    """What the audit needs, checked before any game: the extra for AutoAttack, BatchNorm for DENT."""
    a = cfg.audit
    if not a.enabled or a.adaptive == "none":
        return
    if "autoattack" in (a.base_attack, a.transfer):
        from robustsuite_common.extras import optional_import

        optional_import("pyautoattack", extra="transduct-attack[autoattack]",
                        feature="audit.base_attack or audit.transfer = 'autoattack' (or set both to 'pgd')")
    if not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in models.adversarial.modules()):
        raise ValueError("audit.adaptive = 'dent' needs models.adversarial with BatchNorm layers (DENT adapts their "
                         "affine parameters)")


def audit(out: Out, cfg, models, xte, yte, *, store, progress, fp) -> tuple[Check, ...]:
    a, seed = cfg.audit, cfg.seed
    if a.adaptive == "none":
        check = not_applicable("the model is not declared test-time adaptive (audit.adaptive = 'none'): its "
                               "robustness is a static model's, measured by the attack-strength checks",
                               evidence=EVIDENCE)
        out.comparisons.append(f"transductive-gain: not applicable ({check.detail})")
        return (check,)
    base_attack = a.base_attack
    model = models.adversarial
    defense = DENT(model)  # a.adaptive == "dent": A.3's settings (AdaMod, 6 steps, lr 0.006)
    idx = draw_points(xte.shape[0], n=a.points, seed=seed, device=xte.device)
    memo = StoreCells(store, f"audit-{config_hash(a, cfg.threat.eps, cfg.attack.pgd_steps, fp, seed, base_attack)}",
                      T.TableCell.from_dict)
    check, tab = _gain(defense, xte[idx], yte[idx], eps=cfg.threat.eps, T=a.T, pgd_steps=cfg.attack.pgd_steps,
                       n_untargeted=a.solver_untargeted, n_targeted=a.solver_targeted, base_attack=base_attack,
                       transfer=a.transfer, batch_size=a.batch_size, seed=seed, progress=progress,
                       evidence=EVIDENCE, cells=memo)
    if tab is not None:
        rows = []
        for c in tab.cells:
            if c.role == "static":
                name = {"none": "clean", "pgd": "PGD (white-box)", "autoattack": "AutoAttack (white-box, standard)"}
                rows.append(cp_row("static base", name[c.attack], c, None))
            else:
                rows.append(cp_row(f"{defense.name} (declared: {a.adaptive})", LABEL[c.attack], c, None))
            # positions in the drawn points -> test rows, for the per-sample records
            mapped = T.TableCell(c.role, c.attack, c.seed, c.game, tuple(int(idx[i]) for i in c.indices))
            out.log_cell("transductive_gain", rows[-1][0], rows[-1][1], mapped, out.base_view(model, xte, mapped.indices))
        out.table("transductive_gain", f"The transductive-gain check: the static base and {defense.name} on "
                                       f"{tab.n} test points drawn with seed {seed}, L∞ eps {cfg.threat.eps:g}",
                  ["defense", "attack", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "paper"], rows)
    out.comparisons.append(f"transductive-gain: {check.status} ({check.detail.split('. ')[0]})")
    return (check,)
