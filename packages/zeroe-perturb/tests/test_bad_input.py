"""Bad input and input kinds (issue 15, item 5)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import zeroe_perturb as zp
from zeroe_perturb.benchmark import evaluate, predict_logits
from zeroe_perturb.cli import main

TEXTS = ["the movie was wonderful", "the movie was boring", "a lovely film", "a dull plot"]
LABELS = [1, 0, 1, 0]


def _keyword(texts):
    return np.array([[0.0, 2.0] if {"wonderful", "lovely"} & set(t.split()) else [2.0, 0.0] for t in texts])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_logits_are_rejected(bad):
    def broken(texts):
        z = _keyword(texts)
        z[0, 0] = bad
        return z

    with pytest.raises(ValueError, match="non-finite"):
        predict_logits(broken, TEXTS)
    with pytest.raises(ValueError, match="non-finite"):
        evaluate(broken, TEXTS, LABELS, attacks=["truncate"], levels=[0.5])


def test_evaluate_accepts_configured_attacker_instances():
    small = zp.Visual(k=3)
    res = evaluate(_keyword, TEXTS, LABELS, attacks=[small, "truncate"], levels=[0.8], seed=0)
    assert res.attacks == ("visual", "truncate")
    # the instance is used, not the default attacker of the same name
    default = evaluate(_keyword, TEXTS, LABELS, attacks=["visual"], levels=[0.8], seed=0)
    assert res.scores[0].attack == "visual" and np.isfinite(res.scores[0].relative)
    assert default.scores[0].attack == "visual"
    with pytest.raises(ValueError, match="attacks"):
        evaluate(_keyword, TEXTS, LABELS, attacks=[zp.Visual(k=3), "visual"])
    with pytest.raises((TypeError, ValueError), match="attacks"):
        evaluate(_keyword, TEXTS, LABELS, attacks=[3.5])


def test_map_dataset_supports_iterable_dataset_and_rejects_dataset_dict():
    datasets = pytest.importorskip("datasets")
    from zeroe_perturb.integrations import map_dataset

    lines = TEXTS * 3
    ds = datasets.Dataset.from_dict({"text": lines, "label": list(range(12))})
    it = ds.to_iterable_dataset()
    out = map_dataset(it, "text", "intrude", 0.5, seed=3, output_column="adv", batch_size=5)
    assert [r["adv"] for r in out] == zp.perturb_batch(lines, "intrude", 0.5, seed=3)
    with pytest.raises(TypeError, match="DatasetDict"):
        map_dataset(datasets.DatasetDict({"train": ds}), "text", "intrude", 0.5)


def test_cli_malformed_json_gives_a_clear_error_and_exit_2(tmp_path, capsys):
    src = tmp_path / "bad.jsonl"
    for content, message in (('{"text": "fine"}\n{"text": oops}\n', "line 2: invalid JSON"),
                             ('["text"]\n', "line 1: .*JSON object")):
        src.write_text(content, encoding="utf-8")
        with pytest.raises(SystemExit) as e:
            main(["--attack", "truncate", "-i", str(src), "-o", str(tmp_path / "o.jsonl")])
        err = capsys.readouterr().err
        assert e.value.code == 2 and re.search("zeroe-perturb: error: " + message, err), err
    assert not (tmp_path / "o.jsonl").exists()
