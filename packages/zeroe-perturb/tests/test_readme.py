"""The README's code runs as written (tools/dev/readme_blocks.py): every python and bash block in order, in one
namespace and one working directory, with this package alone (no robustsuite import); blocks marked
``<!-- long-benchmark -->`` (wheel builds, the recorded benchmark) are skipped."""

import contextlib
import io
import json
from pathlib import Path

from robustsuite_common.testing import readme_blocks_module, readme_tests

ROOT = Path(__file__).resolve().parents[3]
README = Path(__file__).resolve().parents[1] / "README.md"
rb = readme_blocks_module(ROOT)
_, test_readme_has_the_one_shape = readme_tests(__file__)


def test_readme_blocks_run_as_written(tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        counts = rb.run_readme(README, cwd=tmp_path, forbid=("robustsuite",))
    assert counts["run"] == 3 and "caf noi" in out.getvalue()
    row = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))  # the command line block's output
    assert row["id"] == 1 and row["adv"] != row["text"] and row["zeroe_n_attacked"] >= 1
