"""The experiment's typed configuration, grouped as the paper groups its settings, and its named presets.

- :class:`AttackConfig` — the over- and under-confidence attacks (§III-B, Eqs. 10–11; §V-A "Adversarial setup");
- :class:`LeaderboardConfig` — Table IV: how many test points, and the attack behind its robust-accuracy column;
- :class:`MetricsConfig` — s-ECE bins (Eq. 19) and the bootstrap resamples of every interval;
- :class:`SweepConfig` — MUS, entropies and s-ECE as functions of ε (the paper's budgets, its figures' reading);
- :class:`OODConfig` — Table V: open-set and out-of-distribution detection under the over-confidence attack.
"""

from __future__ import annotations

from typing import Literal

from robustsuite_common.config import Bool, Float, Int, config, param
from robustsuite_common.contract import choose_preset

__all__ = ["AttackConfig", "LeaderboardConfig", "MetricsConfig", "SweepConfig", "OODConfig", "AuditConfig", "Config",
           "PRESETS", "preset", "EXECUTION_FIELDS"]

EPS_UNIT = "norm units of the inputs in [0, 1] (L∞: pixel values)"


@config
class AttackConfig:
    """The over- (Eq. 10, the Stabilizing Attack) and under-confidence (Eq. 11) attacks that bound the span."""

    eps: Float = param(0.1, ge=0, doc="perturbation budget ε of the span and of the robust accuracy (the sweep and "
                       "Table V have their own budgets)", unit=EPS_UNIT, paper="§V-A: 8/255 (CIFAR-10), 4/255 (ImageNet)")
    norm: Literal["Linf", "L2"] = param("Linf", doc="norm of the perturbation ball", unit="", paper="§V-A: l∞")
    steps: Int = param(20, ge=0, doc="attack iterations of each run (span, Table V)", unit="iterations",
                       paper="§V-A: 150")
    optimizer: Literal["pgd", "apgd"] = param("pgd", doc="PGD with step 2.5·ε/steps, or APGD-style adaptive steps",
                                              unit="", paper="§V-A: PGD")
    restarts: Int = param(1, ge=0, doc="extra runs from uniform random starts per objective; the per-sample best "
                          "is kept", unit="restarts", paper="not in the paper (one run from the clean input)")
    under_objective: tuple[Literal["cross_entropy", "entropy"], ...] = param(
        ("cross_entropy", "entropy"), min_length=1, unit="",
        doc="objectives of the under-confidence attack; the per-sample highest entropy is kept",
        paper="Eq. 11: cross_entropy only (the entropy objective reaches higher entropies, README)")
    batch_size: Int = param(256, ge=1, doc="inputs attacked at once (changes how, not what, is computed)",
                            unit="inputs")

    def __post_init__(self) -> None:
        if len(set(self.under_objective)) != len(self.under_objective):
            raise ValueError(f"under_objective must not repeat an objective, got {list(self.under_objective)}")
        if self.norm == "Linf" and self.eps > 1:
            raise ValueError(f"eps must be <= 1 for Linf on inputs in [0, 1], got {self.eps}")


@config
class LeaderboardConfig:
    """Table IV: MUS / MSUS μ and σ, clean and robust accuracy of every ranked model on the same test points."""

    n: Int = param(100, ge=1, doc="test points attacked (the first n of the test split)", unit="points",
                   paper="§V-A: 8,000 random test points")
    robust_attack: Literal["autoattack", "pgd"] = param(
        "autoattack", doc="attack behind the robust-accuracy column", unit="",
        paper="Table IV copies RobustBench's robust accuracy (standard AutoAttack)")
    autoattack_version: Literal["standard", "plus", "rand"] = param("standard", doc="AutoAttack version", unit="",
                                                                    paper="RobustBench: standard")
    autoattack_batch_size: Int = param(250, ge=1, doc="AutoAttack's batch size (its random starts depend on it)",
                                       unit="inputs")
    pgd_beside: Bool = param(True, doc="also run this package's PGD misclassification attack and show it beside "
                             "AutoAttack, with the paired difference (the gap a PGD-only number hides)", unit="")
    pgd_steps: Int = param(20, ge=0, doc="steps of that PGD attack (and of robust_attack = 'pgd')",
                           unit="iterations", paper="not in the paper")


@config
class MetricsConfig:
    """Binning of s-ECE (Eq. 19) and the bootstrap resamples behind the intervals."""

    n_bins: Int = param(15, ge=1, doc="equal-width confidence bins of s-ECE and the reliability diagrams",
                        unit="bins", paper="Eq. 19 (S not stated)")
    n_boot: Int = param(2000, ge=100, doc="bootstrap resamples of the MUS intervals and the paired differences",
                        unit="resamples", paper="not in the paper (it reports σ only)")
    auroc_n_boot: Int = param(1000, ge=100, doc="bootstrap resamples of Table V's AUROC intervals (stratified)",
                              unit="resamples", paper="not in the paper")


@config
class SweepConfig:
    """The uncertainty span at several budgets (0 gives the clean row without attacking)."""

    eps: tuple[Float, ...] = param((0.0, 0.05, 0.1, 0.2), doc="budgets of the sweep (empty: no sweep)",
                                   unit=EPS_UNIT, paper="§V: the paper's budgets 0, 4/255, 8/255")
    n: Int = param(50, ge=1, doc="test points of the sweep (the first n of the test split)", unit="points")
    steps: Int = param(10, ge=0, doc="attack iterations of the sweep", unit="iterations")

    def __post_init__(self) -> None:
        if any(e < 0 for e in self.eps):
            raise ValueError(f"eps must hold budgets >= 0, got {list(self.eps)}")


