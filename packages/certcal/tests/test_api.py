import certcal
from robustsuite_common.testing import modules_imported_by, public_names_problems

EXPECTED = {
    "ACE_CONFIGURATIONS", "ACEResult", "ACTComparison", "ACTComparisonConfig", "ACTModel", "ACTRow", "ACT_GRID_KEYS", "ACT_METHODS", "act_comparison", "ADMMConfig", "BOUND_METHODS", "BetaACE", "CCEResult", "CCE_METHODS",
    "CertifiedCalibrationCurve", "CertifyResult", "ConfidenceBounds", "DECEConfig", "NOISE_BLOCK", "NOISE_STREAMS", "PredictResult", "RadiusRow",
    "ReliabilityDiagram", "TRAINING_METHODS", "TrainingResult", "__version__", "adaptive_calibration_error",
    "admm_grid", "adversarial_calibration_training", "bin_edges", "bin_index", "brier_confidences", "brier_score",
    "certified_brier_score", "certified_calibration_curve", "certified_calibration_error", "certify",
    "clopper_pearson_lower", "confidence_bounds", "expected_calibration_error", "predict", "reliability_diagram",
    "sample_counts", "CommonSetCurve", "common_set_curve", "ACTWeights", "CalibrationError", "calibration_error",
    "experiment", "max_certifiable_radius", "overview",
    "ACEBenchmark", "ACEBenchmarkRow", "ACTVerdict", "CertificateWidths", "ace_benchmark", "certificate_widths",
    "gaussian_noise_training", "calibration_under_attack_check",
}


def test_public_names_pinned():
    assert public_names_problems(certcal, EXPECTED) == []


def test_import_is_light():
    assert modules_imported_by("import certcal", ("cvxpy", "matplotlib", "scipy.stats")) == []
