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
