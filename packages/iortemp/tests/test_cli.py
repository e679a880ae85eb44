"""The ``iortemp`` command line: bad input prints ``iortemp: error: ...`` and exits with status 2, before any
model is trained or attacked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iortemp import cli


@pytest.fixture()
def no_toy(monkeypatch):
    """Bad input must be refused before the toy model is trained."""
    def refuse(seed):
        raise AssertionError("the toy model was trained before the input was checked")

    monkeypatch.setattr(cli, "_toy", refuse)


def _run(argv, capsys):
    code = cli.main(argv)
    return code, capsys.readouterr().err


def test_bad_input_exits_2_with_a_message(tmp_path, capsys, no_toy):
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    bad_value = tmp_path / "n0.json"
    bad_value.write_text(json.dumps({"text": {"n_test": 0}}), encoding="utf-8")
    z, y = tmp_path / "z.npy", tmp_path / "y.npy"
    np.save(z, np.zeros((3, 2)))
    np.save(y, np.array([0, 1, 5]))
    cases = [
        (["experiment", "--preset", "papr"], "preset must be one of"),
        (["experiment", "--config", str(tmp_path / "missing.json")], "no such file"),
        (["experiment", "--config", str(bad_json)], "not valid json"),
        (["experiment", "--config", str(bad_value)], "text.n_test"),
        (["experiment", "--attacks", "hotflip"], "names"),
        (["experiment", "--n", "0"], "n_test"),
        (["demo", "--n", "0"], "--n must be >= 1"),
        (["calibrate", str(tmp_path / "missing.npy"), str(y)], "logits: no such file"),
        (["calibrate", str(z), str(y)], "labels"),  # label 5 for a 2-class logit matrix
    ]
    for argv, message in cases:
        code, err = _run(argv, capsys)
        assert code == 2, argv
        assert err.startswith("iortemp: error:") and message in err, (argv, err)


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["experiment", "--n", "many"])
    assert e.value.code == 2 and "invalid int value" in capsys.readouterr().err


@pytest.mark.slow  # trains the toy model (~15 s of CPU)
def test_experiment_command_runs_offline_and_writes_the_result(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert cli.main(["experiment", "--n", "6", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    from iortemp.experiment import Result

    res = Result.load(out)
    assert res.summary in printed and "ior_verdict" in res.tables and res.value("n_test") == 6
