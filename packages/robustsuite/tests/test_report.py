import base64
import json

import jsonschema
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from robustsuite.report import SCHEMA_VERSION, Section, Table, render_markdown, rerender, write_report  # noqa: E402
from robustsuite.runners import RunContext  # noqa: E402


def _report(sections):
    return {"schema_version": SCHEMA_VERSION,
            "run": {"id": "r1", "created": "2026-01-01T00:00:00+00:00", "finished": None, "seed": 0, "device": "cpu",
                    "config": {}, "versions": {"robustsuite": "0.1.0"}, "git": None, "command": "test"},
            "units": [], "sections": sections}


def test_section_to_dict_is_json_safe():
    import numpy as np
    import torch

    sec = Section("t", "s", metrics={"a": np.float32(0.5), "b": torch.tensor(3), "c": float("nan"), "d": True},
                  tables=[Table("tab", "T", ["x", "y"], [[1, np.float64(2.5)], ["z", None]])])
    d = sec.to_dict()
    assert d["metrics"] == {"a": 0.5, "b": 3, "c": None, "d": True}
    json.dumps(d, allow_nan=False)
    with pytest.raises(ValueError, match="row 0"):
        Table("bad", "B", ["x"], [[1, 2]])
    with pytest.raises(TypeError, match="scalars"):
        Section("t", "s", metrics={"a": [1, 2]}).to_dict()


def test_write_validates_and_embeds_figures(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method="demo")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    figure = ctx.figure(fig, "line", "a line")
    sec = Section("Demo", "summary", metrics={"acc": 0.9}, tables=[Table("t", "T", ["k", "v"], [["a", 1]])],
                  figures=[figure], notes=["note"])
    paths = write_report(tmp_path, _report({"demo": sec.to_dict()}))
    html = paths["html"].read_text()
    png = (tmp_path / figure.path).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / figure.path).stat().st_mode & 0o044  # readable by others, not mkstemp's 0600
    assert base64.b64encode(png).decode() in html  # self-contained
    assert "src='figures/" not in html
    md = paths["md"].read_text()
    assert "| acc | 0.9 |" in md and figure.path in md
    # re-rendering from JSON reproduces the same files
    before = paths["md"].read_text()
    paths["md"].unlink()
    rerender(tmp_path)
    assert (tmp_path / "report.md").read_text() == before == render_markdown(json.loads(paths["json"].read_text()))


def test_invalid_report_is_rejected_and_nothing_written(tmp_path):
    bad = _report({"demo": {"title": "x"}})  # missing required keys
    with pytest.raises(jsonschema.ValidationError):
        write_report(tmp_path, bad)
    assert not (tmp_path / "report.json").exists()
    wrong_version = _report({}) | {"schema_version": "0.0"}
    with pytest.raises(jsonschema.ValidationError):
        write_report(tmp_path, wrong_version)


def test_figure_name_is_checked(tmp_path):
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="figure name"):
        RunContext(run_dir=tmp_path, method="m").figure(fig, "../escape", "x")
    plt.close(fig)
