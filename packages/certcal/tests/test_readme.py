"""Every ```python block of the package README runs as written, with this package alone (no robustsuite import),
in one namespace (later blocks use the first block's digits models and data)."""

from pathlib import Path

import pytest

from robustsuite_common.testing import readme_python_blocks, run_readme_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow  # trains three small digits CNNs and runs the experiment at README size (~40 s of CPU)
def test_readme_python_blocks_run():
    assert run_readme_blocks(README) == len(readme_python_blocks(README)) >= 4


def test_readme_first_screen_describes_the_experiment_api():
    text = README.read_text(encoding="utf-8")
    first = text[: text.index("## Inputs and errors")]
    for needle in ("certcal demo", "experiment.preset(\"demo\")", "experiment.run(", "Config", "Presets", "Result",
                   "store", "paper-cpu"):
        assert needle in first, needle
    assert "## Inputs and errors" in text
