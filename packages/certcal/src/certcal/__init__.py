"""certcal: certified calibration under adversarial attacks.

Gaussian-smoothing certificates (Cohen et al. 2019), certified confidence bounds (Kumar et al. 2020),
calibration metrics, the certified Brier score and certified calibration error (exact, ADMM and baselines)
of Emde et al., "Towards Certification of Uncertainty Calibration under Adversarial Attacks" (ICLR 2025),
beta-ACE calibration attacks and adversarial calibration training.

The paper's experiment (typed config, presets ``demo`` / ``paper`` / ``paper-cpu``, ``run``) is the submodule
``certcal.experiment`` (imported on first use, so ``import certcal`` stays light); ``certcal.overview`` is a
model's calibration-and-robustness overview (accuracy, debiased ECE and calibration test, AutoAttack robust accuracy).
"""

from importlib.metadata import version as _version

from .act import (
    ACT_GRID_KEYS,
    ACT_METHODS,
    ACTComparison,
    ACTComparisonConfig,
    ACTModel,
    ACTRow,
    ACTVerdict,
    ACTWeights,
    act_comparison,
)
from .attacks import ACE_CONFIGURATIONS, ACEBenchmark, ACEBenchmarkRow, ACEResult, BetaACE, ace_benchmark
from .audit import calibration_under_attack_check
from .cce import (
    CCE_METHODS,
    ADMMConfig,
    CCEResult,
    DECEConfig,
    admm_grid,
    brier_confidences,
    certified_brier_score,
    certified_calibration_error,
)
from .confidence import BOUND_METHODS, ConfidenceBounds, confidence_bounds
from .evaluation import (
    CertificateWidths,
    CertifiedCalibrationCurve,
    CommonSetCurve,
    RadiusRow,
    certificate_widths,
    certified_calibration_curve,
    common_set_curve,
)
from .metrics import (
    CalibrationError,
    ReliabilityDiagram,
    adaptive_calibration_error,
    bin_edges,
    bin_index,
    brier_score,
    calibration_error,
    expected_calibration_error,
    reliability_diagram,
)
from .smoothing import (
    NOISE_BLOCK,
    NOISE_STREAMS,
    CertifyResult,
    PredictResult,
    certify,
    clopper_pearson_lower,
    max_certifiable_radius,
    predict,
    sample_counts,
)
from .training import (
    TRAINING_METHODS,
    TrainingResult,
    adversarial_calibration_training,
    gaussian_noise_training,
)

__version__ = _version("certcal")
__all__ = [
    "ACEBenchmark",
    "ACEBenchmarkRow",
    "ACEResult",
    "ACTComparison",
    "ACTComparisonConfig",
    "ACTModel",
    "ACTRow",
    "ACTVerdict",
    "ACTWeights",
    "ACT_GRID_KEYS",
    "ACT_METHODS",
    "ACE_CONFIGURATIONS",
    "ADMMConfig",
    "BOUND_METHODS",
    "BetaACE",
    "CCEResult",
    "CCE_METHODS",
    "CalibrationError",
    "CertificateWidths",
    "CertifiedCalibrationCurve",
    "CertifyResult",
    "CommonSetCurve",
    "ConfidenceBounds",
    "DECEConfig",
    "NOISE_BLOCK",
    "NOISE_STREAMS",
    "PredictResult",
    "RadiusRow",
    "ReliabilityDiagram",
    "TRAINING_METHODS",
    "TrainingResult",
    "__version__",
    "ace_benchmark",
    "calibration_under_attack_check",
    "act_comparison",
    "adaptive_calibration_error",
    "admm_grid",
    "adversarial_calibration_training",
    "bin_edges",
    "bin_index",
    "brier_confidences",
    "brier_score",
    "calibration_error",
    "certificate_widths",
    "certified_brier_score",
    "certified_calibration_curve",
    "certified_calibration_error",
    "certify",
    "clopper_pearson_lower",
    "common_set_curve",
    "confidence_bounds",
    "expected_calibration_error",
    "experiment",
    "gaussian_noise_training",
    "max_certifiable_radius",
    "overview",
    "predict",
    "reliability_diagram",
    "sample_counts",
]


def __getattr__(name: str):
    if name in ("experiment", "overview"):  # imported on first use (pydantic, the config machinery)
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
