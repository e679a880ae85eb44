"""The command line: bad input prints an error and exits with status 2 (issue 24 item 14); ``experiment`` runs
the paper's tables offline on the digits."""

from __future__ import annotations

import json

import numpy as np
import pytest

from transduct_attack.cli import main


@pytest.mark.parametrize("argv,match", [
    (["demo", "--data", "/nonexistent/data.npz"], "No such file"),
    (["experiment", "--preset", "papr"], "preset must be one of"),
    (["experiment", "--set", "rmc.points=0"], r"rmc.points"),
    (["experiment", "--set", "rmc.pointz=3"], r"unknown key 'rmc.pointz'"),
    (["experiment", "--set", "rmc"], "KEY=VALUE"),
])
def test_bad_input_exits_2_with_a_message(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("transduct-attack: error:") and __import__("re").search(match, err), err


def test_a_data_file_without_the_arrays_exits_2(tmp_path, capsys):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.zeros((2, 1, 8, 8), dtype=np.float32))
    assert main(["demo", "--data", str(path)]) == 2
    assert "missing arrays" in capsys.readouterr().err


def test_experiment_runs_offline_and_writes_its_result(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["experiment", "--small", "--quiet", "--epochs", "2", "--set", 'tables=["tadv"]', "--set", "tadv.points=12", "--out",
            str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert [t["name"] for t in result["tables"]] == ["headline", "tadv"] and result["summary"] in printed
