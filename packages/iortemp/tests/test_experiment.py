"""iortemp.experiment: the paper's protocol through the package alone (the toy text model and the digits MLP),
at reduced size. Numbers are checked against independent recomputations from the per-sample records, against
the package's own calls, and against scipy's exact binomial test."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

import iortemp
from iortemp import experiment as ex
from robustsuite_common.config import ConfigError, from_dict, override, schema_rows, to_dict
from robustsuite_common.experiment import MemoryStore, Split
from robustsuite_common.testing import run_demo_with

SMALL = {"text": {"n_test": 30, "n_val": 20, "attacks": {"names": ["wordswap"], "seeds": [0, 1]}},
         "systems": {"search": {"attack": "wordswap", "max_evaluations": 3}},
         "sweep": {"attack": "wordswap", "temperatures": [1e-3, 1.0, 1e7]},
         "vision": {"n": 24, "steps": 3, "seeds": [0, 1], "eps": 0.3}}


def _data(corpus, digits=None) -> ex.Data:
    (xtr, ytr), (xva, yva), (xte, yte) = corpus
    names = ("neg", "pos")
    kw = {}
    if digits is not None:
        _, (xv, yv), (xt, yt) = digits
        kw = {"vision_test": Split(xt, yt, ids=tuple(range(1400, 1600))), "vision_val": Split(xv, yv)}
    return ex.Data(test=Split(xte, yte, ids=tuple(f"te-{i}" for i in range(len(xte))), label_names=names),
                   val=Split(xva, yva, label_names=names), train=Split(xtr, ytr, label_names=names), **kw)


@pytest.fixture(scope="module")
def result(tiny_text, corpus, digits_model):
    return run_demo_with(ex, ex.Models(text=tiny_text, vision=digits_model[0]), _data(corpus, digits_model), SMALL)


def test_demo_preset_at_reduced_size_gives_the_paper_tables(result):
    res, _, cfg = result
    assert list(res.tables) == ["headline", "ior_table", "ior_verdict", "confidence", "sweep", "vision_ior",
                                "paper_effects"]
    # the headline (drawn first in a report): clean accuracy against the best adversary's, per system and attack
    head, verdict = res.tables["headline"].records(), res.tables["ior_verdict"].records()
    assert [h["attacked"] for h in head] == [r["best of cal/opt"] for r in verdict]
    assert all(h["clean"] == 100 * res.value("clean_accuracy") for h in head)
    t = res.tables["ior_table"]
    assert [(r[0], r[1]) for r in t.rows] == [(s, m) for s in ("base", "↓conf", "↑conf") for m in ("-", "cal", "opt")]
    assert len({r[t.columns.index("clean")] for r in t.rows}) == 1  # temperatures never change predictions
    conf = {r[0]: r for r in res.tables["confidence"].rows}
    assert 50.0 < conf["↓conf"][4] < 50.001 and conf["↑conf"][4] > conf["base"][4]
    assert res.value("model_at_chance") is False and not res.warnings
    # the illusion: ↑conf looks more robust than base under the plain attack, and the adversary's temperature
    # brings it back to base (same texts: the verdict is paired)
    up = {r[1]: r[t.columns.index("wordswap")] for r in t.rows if r[0] == "↑conf"}
    base = {r[1]: r[t.columns.index("wordswap")] for r in t.rows if r[0] == "base"}
    assert up["-"] > base["-"] and min(up["cal"], up["opt"]) == pytest.approx(base["-"])
    assert res.illusion("up_conf") and not res.illusion("base")
    json.dumps(res.to_dict())
    assert ex.Result.from_dict(json.loads(json.dumps(res.to_dict()))).to_dict() == res.to_dict()
    for _ in range(2):  # a second call too: importing the drawing code must not replace the function
        assert [f.name for f in ex.figures(res)] == ["accuracy-bars", "qt-sweep", "vision-pgd-autoattack"]


def test_paper_effects_are_the_results_own_numbers_with_the_rules_verdicts(result):
    from iortemp.experiment.effects import effects_spec, measure_effects
    from robustsuite_common.effects import recheck_paper_effects

    res, _, cfg = result
    table = res.tables["paper_effects"]
    assert len(table.rows) >= 3
    assert recheck_paper_effects(table, effects_spec(), measure_effects(res.metrics)) == []
    # DDi-AT is off in this config: its row alone is not tested; ↑conf's illusion and its removal by T_cal are
    # measured on the same texts (paired)
    verdicts = dict(zip((e.key for e in effects_spec()), table.column("verdict"), strict=True))
    assert verdicts["ddi_at_illusion"] == "not tested" and list(verdicts.values()).count("not tested") == 1
    assert verdicts["up_conf_illusion"] != "not reproduced" and verdicts["cal_removes_up_conf"] != "not reproduced"
    # "drop > threshold" as a test: the paired interval above the threshold, never flagged without the estimate
    for key, m in res.metrics.items():
        if key.startswith("ior_exceeds_"):
            drop = res.metric("ior_drop_" + key[len("ior_exceeds_"):])
            assert m.value == (drop.interval.low > cfg.threshold)
            assert not m.value or res.value("ior_" + key[len("ior_exceeds_"):])


def test_table_and_verdict_recomputed_from_the_per_sample_records(result, corpus):
    res, _, cfg = result
    recs = res.records["text"]
    _, _, (xte, yte) = corpus
    assert len(recs) == 30 * 3 * 3 * 2  # texts × systems × modes × seeds
    first = recs[0]
    assert first["id"] == "te-0" and first["input"] == xte[0] and first["label"] == ("neg", "pos")[yte[0]]
    assert isinstance(first["adv_input"], str) and 0.5 <= first["confidence"] <= 1
    t = res.tables["ior_table"]
    lab = {"base": "base", "down_conf": "↓conf", "up_conf": "↑conf"}
    for row in t.rows:
        sys_key = next(k for k, v in lab.items() if v == row[0])
        mode = "plain" if row[1] == "-" else row[1]
        sel = [r for r in recs if r["system"] == sys_key and r["mode"] == mode]
        per_seed = [np.mean([r["adv_correct"] for r in sel if r["seed"] == s]) for s in (0, 1)]
        assert 100 * np.mean(per_seed) == pytest.approx(row[t.columns.index("wordswap")])
        assert all(r["adv_correct"] == (r["label"] == r["prediction"] == r["adv_prediction"]) for r in sel)
    # McNemar by hand (scipy's exact binomial test on the discordant texts), the largest p over the seeds
    v = {(r[0], r[1]): dict(zip(res.tables["ior_verdict"].columns, r, strict=True))
         for r in res.tables["ior_verdict"].rows}
    for key, name in lab.items():
        row = v[(name, "wordswap")]
        ps = []
        for s in (0, 1):
            def outcomes(mode, s=s, key=key):
                return np.array([r["adv_correct"] for r in recs if r["system"] == key and r["mode"] == mode
                                 and r["seed"] == s])
            a, b = outcomes("plain"), outcomes(row["best adversary"])
            k, m = int((a & ~b).sum()), int((a & ~b).sum() + (~a & b).sum())
            ps.append(1.0 if m == 0 else binomtest(k, m, 0.5).pvalue)
        assert row["McNemar p"] == pytest.approx(max(ps))
        assert row["drop_ci_low"] <= row["drop"] <= row["drop_ci_high"]
        assert row["resolved"] == (row["illusion"] and max(ps) < 0.05 and row["drop_ci_low"] > 0)


def test_vision_shows_pgd_beside_autoattack_on_the_same_points(result, digits_model):
    res, _, cfg = result
    net, _, (xt, yt) = digits_model
    vt = res.tables["vision_ior"]
    rows = {r[0].split(" ")[0]: dict(zip(vt.columns, r, strict=True)) for r in vt.rows}
    up = rows["↑conf"]
    # standard AutoAttack through the package API on the served ↑conf system gives the table's column
    aa = iortemp.robust_accuracy(iortemp.TemperatureScaled(net, temperature=0.005), xt[:24], yt[:24], attack="autoattack",
                                 eps=0.3, seed=cfg.seed)
    assert up["robust accuracy (AutoAttack)"] == pytest.approx(100 * aa.value)
    assert "AutoAttack (standard" in aa.attack
    # PGD is fooled by the temperature, AutoAttack is not: the sanity flag, with both numbers in the summary
    assert up["plain PGD"] > up["robust accuracy (AutoAttack)"] and up["PGD fooled"] is True
    assert up["PGD − AutoAttack_ci_low"] > 0 and res.value("vision_pgd_fooled_up_conf") is True
    assert f"{up['plain PGD']:.1f} % robust where standard AutoAttack leaves" in res.summary
    assert rows["base"]["robust accuracy (AutoAttack)"] <= rows["base"]["plain PGD"]
    assert "PGD-3" in vt.title and res.metric("vision_robust_accuracy_up_conf").label.startswith("robust accuracy")
    recs = res.records["vision"]
    assert recs[0]["id"] == 1400 and recs[0]["input"] == "vision_test[0]" and recs[0]["adv_input"] is None
    attacks = {r["attack"] for r in recs}
    assert len(attacks) == 2 and "PGD-3 (L∞ 0.3, random start)" in attacks
    assert any(a.startswith("AutoAttack (standard, L∞ 0.3), pyautoattack") for a in attacks)


def test_store_resumes_an_interrupted_run_without_attacking_again(tiny_text, corpus, monkeypatch):
    cfg = from_dict(ex.Config, {"text": {"n_test": 6, "n_val": 6, "attacks": {"names": ["wordswap"], "seeds": [0]}},
                                "systems": {"search": {"attack": "wordswap", "max_evaluations": 2}},
                                "sweep": {"enabled": False, "attack": "wordswap"}}, base=ex.preset("demo"))
    models, data = ex.Models(text=tiny_text), _data(corpus)
    calls = []
    real = iortemp.experiment._store.evaluate_attack

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(iortemp.experiment._store, "evaluate_attack", counting)
    full = ex.run(models, data, cfg, progress=False)  # store=None: nothing kept
    total = len(calls)

    class Dies(MemoryStore):  # the run is killed after four attack runs were checkpointed
        def put(self, key, value):
            if key.startswith("iortemp/eval/") and sum(k.startswith("iortemp/eval/") for k in self.data) == 4:
                raise KeyboardInterrupt
            super().put(key, value)

    store = Dies()
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        ex.run(models, data, cfg, store=store, progress=False)
    resumed = MemoryStore()
    resumed.data = dict(store.data)
    calls.clear()
    again = ex.run(models, data, cfg, store=resumed, progress=False)
    assert len(calls) == total - 4 and again.to_dict() == full.to_dict()
    calls.clear()
    assert ex.run(models, data, cfg, store=resumed, progress=False).to_dict() == full.to_dict() and not calls
    assert all(k.startswith("iortemp/") for k in resumed.data)


class _Constant:
    """A text classifier that always answers class 0 (at chance on balanced data), with the toy's tokenizer."""

    def __init__(self, clf):
        self.model, self.tokenizer = clf.model, clf.tokenizer

    def __call__(self, texts):
        return np.tile(np.array([[0.3, 0.0]], dtype=np.float32), (len(list(texts)), 1))


