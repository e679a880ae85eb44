"""The verdict's transductive lens: does a test-time adaptive defense keep its gain over its static base when the
attacker adapts too?

Chen et al. (ICLR 2022) show that defenses which adapt on the test batch (DENT, RMC: Examples 1-2, §4) look more
robust than their static base under transfer attacks, and lose most of that gain under attacks on the model space
of Γ — FPA (Algorithm 1) and GMSA-AVG / GMSA-MIN (Algorithm 2, Eq. 7); for DENT, "both DENT-AA and AA overestimate
the robustness ... our attacks reduce it to almost the same as that of the static defenses" (§6, Table 2).

:func:`transductive_gain_check` plays, on the same points: the static base under white-box PGD with the same
solver (and, with ``base_attack="autoattack"``, standard AutoAttack: a point counts when it survives every static
attack), Γ under the transfer attack (PGD on the base, transferred: FPA with T = 0, §5.1), and Γ under FPA,
GMSA-AVG and GMSA-MIN with T iterations (the strongest, i.e. the lowest, is kept). From the per-point outcomes,
with paired bootstrap intervals that resample the points:

- transfer gain  G_t = acc(Γ, transfer) − acc(base, static attacks)
- adaptive gain  G_a = acc(Γ, strongest adaptive) − acc(base, static attacks)  (the check's statistic)
- adaptive drop  Δ   = acc(Γ, transfer) − acc(Γ, strongest adaptive)

Rule: ``fail`` when the interval of G_t lies above 0 and that of G_a does not (the gain claimed under the transfer
attack vanishes under the adaptive one); else ``warn`` when the interval of Δ lies above 0 (the adaptive attack
lowers Γ's robust accuracy: the transfer number overstates it); ``pass`` otherwise. ``not-applicable`` for a model
not declared test-time adaptive (a plain ``nn.Module`` or a :class:`~transduct_attack.StaticDefense`: its robust
accuracy is a static model's, which the attack-strength checks measure) and for a rejecting Γ (URejectron: scored
on accepted points, Figure 1). Choosing the strongest of three adaptive attacks on the same points favours the
attacker slightly; all three accuracies are in the detail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int
from robustsuite_common.contract import renamed
from robustsuite_common.intervals import Interval, paired_difference, proportion
from robustsuite_common.verdict import Check

from ._validate import check_eps, check_labels, logits_model, n_classes
from .attacks import TransferAutoAttack
from .model_space import attack_suite
from .pgd import PGDEnsemble
from .static import StaticDefense
from .tables import MODEL_SPACE_ATTACKS, DefenseTable, defense_table
from .threat_model import TransductiveDefense

__all__ = ["CHECK_ID", "transductive_gain_check"]

CHECK_ID = "transductive-gain"
TITLE = "Test-time adaptation keeps its gain under adaptive attacks"
BASE_ATTACKS = ("autoattack", "pgd")
TRANSFER_ATTACKS = ("pgd", "autoattack")
LABEL = {"pgd": "transfer PGD", "autoattack": "transfer AutoAttack", "fpa": "FPA", "gmsa-avg": "GMSA-AVG",
         "gmsa-min": "GMSA-MIN", "none": "clean"}
NEXT_STEP = ("report the defense's robust accuracy under the adaptive attack (GMSA, FPA), not under transfer or "
             "AutoAttack through the module; compare it with the static base on the same points")


def rule_text(base: str, transfer: str) -> str:
    return (f"on the same points: base = the static model under {base}, transfer = Γ under {transfer}, adaptive = Γ "
            "under the strongest of FPA, GMSA-AVG, GMSA-MIN; statistic G_a = adaptive − base (paired bootstrap). "
            "fail when the interval of G_t = transfer − base lies above 0 and that of G_a does not; else warn when "
            "the interval of transfer − adaptive lies above 0; pass otherwise; not-applicable for a model not "
            "declared test-time adaptive")


def gain_status(transfer_gain: Interval, adaptive_gain: Interval, drop: Interval) -> tuple[str, str]:
    """The check's status and why, from the paired intervals of G_t, G_a and Δ (the rule of the module docstring)."""
    def show(v: Interval) -> str:
        return f"{v.estimate:+.3f} [{v.low:+.3f}, {v.high:+.3f}]"

    if transfer_gain.low > 0 and not adaptive_gain.low > 0:
        return "fail", (f"the gain over the static base under the transfer attack, {show(transfer_gain)}, vanishes "
                        f"under the adaptive attack: {show(adaptive_gain)}")
    if drop.low > 0:
        return "warn", f"the adaptive attack lowers the defense's robust accuracy by {show(drop)}"
    return "pass", (f"the adaptive attack does not clearly lower the defense's robust accuracy ({show(drop)}); gain "
                    f"over the base {show(adaptive_gain)}")


