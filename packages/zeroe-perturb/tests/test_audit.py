"""The verdict's ``zeroe-noise`` check (zeroe_perturb.audit): the rule at its boundaries, the statistic against a
closed form and a normal-approximation interval, the shipped WordNet-gloss model's outcome at three noise levels,
and the experiment's ``audit`` preset giving the same check as the function."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robustsuite_common.config import ConfigError, override
from robustsuite_common.intervals import Interval
from zeroe_perturb import experiment as ex
from zeroe_perturb import noise_check
from zeroe_perturb.audit import HUMAN_READABLE_ATTACKS, noise_check_from, noise_status
from zeroe_perturb.glosses import WordNaiveBayes, load_glosses

EPS = 1e-9


def iv(est, lo, hi):
    return Interval(est, lo, hi)


@pytest.fixture(scope="module")
def shipped():
    """The package's shipped model and data: naive Bayes fitted on the WordNet training glosses, 100 test glosses
    drawn with seed 0."""
    tr, te = load_glosses("train"), load_glosses("test")
    clf = WordNaiveBayes().fit(tr.x, tr.y, n_classes=len(tr.label_names))
    idx = np.random.default_rng(0).choice(len(te.x), 100, replace=False)
    return clf, te.select(idx)


# --- the rule at its boundaries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("low, status", [(0.2 + EPS, "warn"), (0.2, "pass"), (0.2 - EPS, "pass")])
def test_warn_exactly_when_the_drops_interval_lies_above_max_drop(low, status):
    got, why = noise_status(iv(0.3, low, 0.4), iv(0.5, 0.4, 0.6), False, 0.125, max_drop=0.2)
    assert got == status, why


@pytest.mark.parametrize("low, status", [(0.125, "fail"), (0.125 - EPS, "fail"), (0.125 + EPS, "warn")])
def test_fail_exactly_when_the_noisy_accuracys_interval_reaches_chance(low, status):
    got, why = noise_status(iv(0.6, 0.5, 0.7), iv(0.2, low, 0.3), False, 0.125, max_drop=0.2)
    assert got == status, why


def test_a_model_at_chance_on_clean_texts_is_not_applicable():
    got, why = noise_status(iv(0.9, 0.8, 1.0), iv(0.1, 0.0, 0.2), True, 0.125, max_drop=0.2)
    assert got == "not-applicable" and "clean accuracy is at chance" in why


def test_statistic_is_the_relative_drop_of_eq1_with_a_paired_interval():
    """200 texts all right when clean; under 4 attackers text i keeps (i mod 5) of its copies right (ā_i = 0, .25,
    .5, .75, 1 in turn): s(p) = 0.5, so 1 − s*(p) = 0.5; the interval is close to the normal one, ±1.96·sd/√n."""
    n = 200
    clean = np.ones(n, dtype=bool)
    noisy = np.array([[j < i % 5 for j in range(4)] for i in range(n)])
    c = noise_check_from(clean, noisy, ["a", "b", "c", "d"], 0.125, level=0.3, n_boot=2000)
    abar = noisy.mean(axis=1)
    assert c.statistic == pytest.approx(1 - abar.mean() / clean.mean()) == pytest.approx(0.5)
    half = 1.96 * abar.std(ddof=1) / np.sqrt(n)
    assert c.interval[0] == pytest.approx(0.5 - half, abs=0.01) and c.interval[1] == pytest.approx(0.5 + half, abs=0.01)
    assert (c.id, c.group, c.status, c.n) == ("zeroe-noise", "lenses", "warn", n)  # [0.46, 0.54] lies above 0.2
    # the boundary of the rule on the real interval: a threshold just below its lower end warns, at it passes
    assert noise_check_from(clean, noisy, list("abcd"), 0.125, level=0.3, max_drop=c.interval[0] - EPS).status == "warn"
    assert noise_check_from(clean, noisy, list("abcd"), 0.125, level=0.3, max_drop=c.interval[0]).status == "pass"
    # the most harmful attacker (column d: right only where i mod 5 = 4, 20 %) is named in the detail, not the rule
    assert "most harmful attacker d: accuracy 0.200, relative drop 0.800" in c.detail


def test_the_drop_is_relative_to_the_clean_accuracy_on_the_same_texts():
    """Half the texts right when clean and the same half under noise: nothing lost (drop 0), whatever the clean
    accuracy; a paired interval of zero width."""
    clean = np.arange(100) % 2 == 0
    noisy = np.repeat(clean[:, None], 3, axis=1)
    c = noise_check_from(clean, noisy, ["x", "y", "z"], 0.125, level=0.3)
    assert c.statistic == 0.0 and c.interval == (0.0, 0.0) and c.status == "pass"


# --- the shipped model ---------------------------------------------------------------------------------------------


def test_shipped_gloss_model_passes_at_p_03_and_the_rule_bites_at_higher_noise(shipped):
    clf, sp = shipped
    texts, y = list(sp.x), sp.y
    c = noise_check(clf, texts, y, n_boot=500)
    assert c.status == "pass" and c.n == 100
    assert c.statistic == pytest.approx(0.1254, abs=1e-3)  # s(0) 0.62, s(0.3) 0.542 over the nine attackers
    assert "inner-shuffle" in c.rule and "full-shuffle" not in c.rule
    warn = noise_check(clf, texts, y, level=0.5, attacks=["visual", "intrude", "disemvowel"], n_boot=500)
    assert warn.status == "warn" and warn.interval[0] > 0.2 and warn.next_step
    fail = noise_check(clf, texts, y, level=0.8, attacks=["visual", "intrude", "disemvowel"], n_boot=500)
    assert fail.status == "fail" and "reaches the chance score 0.170" in fail.detail


def test_same_seed_same_check_any_batch_size_and_the_model_untouched(shipped):
    clf, sp = shipped
    texts, y = list(sp.x)[:40], sp.y[:40]
    before = (dict(clf.vocab), clf.log_lik.copy(), clf.log_prior.copy())
    a = noise_check(clf, texts, y, attacks=["truncate", "visual"], n_boot=200)
    b = noise_check(clf, texts, y, attacks=["truncate", "visual"], n_boot=200, batch_size=7)
    assert a == b
    assert clf.vocab == before[0] and np.array_equal(clf.log_lik, before[1]) and np.array_equal(clf.log_prior,
                                                                                                before[2])


@pytest.mark.parametrize("kw, exc, word", [({"level": 0.0}, ValueError, "level"), ({"level": 1.5}, ValueError, "level"),
                                           ({"attacks": ["typo"]}, ValueError, "attacks"),
                                           ({"attacks": "visual"}, TypeError, "attacks"),
                                           ({"max_drop": 2.0}, ValueError, "max_drop"),
                                           ({"n_boot": 10}, ValueError, "n_boot")])
def test_bad_hyper_parameters_are_refused_by_name(kw, exc, word):
    calls = []
    with pytest.raises(exc, match=word):
        noise_check(lambda b: calls.append(1) or np.zeros((len(b), 2)), ["a b c"], [0], **kw)
    assert calls == []


def test_labels_beyond_the_models_classes_are_refused_after_the_clean_pass():
    with pytest.raises(ValueError, match=r"labels must be class indices < the model's 2 classes, got 5"):
        noise_check(lambda b: np.zeros((len(b), 2)), ["a b c", "d e f"], [0, 5])


# --- the experiment's audit preset ---------------------------------------------------------------------------------


def test_audit_preset_gives_the_functions_check_in_result_checks(shipped):
    clf, sp = shipped
    cfg = override(ex.preset("audit"), {"classification.n": None, "seeds.n_boot": 500})
    assert cfg.attack.attacks == HUMAN_READABLE_ATTACKS and cfg.attack.levels == (0.3,) and cfg.audit.enabled
    assert not (cfg.pairs.enabled or cfg.multilabel.enabled or cfg.tagging.enabled or cfg.defense.enabled)
    res = ex.run(ex.Models(classifier=clf), ex.Data(classification=sp), cfg, progress=False)
    assert res.checks == (noise_check(clf, list(sp.x), sp.y, n_boot=500, evidence=res.checks[0].evidence),)
    back = ex.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.checks == res.checks and back.to_dict() == res.to_dict()
    lo, hi = res.checks[0].interval
    assert res.summary.endswith(f"Check zeroe-noise: pass (relative drop 0.125 [{lo:.3f}, {hi:.3f}] does not lie "
                                "above 0.2 and the accuracy under noise stays above chance).")
    # the other presets compute no check, and say so with an empty list
    assert ex.Result.from_dict({**res.to_dict(), "checks": []}).checks == ()


def test_the_audit_reads_accuracy_when_the_tables_use_auroc(toy):
    """A binary classifier scored by AUROC in the tables: the check still reads accuracy, against the
    majority-class share (not AUROC's 0.5), and equals the function's."""
    models, data = toy(n=60)
    cfg = override(ex.preset("audit"), {"classification.n": None, "classification.metric": "auroc",
                                        "seeds.n_boot": 300, "attack.attacks": ["truncate", "visual"]})
    res = ex.run(ex.Models(classifier=models.classifier), ex.Data(classification=data.classification), cfg,
                 progress=False)
    sp = data.classification
    direct = noise_check(models.classifier, list(sp.x), sp.y, attacks=["truncate", "visual"], n_boot=300,
                         evidence=res.checks[0].evidence)
    assert res.checks == (direct,)
    assert f"chance {np.bincount(sp.y).max() / len(sp.y):.3f}" in direct.detail


def test_audit_level_must_be_one_of_the_attack_levels():
    with pytest.raises((ConfigError, ValueError), match="audit.level"):
        override(ex.preset("audit"), {"audit.level": 0.5})
