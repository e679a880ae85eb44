"""The iortemp runner on tiny parameters: a well-formed section with sane numbers, resumable."""

import json

import pytest

from robustsuite.report import Section
from robustsuite.runners import RunContext
from robustsuite.runners import iortemp as runner

TINY = {
    "n_test": 16, "n_val": 16, "attacks": ["wordswap"], "opt_attack": "wordswap", "max_evaluations": 3,
    "ddi_train_size": 32, "ddi_epochs": 1, "ddi_batch_size": 16, "ddi_k": 1, "ddi_m": 2,
    "sweep_temperatures": [1e-3, 1.0, 1e7], "vision_n": 60, "vision_steps": 3, "modes": ["plain", "cal", "opt", "platt"],
}


@pytest.mark.slow
def test_runner_section_well_formed_and_resumable(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    sec = runner.run(ctx, {**runner.DEFAULTS, **TINY})
    assert isinstance(sec, Section)
    json.dumps(sec.to_dict())
    names = {t.name for t in sec.tables}
    assert {"ior_table", "ior_verdict", "confidence", "transfer", "vision_ior"} <= names
    tab = next(t for t in sec.tables if t.name == "ior_table")
    assert len(tab.rows) == 4 * 4  # base, ↓conf, ↑conf, ddi-at × plain / cal / opt / platt
    cols = tab.columns
    assert {"wordswap_ci_low", "wordswap_ci_high"} <= set(cols)
    for row in tab.rows:
        clean, adv = row[3], row[cols.index("wordswap")]
        assert 0 <= row[cols.index("wordswap_ci_low")] <= adv <= row[cols.index("wordswap_ci_high")] <= 100
        assert adv <= clean <= 100
    base_plain = next(r for r in tab.rows if r[0] == "base" and r[1] == "-")
    assert base_plain[cols.index("wordswap")] < base_plain[3]  # the attack attacks (fails for a reversed adversary)
    vis = next(t for t in sec.tables if t.name == "vision_ior")
    vbase = next(r for r in vis.rows if r[0] == "base")
    assert vbase[vis.columns.index("plain PGD")] < vbase[vis.columns.index("clean")]
    cleans = {row[3] for row in tab.rows if row[0] != "ddi-at"}
    assert len(cleans) == 1  # design temperatures never change predictions
    conf = {r[0]: r for r in next(t for t in sec.tables if t.name == "confidence").rows}
    assert 50.0 < conf["↓conf"][2] < 50.001 and conf["↑conf"][2] > conf["base"][2]
    assert (tmp_path / sec.figures[0].path).exists()
    assert isinstance(sec.metrics["ior_up_conf"], bool)
    # resume: a second run reuses the checkpointed units and gives the same section
    again = runner.run(RunContext(run_dir=tmp_path, method=runner.NAME, seed=0), {**runner.DEFAULTS, **TINY})
    assert again.tables == sec.tables