def test_a_model_at_chance_is_flagged_and_its_attack_numbers_called_uninformative(tiny_text, corpus):
    cfg = from_dict(ex.Config, {"text": {"n_test": 20, "n_val": 8, "attacks": {"names": ["wordswap"], "seeds": [0]}},
                                "systems": {"search": {"attack": "wordswap", "max_evaluations": 1}},
                                "sweep": {"enabled": False, "attack": "wordswap"}}, base=ex.preset("demo"))
    res = ex.run(ex.Models(text=_Constant(tiny_text)), _data(corpus), cfg, progress=False)
    assert res.value("model_at_chance") is True
    acc = res.metric("clean_accuracy")
    assert acc.interval.low <= res.value("majority_share")
    assert res.warnings and "at chance" in res.warnings[0] and "carry no information" in res.warnings[0]
    assert res.summary.startswith("The text model is at chance")


def test_ddi_at_transfer_and_the_normalisation_ablation(tiny_text, corpus):
    cfg = from_dict(ex.Config, {
        "text": {"n_test": 8, "n_val": 8, "attacks": {"names": ["wordswap"], "seeds": [0]}},
        "systems": {"search": {"attack": "wordswap", "max_evaluations": 1}},
        "sweep": {"enabled": False, "attack": "wordswap"},
        "ddi_at": {"enabled": True, "train_size": 32, "epochs": 1, "batch_size": 16, "m": 2, "k": 1},
        "ablation": {"enabled": True, "settings": ["normalise", "none"], "seeds": [0]}}, base=ex.preset("demo"))
    before = {k: v.clone() for k, v in tiny_text.model.state_dict().items()}
    store = MemoryStore()
    res = ex.run(ex.Models(text=tiny_text), _data(corpus), cfg, store=store, progress=False)
    assert all(torch.equal(v, tiny_text.model.state_dict()[k]) for k, v in before.items())  # base untouched
    t = res.tables["ior_table"]
    assert {r[0] for r in t.rows} == {"base", "↓conf", "↑conf", "ddi-at"}
    tr = res.tables["transfer"]
    assert [r[:2] for r in tr.rows] == [("base", "base"), ("ddi-at", "ddi-at"), ("ddi-at", "base")]
    assert [r[0] for r in res.tables["ddi_normalization"].rows] == ["base", "normalise", "none"]
    assert any(k.endswith("-weights") for k in store.data)  # the fine-tuned weights are checkpointed
    # a rerun reads the weights instead of training again
    again = ex.run(ex.Models(text=tiny_text), _data(corpus), cfg, store=store, progress=False)
    assert again.tables["ior_table"] == t


