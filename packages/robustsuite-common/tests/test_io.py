"""Atomic writes: whole files only, and the permissions a plain ``open()`` would give (a run directory is shared
by other users' processes and cluster jobs)."""

from __future__ import annotations

import os
import stat

import pytest

from robustsuite_common.io import atomic_write, write_json, write_text


def test_written_file_has_the_umask_permissions_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_text(tmp_path / "a" / "b.txt", "x")
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o644


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = write_json(tmp_path / "r.json", {"a": 1})

    def boom(p):
        p.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, boom)
    assert path.read_text() == '{\n  "a": 1\n}\n' and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_safe_name_keeps_safe_names_and_tells_changed_ones_apart():
    from robustsuite_common.io import safe_name

    assert safe_name("fashion-cnn_v1.2") == "fashion-cnn_v1.2"
    a, b = safe_name("builtin:fashion cnn"), safe_name("builtin/fashion-cnn")
    assert a.startswith("builtin-fashion-cnn-") and b.startswith("builtin-fashion-cnn-") and a != b
    long = safe_name("x" * 100, max_len=10)
    assert long.startswith("x" * 10 + "-") and len(long) == 19 and safe_name("") == "x-e3b0c442"
