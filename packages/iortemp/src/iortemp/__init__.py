"""iortemp: extreme confidence and the illusion of robustness (IOR) in adversarial evaluation.

Temperature wrappers (Eq. 8), adversary temperature calibration (Sec. 4.1, Eq. 9) and Brent-optimised
temperatures (Sec. 4.2, Eqs. 10-11), the attack-the-scaled / score-the-original protocol (Sec. 5), IOR
detection (Fig. 1) and its audit check of a served vision model (``temperature_illusion_check``), and DDi-AT /
PGD-K / FreeLB / ASCC / augmentation training (App. A-C).
Heavy integrations (TextAttack, transformers, AutoAttack) are imported lazily. The paper's experiment (its
typed config, presets and ``run``) is the submodule :mod:`iortemp.experiment` (imported on first use).
"""

from importlib.metadata import version as _version

from .ablation import NormalizationAblation, ddi_normalization_ablation
from .attacks import (
    TEXT_ATTACKS,
    AttackOutput,
    AutoAttackLinf,
    EmbeddingNeighbours,
    GreedyWordSwap,
    PGDLinf,
    TextAttackRecipe,
    text_attack,
)
from .audit import temperature_illusion_check
from .calibration import PlattScaler, TemperatureFit, calibrate_temperature, fit_temperature, temperature_nll
from .hf import CachedTextClassifier, HFTextClassifier
from .illusion import IllusionTable, illusion_table
from .ior import IORReport, SweepPoint, detect_ior, paired_verdict, run_interval, temperature_sweep
from .metrics import CalibrationError, ConfidenceStats, calibration_error, confidence_stats
from .optimize import TemperatureSearchResult, optimize_temperature, search_temperature
from .protocol import AdversarialEvaluation, call_attack, evaluate_attack, predict, transfer_attack
from .robust import ROBUST_ATTACKS, RobustAccuracy, robust_accuracy
from .temperature import (
    TemperatureScaled,
    TemperatureScaledModule,
    TemperatureScaledText,
    logits64,
    served_systems,
)
from .training import (
    TrainingConfig,
    TrainingResult,
    adversarial_augmentation,
    ascc_perturbation,
    mean_embedding_norm,
    min_norm_simplex,
    train_classifier,
)

__version__ = _version("iortemp")

__all__ = [
    "TEXT_ATTACKS",
    "AdversarialEvaluation",
    "AttackOutput",
    "AutoAttackLinf",
    "CachedTextClassifier",
    "CalibrationError",
    "ConfidenceStats",
    "EmbeddingNeighbours",
    "GreedyWordSwap",
    "HFTextClassifier",
    "IORReport",
    "IllusionTable",
    "NormalizationAblation",
    "PGDLinf",
    "PlattScaler",
    "ROBUST_ATTACKS",
    "RobustAccuracy",
    "SweepPoint",
    "TemperatureFit",
    "TemperatureScaled",
    "TemperatureScaledModule",
    "TemperatureScaledText",
    "TemperatureSearchResult",
    "TextAttackRecipe",
    "TrainingConfig",
    "TrainingResult",
    "__version__",
    "adversarial_augmentation",
    "ascc_perturbation",
    "calibrate_temperature",
    "calibration_error",
    "call_attack",
    "confidence_stats",
    "ddi_normalization_ablation",
    "detect_ior",
    "evaluate_attack",
    "fit_temperature",
    "illusion_table",
    "logits64",
    "mean_embedding_norm",
    "min_norm_simplex",
    "optimize_temperature",
    "paired_verdict",
    "predict",
    "robust_accuracy",
    "run_interval",
    "search_temperature",
    "served_systems",
    "temperature_nll",
    "temperature_illusion_check",
    "temperature_sweep",
    "text_attack",
    "train_classifier",
    "transfer_attack",
]


def __getattr__(name: str):
    if name == "experiment":  # the paper's protocol: imported on first use, so `import iortemp` stays light
        import importlib

        return importlib.import_module(".experiment", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
