"""The first run (issue 37): listing commands without torch, threads chosen deliberately, progress lines a user can
read, and ``--workers`` giving the records of a serial run."""

from __future__ import annotations

import subprocess
import sys

import pytest


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
