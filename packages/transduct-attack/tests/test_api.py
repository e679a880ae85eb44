import sys

import transduct_attack
from robustsuite_common.testing import modules_imported_by, public_names_problems

EXPECTED = [
    "__version__", "ThreatModel", "TransductiveDefense", "Adaptation", "AttackResult", "RoundScore", "GameResult", "RoundRecord",
    "play_game", "merge_games", "score_round", "repeat_game", "SeededResult", "label_order", "StaticDefense", "RMC", "DENT", "DANN", "TADV", "URejectron", "RejectionCurve", "rejection_curve",
    "perturbed_rejection_curve",
    "Attack", "NoAttack", "TransferPGD", "TransferAutoAttack", "AdaptiveAutoAttack", "FPA", "GMSA", "attack_suite", "PGD", "PGDEnsemble",
    "cw_l2", "corrupt",
    "robust_accuracy", "RobustAccuracy", "ROBUST_ATTACKS",
    "cross_entropy", "cw_untargeted", "cw_targeted", "max_wrong_probability", "train_classifier",
    "draw_points", "defense_table", "game_keys", "DefenseTable", "TableCell", "SeedSummary", "Comparison", "MODEL_SPACE_ATTACKS",
    "RMCTableConfig", "rmc_table", "dann_table", "tadv_table", "dent_base_model", "dent_table", "DentAdaptation", "dent_adaptation",
    "URejectronFigure", "urejectron_figure", "experiment", "transductive_gain_check",
]


def test_public_names_are_pinned():
    assert public_names_problems(transduct_attack, EXPECTED) == []


def test_import_is_light():
    assert modules_imported_by("import transduct_attack", ("pyautoattack", "autoattack", "robustbench",
                                                           "robustsuite", "sklearn")) == []


def test_robustbench_loader_names_its_extra(monkeypatch, tmp_path):
    """The zoo loader is robustsuite_common's: a missing checkpoint is refused offline before RobustBench is
    imported, and a missing extra is an ImportError naming this package's extra."""
    import pytest

    from robustsuite_common.robustbench import RobustBenchError
    from transduct_attack.zoo import DENT_BASE_MODELS, load_robustbench_model

    assert len(DENT_BASE_MODELS) == 7
    with pytest.raises(RobustBenchError, match="not found"):
        load_robustbench_model("Standard", model_dir=tmp_path)
    (tmp_path / "cifar10" / "Linf").mkdir(parents=True)
    (tmp_path / "cifar10" / "Linf" / "Standard.pt").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "robustbench", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"transduct-attack\[robustbench\]"):
        load_robustbench_model("Standard", model_dir=tmp_path)
