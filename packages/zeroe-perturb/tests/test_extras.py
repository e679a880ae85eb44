"""Issue 18, item 4: scipy is the ``stats`` extra; without an extra the error names it."""

import subprocess
import sys

import pytest


def test_kendall_tau_without_scipy_names_the_stats_extra(monkeypatch):
    from zeroe_perturb.ranking import kendall_tau_vs_paper

    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(ImportError, match=r"pip install 'zeroe-perturb\[stats\]'"):
        kendall_tau_vs_paper(None)


def test_textattack_binding_names_the_textattack_extra(monkeypatch):
    from zeroe_perturb._textattack_compat import import_textattack

    monkeypatch.setitem(sys.modules, "nltk", None)
    with pytest.raises(ImportError, match=r"pip install 'zeroe-perturb\[textattack\]'"):
        import_textattack()


def test_import_zeroe_perturb_loads_no_extra():
    code = ("import sys, zeroe_perturb; print([m for m in ('scipy', 'torch', 'matplotlib', 'textattack', 'tqdm') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
