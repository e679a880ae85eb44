"""Issue 37: threads are chosen deliberately — one intra-op thread unless ROBUSTSUITE_THREADS says otherwise, set
whether or not torch is already imported, and inherited by child processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from robustsuite_common.threads import THREADS_ENV, limited_threads, requested_threads, use_threads


def _threads_in_child(code: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", THREADS_ENV)} | env
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()[-1]


def test_use_threads_overrides_the_environment_before_or_after_torch():
    """OMP_NUM_THREADS=2 in the environment: use_threads() makes torch compute with one thread although torch was
    imported first (transduct-attack's CLI imported torch, then set OMP_NUM_THREADS: no effect). With
    ROBUSTSUITE_THREADS=2 and torch imported afterwards, torch and a child process started later use 2."""
    after = "import torch; from robustsuite_common.threads import use_threads; use_threads(); print(torch.get_num_threads())"
    assert _threads_in_child(after, OMP_NUM_THREADS="2") == "1"
    before = ("import subprocess, sys; from robustsuite_common.threads import use_threads; use_threads(); import torch; "
              "child = subprocess.run([sys.executable, '-c', 'import torch; print(torch.get_num_threads())'], "
              "capture_output=True, text=True).stdout.strip(); print(f'{torch.get_num_threads()},{child}')")
    assert _threads_in_child(before, OMP_NUM_THREADS="1", **{THREADS_ENV: "2"}) == "2,2"


def test_requested_threads_reads_a_positive_integer(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert requested_threads() == 1
    monkeypatch.setenv(THREADS_ENV, "3")
    assert requested_threads() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(ValueError, match=THREADS_ENV):
            requested_threads()
    with pytest.raises(ValueError, match="threads"):
        use_threads(0)


def test_limited_threads_restores_the_callers_count():
    import torch

    before = torch.get_num_threads()
    outside = 2 if before == 1 else 1
    torch.set_num_threads(outside)
    try:
        with limited_threads(1 if outside == 2 else 2) as n:
            assert torch.get_num_threads() == n != outside
        assert torch.get_num_threads() == outside
    finally:
        torch.set_num_threads(before)