def not_applicable(reason: str, *, n: int | None = None, evidence: str = "") -> Check:
    """The check of a model the lens does not apply to, with the reason."""
    return Check(id=CHECK_ID, group="lenses", title=TITLE, status="not-applicable",
                 rule=rule_text("white-box attacks", "a transfer attack"), n=n, evidence=evidence, detail=reason)


@renamed(n_resamples="n_boot")
def gain_check_from(base: np.ndarray, transfer: np.ndarray, adaptive: Mapping[str, np.ndarray], *,
                    base_name: str = "white-box PGD", transfer_name: str = "transfer PGD",
                    defense: str = "Γ", budget: str = "", confidence: float = 0.95, n_boot: int = 2000,
                    seed: int = 0, evidence: str = "") -> Check:
    """The check from per-point outcomes on the same points: ``base`` (the static model robust under every static
    attack), ``transfer`` (Γ right under the transfer attack) and ``adaptive`` (Γ right under each adaptive attack,
    by name). :func:`transductive_gain_check` and the experiment both end here."""
    b, t = np.asarray(base, dtype=np.float64), np.asarray(transfer, dtype=np.float64)
    outcomes = {k: np.asarray(v, dtype=np.float64) for k, v in adaptive.items()}
    if not outcomes:
        raise ValueError("adaptive must hold at least one attack's outcomes")
    strongest = min(outcomes, key=lambda k: float(outcomes[k].mean()))
    a = outcomes[strongest]
    kw = {"seed": seed, "level": confidence, "n_resamples": n_boot, "bounds": (-1.0, 1.0)}
    g_t, g_a, drop = paired_difference(t, b, **kw), paired_difference(a, b, **kw), paired_difference(t, a, **kw)
    status, why = gain_status(g_t, g_a, drop)
    n = int(b.size)

    def acc(v: np.ndarray) -> str:
        iv = proportion(int(v.sum()), n, level=confidence)
        return f"{v.mean():.3f} [{iv.low:.3f}, {iv.high:.3f}]"

    adaptive_text = ", ".join(f"{LABEL.get(k, k)} {acc(v)}" for k, v in outcomes.items())
    detail = (f"{why}. Robust accuracy on {n} points: static base under {base_name} {acc(b)}; {defense} under "
              f"{transfer_name} {acc(t)}; under the adaptive attacks {adaptive_text} (strongest: "
              f"{LABEL.get(strongest, strongest)}). Transfer gain {g_t.estimate:+.3f} [{g_t.low:+.3f}, "
              f"{g_t.high:+.3f}], adaptive drop {drop.estimate:+.3f} [{drop.low:+.3f}, {drop.high:+.3f}]; "
              f"{confidence:.0%} paired bootstrap intervals ({n_boot} resamples, seed {seed}), Clopper-Pearson "
              "for the accuracies." + (f" Budget: {budget}." if budget else ""))
    return Check(id=CHECK_ID, group="lenses", title=TITLE, status=status, rule=rule_text(base_name, transfer_name),
                 statistic=g_a.estimate, interval=g_a.ci, n=n, evidence=evidence,
                 next_step=NEXT_STEP if status in ("fail", "warn") else "", detail=detail)