# the umbrella runner's DEFAULTS before the redesign (the demo preset must keep them)
OLD_DEFAULTS = {
    "n_test": 40, "n_val": 40, "attacks": ["deepwordbug", "pwws"], "wordnet": None, "embedding": None,
    "masked_lm": None, "seeds": [0, 1, 2], "vision_seeds": [0, 1, 2], "opt_attack": "deepwordbug",
    "max_evaluations": 5, "modes": ["plain", "cal", "opt"], "design_temperatures": {"down_conf": 2e6, "up_conf": 0.005},
    "calibration": "exact", "cache_logits": True, "ddi_at": False, "ddi_train_size": 800, "ddi_epochs": 10,
    "ddi_lr": 1e-3, "ddi_batch_size": 8, "ddi_m": 3, "ddi_k": 3, "ddi_normalization": "normalise",
    "ddi_adv_scale": "embedding", "ddi_table": False, "ddi_table_settings": ["normalise", "clip", "none"],
    "ddi_table_seeds": [0, 1, 2], "wordswap_neighbours": 8, "sweep_attack": "deepwordbug",
    "sweep_temperatures": [1e-3, 1e-1, 1.0, 1e1, 1e7], "threshold": 0.05, "vision_n": 200, "vision_eps": 0.1,
    "vision_steps": 10, "vision_random_start": True,
}
WHERE = {"n_test": "text.n_test", "n_val": "text.n_val", "attacks": "text.attacks.names",
         "wordnet": "text.attacks.wordnet", "embedding": "text.attacks.embedding", "masked_lm": "text.attacks.masked_lm",
         "seeds": "text.attacks.seeds", "vision_seeds": "vision.seeds", "opt_attack": "systems.search.attack",
         "max_evaluations": "systems.search.max_evaluations", "modes": "systems.modes",
         "design_temperatures": "systems.design_temperatures", "calibration": "systems.calibration",
         "cache_logits": "text.attacks.cache_logits", "ddi_at": "ddi_at.enabled", "ddi_train_size": "ddi_at.train_size",
         "ddi_epochs": "ddi_at.epochs", "ddi_lr": "ddi_at.lr", "ddi_batch_size": "ddi_at.batch_size", "ddi_m": "ddi_at.m",
         "ddi_k": "ddi_at.k", "ddi_normalization": "ddi_at.normalization", "ddi_adv_scale": "ddi_at.adv_scale",
         "ddi_table": "ablation.enabled", "ddi_table_settings": "ablation.settings", "ddi_table_seeds": "ablation.seeds",
         "wordswap_neighbours": "text.attacks.wordswap_neighbours", "sweep_attack": "sweep.attack",
         "sweep_temperatures": "sweep.temperatures", "threshold": "threshold", "vision_n": "vision.n",
         "vision_eps": "vision.eps", "vision_steps": "vision.steps", "vision_random_start": "vision.random_start"}


