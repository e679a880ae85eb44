"""The README's Python blocks run as written, with this package alone."""

from pathlib import Path

from robustsuite_common.testing import run_readme_blocks


def test_readme_blocks_run():
    assert run_readme_blocks(Path(__file__).resolve().parents[1] / "README.md") >= 1
