"""Run lock (issue 18, item 3): one lock per unit, clear message, a killed owner's lock free at once, concurrent runs
compute every unit exactly once."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from typer.testing import CliRunner

from robustsuite import Section, runners
from robustsuite import run as run_mod
from robustsuite.cli import app
from robustsuite.run.lock import UnitLocked, _lock, try_acquire

cli = CliRunner()


def test_second_acquire_names_the_owner_and_release_frees(tmp_path):
    path = tmp_path / "units" / "u.lock"
    lock = try_acquire(path)
    with pytest.raises(UnitLocked, match=rf"being computed elsewhere: pid {os.getpid()} on host "
                                         rf"{socket.gethostname()}") as e:
        try_acquire(path)
    assert e.value.owner["pid"] == os.getpid()
    lock.release()
    assert not path.exists()
    try_acquire(path).release()


def test_lock_of_a_killed_process_is_free_at_once(tmp_path):
    path = tmp_path / "u.lock"
    code = (f"import time; from robustsuite.run.lock import try_acquire; l = try_acquire({str(path)!r}); "
            "print('held', flush=True); time.sleep(600)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        with pytest.raises(UnitLocked, match=f"pid {p.pid}"):
            try_acquire(path)
    finally:
        p.kill()
        p.wait()
    lock = try_acquire(path)  # the kernel dropped the dead owner's lock; its file (and owner text) remain
    assert json.loads(path.read_text())["pid"] == os.getpid()
    lock.release()
    assert not list(tmp_path.iterdir())  # nothing left behind


def test_a_waiter_woken_on_a_removed_file_does_not_hold_the_lock(tmp_path):
    """The holder removes the file as it releases: a process that was waiting on that file must not think it holds
    the lock while a newcomer holds the new file at the same path."""
    path = tmp_path / "u.lock"
    first = try_acquire(path)
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(_lock(path, blocking=True)))
    waiter.start()
    deadline = time.time() + 10
    while not _waiting_on(path) and time.time() < deadline:
        time.sleep(0.01)
    first.release()
    try:
        newcomer = try_acquire(path)
    except UnitLocked:  # the waiter took the new file first: it holds it, alone
        waiter.join(10)
        assert got and got[0] is not None
        os.close(got[0])
        return
    time.sleep(0.2)
    assert not got, "the waiter holds a removed file's lock while the newcomer holds the path's"
    newcomer.release()
    waiter.join(10)
    os.close(got[0])


def _waiting_on(path) -> bool:
    """Whether a thread of this process is blocked in flock on ``path`` (Linux: /proc/locks lists waiters)."""
    try:
        ino = os.stat(path).st_ino
        return any(line.split()[1] == "->" and f":{ino} " in line for line in open("/proc/locks"))
    except (OSError, IndexError):
        time.sleep(0.2)
        return True


def test_run_takes_over_a_unit_left_locked_by_a_killed_run(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runners.get("overview"), "run",
                        lambda ctx, params: calls.append(ctx.unit_id) or Section("t", "ok"))
    cfg = {"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}}}
    (unit,) = run_mod.plan(cfg)
    lock = run_mod.lock_path(tmp_path, unit)
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": 1, "host": socket.gethostname()}))  # left by a killed run: nobody holds it
    report = run_mod.execute(cfg, tmp_path, progress=False)
    assert calls == [unit.id] and report["units"][0]["status"] == "done" and not lock.exists()


def test_run_unit_refuses_a_unit_computed_elsewhere_with_a_clear_message(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\nconfig = {n_boot = 100}\n')
    out = tmp_path / "run"
    assert cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write"]).exit_code == 0
    (uid,) = json.loads((out / "plan.json").read_text())["units"]
    with try_acquire(out / "units" / f"{uid}.lock"):
        res = cli.invoke(app, ["run-unit", str(out), uid])
    assert res.exit_code == 3, res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    assert "being computed elsewhere" in text and f"pid {os.getpid()} on host {socket.gethostname()}" in text
    assert not (out / "units" / f"{uid}.json").exists()


WRAPPER = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from robustsuite import runners
    from robustsuite.cli import app

    markers = Path(os.environ["MARKERS"])
    mod = runners.get("overview")
    original = mod.run

    def counted(ctx, params):
        (markers / f"{ctx.unit_id}--{os.getpid()}").write_text("")
        started = markers / f"started-{os.getpid()}"
        if not started.exists():  # barrier: both processes are inside a unit at the same time
            started.write_text("")
            deadline = time.time() + 300
            while len(list(markers.glob("started-*"))) < 2 and time.time() < deadline:
                time.sleep(0.1)
        return original(ctx, params)

    mod.run = counted
    sys.argv = ["robustsuite", *sys.argv[1:]]
    app()
""")


@pytest.mark.slow
def test_two_concurrent_runs_compute_every_unit_once(tmp_path):
    """Acceptance: two ``robustsuite run`` processes on one directory, both inside a unit at the same time."""
    cfg = tmp_path / "c.toml"
    # four units (the overview does not depend on the seed: targets, not seeds)
    cfg.write_text('[methods.overview]\ntargets = [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", '
                   '"builtin:digits"], ["builtin:digits-cnn", "builtin:digits-osr"], ["builtin:digits-osr-cnn", '
                   '"builtin:digits-osr"]]\nconfig = {n_boot = 100, robust_accuracy = "never"}\n')
    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "wrap.py").write_text(WRAPPER)
    out = tmp_path / "run"
    env = os.environ | {"MARKERS": str(markers), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(tmp_path / "wrap.py"), "run", str(cfg), "--out", str(out), "--no-progress"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    units = [u.id for u in run_mod.plan(run_mod.load_config(cfg))]
    computed = [m.name.rsplit("--", 1)[0] for m in markers.iterdir() if not m.name.startswith("started-")]
    assert sorted(computed) == sorted(units) and len(units) == 4  # every unit, each exactly once
    assert len({m.name.rsplit("--", 1)[1] for m in markers.iterdir() if not m.name.startswith("started-")}) == 2
    assert "being computed elsewhere" in " ".join(" ".join(err.split()) for _, err in outs)
    report = json.loads((out / "report.json").read_text())
    assert sorted(u["id"] for u in report["units"]) == sorted(units)
    assert all(u["status"] == "done" for u in report["units"])
    assert not list((out / "units").glob("*.lock*"))