def test_demo_preset_is_the_former_demo_and_presets_validate():
    demo = to_dict(ex.preset("demo"))
    for old, path in WHERE.items():
        value = demo
        for part in path.split("."):
            value = value[part]
        assert value == OLD_DEFAULTS[old], (old, path, value)
    assert sorted(ex.PRESETS) == ["audit", "demo", "paper", "paper-cpu"]
    paper = ex.preset("paper")
    assert paper.systems.calibration == "gd" and paper.ddi_at.lr == 1e-5 and paper.ddi_at.epochs == 5
    assert "platt" in paper.systems.modes and set(paper.text.attacks.names) == {"bae", "textfooler", "pwws",
                                                                                "deepwordbug"}
    with pytest.raises(ValueError, match="preset must be one of"):
        ex.preset("papr")
    for bad, match in (({"sweep": {"attack": "bae"}}, "sweep.attack must be one of"),
                       ({"systems": {"modes": ["plain", "cal", "platt"]}}, "modes must hold plain, cal and opt"),
                       ({"systems": {"design_temperatures": {"up_conf": 1e-4}}}, "up_conf"),
                       ({"text": {"attacks": {"seeds": [0, 0]}}}, "must not repeat"),
                       ({"vision": {"eps": float("inf")}}, "vision.eps"),
                       ({"text": {"attacks": {"names": ["hotflip"]}}}, "names")):
        with pytest.raises(ConfigError, match=match):
            from_dict(ex.Config, bad, base=ex.preset("demo"))
    rows = schema_rows(ex.Config)
    assert all(r["description"] for r in rows), [r["path"] for r in rows if not r["description"]]
    assert override(ex.preset("demo"), text__n_test=60).text.n_test == 60
    assert ex.paper_values()["table3"]["up_conf"]["plain"]["pwws"] == [59.29, 0.62]
    with pytest.warns(DeprecationWarning, match="paper_values"):
        assert ex.reference() == ex.paper_values()