def _gain(model: Any, x: torch.Tensor, y: Any, *, eps: float, T: int = 1, pgd_steps: int = 10,
          n_untargeted: int = 1, n_targeted: int = 1, base_attack: str = "pgd", transfer: str = "pgd",
          batch_size: int = 128, seed: int = 0, confidence: float = 0.95, n_boot: int = 2000,
          progress: bool = False, evidence: str = "", cells: Any = None) -> tuple[Check, DefenseTable | None]:
    """The check and the table of games behind it (``None`` when the lens does not apply); arguments checked
    before any forward pass."""
    check_images("x", x)
    eps = check_eps(eps)
    T = check_int("T", T, ge=1)
    pgd_steps = check_int("pgd_steps", pgd_steps, ge=1)
    solver = PGDEnsemble(steps=pgd_steps, n_untargeted=n_untargeted, n_targeted=n_targeted)
    base_attack = check_choice("base_attack", base_attack, BASE_ATTACKS)
    transfer = check_choice("transfer", transfer, TRANSFER_ATTACKS)
    batch_size = check_int("batch_size", batch_size, ge=1)
    seed = check_int("seed", seed, ge=0)
    n_boot = check_int("n_boot", n_boot, ge=100)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    check_labels("y", y, x.shape[0])  # shape and type before any forward pass; the class range below
    if isinstance(model, TransductiveDefense) and not isinstance(model, StaticDefense):
        if model.rejects:
            check_labels("y", y, x.shape[0], n_classes=n_classes(model.base_model, x))
            return not_applicable(f"{model.name} rejects inputs (selective classification): its robustness is read "
                                  "from the rejection curve (Figure 1), not from this gain", n=int(x.shape[0]),
                                  evidence=evidence), None
        base = logits_model("model.base_model", model.base_model)
    elif isinstance(model, nn.Module | StaticDefense):
        m = model.base_model if isinstance(model, StaticDefense) else logits_model("model", model)
        check_labels("y", y, x.shape[0], n_classes=n_classes(m, x))
        return not_applicable("the model is not declared test-time adaptive (pass a TransductiveDefense such as "
                              "DENT(model) to audit its adaptation): its robustness is a static model's, measured by "
                              "the attack-strength checks", n=int(x.shape[0]), evidence=evidence), None
    else:
        raise TypeError(f"model must be a TransductiveDefense (declared test-time adaptive, e.g. DENT(model)) or a "
                        f"torch.nn.Module, got {type(model).__name__}")
    check_labels("y", y, x.shape[0], n_classes=n_classes(base, x))
    if (base_attack == "autoattack" or transfer == "autoattack"):
        from robustsuite_common.extras import optional_import

        optional_import("pyautoattack", extra="transduct-attack[autoattack]", feature="AutoAttack (base_attack or "
                        "transfer = 'autoattack')")
    attacks: dict[str, Any] = attack_suite(T=T, solver=solver)
    if "autoattack" in (base_attack, transfer):
        attacks["autoattack"] = TransferAutoAttack()
    static = ("none", "pgd", "autoattack") if base_attack == "autoattack" else ("none", "pgd")
    played = ("none", transfer, *MODEL_SPACE_ATTACKS)
    n = int(x.shape[0])
    tab = defense_table(model, attacks, x, y, eps=eps, n=n, batch_size=min(batch_size, n), seeds=(seed,), draw=False,
                        static_model=base, static_attacks=static, defense_attacks=played, progress=progress,
                        cells=cells)
    robust = np.logical_and.reduce([tab.cell("static", a).game.correct for a in static])
    base_name = " and ".join({"pgd": "white-box PGD (the same solver)",
                              "autoattack": "standard AutoAttack"}[a] for a in static if a != "none")
    check = gain_check_from(robust, tab.cell("defense", transfer).game.correct,
                            {a: tab.cell("defense", a).game.correct for a in MODEL_SPACE_ATTACKS},
                            base_name=base_name, transfer_name=LABEL[transfer], defense=model.name,
                            budget=f"L∞ eps {eps:g}, T = {T}, solver {solver!r}, rounds of {min(batch_size, n)}"
                            + ("; the base faces AutoAttack, Γ PGD-based attacks: part of a gain can be the attacks' "
                               "difference" if base_attack == "autoattack" else ""),
                            confidence=float(confidence), n_boot=n_boot, seed=seed, evidence=evidence)
    return check, tab


@renamed(n_resamples="n_boot")
def transductive_gain_check(model: Any, x: torch.Tensor, y: Any, *, eps: float, T: int = 1, pgd_steps: int = 10,
                            n_untargeted: int = 1, n_targeted: int = 1, base_attack: str = "pgd",
                            transfer: str = "pgd", batch_size: int = 128, seed: int = 0, confidence: float = 0.95,
                            n_boot: int = 2000, progress: bool = False,
                            evidence: str = "transduct_attack.audit.transductive_gain_check") -> Check:
    """The ``transductive-gain`` check (module docstring) of ``model`` on the points ``(x, y)`` (images in [0, 1],
    integer labels) at L∞ budget ``eps``.

    ``model`` declares itself test-time adaptive by being a :class:`~transduct_attack.TransductiveDefense` (e.g.
    ``DENT(base)``, whose ``base_model`` is the static base); a plain ``nn.Module`` (or a ``StaticDefense``) gets a
    ``not-applicable`` check after its inputs are checked. FPA and GMSA run ``T`` iterations (the paper: 9) over
    A.3's PGD ensemble (``n_untargeted`` untargeted + ``n_targeted`` targeted CW runs of ``pgd_steps`` steps; the
    paper: 5 + 9 of 100), which also solves the transfer attack (``transfer="pgd"``; ``"autoattack"``: standard
    AutoAttack on the base, transferred — the paper's "AA"). ``base_attack="pgd"`` (default) attacks the static base
    white-box with the same solver, so the gain isolates the adaptation; ``"autoattack"`` (the ``autoattack``
    extra) adds standard AutoAttack, the base's robust accuracy as the field reports it — but Γ then faces weaker
    (PGD-based) attacks than its base, and part of a gain can be the attacks' difference, not the adaptation (on
    the shipped Fashion-MNIST AT CNN with DENT: +0.02 [-0.02, +0.07] with PGD, +0.09 [+0.04, +0.16] with
    AutoAttack on the base). Γ plays rounds of ``batch_size`` points (DENT:
    128, A.3), the attacker's randomness from ``seed``. The models come back as they were; ``x`` is not changed."""
    return _gain(model, x, y, eps=eps, T=T, pgd_steps=pgd_steps, n_untargeted=n_untargeted, n_targeted=n_targeted,
                 base_attack=base_attack, transfer=transfer, batch_size=batch_size, seed=seed,
                 confidence=confidence, n_boot=n_boot, progress=progress, evidence=evidence)[0]
