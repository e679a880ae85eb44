"""Every ```python block of the README runs as written, in order, in one namespace, with this package alone
(``robustsuite_common.testing.run_readme_blocks`` refuses a block that imports ``robustsuite``). The TextAttack
block needs the ``textattack`` extra: without it that block is skipped (and only it)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path

from robustsuite_common.testing import readme_python_blocks, run_readme_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = readme_python_blocks(README)
    assert len(blocks) >= 5 and "experiment.run(" in blocks[0]  # the experiment leads
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if importlib.util.find_spec("textattack") is not None:
            assert run_readme_blocks(README) == len(blocks)
        else:  # run every other block the same way (one namespace, in order)
            ns: dict = {"__name__": "__readme__"}
            for i, code in enumerate(blocks, 1):
                if "import_textattack" not in code:
                    exec(compile(code, f"{README}#block{i}", "exec"), ns)  # noqa: S102 (the package's own README)
    printed = out.getvalue()
    assert "Text classification: clean accuracy" in printed and "caf noi" in printed


def test_readme_states_the_experiment_api_on_its_first_screen():
    head = README.read_text(encoding="utf-8")[:6000]
    for needle in ("python -m zeroe_perturb.experiment", "Config", "PRESETS", "run(models, data, config",
                   "Result", "Inputs and errors"):
        assert needle in README.read_text(encoding="utf-8"), needle
    assert "python -m zeroe_perturb.experiment" in head and "`Config`" in head and "`Result`" in head
