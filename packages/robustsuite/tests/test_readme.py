"""The README's code runs as written (tools/dev/readme_blocks.py): every python and bash block in order, in one
namespace and one working directory, with the whole workspace; blocks marked
``<!-- long-benchmark -->`` (wheel builds, the recorded benchmark) are skipped."""

from pathlib import Path

import pytest

from robustsuite_common.testing import readme_blocks_module, readme_tests

ROOT = Path(__file__).resolve().parents[3]
README = Path(__file__).resolve().parents[1] / "README.md"
rb = readme_blocks_module(ROOT)
_, test_readme_has_the_one_shape = readme_tests(__file__, forbid=())


@pytest.mark.slow  # runs the umbrella on the digits: about a dozen small CLI runs, minutes of CPU
@pytest.mark.timeout(3600)
def test_readme_blocks_run_as_written(tmp_path):
    counts = rb.run_readme(README, cwd=tmp_path, forbid=())
    assert counts["run"] >= 1
