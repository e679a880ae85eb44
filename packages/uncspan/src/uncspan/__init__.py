"""uncspan — uncertainty span under over- and under-confidence attacks (Ledda et al., "On the Robustness of
Adversarial Training Against Uncertainty Attacks").

Entropy / MSP / epistemic measures, the over- (Eq. 10) and under-confidence (Eq. 11) attacks with PGD or
APGD, the uncertainty span with MUS / MSUS (Eqs. 12–13), signed ECE (Eq. 19), OOD / open-set detection
under attack (Table V), a MUS leaderboard (Table IV) whose robust accuracy is standard AutoAttack, the
comparisons the paper reads off the spans (entropy widening, adversarial training's effect on MUS, s-ECE
under / clean / over) and the paper's figures. The paper's whole protocol is :mod:`uncspan.experiment`
(imported on first use, so ``import uncspan`` stays light).
"""

from importlib import import_module as _import_module
from importlib.metadata import version as _version
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .analysis import (
    EntropyWidening,
    PairedDifference,
    SpanSignedECE,
    TrainingComparison,
    TrainingEffect,
    adversarial_training_effect,
    entropy_widening,
    mus_difference,
    paired_difference,
    span_signed_ece,
)
from .attacks import (
    STRONGEST_UNDER_OBJECTIVES,
    AttackResult,
    MisclassificationAttack,
    OverConfidenceAttack,
    UncertaintyAttack,
    UnderConfidenceAttack,
)
from .audit import uncertainty_under_attack_check
from .calibration import ReliabilityBins, expected_calibration_error, reliability_bins, signed_ece
from .leaderboard import (
    Leaderboard,
    LeaderboardRow,
    RankConfig,
    leaderboard_row,
    load_robustbench_models,
    rank_models,
    robustbench_leaderboard,
)
from .measures import (
    DeepEnsemble,
    EpistemicDecomposition,
    MCDropoutModel,
    entropy,
    entropy_from_logits,
    epistemic_decomposition,
    max_softmax_probability,
)
from .ood import (
    DetectionMetrics,
    KnownClassesModel,
    OODRow,
    OODUnderAttack,
    auroc_ci,
    auroc_difference,
    detection_metrics,
    match_images,
    ood_under_attack,
    open_set_split,
)
from .plots import plot_entropy_distributions, plot_reliability_diagrams
from .robust import ROBUST_ATTACKS, AutoAttack, PGDGap, RobustOutcome, pgd_gap, robust_accuracy
from .span import SpanStatistic, UncertaintySpan, msus, mus, uncertainty_span
from .sweep import EpsSweep, EpsSweepRow, eps_sweep, plot_eps_sweep

if _TYPE_CHECKING:  # imported on first use at run time (module __getattr__ below)
    from . import experiment

__version__ = _version("uncspan")
__all__ = [
    "__version__",
    # measures
    "entropy",
    "entropy_from_logits",
    "max_softmax_probability",
    "EpistemicDecomposition",
    "epistemic_decomposition",
    "MCDropoutModel",
    "DeepEnsemble",
    # the audit's check
    "uncertainty_under_attack_check",
    # attacks
    "AttackResult",
    "UncertaintyAttack",
    "OverConfidenceAttack",
    "UnderConfidenceAttack",
    "MisclassificationAttack",
    "STRONGEST_UNDER_OBJECTIVES",
    # robust accuracy (Table IV's column): standard AutoAttack by default, PGD beside it
    "ROBUST_ATTACKS",
    "AutoAttack",
    "RobustOutcome",
    "robust_accuracy",
    "PGDGap",
    "pgd_gap",
    # span
    "UncertaintySpan",
    "SpanStatistic",
    "uncertainty_span",
    "mus",
    "msus",
    # calibration
    "ReliabilityBins",
    "reliability_bins",
    "signed_ece",
    "expected_calibration_error",
    # comparisons read off the spans
    "PairedDifference",
    "paired_difference",
    "EntropyWidening",
    "entropy_widening",
    "mus_difference",
    "TrainingComparison",
    "TrainingEffect",
    "adversarial_training_effect",
    "SpanSignedECE",
    "span_signed_ece",
    # plots
    "plot_entropy_distributions",
    "plot_reliability_diagrams",
    # OOD / open set
    "KnownClassesModel",
    "DetectionMetrics",
    "detection_metrics",
    "OODRow",
    "OODUnderAttack",
    "ood_under_attack",
    "open_set_split",
    "match_images",
    "auroc_ci",
    "auroc_difference",
    # eps sweeps
    "EpsSweepRow",
    "EpsSweep",
    "eps_sweep",
    "plot_eps_sweep",
    # leaderboard
    "LeaderboardRow",
    "Leaderboard",
    "RankConfig",
    "rank_models",
    "leaderboard_row",
    "load_robustbench_models",
    "robustbench_leaderboard",
    # the paper's protocol (a submodule, imported on first use)
    "experiment",
]


def __getattr__(name: str):
    if name == "experiment":
        return _import_module(".experiment", __name__)
    raise AttributeError(f"module 'uncspan' has no attribute {name!r}")
