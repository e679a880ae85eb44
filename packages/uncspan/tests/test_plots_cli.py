import pytest

from uncspan import plot_entropy_distributions, plot_reliability_diagrams, uncertainty_span
from uncspan.cli import main


def test_figures(std_model, at_model, digits, tmp_path):
    _, _, xte, yte = digits
    spans = {m: uncertainty_span(model, xte[:50], eps=0.1, steps=5) for m, model in (("std", std_model), ("at", at_model))}
    fig = plot_entropy_distributions(spans)
    assert len(fig.axes) == 4
    fig.savefig(tmp_path / "e.png")
    fig = plot_reliability_diagrams(spans, yte[:50])
    assert len(fig.axes) == 4
    assert [a.get_title() for a in fig.axes[:2]] == ["std", "at"]
    fig.savefig(tmp_path / "r.png")
    assert (tmp_path / "e.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="y must"):
        plot_reliability_diagrams(spans, yte[:10])
    with pytest.raises(TypeError, match="spans"):
        plot_entropy_distributions({})


SMALL = ["--set", "attack.steps=2", "--set", "leaderboard.n=20", "--set", "leaderboard.robust_attack=pgd",
         "--set", "leaderboard.pgd_steps=2", "--set", "sweep.n=10", "--set", "sweep.eps=[0,0.1]", "--set",
         "ood.n_in=20", "--set", "ood.n_outliers=12", "--set", "ood.eps=[0,0.1]", "--set", "metrics.n_boot=200", "--set", "metrics.auroc_n_boot=200"]


def test_cli_demo_runs_the_experiment_and_resumes_from_its_store(tmp_path, capsys, monkeypatch):
    from uncspan import experiment

    argv = ["experiment", "--out", str(tmp_path), "--epochs", "3", *SMALL]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "leaderboard" in out and "s-ECE" in out and "Table V" in out
    res = experiment.Result.load(tmp_path / "result.json")
    assert [r["model"] for r in res.leaderboard()] and len(res.tables["ood_osr"].rows) == 2 * 2
    assert res.config["leaderboard"]["n"] == 20 and res.config["attack"]["steps"] == 2
    for name in ("entropy-distributions", "reliability", "eps-sweep"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
    # the second run reads every attack outcome from the store: no attack runs
    from uncspan.experiment import checkpointed

    monkeypatch.setattr(checkpointed, "uncertainty_span", None)
    monkeypatch.setattr(checkpointed, "robust_accuracy", None)
    monkeypatch.setattr(checkpointed, "ood_under_attack", None)
    assert main(["demo", *argv[1:]]) == 0  # the old name of the command, kept as an alias
    assert experiment.Result.load(tmp_path / "result.json").to_dict() == res.to_dict()


@pytest.mark.parametrize("argv, message", [
    (["demo", "--set", "attack.stepz=3"], "unknown key 'attack.stepz'"),
    (["demo", "--set", "attack.steps=-1"], "attack.steps"),
    (["demo", "--set", "steps"], "KEY=VALUE"),
    (["demo", "--preset", "papr"], "preset must be one of"),
    (["experiment", "--preset", "papr"], "preset must be one of"),
    (["leaderboard", "--model-dir", "/nonexistent-dir", "--data", "x.pt", "--names", "A"], "no such directory"),
])
def test_cli_bad_input_exits_2_with_a_message(argv, message, capsys, tmp_path):
    if argv[0] == "leaderboard":
        argv[2] = str(tmp_path / "missing")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("uncspan: error:") and message in err


def test_cli_bad_option_exits_2():
    with pytest.raises(SystemExit) as e:
        main(["demo", "--stepz", "3"])
    assert e.value.code == 2
