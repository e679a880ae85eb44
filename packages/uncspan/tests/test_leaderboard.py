import json
import sys

import pytest
import torch

from uncspan import RankConfig, load_robustbench_models, rank_models, robustbench_leaderboard


def test_adversarial_training_shrinks_the_span(std_model, at_model, digits):
    """The paper's claim (Theorem IV.1, Table IV): the PGD-trained model has a smaller MUS and MSUS than
    the standard one, and more robust accuracy; the leaderboard ranks it first."""
    _, _, xte, yte = digits
    board = rank_models({"standard": std_model, "adv-trained": at_model}, xte[:200], yte[:200],
                        config=RankConfig(eps=0.1, steps=40, attack="pgd"))
    first, second = board.rows
    assert first.model == "adv-trained"
    assert first.mus_mean < 0.8 * second.mus_mean
    assert first.msus_mean < second.msus_mean
    assert first.robust_acc > second.robust_acc
    assert 0.9 < first.clean_acc <= 1 and 0.9 < second.clean_acc <= 1
    assert board.columns[:2] == ["rank", "model"]
    for col in ("clean_acc", "robust_acc", "mus_mean"):
        row = dict(zip(board.columns, board.table()[0], strict=True))
        assert row[f"{col}_ci_low"] <= row[col] <= row[f"{col}_ci_high"]
    assert board.table()[0][:2] == [1, "adv-trained"]
    json.dumps(board.to_dict())
    assert set(board.spans) == {"standard", "adv-trained"}


def test_rank_models_bad_inputs(std_model, digits):
    _, _, xte, yte = digits
    with pytest.raises(TypeError, match="models"):
        rank_models({}, xte[:4], yte[:4], config=RankConfig(eps=0.1))
    with pytest.raises(ValueError, match="y must"):
        rank_models({"m": std_model}, xte[:4], yte[:3], config=RankConfig(eps=0.1))
    with pytest.raises(TypeError, match="models\\['m'\\]"):
        rank_models({"m": "not a model"}, xte[:4], yte[:4], config=RankConfig(eps=0.1))


def test_robustbench_missing_checkpoints_are_skipped_without_import(tmp_path, digits):
    _, _, xte, yte = digits
    (tmp_path / "cifar10" / "Linf").mkdir(parents=True)
    (tmp_path / "cifar10" / "Linf" / "Present.pt").write_bytes(b"")
    (tmp_path / "cifar10" / "Linf" / "Ens.pt_m0.pt").write_bytes(b"")
    had = "robustbench" in sys.modules
    models, skipped = load_robustbench_models(["Absent", "Other"], tmp_path)
    assert models == {} and set(skipped) == {"Absent", "Other"}
    assert ("robustbench" in sys.modules) == had
    board = robustbench_leaderboard(["Absent"], xte[:2], yte[:2], model_dir=tmp_path)
    assert board.rows == () and "Absent" in board.skipped
    with pytest.raises(ValueError, match="dataset"):
        load_robustbench_models(["x"], tmp_path, dataset="mnist")


def test_missing_robustbench_extra_names_it(tmp_path, monkeypatch):
    (tmp_path / "cifar10" / "Linf").mkdir(parents=True)
    (tmp_path / "cifar10" / "Linf" / "M.pt").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "robustbench", None)
    monkeypatch.setitem(sys.modules, "autoattack", torch)  # alias already "present"
    with pytest.raises(ImportError, match=r"uncspan\[robustbench\]"):
        load_robustbench_models(["M"], tmp_path)


def test_rank_models_takes_its_config_and_old_keywords_one_more_release(std_model, digits):
    _, _, xte, yte = digits
    cfg = RankConfig(eps=0.1, steps=1, restarts=0, n_boot=100, attack="pgd")
    new = rank_models({"m": std_model}, xte[:8], yte[:8], config=cfg)
    with pytest.warns(DeprecationWarning, match="RankConfig"):
        old = rank_models({"m": std_model}, xte[:8], yte[:8], eps=0.1, steps=1, restarts=0, n_boot=100, attack="pgd")
    assert old.table() == new.table()
    with pytest.raises(TypeError, match="epsilon"):
        rank_models({"m": std_model}, xte[:8], yte[:8], epsilon=0.1)
    with pytest.raises(ValueError):
        RankConfig(steps=-1)
