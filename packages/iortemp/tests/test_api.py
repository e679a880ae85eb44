import iortemp
from robustsuite_common.testing import modules_imported_by, public_names_problems

EXPECTED = {
    "AdversarialEvaluation", "AttackOutput", "CalibrationError", "ConfidenceStats", "EmbeddingNeighbours",
    "GreedyWordSwap", "HFTextClassifier", "IORReport", "IllusionTable", "PGDLinf", "PlattScaler", "SweepPoint",
    "TemperatureScaled", "TemperatureScaledModule", "TemperatureScaledText", "TemperatureSearchResult",
    "TextAttackRecipe", "TrainingConfig", "TrainingResult", "__version__", "adversarial_augmentation",
    "calibrate_temperature", "calibration_error", "confidence_stats", "detect_ior", "evaluate_attack",
    "illusion_table", "logits64", "mean_embedding_norm", "min_norm_simplex", "optimize_temperature", "predict", "search_temperature",
    "temperature_nll", "temperature_sweep", "train_classifier", "transfer_attack", "TemperatureFit",
    "fit_temperature", "call_attack", "ascc_perturbation", "AutoAttackLinf", "ROBUST_ATTACKS", "RobustAccuracy",
    "robust_accuracy", "paired_verdict",
    "CachedTextClassifier", "run_interval", "TEXT_ATTACKS", "text_attack", "served_systems",
    "NormalizationAblation", "ddi_normalization_ablation", "temperature_illusion_check",
}


def test_public_names_pinned():
    assert public_names_problems(iortemp, EXPECTED) == []


def test_heavy_integrations_not_imported_eagerly():
    assert modules_imported_by("import iortemp", ("textattack", "transformers", "cvxpy")) == []
