"""Every ```python block of the README runs as written, with this package and its ``demo`` extra only."""

from pathlib import Path

from robustsuite_common.testing import run_readme_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    assert run_readme_blocks(README) == 2
