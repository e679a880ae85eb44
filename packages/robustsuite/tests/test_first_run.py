"""The first run (issue 37): listing commands without torch, threads chosen deliberately, progress lines a user can
read, and ``--workers`` giving the records of a serial run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _reports import CERTCAL_TINY, report_content  # noqa: E402


@pytest.mark.parametrize(("argv", "expected"), [
    (["models"], "builtin:fashion-cnn-at"), (["datasets"], "builtin:fashion-mnist"),
    (["methods"], "transduct_attack"), (["benchmarks"], "paper-cpu")])
def test_listing_commands_import_no_torch(argv, expected):
    """Issue 37 item 6: the listing commands print names without importing torch (which took 18–33 s on a busy
    machine): checked on sys.modules of a fresh interpreter after the command ran, with the listing printed.
    (`methods --schema` reads the methods' typed configs, so it imports the method packages and torch.)"""
    code = ("import sys; from robustsuite.cli import app\n"
            f"try:\n    app({argv!r})\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print('TORCH', 'torch' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={"COLUMNS": "400", **__import__("os").environ})
    assert expected in res.stdout, res.stdout + res.stderr
    assert "TORCH False" in res.stdout, res.stdout[-500:] + res.stderr


# two overview units and a certcal unit whose certification is split into two shards (8x8 digits, tiny budgets)
CONFIG = """
[methods.overview]
targets = [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"]]
config = {n_boot = 100, robust_accuracy = "never"}
""" + CERTCAL_TINY + """noise_stream = "per_input"
shards = 2
"""


def _robustsuite(*argv: str) -> list[str]:
    return [sys.executable, "-m", "robustsuite.cli", *argv]


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "ROBUSTSUITE_THREADS"} | {"COLUMNS": "200"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The config run serially (--workers 1) and with --workers 2, in subprocesses whose stderr is a pipe (not a
    terminal, so the display is the plain one-line-per-unit form), under OMP_NUM_THREADS=2 and 1 respectively."""
    root = tmp_path_factory.mktemp("workers")
    cfg = root / "c.toml"
    cfg.write_text(CONFIG)
    out = {}
    for name, workers, omp in (("serial", "1", "2"), ("parallel", "2", "1")):
        res = subprocess.run(_robustsuite("run", str(cfg), "--out", str(root / name), "--limit", "60",
                                          "--workers", workers), capture_output=True, text=True,
                             env=_env() | {"OMP_NUM_THREADS": omp}, timeout=1200)
        assert res.returncode == 0, res.stderr
        out[name] = res
    return root, cfg, out


@pytest.mark.slow
def test_workers_2_writes_the_report_of_a_serial_run(runs):
    """Issue 37 item 7: --workers 2 computes the units and the certcal unit's two shards in two processes (the
    shard files are there) and gives the report of --workers 1, number for number (the serial run also ran under
    OMP_NUM_THREADS=2, the parallel one under 1: each computes with one torch thread)."""
    import json

    root, _, _ = runs
    serial = json.loads((root / "serial" / "report.json").read_text())
    parallel = json.loads((root / "parallel" / "report.json").read_text())
    assert [u["status"] for u in serial["units"]] == ["done"] * 3
    assert report_content(parallel) == report_content(serial)
    assert len(list((root / "parallel" / "work").rglob("cert-*.shard-*-of-2.npz"))) == 2
    # each worker task's CPU time, as the paper-cpu record's cpu.log has it: JOB USER SYSTEM WALL rc=N
    rows = [line.split() for line in (root / "parallel" / "cpu.log").read_text().splitlines()]
    assert sorted(r[0] for r in rows if "--shard" not in r) == sorted(u["id"] for u in parallel["units"])
    assert sum("--shard" in r for r in rows) == 2 and all(r[-1] == "rc=0" for r in rows)
    assert sum(float(r[-4]) + float(r[-3]) for r in rows) > 0


@pytest.mark.slow
def test_plain_progress_lines_name_each_unit_start_and_end_and_reuse(runs):
    """Issue 37 item 3: without a terminal the run prints one line as each unit starts and as it ends, with k of N,
    method, model, elapsed and the estimate of the time left; a second run reuses every unit and says so."""
    import re

    root, cfg, out = runs
    lines = [x for x in out["serial"].stderr.splitlines() if x.startswith("[")]
    assert lines[0] == "[1/3] start overview · builtin:digits-cnn"
    assert re.fullmatch(r"\[1/3\] done overview · builtin:digits-cnn in [0-9.]+ s \(elapsed \d:\d\d:\d\d, about "
                        r"\d:\d\d:\d\d left\)", lines[1]), lines[1]
    assert [x.split(" ")[:3] for x in lines] == [["[1/3]", "start", "overview"], ["[1/3]", "done", "overview"],
                                                 ["[2/3]", "start", "overview"], ["[2/3]", "done", "overview"],
                                                 ["[3/3]", "start", "certcal"], ["[3/3]", "done", "certcal"]]
    assert lines[-1].endswith("about 0:00:00 left)")
    assert "\r" not in out["serial"].stderr  # no progress bar redraws in a log
    parallel = [x for x in out["parallel"].stderr.splitlines() if x.startswith("[")]
    assert sorted(x.split(" ")[1] for x in parallel) == ["done"] * 3 + ["start"] * 3
    again = subprocess.run(_robustsuite("run", str(cfg), "--out", str(root / "parallel"), "--limit", "60"),
                           capture_output=True, text=True, env=_env(), timeout=600)
    assert again.returncode == 0, again.stderr
    reused = [x for x in again.stderr.splitlines() if x.startswith("[")]
    assert len(reused) == 3 and all(" reused " in x and "already finished (by an earlier run" in x for x in reused), reused


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_units_and_says_how_to_resume(runs):
    """Issue 37 item 6: Ctrl-C (SIGINT) after the first unit finished exits 130, names the unit kept and the
    command that resumes the run; the kept unit's record is there, and the resumed run reuses it."""
    import signal

    root, cfg, _ = runs
    out = root / "interrupted"
    argv = _robustsuite("run", str(cfg), "--out", str(out), "--limit", "60", "--no-progress")
    # SIGINT at its default in the child: a suite started in the background of a non-interactive shell inherits it
    # ignored, and Python then installs no KeyboardInterrupt handler (the run would finish instead of stopping)
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("[1/3] done"):
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=600) == 130, "".join(seen) + rest
    first = seen[-1].split(" ")[2:5]  # the first unit: overview · builtin:digits-cnn
    assert first == ["overview", "·", "builtin:digits-cnn"]
    kept = [x.split("kept: ")[1] for x in rest.splitlines() if x.strip().startswith("kept: ")]
    assert len(kept) == 1 and (out / "units" / f"{kept[0]}.json").is_file(), rest
    assert "1 of 3 units are finished and kept" in " ".join(rest.split())
    import shlex

    assert f"resume with: {shlex.join(['robustsuite', *argv[3:]])}" in " ".join(rest.split()), rest