def test_bad_inputs_are_refused_before_any_work(tiny_text, corpus, digits_model, counting_text):
    counting = counting_text(tiny_text)
    cfg = ex.preset("demo")
    good = _data(corpus)
    cases = [
        (ex.Models(text=counting), good, "demo", TypeError, "config"),
        ({"text": counting}, good, cfg, TypeError, "models"),
        (ex.Models(text=counting), {"test": good.test}, cfg, TypeError, "data"),
        (ex.Models(text=digits_model[0]), good, cfg, TypeError, "models.text"),
        (ex.Models(text=counting), ex.Data(test=Split("great food", [1] * 10), val=good.val), cfg, TypeError,
         "data.test.x"),
        (ex.Models(text=counting), ex.Data(test=good.test, val=Split(good.val.x, np.zeros(150) + 0.5)), cfg,
         TypeError, "data.val.y"),
        (ex.Models(text=counting), ex.Data(test=good.test, val=good.val), override(cfg, ddi_at__enabled=True),
         ValueError, "data.train"),
        (ex.Models(text=counting, vision=digits_model[0]), good, cfg, ValueError, "data.vision_test"),
        (ex.Models(text=counting, vision=digits_model[0]),
         ex.Data(test=good.test, val=good.val, vision_test=Split(digits_model[2][0] * 255, digits_model[2][1]),
                 vision_val=Split(*digits_model[1])), cfg, ValueError, "data.vision_test.x"),
    ]
    for models, data, c, err, name in cases:
        with pytest.raises(err, match=name.replace(".", r"\.")):
            ex.run(models, data, c, progress=False)
    assert counting.calls == 0


def test_data_from_datasets_names_the_labels_with_the_users_names_first():
    """The experiment fills a split's label names from its dataset's classes (the umbrella copied this before)."""
    from types import SimpleNamespace

    named = Split(["a", "b"], np.array([0, 1]), label_names=("neg", "pos"))
    bare = Split(["c", "d"], np.array([1, 0]))
    text = SimpleNamespace(train=bare, val=named, test=bare, classes=["negative", "positive"])
    images = SimpleNamespace(train=bare, val=bare, test=bare, classes=("zero", "one"))
    data = ex.Data.from_datasets(text=text, vision=images)
    assert data.train.label_names == data.test.label_names == ("negative", "positive")
    assert data.val.label_names == ("neg", "pos")  # the names the user wrote win
    assert data.vision_test.label_names == data.vision_val.label_names == ("zero", "one")
    assert ex.Data.from_datasets(vision=images).test is None
    assert ex.Result.title == ex.TITLE
