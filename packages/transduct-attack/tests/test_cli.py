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
    assert [t["name"] for t in result["tables"]] == ["headline", "tadv", "paper_effects"]
    assert result["summary"] in printed


def test_the_cli_trains_with_one_thread_whatever_the_environment(tmp_path):
    """Issue 37: the CLI set OMP_NUM_THREADS after torch was imported (no effect), so its training ran with the
    environment's threads and its numbers depended on them. It now chooses one intra-op thread itself: a small
    training example (one epoch of the digits CNN, then PGD) run under OMP_NUM_THREADS=1 and =2 computes with one
    thread and writes the same results, bit for bit."""
    import json
    import os
    import subprocess
    import sys

    code = ("import sys, torch; from transduct_attack.cli import main\n"
            "rc = main(sys.argv[1:]); print('THREADS', torch.get_num_threads()); sys.exit(rc)")
    results = {}
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.json"
        env = {k: v for k, v in os.environ.items() if k != "ROBUSTSUITE_THREADS"} | {"OMP_NUM_THREADS": threads}
        res = subprocess.run([sys.executable, "-c", code, "demo", "--defense", "static", "--attacks", "none,pgd",
                              "--epochs", "1", "--points", "20", "--json", str(out)],
                             capture_output=True, text=True, env=env, timeout=600)
        assert res.returncode == 0, res.stderr
        assert "THREADS 1" in res.stdout, res.stdout
        results[threads] = json.loads(out.read_text())
    assert results["1"] == results["2"]
    assert {r["attack"] for r in results["1"]} == {"none", "pgd"}
