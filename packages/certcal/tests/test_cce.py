import itertools

import numpy as np
import pytest
from _certcal_refs import interval_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from certcal import (
    ADMMConfig,
    DECEConfig,
    brier_confidences,
    brier_score,
    certified_brier_score,
    certified_calibration_error,
    expected_calibration_error,
)
from certcal._program import build_program, check_feasible


def random_instance(rng, n, width=0.3, low=0.0):
    z = rng.uniform(low, 1, n)
    w = rng.uniform(0, width, n)
    lo = np.clip(z - w, 0, 1)
    up = np.clip(z + w, 0, 1)
    c = (rng.uniform(size=n) < z).astype(int)
    return lo, up, c, z


def brute_force(lo, up, c, n_bins):
    """Enumerate every valid assignment; for each, every confidence at an interval end (the objective is
    convex in z, so a maximum sits at a vertex of the box)."""
    prog = build_program(lo, up, c, n_bins)
    best = -1.0
    options = [np.nonzero(prog.reachable[i])[0] for i in range(len(lo))]
    for bins in itertools.product(*options):
        b = np.array(bins)
        ends = [(prog.lo[i, b[i]], prog.hi[i, b[i]]) for i in range(len(lo))]
        for zs in itertools.product(*ends):
            gaps = np.bincount(b, weights=c - np.array(zs), minlength=n_bins)
            best = max(best, np.abs(gaps).sum() / len(lo))
    return best


def any_interval(d, n_bins):
    a, b = d(st.floats(0, 1)), d(st.floats(0, 1))
    return min(a, b), max(a, b)


tiny_instances = interval_instances(n=(1, 5), n_bins=(1, 4), interval=any_interval)


@settings(max_examples=80, deadline=None)
@given(tiny_instances)
def test_exact_equals_brute_force(inst):
    lo, up, c, n_bins = inst
    res = certified_calibration_error(lo, up, c, n_bins=n_bins)
    assert res.value == pytest.approx(brute_force(lo, up, c, n_bins), abs=1e-12)
    prog = build_program(lo, up, c, n_bins)
    assert check_feasible(prog, res.bins, res.confidences, tol=2e-9)


def test_exact_equals_milp_on_small_problems():
    rng = np.random.default_rng(1)
    for n, n_bins in [(12, 5), (20, 6), (25, 15)]:
        lo, up, c, _ = random_instance(rng, n)
        exact = certified_calibration_error(lo, up, c, n_bins=n_bins)
        milp = certified_calibration_error(lo, up, c, n_bins=n_bins, method="milp")
        assert exact.value == pytest.approx(milp.value, abs=1e-6)
        # the MILP's own solution is feasible and scores its reported value
        prog = build_program(lo, up, c, n_bins)
        assert check_feasible(prog, milp.bins, milp.confidences, tol=1e-6)


def test_returned_confidences_reproduce_value_under_ece():
    rng = np.random.default_rng(2)
    lo, up, c, _ = random_instance(rng, 300, low=0.3)
    res = certified_calibration_error(lo, up, c)
    # the confidences sit inside the half-open ECE bins, so the ordinary ECE recovers the optimum
    assert np.all(res.confidences >= lo) and np.all(res.confidences <= up)
    assert expected_calibration_error(res.confidences, c) == pytest.approx(res.value, abs=1e-6)


def test_orderings_admm_dece_brier_exact():
    rng = np.random.default_rng(3)
    lo, up, c, z = random_instance(rng, 200, width=0.2, low=0.3)
    exact = certified_calibration_error(lo, up, c, confidences=z)
    admm = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=ADMMConfig(steps=500))
    dece = certified_calibration_error(lo, up, c, method="dece", confidences=z, dece=DECEConfig(steps=200))
    brier = certified_calibration_error(lo, up, c, method="brier")
    prog = build_program(lo, up, c, 15)
    assert check_feasible(prog, admm.bins, admm.confidences, tol=2e-9)
    assert admm.value <= exact.value + 1e-12
    assert dece.value <= exact.value + 1e-12
    assert brier.value <= exact.value + 1e-12
    # ADMM keeps the best feasible point, which includes its Brier initialisation
    assert admm.value >= brier.value - 1e-12
    # worst case is well above the clean ECE
    assert exact.value > expected_calibration_error(z, c) + 0.05


