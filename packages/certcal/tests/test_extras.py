"""Issue 18, item 4: cvxpy/HiGHS and matplotlib are extras; without them the error names the extra."""

import sys

import numpy as np
import pytest

import certcal


def test_milp_without_cvxpy_names_the_milp_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # as if certcal[milp] were not installed
    with pytest.raises(ImportError, match=r"pip install 'certcal\[milp\]'"):
        certcal.certified_calibration_error(np.array([0.5, 0.6]), np.array([0.7, 0.9]), np.array([1, 0]), n_bins=2,
                                            method="milp")


def test_plot_without_matplotlib_names_the_plot_extra(monkeypatch):
    diagram = certcal.reliability_diagram(np.array([0.6, 0.9]), np.array([1, 0]), n_bins=2)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'certcal\[plot\]'"):
        diagram.plot()


def test_import_certcal_loads_neither_extra():
    import subprocess

    code = "import sys, certcal; print([m for m in ('cvxpy', 'matplotlib', 'highspy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
