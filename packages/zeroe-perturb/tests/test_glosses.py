"""The shipped demo glosses and the naive Bayes classifier the README and ``python -m zeroe_perturb.experiment``
use: data as documented, rebuilt byte-identical by its tool, a classifier that learns and meets the contract."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from zeroe_perturb.glosses import WordNaiveBayes, load_glosses

TOOL = Path(__file__).resolve().parents[3] / "tools" / "zeroe_perturb" / "build_glosses.py"


def test_shipped_glosses_are_balanced_with_ids_and_topic_names():
    train, test = load_glosses("train"), load_glosses("test")
    assert (len(train), len(test)) == (1200, 320)
    assert np.bincount(train.y).tolist() == [150] * 8 and np.bincount(test.y).tolist() == [40] * 8
    assert test.label_names == ("artifact", "person", "plant", "animal", "act", "communication", "location", "food")
    assert test.ids[0].startswith("test-") and len(set(test.ids)) == 320
    assert not set(train.x) & set(test.x)
    with pytest.raises(ValueError, match="split must be one of"):
        load_glosses("val")


def test_the_build_tool_reproduces_the_shipped_file():
    if not TOOL.is_file() or importlib.util.find_spec("robustsuite") is None:
        pytest.skip("tools/ or robustsuite's source data not present (package tested alone)")
    out = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "identical" in out.stdout, out.stdout + out.stderr


def test_naive_bayes_learns_and_meets_the_contract():
    train, test = load_glosses("train"), load_glosses("test")
    clf = WordNaiveBayes().fit(train.x, train.y)
    z = clf(test.x)
    assert z.shape == (320, 8) and np.allclose(np.exp(z).sum(axis=1), 1.0)  # log-posteriors
    acc = float((z.argmax(axis=1) == test.y).mean())
    # far above the majority share 1/8: the binomial tail of 0.3 at n = 320 under chance is < 1e-20
    assert acc > 0.3
    prior = clf.log_prior - np.logaddexp.reduce(clf.log_prior)
    assert np.allclose(clf(["qqqq zzzz"])[0], prior)  # unknown words are ignored: the prior
    with pytest.raises(TypeError, match="texts"):
        clf("a single string")
    with pytest.raises(ValueError, match="fitted"):
        WordNaiveBayes()(["x"])
    with pytest.raises(TypeError, match="labels"):
        WordNaiveBayes().fit(["a", "b"], [0.5, 1.0])
