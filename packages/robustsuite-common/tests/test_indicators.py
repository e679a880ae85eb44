"""The verdict's indicators: every rule at its boundary on recorded numbers, and the probes on tiny models whose
failure is known by construction (quantised inputs, noise in eval mode, autograd in the forward pass, a linear model
whose FGSM outcome has a closed form)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from robustsuite_common.indicators import (
    ALPHA,
    AutoAttackOutcome,
    Probes,
    attack_checks,
    pgd,
    probe,
    validity_checks,
)
from robustsuite_common.testing import transformed


def outcome(robust, *, after=None, reported=None, flags=(), version="standard"):
    robust = [bool(v) for v in robust]
    return AutoAttackOutcome(robust, [True] * len(robust), "test attack", version,
                             after if after is not None else {"clean": len(robust), "apgd-ce": sum(robust),
                                                              "apgd-t": sum(robust), "fab-t": sum(robust),
                                                              "square": sum(robust)},
                             tuple(flags), reported if reported is not None else list(robust))


def probes(n, *, robust, pgd_=None, fgsm=None, sweep=None, doubled=None, large=None, zero=None, change=0.0,
           calls=0, probs=0, eps=0.1):
    r = [bool(v) for v in robust]
    sweep = sweep if sweep is not None else [r, r, [False] * n, [False] * n]
    return Probes(eps=eps, norm="Linf", n_iter=10, fgsm=fgsm or r, pgd=pgd_ or r,
                  sweep_eps=[eps / 2, eps, 2 * eps, 4 * eps], sweep=sweep, doubled=doubled or r, large_eps=1.0,
                  large=large or [False] * n, zero_grad=zero or [False] * n, logit_change=change,
                  autograd_calls=calls, probability_rows=probs)


def by_id(checks):
    return {c.id: c for c in checks}


def first_k_failing(n):
    """The smallest k whose two-sided 95 % Clopper-Pearson lower bound of k/n exceeds ALPHA (scipy, independently)."""
    return next(k for k in range(n + 1) if binomtest(k, n).proportion_ci(0.95, "exact").low > ALPHA)


N = 400


@pytest.mark.parametrize("field", ["zero", "large"])
def test_count_rules_flip_exactly_at_the_clopper_pearson_boundary(field):
    k = first_k_failing(N)
    rob = [True] * (N // 2) + [False] * (N // 2)
    cid = {"zero": "zero-gradients", "large": "unbounded-attack"}[field]
    for kk, want in ((k - 1, {"zero": "warn", "large": "pass"}[field]), (k, "fail")):
        flags = [True] * kk + [False] * (N - kk)
        got = by_id(attack_checks(outcome(rob), probes(N, robust=rob, **{field: flags})))[cid]
        assert got.status == want, (kk, got)
        assert got.interval[0] <= got.statistic <= got.interval[1]


def test_square_and_silent_success_flip_at_the_same_boundary():
    k = first_k_failing(N)
    rob = [True] * 100 + [False] * (N - 100)
    for kk, want in ((k - 1, "warn"), (k, "fail")):
        after = {"clean": N, "apgd-ce": 100 + kk, "apgd-t": 100 + kk, "fab-t": 100 + kk, "square": 100}
        assert by_id(attack_checks(outcome(rob, after=after), probes(N, robust=rob)))[
            "square-beats-white-box"].status == want
        reported = [False] * kk + [True] * (100 - kk) + [False] * (N - 100)  # AutoAttack said broken, still right
        assert by_id(attack_checks(outcome(rob, reported=reported), probes(N, robust=rob)))[
            "silent-success"].status == want
    assert by_id(attack_checks(outcome(rob, after={"clean": N, "apgd-ce": 100}), probes(N, robust=rob)))[
        "square-beats-white-box"].status == "not-applicable"


def test_pgd_against_autoattack_warns_on_a_paired_gap_and_fails_above_ten_points():
    n = 200
    aa = [True] * 80 + [False] * 120
    for extra, want in ((0, "pass"), (10, "warn"), (21, "fail")):  # PGD leaves `extra` more points robust
        p = [True] * (80 + extra) + [False] * (120 - extra)
        got = by_id(attack_checks(outcome(aa), probes(n, robust=aa, pgd_=p)))["pgd-vs-autoattack"]
        assert got.status == want, (extra, got.statistic, got.interval)
    # disagreement both ways (an interval around 0): no evidence that PGD overstates
    mixed = [True] * 75 + [False] * 5 + [True] * 5 + [False] * 115
    got = by_id(attack_checks(outcome(aa), probes(n, robust=aa, pgd_=mixed)))["pgd-vs-autoattack"]
    assert got.interval[0] < 0 < got.interval[1] and got.status == "pass"
    # 20 extra points: estimate exactly 0.10, not above it
    p = [True] * 100 + [False] * 100
    assert by_id(attack_checks(outcome(aa), probes(n, robust=aa, pgd_=p)))["pgd-vs-autoattack"].status == "warn"


def test_epsilon_sweep_fails_on_a_rise_and_single_step_must_not_beat_iterative():
    n = 200
    r = [True] * 100 + [False] * 100
    rise = [True] * 130 + [False] * 70
    c = by_id(attack_checks(outcome(r), probes(n, robust=r, sweep=[r, r, rise, [False] * n])))
    assert c["epsilon-monotone"].status == "fail" and c["epsilon-monotone"].statistic == pytest.approx(0.15)
    flat = by_id(attack_checks(outcome(r), probes(n, robust=r, sweep=[r, r, r, r])))
    assert flat["epsilon-monotone"].status == "pass"
    strong_fgsm = [True] * 60 + [False] * 140
    assert by_id(attack_checks(outcome(r), probes(n, robust=r, fgsm=strong_fgsm)))[
        "iterative-beats-single-step"].status == "fail"
    assert by_id(attack_checks(outcome(r), probes(n, robust=r)))["iterative-beats-single-step"].status == "pass"


def test_more_iterations_carries_a_mcnemar_p_value_for_the_fdr_step():
    n = 200
    r = [True] * 100 + [False] * 100
    doubled = [True] * 70 + [False] * 130
    c = by_id(attack_checks(outcome(r), probes(n, robust=r, doubled=doubled)))["more-iterations"]
    assert c.p_value == pytest.approx(binomtest(30, 30, 0.5).pvalue) and c.status_if_significant == "warn"
    assert c.statistic == pytest.approx(0.15)


def test_claim_fails_just_above_the_upper_bound():
    n = 100
    r = [True] * 40 + [False] * 60
    hi = binomtest(40, 100).proportion_ci(0.95, "exact").high
    assert by_id(attack_checks(outcome(r), probes(n, robust=r), claim=hi))["claim"].status == "pass"
    assert by_id(attack_checks(outcome(r), probes(n, robust=r), claim=hi + 1e-6))["claim"].status == "fail"
    assert "claim" not in by_id(attack_checks(outcome(r), probes(n, robust=r)))


def test_validity_rules_at_their_boundaries():
    labels = np.repeat(np.arange(10), 20)  # chance 0.1
    n = labels.size
    k = next(k for k in range(n) if binomtest(k, n).proportion_ci(0.95, "exact").low > 0.1)
    for kk, want in ((k - 1, "fail"), (k, "pass")):
        correct = [True] * kk + [False] * (n - kk)
        assert by_id(validity_checks(correct, labels))["above-chance"].status == want
    rob = [True] * 500 + [False] * 500
    ok = validity_checks([True] * 200, labels, aa=outcome(rob), probes=probes(1000, robust=rob), split_size=1000)
    half = by_id(ok)["sample-size"].statistic
    ci = binomtest(500, 1000).proportion_ci(0.95, "exact")
    assert half == pytest.approx((ci.high - ci.low) / 2) and 0.03 < half < 0.032  # just outside ±0.03: warn
    assert by_id(ok)["sample-size"].status == "warn"
    inside = [True] * 200 + [False] * 800  # p = 0.2: half-width about 0.025
    got = by_id(validity_checks([True] * 200, labels, aa=outcome(inside), probes=probes(1000, robust=inside)))
    assert got["sample-size"].statistic < 0.03 and got["sample-size"].status == "pass"
    small = validity_checks([True] * 200, labels, aa=outcome(rob[::10]), probes=probes(100, robust=rob[::10]),
                            split_size=1000)
    assert by_id(small)["sample-size"].status == "warn" and by_id(small)["standard-budget"].status == "warn"
    assert got["standard-budget"].status == "pass"  # no split size given: taken as the whole split
    for change, want in ((1e-4, "pass"), (1.01e-4, "fail")):
        got = validity_checks([True] * 200, labels, aa=outcome(rob), probes=probes(1000, robust=rob, change=change))
        assert by_id(got)["randomized-model"].status == want
    flagged = validity_checks([True] * 200, labels, aa=outcome(rob, flags=["it seems to be a randomized defense!"]),
                              probes=probes(1000, robust=rob))
    assert by_id(flagged)["randomized-model"].status == "fail" and "randomized" in by_id(flagged)["randomized-model"].detail
    assert by_id(validity_checks([True] * 200, labels, aa=outcome(rob), probes=probes(1000, robust=rob, calls=1)))[
        "dynamic-model"].status == "fail"
    assert by_id(validity_checks([True] * 200, labels, aa=outcome(rob), probes=probes(1000, robust=rob, probs=3)))[
        "logits-output"].status == "fail"


class Linear(torch.nn.Module):
    """Two-class linear model on 1x4x4 images: logits (w·x - b, -(w·x - b))."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(16, generator=g))
        self.b = torch.nn.Parameter(torch.tensor(0.1))

    def forward(self, x):
        s = x.flatten(1) @ self.w - self.b
        return torch.stack([s, -s], 1)


