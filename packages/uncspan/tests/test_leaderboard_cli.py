"""Issue 14, item 8: ``uncspan leaderboard`` ranks several RobustBench zoo models with local checkpoints by MUS
with intervals in one command, offline (tiny zoo entries written here; one of them routed through timm)."""

import json

import pytest
import torch

from uncspan import RankConfig, load_robustbench_models, rank_models
from uncspan.cli import main


@pytest.fixture()
def zoo(tmp_path, monkeypatch, registered_timm, robustbench_extra):
    TIMM_NAME, TinyTimmNet = registered_timm  # noqa: N806
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel

    entries = model_dicts[BenchmarkDataset.cifar_10][ThreatModel.Linf]
    folder = tmp_path / "models" / "cifar10" / "Linf"
    folder.mkdir(parents=True)
    g = torch.Generator().manual_seed(0)
    base = TinyTimmNet()
    with torch.no_grad():
        for p in base.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    names = []
    for name, scale in (("TinyA2099", 1.0), ("TinyB2099", 4.0), (TIMM_NAME, 0.25)):
        m = TinyTimmNet()
        state = {k: v * scale if k.startswith("fc.") else v for k, v in base.state_dict().items()}
        m.load_state_dict(state)
        if name != TIMM_NAME:
            monkeypatch.setitem(entries, name, {"model": TinyTimmNet, "gdrive_id": "not-used-offline"})
        torch.save(state, folder / f"{name}.pt")
        names.append(name)
    data = tmp_path / "test.pt"
    torch.save({"x": torch.rand(24, 3, 8, 8, generator=g), "y": torch.randint(0, 10, (24,), generator=g)}, data)
    return tmp_path / "models", data, names


@pytest.mark.slow  # imports RobustBench (tens of seconds on a loaded machine)
def test_leaderboard_command_offline(zoo, no_network, tmp_path, capsys):
    model_dir, data, names = zoo
    out = tmp_path / "board.json"
    argv = ["leaderboard", "--model-dir", str(model_dir), "--data", str(data), "--names", *names, "Absent2099",
            "--eps", "0.03", "--steps", "3", "--restarts", "1", "--standard", "TinyA2099", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "TinyB2099" in printed and "skipped Absent2099" in printed
    res = json.loads(out.read_text())["leaderboard"]
    rows = res["rows"]
    assert [r["model"] for r in rows] != [] and {r["model"] for r in rows} == set(names)
    mus = [r["mus_mean"] for r in rows]
    assert mus == sorted(mus)
    for r in rows:
        assert r["mus_mean_ci_low"] <= r["mus_mean"] <= r["mus_mean_ci_high"]
        assert r["clean_acc_ci_low"] <= r["clean_acc"] <= r["clean_acc_ci_high"]
    assert {r["model"]: r["adversarially_trained"] for r in rows}["TinyA2099"] is False
    # the same numbers as ranking the loaded models through the API
    d = torch.load(data, weights_only=True)
    models, _ = load_robustbench_models(names, model_dir)
    ref = rank_models(models, d["x"], d["y"], config=RankConfig(eps=0.03, steps=3, restarts=1))
    assert [r.model for r in ref.rows] == [r["model"] for r in rows]
    assert [r.mus_mean for r in ref.rows] == pytest.approx(mus)
