"""Threat models for transductive defenses and the attacks that break them.

Chen et al., "Towards Evaluating the Robustness of Neural Networks Learned by Transduction" (ICLR 2022):
the game of §4 (:func:`play_game`, :class:`ThreatModel`, the referee), the defenses as transductive
learners Γ (:class:`RMC`, :class:`DENT`, :class:`DANN`, :class:`TADV`, :class:`URejectron`), and the
attacks (:class:`TransferPGD`, :class:`TransferAutoAttack`, :class:`FPA`, :class:`GMSA`).
"""

from importlib.metadata import version as _version

from . import experiment
from .attacks import AdaptiveAutoAttack, Attack, NoAttack, TransferAutoAttack, TransferPGD
from .audit import transductive_gain_check
from .dann import DANN
from .dent import DENT
from .experiment.dent import DentAdaptation, dent_adaptation, dent_base_model, dent_table
from .experiment.retraining import dann_table, tadv_table
from .experiment.rmc import RMCTableConfig, rmc_table
from .experiment.urejectron import URejectronFigure, urejectron_figure
from .game import GameResult, RoundRecord, merge_games, play_game
from .losses import cross_entropy, cw_targeted, cw_untargeted, max_wrong_probability
from .model_space import FPA, GMSA, attack_suite
from .perturbations import corrupt, cw_l2
from .pgd import PGD, PGDEnsemble
from .referee import RoundScore, score_round
from .repeats import SeededResult, draw_points, repeat_game
from .rmc import RMC
from .robustness import ROBUST_ATTACKS, RobustAccuracy, robust_accuracy
from .static import StaticDefense
from .tables import (
    MODEL_SPACE_ATTACKS,
    Comparison,
    DefenseTable,
    SeedSummary,
    TableCell,
    defense_table,
    game_keys,
)
from .tadv import TADV
from .threat_model import Adaptation, AttackResult, ThreatModel, TransductiveDefense, label_order
from .training import train_classifier
from .urejectron import RejectionCurve, URejectron, perturbed_rejection_curve, rejection_curve

__version__ = _version("transduct-attack")
__all__ = [
    "__version__",
    # game (§4)
    "ThreatModel",
    "TransductiveDefense",
    "Adaptation",
    "AttackResult",
    "RoundScore",
    "GameResult",
    "RoundRecord",
    "play_game",
    "merge_games",
    "score_round",
    "repeat_game",
    "SeededResult",
    "label_order",
    # defenses Γ
    "StaticDefense",
    "RMC",
    "DENT",
    "DANN",
    "TADV",
    "URejectron",
    "RejectionCurve",
    "rejection_curve",
    "perturbed_rejection_curve",
    # attacks
    "Attack",
    "NoAttack",
    "TransferPGD",
    "TransferAutoAttack",
    "AdaptiveAutoAttack",
    "FPA",
    "GMSA",
    "attack_suite",
    "PGD",
    "PGDEnsemble",
    # Figure 1(b, c): perturbations outside the L∞ game (A.6)
    "cw_l2",
    "corrupt",
    # a static model's own robustness (AutoAttack by default, issue 27)
    "robust_accuracy",
    "RobustAccuracy",
    "ROBUST_ATTACKS",
    # losses (A.2–A.3)
    "cross_entropy",
    "cw_untargeted",
    "cw_targeted",
    "max_wrong_probability",
    # training T(D)
    "train_classifier",
    # the paper's tables (§5, Tables 1-4 and 6, Figure 1) as functions
    "draw_points",
    "defense_table",
    "game_keys",
    "DefenseTable",
    "TableCell",
    "SeedSummary",
    "Comparison",
    "MODEL_SPACE_ATTACKS",
    "RMCTableConfig",
    "rmc_table",
    "dann_table",
    "tadv_table",
    "dent_base_model",
    "dent_table",
    "DentAdaptation",
    "dent_adaptation",
    "URejectronFigure",
    "urejectron_figure",
    # the paper's evaluation as one experiment (Config, presets, run, Result, figures)
    "experiment",
    # the verdict's lens (robustsuite audit): a test-time adaptive defense's gain under adaptive attacks
    "transductive_gain_check",
]