def test_fgsm_matches_the_closed_form_of_a_linear_model():
    model = Linear()
    g = torch.Generator().manual_seed(1)
    x = 0.3 + 0.4 * torch.rand(64, 1, 4, 4, generator=g)  # inside the box by more than eps: no clipping
    eps = 0.05
    with torch.no_grad():
        s = x.flatten(1) @ model.w - model.b
    y = (s < 0).long()  # every point correct
    margin = s.abs() - eps * model.w.abs().sum()
    want = (margin > 0).numpy()
    got = pgd(model, x, y.numpy(), eps=eps, steps=1, step_size=eps, random_start=False).numpy()
    assert (got == want).all() and 0 < want.sum() < want.size
    more = pgd(model, x, y.numpy(), eps=eps, steps=10).numpy()  # PGD reaches the same corner on a linear model
    assert (more == want).all()
    r = 0.4  # L2: the worst point is r w / |w|_2 away, so robust iff |s| > r |w|_2
    want2 = (s.abs() - r * model.w.norm() > 0).numpy()
    got2 = pgd(model, x, y.numpy(), eps=r, norm="L2", steps=1, step_size=r, random_start=False).numpy()
    assert (got2 == want2).all() and 0 < want2.sum() < want2.size
    many = pgd(model, x, y.numpy(), eps=r, norm="L2", steps=10).numpy()
    assert (many | ~want2).all()  # no attack inside the ball breaks a point the closed form proves robust


