"""Property-based probes of the input contract (issue 36): public functions of every package fed generated inputs,
good and bad (shapes, dtypes, values, seeds, budgets, labels, texts). Each call either returns a valid result or
raises a ValueError/TypeError whose message names an argument, and the model comes back unchanged. Small models and
few examples: the module runs in well under a minute."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustsuite_common.testing import snapshot

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)
K = 4


def _model() -> torch.nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8), torch.nn.BatchNorm1d(8),
                                   torch.nn.ReLU(), torch.nn.Linear(8, K)).train()


# --- generated inputs: mostly plausible, often broken -------------------------------------------------------------

@st.composite
def images(draw):
    n = draw(st.integers(0, 3))
    shape = draw(st.sampled_from([(n, 1, 4, 4), (n, 1, 4, 4), (n, 4, 4, 1), (n, 16), (n, 1, 4, 4, 1), (1, 4, 4)]))
    dtype = draw(st.sampled_from([torch.float32, torch.float32, torch.float64, torch.int64]))
    x = torch.rand(shape, generator=torch.Generator().manual_seed(draw(st.integers(0, 9))))
    scale = draw(st.sampled_from([1.0, 1.0, 255.0, -1.0]))
    x = (x * scale).to(dtype)
    if x.is_floating_point() and x.numel() and draw(st.booleans()):
        x.view(-1)[0] = draw(st.sampled_from([math.nan, math.inf, 0.5]))
    return x


def labels(n: int):
    good = st.lists(st.integers(0, K - 1), min_size=n, max_size=n).map(lambda v: torch.tensor(v, dtype=torch.long))
    bad = st.one_of(
        st.lists(st.integers(-2, K + 3), min_size=0, max_size=n + 1).map(lambda v: torch.tensor(v, dtype=torch.long)),
        st.just(torch.zeros(n)),  # float labels
        st.just(np.zeros((n, K), dtype=np.int64)))  # one-hot rows
    return st.one_of(good, good, bad)


seeds = st.one_of(st.integers(0, 10), st.integers(-3, 2**70), st.sampled_from([-1, 2**64, 1.5, True]))


def _valid_seed(seed) -> bool:
    return isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63
budgets = st.one_of(st.floats(0.0, 0.3), st.floats(allow_nan=True, allow_infinity=True))


def _check_outcome(call, names: set[str], model=None) -> object:
    """``call()``'s result, or its ValueError/TypeError when the message starts with one of the argument ``names``
    (a library's own message, e.g. numpy's or a codec's, fails the property); the model is checked unchanged."""
    before = None if model is None else snapshot(model)
    try:
        out = call()
    except (ValueError, TypeError) as e:
        msg = str(e)
        first = re.match(r"^([A-Za-z_]\w*)", msg)
        assert first and first.group(1) in names, f"{type(e).__name__} not naming an argument of {names}: {msg!r}"
        out = e
    if model is not None:
        before.assert_same(model)
    return out


# --- one property per package --------------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data(), x=images(), eps=budgets)
def test_certcal_beta_ace(data, x, eps):
    import certcal

    y = data.draw(labels(x.shape[0] if x.ndim else 0))
    model = _model()
    out = _check_outcome(lambda: certcal.BetaACE(steps=1)(model, x, y, eps), {"x", "y", "eps", "model"}, model)
    if not isinstance(out, Exception):
        assert out.x_adv.shape == x.shape and torch.all((out.x_adv >= 0) & (out.x_adv <= 1))


@SETTINGS
@given(x=images(), eps=budgets, seed=seeds, batch_size=st.integers(-1, 3))
def test_uncspan_uncertainty_span(x, eps, seed, batch_size):
    import uncspan

    model = _model()
    out = _check_outcome(lambda: uncspan.uncertainty_span(model, x, eps=eps, steps=1, seed=seed, batch_size=batch_size),
                         {"x", "eps", "seed", "batch_size", "model"}, model)
    if not isinstance(out, Exception):
        assert len(out.span) == x.shape[0] and np.all(np.isfinite(out.entropy_clean))


@SETTINGS
@given(data=st.data(), x=images(), eps=budgets, seed=seeds)
def test_transduct_play_game(data, x, eps, seed):
    import transduct_attack as ta

    y = data.draw(labels(x.shape[0] if x.ndim else 0))
    model = _model()
    out = _check_outcome(lambda: ta.play_game(ta.NoAttack(), ta.StaticDefense(model), x, y, eps=eps, batch_size=2,
                                              seed=seed), {"x", "y", "eps", "seed", "model"}, model)
    if not isinstance(out, Exception):
        assert 0.0 <= out.accuracy <= 1.0 and _valid_seed(seed)


@SETTINGS
@given(seed=seeds, defender_seed=st.one_of(st.none(), seeds))
def test_transduct_play_game_seeds(seed, defender_seed):
    """A valid game: only the seeds vary; an invalid seed is refused by name, never a numpy or torch error."""
    import transduct_attack as ta

    x = torch.rand(4, 1, 4, 4, generator=torch.Generator().manual_seed(0))
    model = _model()
    out = _check_outcome(lambda: ta.play_game(ta.NoAttack(), ta.StaticDefense(model), x, torch.tensor([0, 1, 2, 3]),
                                              eps=0.1, batch_size=2, seed=seed, defender_seed=defender_seed),
                         {"seed", "defender_seed"}, model)
    valid = _valid_seed(seed) and (defender_seed is None or _valid_seed(defender_seed))
    assert isinstance(out, Exception) != valid


@SETTINGS
@given(n_total=st.integers(-2, 12), n=st.integers(-2, 14), seed=seeds)
def test_transduct_draw_points(n_total, n, seed):
    from transduct_attack.repeats import draw_points

    out = _check_outcome(lambda: draw_points(n_total, n=n, seed=seed), {"n_total", "n", "seed"})
    if not isinstance(out, Exception):
        assert len(out) == n and len(set(out.tolist())) == n and int(out.max()) < n_total


@SETTINGS
@given(logits=st.lists(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=4),
                       min_size=0, max_size=4),
       temperature=st.one_of(st.sampled_from([1e-320, 1e-3, 1.0, 1e7, -1.0, math.nan]), st.floats(1e-3, 1e7)))
