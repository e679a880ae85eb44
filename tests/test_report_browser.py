"""The HTML report opens in a real headless browser and shows its figures (tools/dev/check_report_html.py)."""

import importlib.util
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from robustsuite.report import SCHEMA_VERSION, Section, Table, write_report  # noqa: E402
from robustsuite.runners import RunContext  # noqa: E402

spec = importlib.util.spec_from_file_location("check_report_html",
                                              Path(__file__).parents[1] / "tools" / "dev" / "check_report_html.py")
checker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(checker)


@pytest.mark.skipif(checker.chromium() is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_report_html_renders_figures_in_headless_chromium(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method="m")
    figures = []
    for i in range(2):
        fig, ax = plt.subplots()
        ax.bar(range(3), [i + 1, 2, 3])
        figures.append(ctx.figure(fig, f"f{i}", f"figure {i}"))
    headline = Table("headline", "clean vs attacked", ["condition", "clean", "clean_ci_low", "clean_ci_high", "attacked",
                                                        "attacked_ci_low", "attacked_ci_high"], [["PGD", 0.9, 0.8, 0.95, 0.5, 0.4, 0.6]])
    from robustsuite.report.verdicts import build_verdicts
    from robustsuite_common.verdict import Check

    checks = [Check("above-chance", "validity", "Clean accuracy above chance", "pass", "r", 0.9, (0.8, 0.95), 100),
              Check("zero-gradients", "attack-strength", "Input gradients available", "fail", "r", 0.5, (0.4, 0.6),
                    100, next_step="use BPDA")]
    section = Section("M", "s", figures=figures, tables=[headline], checks=checks).to_dict() | {
        "deterministic": False, "model": "my-model"}
    report = {"schema_version": SCHEMA_VERSION, "warnings": [], "verdicts": build_verdicts({"m": section}),
              "run": {"id": "browser", "created": "2026-01-01T00:00:00+00:00", "seed": 0, "device": "cpu",
                      "config": {}, "versions": {}, "command": "test"},
              "units": [], "sections": {"m": section}}
    write_report(tmp_path, report)
    n, ok = checker.check(tmp_path, tmp_path / "shot.png")
    assert (n, ok) == (3, 3)  # the two figures and the headline chart drawn by the renderer
    # the page opens with the verdict: its first heading after the title, a banner with an icon and words
    dom = checker.dump_dom(tmp_path)
    body = dom.split("<body>", 1)[1]
    assert body.index("Verdict: is the robustness real?") < body.index("<h2>Units</h2>") < body.index("<section")
    assert "my-model: the measured robustness does NOT hold up" in body and "✘" in body
    assert "<a href=\"#m\">m</a>" in body or "href=\"#m\"" in body  # the evidence links to its section
    assert (tmp_path / "shot.png").read_bytes()[:4] == b"\x89PNG"