@config
class OODConfig:
    """Table V: entropy as the outlier score; in-distribution inputs clean, outliers under the over-confidence
    attack at each budget (steps and optimizer of ``attack``)."""

    eps: tuple[Float, ...] = param((0.0, 0.05, 0.1), min_length=1, doc="budgets of the attack on the outliers "
                                   "(0: the clean row)", unit=EPS_UNIT, paper="Table V: clean, 4/255, 8/255")
    n_in: Int = param(100, ge=1, doc="in-distribution test inputs", unit="inputs", paper="§V-A: 8,000")
    n_outliers: Int = param(100, ge=1, doc="outliers per set (open set, OOD)", unit="inputs", paper="§V-A: 800")
    open_set_classes: tuple[Int, ...] = param((), doc="classes of the OSR test split held out as the open set (the "
                                              "rest stay known); empty: the given open-set split", unit="class "
                                              "indices", paper="§V-A: 10 CIFAR-100 classes not in CIFAR-10")

    def __post_init__(self) -> None:
        if any(e < 0 for e in self.eps):
            raise ValueError(f"eps must hold budgets >= 0, got {list(self.eps)}")
        if any(c < 0 for c in self.open_set_classes) or len(set(self.open_set_classes)) != len(self.open_set_classes):
            raise ValueError(f"open_set_classes must be distinct class indices >= 0, got {list(self.open_set_classes)}")


@config
class AuditConfig:
    """The audit's ``uncertainty-under-attack`` check (:func:`uncspan.audit.uncertainty_under_attack_check`) of every
    ranked model at ``attack.eps`` / ``attack.norm`` (bootstrap: ``metrics.auroc_n_boot``); not in the paper: its
    attacks (Eqs. 10-11) turned on the entropy's detection of misclassified inputs."""

    enabled: Bool = param(False, doc="compute the check for every ranked model", unit="")
    only: Bool = param(False, doc="run the check alone (no Table IV, sweep or Table V)", unit="")
    n: Int = param(100, ge=1, doc="test points (the first n of the test split)", unit="points")
    steps: Int = param(20, ge=1, doc="PGD steps of each attack", unit="iterations", paper="§V-A: 150")


@config
class Config:
    """The uncertainty-span experiment (Ledda et al., paper 001): Table IV, the s-ECE of Tables II–III, the ε-sweep
    and Table V."""

    seed: Int = param(0, ge=0, doc="seed of the random starts, AutoAttack and the bootstrap", unit="")
    attack: AttackConfig = param(AttackConfig(), doc="the over- and under-confidence attacks (§V-A)")
    leaderboard: LeaderboardConfig = param(LeaderboardConfig(), doc="Table IV")
    metrics: MetricsConfig = param(MetricsConfig(), doc="s-ECE bins and bootstrap resamples")
    sweep: SweepConfig = param(SweepConfig(), doc="the ε-sweep")
    ood: OODConfig = param(OODConfig(), doc="Table V (open set and OOD under attack)")
    audit: AuditConfig = param(AuditConfig(), doc="the audit's uncertainty-under-attack check")


#: Dotted config paths that change how, not what, is computed (left out of a run's identity).
EXECUTION_FIELDS = ("attack.batch_size",)

PRESETS: dict[str, Config] = {
    # exactly the robustsuite demo's settings before the experiment moved here (the runner's DEFAULTS)
    "demo": Config(),
    # the paper's settings (§V-A): 8,000 test points, L∞ 8/255 (CIFAR-10; use 4/255 for ImageNet), 150 PGD steps,
    # Eq. 11 alone from the clean input (no restarts), Table V with 8,000 in-distribution inputs and 800 outliers
    # per set at 0, 4/255, 8/255. Not stated by the paper: the s-ECE bins (15, the usual choice), the bootstrap
    # (it reports σ only), the ε-sweep (its budgets are used). Robust accuracy: RobustBench's standard AutoAttack.
    "paper": Config(
        attack=AttackConfig(eps=8 / 255, steps=150, restarts=0, under_objective=("cross_entropy",)),
        leaderboard=LeaderboardConfig(n=8000, pgd_steps=150),
        sweep=SweepConfig(eps=(0.0, 4 / 255, 8 / 255), n=1000, steps=150),
        ood=OODConfig(eps=(0.0, 4 / 255, 8 / 255), n_in=8000, n_outliers=800),
    ),
    # the paper's protocol at a size two CPU cores finish in minutes on the shipped Fashion-MNIST models: 150
    # steps, Eq. 11 alone; ε = 0.1 is the budget the shipped AT model was trained at (the paper plays each model
    # at its RobustBench budget, 8/255 on CIFAR-10); 1,000 test points, 500 outliers per set
    "paper-cpu": Config(
        attack=AttackConfig(eps=0.1, steps=150, restarts=0, under_objective=("cross_entropy",)),
        leaderboard=LeaderboardConfig(n=1000, pgd_steps=150),
        sweep=SweepConfig(eps=(0.0, 0.05, 0.1), n=200, steps=150),
        ood=OODConfig(eps=(0.0, 0.05, 0.1), n_in=1000, n_outliers=500),
    ),
    # the audit (``robustsuite audit``): the uncertainty-under-attack check alone on the user's model(s), 100 points,
    # PGD-20; ε and norm from attack.eps / attack.norm (override them)
    "audit": Config(audit=AuditConfig(enabled=True, only=True)),
}


def preset(name: str) -> Config:
    """The named preset (``ValueError`` listing the names)."""
    return choose_preset(PRESETS, name)
