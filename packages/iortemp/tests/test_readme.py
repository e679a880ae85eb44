"""Every ```python block of the iortemp README runs as written, with the package alone (no robustsuite import),
at small sizes (``IORTEMP_README_N``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robustsuite_common.testing import readme_python_blocks, run_readme_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow  # trains the toy twice and runs the experiment, the detector, AutoAttack and a DDi-AT ablation
def test_readme_python_blocks_run_as_written(monkeypatch, capsys):
    monkeypatch.setenv("IORTEMP_README_N", "8")
    assert run_readme_blocks(README) == 4
    out = capsys.readouterr().out
    assert "attack(s) on 8 test texts" in out and "AutoAttack (standard" in out


def test_readme_first_screen_describes_the_experiment_api():
    text = README.read_text(encoding="utf-8")
    first = text[: text.index("## Inputs and errors")]
    for needle in ("experiment.run(models, data, config", "`systems`", "`text`", "`vision`", "`ddi_at`",
                   "`ablation`", "**`demo`**", "**`paper`**", "**`paper-cpu`**", "`Result`", "iortemp experiment"):
        assert needle in first, needle
    assert "## Inputs and errors" in text and len(readme_python_blocks(README)) == 4