def test_zero_width_bounds_give_clean_ece():
    rng = np.random.default_rng(4)
    z = rng.uniform(0.2, 1, 200)
    c = (rng.uniform(size=200) < z).astype(int)
    ece = expected_calibration_error(z, c)
    for method in ("exact", "brier"):
        assert certified_calibration_error(z, z, c, method=method).value == pytest.approx(ece, abs=1e-9)
    assert certified_brier_score(z, z, c) == pytest.approx(brier_score(z, c))


def test_full_width_bounds_closed_form():
    # every confidence free in [0, 1]: put all correct at 0 and all wrong at 1 -> ECE = 1
    c = np.array([1, 0, 1, 1, 0])
    res = certified_calibration_error(np.zeros(5), np.ones(5), c)
    assert res.value == pytest.approx(1.0)
    assert certified_brier_score(np.zeros(5), np.ones(5), c) == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(tiny_instances)
def test_cbs_is_the_maximum_brier_over_the_box(inst):
    lo, up, c, _ = inst
    cbs = certified_brier_score(lo, up, c)
    best = max(brier_score(np.array(zs), c) for zs in itertools.product(*zip(lo, up, strict=True)))
    assert cbs == pytest.approx(best, abs=1e-12)
    assert brier_score(brier_confidences(lo, up, c), c) == pytest.approx(cbs)


def test_cbs_hand_computed():
    # c = (1, 0): (1 - 0.6)^2 + 0.9^2 over 2
    assert certified_brier_score([0.6, 0.2], [0.8, 0.9], [1, 0]) == pytest.approx((0.16 + 0.81) / 2)


def test_admm_deterministic_and_inputs_not_mutated():
    rng = np.random.default_rng(5)
    lo, up, c, z = random_instance(rng, 100)
    lo0, up0 = lo.copy(), up.copy()
    cfg = ADMMConfig(steps=200)
    a = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=cfg)
    b = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=cfg)
    assert a.value == b.value and np.array_equal(a.bins, b.bins)
    assert np.array_equal(lo, lo0) and np.array_equal(up, up0)
    assert a.to_dict()["method"] == "admm"


def test_exact_handles_many_samples_fast_path():
    rng = np.random.default_rng(6)
    lo, up, c, _ = random_instance(rng, 5000, width=0.1)
    res = certified_calibration_error(lo, up, c, n_bins=15)
    assert 0 < res.value <= 1
    assert res.to_dict(include_arrays=True)["bins"][:3] == [int(b) for b in res.bins[:3]]


@pytest.mark.parametrize(
    "args, kwargs, exc",
    [
        (([0.5], [0.4], [1]), {}, ValueError),  # lower > upper
        (([0.5], [1.4], [1]), {}, ValueError),  # outside [0, 1]
        (([0.5], [0.6], [1, 0]), {}, ValueError),  # length mismatch
        (([0.5], [0.6], [1]), {"method": "simplex"}, ValueError),
        (([0.5], [0.6], [1]), {"n_bins": 0}, ValueError),
        (([0.5], [0.6], [1]), {"admm": {"steps": 3}}, TypeError),
        (([], [], []), {}, ValueError),
    ],
)
def test_bad_inputs(args, kwargs, exc):
    with pytest.raises(exc):
        certified_calibration_error(*args, **kwargs)


def test_bad_configs():
    with pytest.raises(ValueError):
        ADMMConfig(steps=0)
    with pytest.raises(ValueError):
        ADMMConfig(inits=("random",))
    with pytest.raises(ValueError):
        DECEConfig(tau_end=-1.0)


