"""Issue 18, item 4: cvxpy is the ``qp`` extra; without it the error names the extra."""

import sys

import numpy as np
import pytest

import iortemp


def test_cvxpy_solver_without_cvxpy_names_the_qp_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError, match=r"pip install 'iortemp\[qp\]'"):
        iortemp.min_norm_simplex(np.eye(3), solver="cvxpy")
    np.testing.assert_allclose(iortemp.min_norm_simplex(np.eye(3), solver="exact"), np.full(3, 1 / 3))


def test_textattack_binding_names_the_textattack_extra(monkeypatch):
    from iortemp._textattack import import_textattack

    monkeypatch.setitem(sys.modules, "nltk", None)
    with pytest.raises(ImportError, match=r"pip install 'iortemp\[textattack\]'"):
        import_textattack()