def test_iortemp_confidence_stats(logits, temperature):
    import iortemp

    z = np.array(logits, dtype=object)
    try:
        z = np.asarray(logits, dtype=np.float64)
    except ValueError:
        pass  # ragged rows: the function must refuse them
    out = _check_outcome(lambda: iortemp.confidence_stats(z, temperature=temperature), {"logits", "temperature"})
    if not isinstance(out, Exception):
        assert 0.0 <= out.min <= out.mean <= out.max <= 1.0 and math.isfinite(out.mean)


texts = st.lists(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0xDFFF), max_size=12), max_size=4)


@SETTINGS
@given(batch=st.one_of(texts, st.text(max_size=5)), p=st.floats(-0.5, 1.5), seed=st.one_of(st.integers(0, 99), seeds),
       start=st.one_of(st.integers(-2, 5), st.sampled_from([1.9, 0.0, True])))
def test_zeroe_perturb_batch(batch, p, seed, start):
    import zeroe_perturb as zp

    out = _check_outcome(lambda: zp.perturb_batch(batch, "truncate", p, seed=seed, start=start),
                         {"texts", "p", "seed", "start"})
    if not isinstance(out, Exception):
        assert isinstance(out, list) and len(out) == len(batch) and all(isinstance(t, str) for t in out)
        assert isinstance(start, int) and not isinstance(start, bool) and start >= 0, "a bad start was used"


@SETTINGS
@given(batch=st.one_of(texts, st.just(["good film", "bad", "fine plot", "no"])),
       label_list=st.one_of(st.lists(st.integers(-1, 2), max_size=5), st.lists(st.integers(0, 1), min_size=4,
                                                                                max_size=4)),
       metric=st.sampled_from(["accuracy", "auroc"]))
def test_zeroe_evaluate(batch, label_list, metric):
    import zeroe_perturb as zp

    def clf(items):
        return np.array([[len(t) % 3 - 1.0, 0.5 * (len(t) % 2)] for t in items])

    out = _check_outcome(lambda: zp.evaluate(clf, batch, label_list, attacks=["truncate"], levels=[0.5],
                                             metric=metric), {"texts", "labels", "classifier", "metric"})
    if not isinstance(out, Exception):
        assert 0.0 <= out.clean_score <= 1.0


@pytest.mark.parametrize("fn", ["certcal", "uncspan", "transduct"])
def test_a_valid_input_gives_a_result(fn):
    """The properties above are not vacuous: a plain valid call returns a result in each package."""
    import certcal
    import transduct_attack as ta
    import uncspan

    x = torch.rand(3, 1, 4, 4, generator=torch.Generator().manual_seed(0))
    y = torch.tensor([0, 1, 2])
    model = _model()
    call = {"certcal": lambda: certcal.BetaACE(steps=1)(model, x, y, 0.1),
            "uncspan": lambda: uncspan.uncertainty_span(model, x, eps=0.1, steps=1),
            "transduct": lambda: ta.play_game(ta.NoAttack(), ta.StaticDefense(model), x, y, eps=0.1, batch_size=2)}
    assert not isinstance(_check_outcome(call[fn], set(), model), Exception)
