"""The Zéroe runner on the embedded defaults with tiny parameters."""

import json

import numpy as np

from robustsuite import runners
from robustsuite.runners import zeroe_perturb as runner


def test_zeroe_runner_section_is_well_formed(tmp_path):
    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, "n_test": 60, "levels": [0.2, 0.8], "n_train": 120, "epochs": 1,
              "one_one_attacks": ["intrude"], "loo_held_out": ["truncate"],
              "attacks": ["intrude", "truncate", "visual", "disemvowel"]}
    sec = runner.run(ctx, params)
    names = [t.name for t in sec.tables]
    assert names == ["levels", "ranking", "defense", "defense_ranking"]
    levels = sec.tables[0]
    assert [r[0] for r in levels.rows] == ["intrude", "truncate", "visual", "disemvowel"]
    for row in levels.rows:
        assert all(0.0 <= v <= 1.5 for v in row[1:3]) and all(v >= 0 for v in row[3:])
        assert row[3] < row[4]  # more characters changed at p = 0.8 than at p = 0.2
    assert 0.5 < sec.metrics["clean_score"] <= 1.0
    assert sec.metrics["mean_relative_high"] < 1.0  # attacks hurt the tiny model
    assert sorted(r[1] for r in sec.tables[1].rows) == sorted(levels.rows[i][0] for i in range(4))
    assert (tmp_path / sec.figures[0].path).is_file()
    assert np.isfinite(sec.metrics["mean_delta_one_one"]) and np.isfinite(sec.metrics["mean_delta_loo"])
    json.dumps(sec.metrics)
    # resume: finished sub-units are read back, giving the same section
    again = runner.run(ctx, params)
    assert again.tables[0].rows == levels.rows and again.tables[2].rows == sec.tables[2].rows
