"""Atomic writes: whole files only, and the permissions a plain ``open`` gives (not mkstemp's 0600)."""

import os
import stat

import pytest

from robustsuite_common.io import write_bytes, write_json, write_text


def test_written_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        for i, write in enumerate((lambda p: write_text(p, "x"), lambda p: write_bytes(p, b"x"),
                                   lambda p: write_json(p, {"a": 1}))):
            path = write(tmp_path / "sub" / f"f{i}")
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, oct(path.stat().st_mode)
    finally:
        os.umask(old)


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = write_text(tmp_path / "f.json", "old")
    with pytest.raises(ValueError):
        write_json(path, {"bad": float("nan")})
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.json"]
