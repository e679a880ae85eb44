"""Issue 18, item 4: matplotlib is the ``plot`` extra; without it the error names the extra."""

import subprocess
import sys

import pytest

import uncspan


def test_figures_without_matplotlib_name_the_plot_extra(monkeypatch):
    from uncspan import plots

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'uncspan\[plot\]'"):
        plots._figure(1, 1, 2.0, 2.0)
    with pytest.raises(ImportError, match=r"pip install 'uncspan\[plot\]'"):
        uncspan.plot_eps_sweep({})


def test_robustbench_loading_names_the_robustbench_extra(monkeypatch, tmp_path):
    (tmp_path / "cifar10" / "Linf").mkdir(parents=True)
    (tmp_path / "cifar10" / "Linf" / "M.pt").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "robustbench", None)
    monkeypatch.setitem(sys.modules, "autoattack", None)
    with pytest.raises(ImportError, match=r"uncspan\[robustbench\]"):
        uncspan.load_robustbench_models(["M"], tmp_path)


def test_import_uncspan_loads_no_extra():
    code = "import sys, uncspan; print([m for m in ('matplotlib', 'robustbench', 'timm') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
