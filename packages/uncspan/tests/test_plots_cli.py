import json

import pytest

from uncspan import plot_entropy_distributions, plot_reliability_diagrams, uncertainty_span
from uncspan.cli import main


def test_figures(std_model, at_model, digits, tmp_path):
    _, _, xte, yte = digits
    spans = {m: uncertainty_span(model, xte[:50], 0.1, steps=5) for m, model in (("std", std_model), ("at", at_model))}
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


def test_cli_demo(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--steps", "4", "--n", "60", "--epochs", "3"]) == 0
    out = capsys.readouterr().out
    assert "leaderboard" in out and "s-ECE" in out
    res = json.loads((tmp_path / "results.json").read_text())
    assert len(res["leaderboard"]["rows"]) == 2 and len(res["open_set"]["rows"]) == 3 and len(res["ood"]["rows"]) == 3
    assert (tmp_path / "entropy_distributions.png").exists() and (tmp_path / "reliability_diagrams.png").exists()
