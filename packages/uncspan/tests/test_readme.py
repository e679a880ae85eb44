"""Every ```python block of the README runs as written with uncspan alone (no robustsuite import), at a small size."""

from pathlib import Path

from robustsuite_common.testing import run_readme_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(monkeypatch):
    monkeypatch.setenv("UNCSPAN_README_SMALL", "1")
    assert run_readme_blocks(README) == 2
