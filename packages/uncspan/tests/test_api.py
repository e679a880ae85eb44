import uncspan
from robustsuite_common.testing import modules_imported_by


def test_public_names_pinned():
    assert sorted(uncspan.__all__) == sorted([
        "__version__", "entropy", "entropy_from_logits", "max_softmax_probability", "EpistemicDecomposition",
        "epistemic_decomposition", "MCDropoutModel", "DeepEnsemble", "AttackResult", "UncertaintyAttack",
        "OverConfidenceAttack", "UnderConfidenceAttack", "MisclassificationAttack", "UncertaintySpan",
        "SpanStatistic", "uncertainty_span", "mus", "msus", "ReliabilityBins", "reliability_bins", "signed_ece",
        "expected_calibration_error", "plot_entropy_distributions", "plot_reliability_diagrams",
        "KnownClassesModel", "DetectionMetrics", "detection_metrics", "OODRow", "OODUnderAttack", "ood_under_attack",
        "LeaderboardRow", "Leaderboard", "RankConfig", "rank_models", "load_robustbench_models", "robustbench_leaderboard",
        "STRONGEST_UNDER_OBJECTIVES", "leaderboard_row", "open_set_split", "match_images", "auroc_ci",
        "auroc_difference", "EpsSweepRow", "EpsSweep", "eps_sweep", "plot_eps_sweep", "PairedDifference",
        "paired_difference", "EntropyWidening", "entropy_widening", "mus_difference", "TrainingComparison",
        "TrainingEffect", "adversarial_training_effect", "SpanSignedECE", "span_signed_ece", "ROBUST_ATTACKS",
        "AutoAttack", "RobustOutcome", "robust_accuracy", "PGDGap", "pgd_gap", "experiment",
        "uncertainty_under_attack_check",
    ])
    for name in uncspan.__all__:
        assert hasattr(uncspan, name)
    from uncspan import experiment

    assert sorted(experiment.__all__) == sorted([
        "Config", "AttackConfig", "LeaderboardConfig", "MetricsConfig", "SweepConfig", "OODConfig", "AuditConfig", "PRESETS", "preset",
        "EXECUTION_FIELDS", "Models", "Data", "run", "Result", "TITLE", "figures", "paper_values", "paper_reference",
        "paper_row"])


def test_import_does_not_pull_heavy_optional_modules():
    assert modules_imported_by("import uncspan", ("robustbench", "sklearn", "matplotlib", "pydantic",
                                                  "uncspan.experiment", "pyautoattack")) == []
