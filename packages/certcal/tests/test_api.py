import subprocess
import sys

import certcal

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
    assert set(certcal.__all__) == EXPECTED
    for name in certcal.__all__:
        assert hasattr(certcal, name)


def test_import_is_light():
    code = "import sys, certcal; print(sorted(m for m in ('cvxpy', 'matplotlib', 'scipy.stats') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
