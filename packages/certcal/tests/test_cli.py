import json

import numpy as np
import pytest

from certcal import certified_brier_score, certified_calibration_error
from certcal.cli import main


def test_cce_command_on_npz(tmp_path, capsys):
    rng = np.random.default_rng(0)
    z = rng.uniform(0.3, 1, 50)
    lo, up, c = np.clip(z - 0.1, 0, 1), np.clip(z + 0.1, 0, 1), (rng.uniform(size=50) < z).astype(int)
    path = tmp_path / "b.npz"
    np.savez(path, lower=lo, upper=up, correct=c)
    out_json = tmp_path / "out" / "r.json"
    assert main(["cce", str(path), "--method", "exact", "--method", "brier", "--out", str(out_json)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out_json.read_text())
    assert printed["cbs"] == pytest.approx(certified_brier_score(lo, up, c))
    assert printed["cce"]["exact"] == pytest.approx(certified_calibration_error(lo, up, c).value)


def test_cce_command_reports_bad_files(tmp_path, capsys):
    path = tmp_path / "b.npz"
    np.savez(path, lower=np.zeros(2))
    assert main(["cce", str(path)]) == 2
    assert "upper" in capsys.readouterr().err
    assert main(["cce", str(tmp_path / "b.txt")]) == 2


def test_missing_file_and_bad_arguments_exit_2_with_a_message(tmp_path, capsys):
    """Issue 24 item 14: a missing file or a bad argument prints `certcal: error: ...` and exits 2 (no traceback)."""
    assert main(["cce", str(tmp_path / "missing.npz")]) == 2
    assert "certcal: error: bounds file" in capsys.readouterr().err
    assert main(["demo", "--set", "certify.n"]) == 2
    assert "--set takes KEY=VALUE" in capsys.readouterr().err
    assert main(["demo", "--set", "certify.n=0"]) == 2
    assert "certify.n" in capsys.readouterr().err
    assert main(["demo", "--set", "act.epocs=2"]) == 2
    assert "did you mean 'epochs'" in capsys.readouterr().err
    for argv in (["bogus"], ["demo", "--preset", "papr"], ["cce"], ["demo", "--seed", "x"]):
        with pytest.raises(SystemExit) as err:
            main(argv)
        assert err.value.code == 2
        assert "certcal" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_command_runs_the_experiment_offline(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["demo", "--quiet", "--out", str(out), "--set", "smoothing.sigmas=[0.25]", "--set", "test_samples=20",
            "--set", "certify.n=60", "--set", "calibration.n_boot=20", "--set", "acce.steps=10", "--set",
            "ace.steps=1", "--set", "act.enabled=false"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    from certcal import experiment

    res = experiment.Result.load(out)
    assert res.summary in printed and "certified:" in printed and res.config["certify"]["n"] == 60
