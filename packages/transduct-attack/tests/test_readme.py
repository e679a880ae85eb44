"""The README's code runs as written (tools/readme_blocks.py): every python and bash block in order, in one
namespace and one working directory, with this package alone (no robustsuite import); blocks marked
``<!-- long-benchmark -->`` (wheel builds, the recorded benchmark) are skipped."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = Path(__file__).resolve().parents[1] / "README.md"
_spec = importlib.util.spec_from_file_location("readme_blocks", ROOT / "tools" / "dev" / "readme_blocks.py")
rb = sys.modules.setdefault("readme_blocks", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rb)


def test_readme_blocks_run_as_written(tmp_path):
    counts = rb.run_readme(README, cwd=tmp_path, forbid=("robustsuite",))
    assert counts["run"] >= 1


def test_readme_has_the_one_shape():
    assert rb.shape_problems(README.read_text(encoding="utf-8")) == []
