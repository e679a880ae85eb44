"""README code runs as written (tools/dev/readme_blocks.py): the root README's blocks, the runner itself on planted
failures, and the one shape of every package README. Each package runs its own README in
``packages/<pkg>/tests/test_readme.py`` (with that package alone)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_blocks", ROOT / "tools" / "dev" / "readme_blocks.py")
rb = sys.modules.setdefault("readme_blocks", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rb)

PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/README.md"))


def test_blocks_run_in_order_in_one_namespace_and_directory(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n```python\nx = 2\nopen('a.txt', 'w').write(str(x))\n```\n"
                      "```bash\ntest \"$(cat a.txt)\" = 2 && echo 3 > b.txt\n```\n"
                      "```python\nassert x == 2 and open('b.txt').read().strip() == '3'\n```\n"
                      "```toml\nnot = run\n```\n<!-- long-benchmark -->\n```bash\nexit 1\n```\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    assert rb.run_readme(readme, cwd=work) == {"run": 3, "long": 1}


@pytest.mark.parametrize("code, lang, match", [
    ("raise NameError('cfg')", "python", r"README.md:3 \(python block\) failed: NameError"),
    ("false", "bash", r"README.md:3 \(bash block\) exited 1"),
    ("import robustsuite", "python", "imports robustsuite"),
])
def test_a_failing_block_is_named(tmp_path, code, lang, match):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n```{lang}\n{code}\n```\n", encoding="utf-8")
    with pytest.raises(rb.ReadmeBlockError, match=match):
        rb.run_readme(readme, cwd=tmp_path, forbid=("robustsuite",))


def test_the_root_readme_runs_and_is_a_short_product_page(tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert not rb.HISTORY.search(text), rb.HISTORY.search(text)
    for needle in ("uv run robustsuite demo", "uv run pytest", "robustsuite audit", "--find-links dist"):
        assert needle in text, needle
    counts = rb.run_readme(ROOT / "README.md", cwd=tmp_path)
    assert counts["run"] >= 1


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_readme_has_the_one_shape(package):
    text = (ROOT / "packages" / package / "README.md").read_text(encoding="utf-8")
    assert rb.shape_problems(text) == []


def test_the_shape_check_fails_on_a_lab_notebook():
    good = ("# p\n\nWhat it is (paper).\n\n## Install\n\n```bash\nuv build --package p --out-dir dist\n"
            "pip install --find-links dist p\n```\n\n## Quick start\n\n```python\nx = 1\n```\n\n## Public API\n\n"
            "## Reproducing the paper\n\n## Limits\n")
    assert rb.shape_problems(good) == []
    assert rb.shape_problems(good.replace("## Limits\n", "## Limits\nSame numbers as before the redesign.\n"))
    assert rb.shape_problems(good.replace("## Public API\n\n", ""))
    assert rb.shape_problems(good.replace("x = 1\n", "x = 1\n" * 16))
    assert rb.shape_problems(good + "pip install 'p[plot]'\n")


# the options of `robustsuite run` that say how to execute (not what): `plan` takes every other one
_EXECUTION = {"--workers": 1, "-j": 1, "--executor": 1, "--address": 1, "--recompute": 1, "--progress": 0,
              "--no-progress": 0}


def _long_run_commands() -> list[tuple[str, tuple[str, ...]]]:
    """Every ``robustsuite run`` line of a long (skipped) bash block in the READMEs and docs pages that runs a
    shipped benchmark (the others read a file an earlier block wrote), as (where, the arguments `plan` takes)."""
    import shlex

    from robustsuite.run import benchmarks

    shipped = set(benchmarks())
    found = {}
    for path in [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md")), *sorted(ROOT.glob("docs/**/*.md"))]:
        for b in rb.blocks(path.read_text(encoding="utf-8")):
            for line in b.code.splitlines() if b.long and b.lang == "bash" else ():
                words = shlex.split(line, comments=True)
                if words[:4] != ["uv", "run", "robustsuite", "run"] or not set(words[4:5]) & shipped:
                    continue
                args, rest = [], words[4:]
                while rest:
                    w = rest.pop(0)
                    if w in _EXECUTION:
                        del rest[:_EXECUTION[w]]
                    else:
                        args.append(w)
                found.setdefault(tuple(args), f"{path.relative_to(ROOT)}:{b.line}")
    return [(where, args) for args, where in found.items()]


@pytest.mark.parametrize("where, args", _long_run_commands(), ids=lambda v: v if isinstance(v, str) else None)
def test_every_long_benchmark_run_command_plans(where, args):
    """The long blocks are not run, but each `robustsuite run` command in them must be one the CLI takes: planned
    with the same config, methods, overrides and inputs (`plan` checks them as `run` does), it exits 0."""
    from typer.testing import CliRunner

    from robustsuite.cli import app

    res = CliRunner().invoke(app, ["plan", *args])
    assert res.exit_code == 0, f"{where}: robustsuite run {' '.join(args)}\n{res.output}"