class Adaptive(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        with torch.enable_grad():
            z = x.detach().requires_grad_(True)
            torch.autograd.grad(self.inner(z).sum(), z)
        return self.inner(x)


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(2)
    x = 0.3 + 0.4 * torch.rand(12, 1, 4, 4, generator=g)
    model = Linear()
    with torch.no_grad():
        y = model(x).argmax(1).numpy()
    return model, x, y


def test_probes_catch_quantised_noisy_and_adaptive_models_and_pass_the_plain_one(data):
    model, x, y = data
    kw = {"eps": 0.05, "n_iter": 3}
    plain = probe(model, x, y, **kw)
    assert not any(plain.zero_grad) and plain.logit_change <= 1e-4 and plain.autograd_calls == 0
    assert plain.probability_rows == 0 and not any(plain.large)
    assert all(plain.zero_grad) is False
    assert all(probe(transformed(model, inputs=lambda v: torch.round(v * 4) / 4), x, y, **kw).zero_grad)
    assert probe(transformed(model, outputs=lambda z: z + 0.01 * torch.randn_like(z)), x, y, **kw)  # noise in eval mode.logit_change > 1e-4
    assert probe(Adaptive(model), x, y, **kw).autograd_calls > 0
    assert len(plain.sweep) == len(plain.sweep_eps) == 4 and plain.sweep_eps[1] == 0.05
    assert Probes.from_dict(plain.to_dict()) == plain


def test_probe_returns_the_model_as_it_came(data):
    model, x, y = data
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    probe(model, x, y, eps=0.05, n_iter=2)
    assert model.training and all(p.requires_grad for p in model.parameters())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    model.eval()


class Constant(torch.nn.Module):
    """Answers the same logits whatever the input: no gradient reaches the input at all."""

    def __init__(self):
        super().__init__()
        self.b = torch.nn.Parameter(torch.tensor([3.0, -2.0]))

    def forward(self, x):
        return self.b.expand(x.shape[0], 2)


def test_a_model_that_ignores_its_input_is_probed_without_crashing_and_fails_the_gradient_check(data):
    _, x, y = data
    p = probe(Constant(), x, np.zeros(len(y), dtype=np.int64), eps=0.05, n_iter=2)
    assert all(p.zero_grad) and all(p.large)  # nothing moves it, not even an unbounded attack
    rob = [True] * len(y)
    c = by_id(attack_checks(outcome(rob), p))
    assert c["zero-gradients"].status == "fail" and c["unbounded-attack"].status == "fail"