def naive_sign_enumeration(lo, up, c, n_bins):
    """The plain 2^M x N x M form of the sign-pattern argument (independent of the pooled/blocked solver)."""
    prog = build_program(lo, up, c, n_bins)
    best = -np.inf
    for pattern in itertools.product([1, -1], repeat=n_bins):
        s = np.array(pattern)
        gain = np.where(s[None, :] > 0, c[:, None] - prog.lo, prog.hi - c[:, None])
        best = max(best, np.where(prog.reachable, gain, -np.inf).max(axis=1).sum() / len(lo))
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(2, 10), st.floats(0.0, 0.5))
def test_exact_equals_naive_enumeration_many_bins(seed, n, n_bins, width):
    rng = np.random.default_rng(seed)
    lo, up, c, _ = random_instance(rng, n, width=width)
    res = certified_calibration_error(lo, up, c, n_bins=n_bins)
    assert res.value == pytest.approx(naive_sign_enumeration(lo, up, c, n_bins), abs=1e-12)


def test_exact_splits_into_blocks_for_many_bins_and_refuses_huge_blocks():
    rng = np.random.default_rng(7)
    z = rng.uniform(0, 1, 60)
    lo, up = np.clip(z - 0.01, 0, 1), np.clip(z + 0.01, 0, 1)
    c = rng.integers(0, 2, 60)
    # 40 bins, but narrow bounds link only neighbouring bins: solvable exactly, and equal to the MILP
    res = certified_calibration_error(lo, up, c, n_bins=40)
    assert res.value == pytest.approx(certified_calibration_error(lo, up, c, n_bins=40, method="milp").value, abs=1e-6)
    with pytest.raises(ValueError, match="admm"):
        certified_calibration_error(np.zeros(3), np.ones(3), [1, 0, 1], n_bins=30)


@pytest.mark.parametrize("seed", [0, 2])
def test_exact_window_dp_on_one_long_block_equals_milp(seed):
    # 30 bins linked into one block by overlapping ranges (each sample reaches <= 5 bins): 2^30 sign patterns
    # are out of reach, the window DP over the last 4 signs is not
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, 1, 30)
    lo, up, c = np.clip(z - 0.06, 0, 1), np.clip(z + 0.06, 0, 1), rng.integers(0, 2, 30)
    exact = certified_calibration_error(lo, up, c, n_bins=30)
    assert exact.value == pytest.approx(certified_calibration_error(lo, up, c, n_bins=30, method="milp").value, abs=1e-6)


def test_admm_over_a_grid_keeps_the_best_run():
    rng = np.random.default_rng(8)
    lo, up, c, z = random_instance(rng, 150, width=0.2, low=0.3)
    grid = [ADMMConfig(steps=300), ADMMConfig(steps=300, lr_a=1e-2)]
    singles = [certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=g).value for g in grid]
    both = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=grid)
    assert both.value == pytest.approx(max(singles))
    assert both.value <= certified_calibration_error(lo, up, c).value + 1e-12
    with pytest.raises(TypeError):
        certified_calibration_error(lo, up, c, method="admm", admm=[])


def test_admm_paper_grid_is_16_runs_batched_and_keeps_the_best():
    from certcal import admm_grid

    rng = np.random.default_rng(9)
    lo, up, c, z = random_instance(rng, 120, width=0.2, low=0.3)
    grid = admm_grid(steps=200)
    assert len(grid) * 2 == 16 and len({(g.lr_a, g.lr_z, g.rho_growth) for g in grid}) == 8
    res = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=grid)
    runs = [v for k, v in res.info.items() if k.startswith("value_")]
    assert len(runs) == 16 and res.value == pytest.approx(max(max(runs), res.value))
    # one member of the batch run alone gives the same value as inside the batch
    alone = certified_calibration_error(lo, up, c, method="admm", confidences=z, admm=grid[5])
    assert max(alone.info["value_clean"], alone.info["value_brier"]) == pytest.approx(
        max(res.info["value_clean_5"], res.info["value_brier_5"]), abs=1e-12)
    exact = certified_calibration_error(lo, up, c)
    assert res.value <= exact.value + 1e-12
    assert check_feasible(build_program(lo, up, c, 15), res.bins, res.confidences, tol=2e-9)
