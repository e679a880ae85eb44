"""The Zéroe runner on the embedded defaults with tiny parameters."""

import json

import numpy as np
import pytest

from robustsuite import runners
from robustsuite.runners import zeroe_perturb as runner


def test_zeroe_runner_section_is_well_formed(tmp_path):
    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, "n_test": 60, "levels": [0.2, 0.8], "n_train": 120, "epochs": 1,
              "one_one_attacks": ["intrude"], "loo_held_out": ["truncate"],
              "attacks": ["intrude", "truncate", "visual", "disemvowel"], "n_seeds": 2}
    sec = runner.run(ctx, params)
    names = [t.name for t in sec.tables]
    assert names == ["levels", "ranking", "defense", "defense_ranking"]
    levels = sec.tables[0]
    assert [r[0] for r in levels.rows] == ["intrude", "truncate", "visual", "disemvowel"]
    for row in levels.rows:
        assert all(0.0 <= v <= 1.5 for v in row[1:3]) and all(v >= 0 for v in row[3:5])
        assert row[3] < row[4]  # more characters changed at p = 0.8 than at p = 0.2
        for k in (5, 8):  # mean s*(p) over the seeds inside its interval
            assert row[k + 1] <= row[k] <= row[k + 2]
    assert levels.columns[5:8] == ["mean s*(0.2)", "mean s*(0.2)_ci_low", "mean s*(0.2)_ci_high"]
    assert sec.metrics["n_seeds"] == 2 and 0 < sec.metrics["chance_relative"] < 1
    assert 0.5 < sec.metrics["clean_score"] <= 1.0
    assert sec.metrics["mean_relative_high"] < 1.0  # attacks hurt the tiny model
    assert sorted(r[1] for r in sec.tables[1].rows) == sorted(levels.rows[i][0] for i in range(4))
    assert len(sec.figures) == 2 and all((tmp_path / f.path).is_file() for f in sec.figures)
    assert np.isfinite(sec.metrics["mean_delta_one_one"]) and np.isfinite(sec.metrics["mean_delta_loo"])
    json.dumps(sec.metrics)
    # resume: finished sub-units are read back, giving the same section
    again = runner.run(ctx, params)
    assert again.tables[0].rows == levels.rows and again.tables[2].rows == sec.tables[2].rows


@pytest.mark.slow
def test_textattack_greedy_wir_with_stopwords_on_the_builtin_text_model(tmp_path):
    """A full ``textattack.Attack`` (goal function + constraints + greedy WIR) with a Zéroe transformation
    on builtin:text-tiny: it flips some correctly classified test texts and never edits a stopword."""
    import importlib.util

    if importlib.util.find_spec("textattack") is None:  # not importorskip: the offline shim must run first
        pytest.skip("textattack not installed")
    from zeroe_perturb._textattack_compat import ENGLISH_STOPWORDS, import_textattack
    from zeroe_perturb.integrations import textattack_transformation

    ta = import_textattack()
    from textattack import Attack
    from textattack.attack_results import SkippedAttackResult, SuccessfulAttackResult
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR

    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    clf = ctx.model("builtin:text-tiny")
    split = ctx.dataset("builtin:sentiment-mini").test

    class Wrapper(ta.models.wrappers.ModelWrapper):
        model = None

        def __call__(self, texts):
            return np.asarray(clf(list(texts)))

    stop = set(ENGLISH_STOPWORDS)
    attack = Attack(UntargetedClassification(Wrapper()), [RepeatModification(), StopwordModification(stop)],
                    textattack_transformation("intrude", phi=0.5, n_candidates=3, seed=0),
                    GreedyWordSwapWIR(wir_method="delete"))
    results = [attack.attack(split.x[i], int(split.y[i])) for i in range(12)]
    done = [r for r in results if not isinstance(r, SkippedAttackResult)]
    ok = [r for r in done if isinstance(r, SuccessfulAttackResult)]
    assert done and ok
    from collections import Counter

    for r in ok:  # every stopword occurrence of the input is still there (intrude may split other words)
        before = Counter(r.original_result.attacked_text.words)
        after = Counter(r.perturbed_result.attacked_text.words)
        assert all(after[w] >= n for w, n in before.items() if w in stop), (r.original_result.attacked_text.text,
                                                                            r.perturbed_result.attacked_text.text)
