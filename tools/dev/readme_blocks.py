"""Run a README's code blocks as a reader would: every ```python and ```bash block, in order, in one
working directory, the Python blocks in one namespace (a later block uses what an earlier one defined, and a
bash block reads the files an earlier block wrote).

A block preceded by the line ``<!-- long-benchmark -->`` (minutes of CPU: the full demo, a benchmark, a wheel
build) is skipped and counted; every other block must run. Other fences (``text``, ``toml``, ``console``) are
shown, not run. A package README must run with that package alone: a block importing a ``forbid`` package fails.

Also the one shape every package README follows (:data:`PACKAGE_SECTIONS`, :func:`shape_problems`).

    uv run python tools/dev/readme_blocks.py packages/certcal/README.md   # run one README's blocks here
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

LONG = "<!-- long-benchmark -->"
FENCE = re.compile(r"^(?P<marker><!-- long-benchmark -->\n)?```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
                   re.S | re.M)
RUN = ("python", "bash")
# the sections of every package README, in this order (each a "## " heading)
PACKAGE_SECTIONS = ("Install", "Quick start", "Public API", "Reproducing the paper", "Limits")
HISTORY = re.compile(r"before the redesign|measured before|as before|former runner|used to be|no longer|"
                     r"load average|/opt/wheels|resolve time", re.I)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    long: bool


def blocks(text: str) -> list[Block]:
    """Every fenced block, in order, with its language, first line and whether it is marked long."""
    return [Block(m["lang"], m["code"], text.count("\n", 0, m.start("code")) + 1, bool(m["marker"]))
            for m in FENCE.finditer(text)]


class ReadmeBlockError(AssertionError):
    """A README block that failed (names the file, the block's line and the error)."""


def run_readme(path: Path, *, cwd: Path, forbid: tuple[str, ...] = (), timeout: float = 600) -> dict[str, int]:
    """Run ``path``'s python and bash blocks in ``cwd``; returns ``{"run": n, "long": m}``."""
    path = Path(path)
    runnable = [b for b in blocks(path.read_text(encoding="utf-8")) if b.lang in RUN]
    module = types.ModuleType("__readme__")  # a real module: dataclasses defined in a block look it up
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    counts = {"run": 0, "long": 0}
    old = Path.cwd()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        os.chdir(cwd)
        for b in runnable:
            where = f"{path}:{b.line} ({b.lang} block)"
            if b.long:
                counts["long"] += 1
                continue
            for name in forbid:
                if re.search(rf"^\s*(from|import)\s+{name}(\s|\.|$)", b.code, flags=re.M):
                    raise ReadmeBlockError(f"{where} imports {name}: this README must run without it")
            if b.lang == "python":
                try:
                    exec(compile(b.code, where, "exec"), namespace)  # noqa: S102 (our own README)
                except Exception as err:
                    raise ReadmeBlockError(f"{where} failed: {type(err).__name__}: {err}") from err
            else:
                proc = subprocess.run(["bash", "-euo", "pipefail", "-c", b.code], cwd=cwd, env=env, text=True,
                                      capture_output=True, timeout=timeout)
                if proc.returncode:
                    raise ReadmeBlockError(f"{where} exited {proc.returncode}:\n{proc.stdout[-2000:]}"
                                           f"\n{proc.stderr[-2000:]}")
            counts["run"] += 1
    finally:
        os.chdir(old)
        sys.modules.pop(module.__name__, None)
    return counts


def shape_problems(text: str) -> list[str]:
    """What keeps a package README from the one shape: a title and a one-paragraph description naming the
    paper, then the sections of :data:`PACKAGE_SECTIONS` in order; a quick start of at most 15 lines that is not
    marked long; install by the wheel route; no history."""
    problems = []
    heads = re.findall(r"^## (.+)$", text, flags=re.M)
    got = [h for h in heads if h in PACKAGE_SECTIONS]
    if got != list(PACKAGE_SECTIONS):
        problems.append(f"sections {got} (need {list(PACKAGE_SECTIONS)} in this order)")
    if not text.startswith("# "):
        problems.append("no title line")
    if "--find-links dist" not in text or "uv build --package" not in text:
        problems.append("install does not show the wheel route (uv build --package X; pip install --find-links dist X)")
    if re.search(r"^pip install '?[\w-]+\[", text, flags=re.M):
        problems.append("a bare `pip install 'pkg[...]'`: the packages are not on PyPI")
    m = re.search(r"^## Quick start\n(.*?)(?=^## )", text, flags=re.S | re.M)
    if m:
        quick = [b for b in blocks(m.group(1)) if b.lang in RUN]
        if not quick or quick[0].long or len(quick[0].code.strip().splitlines()) > 15:
            problems.append("the quick start needs one runnable block of at most 15 lines")
    for hit in HISTORY.finditer(text):
        problems.append(f"history or machine notes: {hit.group(0)!r}")
    return problems


if __name__ == "__main__":
    import tempfile

    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            print(arg, run_readme(Path(arg).resolve(), cwd=Path(tmp)))
