"""The defenses run as their authors run them: DENT's AdaMod configuration, DANN's separate source/target
passes and optimiser/schedule, RMC's calibration and base-model neighbour search (issue 17, defects 1, 4, 5)."""

from __future__ import annotations

import pytest
import torch

from transduct_attack import DANN, DENT, RMC
from transduct_attack.networks import DomainAdversarialNet, build, penultimate_features


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# --- DENT (defect 1) -------------------------------------------------------------------------------

def test_dent_defaults_are_the_dent_authors_adamod_configuration(mlp_bn):
    dent = DENT(mlp_bn)
    assert dent.betas == (0.99, 0.999) and dent.beta3 == 0.6
    assert (dent.steps, dent.lr, dent.batch_size, dent.optimizer) == (6, 0.006, 128, "adamod")


def test_one_dent_step_moves_affines_by_one_minus_beta3_times_lr(mlp_bn, digits):
    """Closed form of AdaMod's first step: m = (1-β1)g, v = (1-β2)g², η = lr·√(1-β2)/((1-β1)√v) = lr/((1-β1)|g|),
    s = (1-β3)η, so the step is min(η, s)·m = (1-β3)·lr·sign(g). With β3 = 0.6 and lr = 0.006 that is 2.4e-3
    per affine parameter; with AdaMod's library default β3 = 0.999 it would be 6e-6 (DENT barely adapts)."""
    _, _, xte, _ = digits
    x = xte[:16]
    dent = DENT(mlp_bn, steps=1)
    ad = dent.adapt(x, state=None, generator=_gen(0))
    bn = next(m for m in mlp_bn.modules() if isinstance(m, torch.nn.BatchNorm1d))
    (norm,) = [m for m in ad.model.modules() if hasattr(m, "gamma")]
    moved = torch.cat([(norm.gamma - bn.weight).abs().flatten(), (norm.beta - bn.bias).abs().flatten()]).detach()
    nonzero = moved[moved > 0]
    assert nonzero.numel() > moved.numel() // 4          # affines behind a live ReLU get a gradient
    expected = (1 - 0.6) * 0.006
    # eps = 1e-8 in the denominator only shortens the step of near-zero gradients
    assert float(nonzero.max()) <= expected + 1e-6  # float32 rounding of γ ≈ 1 is ~1e-7
    assert float(nonzero.median()) == pytest.approx(expected, rel=1e-3), (nonzero.min(), nonzero.max())
    # the parameters are exposed: β3 = 0.999 gives the 400× smaller step of the library default
    small = DENT(mlp_bn, steps=1, beta3=0.999).adapt(x, state=None, generator=_gen(0))
    (norm_small,) = [m for m in small.model.modules() if hasattr(m, "gamma")]
    step_small = (norm_small.gamma - bn.weight).abs().detach()
    # (γ ≈ 1 in float32: the 6e-6 step is resolved to within two ulps, 2.4e-7)
    assert float(step_small[step_small > 0].median()) == pytest.approx((1 - 0.999) * 0.006, abs=2.4e-7)


def test_dent_affine_change_measures_the_adaptation(mlp_bn, digits):
    """affine_change is the mean |Δγ|, |Δβ| against the base BatchNorm: brute force on one step (every moved
    entry moved by (1-β3)·lr, the others by 0), zero steps of size ~0 with β3 → library default, and it grows with
    the number of steps."""
    _, _, xte, _ = digits
    x = xte[:16]
    bn = next(m for m in mlp_bn.modules() if isinstance(m, torch.nn.BatchNorm1d))
    dent = DENT(mlp_bn, steps=1)
    ad = dent.adapt(x, state=None, generator=_gen(0))
    (norm,) = [m for m in ad.model.modules() if hasattr(m, "gamma")]
    dg, db = dent.affine_change(ad)
    assert dg == pytest.approx(float((norm.gamma - bn.weight).detach().abs().double().mean()), rel=1e-9)
    assert db == pytest.approx(float((norm.beta - bn.bias).detach().abs().double().mean()), rel=1e-9)
    assert 0 < dg <= (1 - 0.6) * 0.006 + 1e-6
    six = DENT(mlp_bn).affine_change(DENT(mlp_bn).adapt(x, state=None, generator=_gen(0)))
    assert six[0] > 2 * dg and six[1] > 2 * db
    lazy = DENT(mlp_bn, steps=1, beta3=0.999)
    assert lazy.affine_change(lazy.adapt(x, state=None, generator=_gen(0)))[0] < dg / 100
    with pytest.raises(ValueError, match="adaptation"):
        dent.affine_change(type(ad)(model=mlp_bn))


def test_dent_rejects_bad_betas(mlp_bn):
    with pytest.raises(ValueError, match="beta3"):
        DENT(mlp_bn, beta3=1.0)
    with pytest.raises(ValueError, match="betas"):
        DENT(mlp_bn, betas=(0.9, 1.5))


# --- DANN (defect 4) -------------------------------------------------------------------------------

def test_dann_source_and_target_go_through_separate_passes(digits, mlp_std):
    """Each encoder forward sees only source (D) or only target (U') points, so BatchNorm statistics are never
    shared between the domains (the authors' separate passes)."""
    xtr, ytr, xte, _ = digits
    target = torch.full((20, 1, 8, 8), 0.5)      # a target batch no training image equals
    calls: list[tuple[int, int]] = []

    def net(g):
        m = build(lambda: DomainAdversarialNet(width=4, hidden=16), g)

        def hook(_module, inputs):
            is_target = (inputs[0] == 0.5).flatten(1).all(1)
            calls.append((int(is_target.sum()), int((~is_target).sum())))

        m.encoder.register_forward_pre_hook(hook)
        return m

    DANN(xtr[:64], ytr[:64], base_model=mlp_std, make_network=net, epochs=2, batch_size=32).adapt(
        target, state=None, generator=_gen(0))
    training = calls
    assert training, "the encoder was never called"
    assert all(t == 0 or s == 0 for t, s in training), calls  # never a mixed batch
    assert sum(1 for t, _ in training if t) == sum(1 for _, s in training if s)  # one target pass per source pass


def test_dann_optimiser_and_schedule_are_parameters(digits, mlp_std):
    xtr, ytr, _, _ = digits

    def net(g):
        return build(lambda: DomainAdversarialNet(width=4, hidden=16), g)

    mnist = DANN(xtr[:64], ytr[:64], base_model=mlp_std, make_network=net)
    assert (mnist.optimizer, mnist.lr, mnist.epochs, mnist.batch_size, mnist.alpha_max) == ("adam", 1e-3, 100, 128, 0.1)
    cifar = DANN(xtr[:64], ytr[:64], base_model=mlp_std, make_network=net, optimizer="sgd", lr=0.1, momentum=0.9,
                 nesterov=True, weight_decay=1e-4, lr_milestones=(50, 75, 90), lr_gamma=0.1, epochs=100)
    opt, sched = cifar.make_optimizer(net(_gen(0)))
    assert isinstance(opt, torch.optim.SGD)
    group = opt.param_groups[0]
    assert group["nesterov"] and group["momentum"] == 0.9 and group["weight_decay"] == 1e-4
    lrs = []
    for _ in range(100):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(0.1) and lrs[49] == pytest.approx(0.1) and lrs[50] == pytest.approx(0.01)
    assert lrs[75] == pytest.approx(1e-3) and lrs[99] == pytest.approx(1e-4)
    with pytest.raises(ValueError, match="optimizer"):
        DANN(xtr[:64], ytr[:64], base_model=mlp_std, optimizer="rmsprop")


# --- RMC (defect 5) --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_rmc(digits, mlp_std):
    xtr, ytr, _, _ = digits
    return RMC(mlp_std, xtr[:200], ytr[:200], k=8, aug_eps=0.1, aug_steps=2, lr=1e-3, max_epochs=2, patience=1)


def test_rmc_searches_neighbours_in_the_base_models_features(small_rmc, digits, mlp_std):
    _, _, xte, _ = digits
    seen: list = []
    original = small_rmc.features

    def spy(model, x):
        seen.append(model)
        return original(model, x)

    small_rmc.features = spy
    try:
        first = small_rmc.adapt(xte[:1], state=small_rmc.initial_state(), generator=_gen(0))
        small_rmc.adapt(xte[1:2], state=first.state, generator=_gen(1))
    finally:
        small_rmc.features = original
    assert seen and all(m.inner is mlp_std for m in seen)  # the base, through the logits adapter
    # and the neighbours are the brute-force ones in the base model's penultimate space
    dx, _ = small_rmc.augmented
    d = torch.cdist(penultimate_features(mlp_std, xte[2:3]).double(), penultimate_features(mlp_std, dx).double())
    assert set(small_rmc.neighbours(xte[2:3]).tolist()) == set(d.topk(8, largest=False).indices[0].tolist())


def test_rmc_warms_up_on_clean_data_before_the_stream(digits, mlp_std):
    from transduct_attack import NoAttack, play_game

    xtr, ytr, xte, yte = digits
    rmc = RMC(mlp_std, xtr[:200], ytr[:200], k=8, aug_eps=0.1, aug_steps=2, lr=1e-3, max_epochs=2, patience=1)
    before = {k: v.clone() for k, v in mlp_std.state_dict().items()}
    assert rmc.initial_state().inner is mlp_std
    calibrated = rmc.warm_up(xte[:4], batch_size=2, seed=0)
    assert rmc.initial_state() is calibrated and rmc.model_of(None) is not None
    assert any(not torch.equal(a, b) for a, b in zip(calibrated.parameters(), mlp_std.parameters(), strict=True))
    assert all(torch.equal(v, mlp_std.state_dict()[k]) for k, v in before.items())  # the base is untouched
    # deterministic in its seed
    rmc2 = RMC(mlp_std, xtr[:200], ytr[:200], k=8, aug_eps=0.1, aug_steps=2, lr=1e-3, max_epochs=2, patience=1)
    again = rmc2.warm_up(xte[:4], batch_size=2, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(calibrated.parameters(), again.parameters(), strict=True))
    # the game starts the defender (and the attacker's public F^(0)) from the calibrated model
    res = play_game(NoAttack(), rmc, xte[4:6], yte[4:6], eps=0.0, batch_size=2)
    assert res.n == 2
    with pytest.raises(ValueError, match="x"):
        rmc.warm_up(torch.full((2, 1, 8, 8), float("nan")))


# --- RMC as its authors run it (issue 26, item 3) ----------------------------------------------------

def _rmc(digits, model, **kw):
    xtr, ytr, _, _ = digits
    base = dict(k=20, aug_eps=0.1, aug_steps=2, lr=2e-4, max_epochs=3, patience=2, batch_size=8)
    return RMC(model, xtr[:200], ytr[:200], **{**base, **kw})


def test_rmc_authors_validation_is_a_quarter_of_the_nearest_fifth(digits, mlp_std):
    """The authors' split: of each point's K neighbours (nearest first), a quarter of the nearest 20 % validate,
    all the others train."""
    _, _, xte, _ = digits
    rmc = _rmc(digits, mlp_std, val_split="nearest")
    nn_idx = rmc.neighbour_matrix(xte[:1])[0]
    train, val = rmc._split(xte[:1], _gen(0))
    assert len(val) == 1 and set(val.tolist()) <= set(nn_idx[:4].tolist())  # 25 % of the nearest 4 of K = 20
    assert set(train.tolist()) | set(val.tolist()) == set(nn_idx.tolist()) and not set(train.tolist()) & set(val.tolist())
    rnd_train, rnd_val = _rmc(digits, mlp_std)._split(xte[:1], _gen(0))
    assert len(rnd_val) == 4  # the compact variant: 20 % of the neighbours at random


def test_rmc_authors_stopping_rule_needs_a_low_training_loss(digits, mlp_std, monkeypatch):
    """'patience' stops after `patience` epochs without a lower validation loss; the authors' rule also needs the
    epoch's training loss below 0.01, so at a learning rate too small to get there it trains every epoch."""
    _, _, xte, _ = digits
    steps: list[int] = []
    real = torch.optim.Adam.step

    def count(self, *a, **k):
        steps.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(torch.optim.Adam, "step", count)
    per_epoch = -(-19 // 8)  # 19 training neighbours in batches of 8 (1 of K = 20 validates)
    for rule, epochs in (("authors", 6), ("patience", 2)):
        steps.clear()
        _rmc(digits, mlp_std, lr=1e-12, max_epochs=6, stop_rule=rule, val_split="nearest").adapt(
            xte[:1], state=None, generator=_gen(0))
        assert len(steps) == epochs * per_epoch, rule


def test_rmc_calibrates_its_state_after_every_round(digits, mlp_bn):
    """The authors' calibrate(): after each round the state is fine-tuned on K random clean training points
    (with the round's generator: the defender's private one, or the attacker's in its own simulation); the game
    asks for it once per round for the defender and once per round for a non-leaking FPA attacker."""
    from transduct_attack import FPA, PGD, NoAttack, play_game

    _, _, xte, yte = digits
    rmc = _rmc(digits, mlp_bn, calibration_k=16, train_batchnorm=True, stop_rule="authors")
    ad = rmc.adapt(xte[:1], state=None, generator=_gen(0))
    kept = {k: v.clone() for k, v in ad.state.state_dict().items()}
    a = rmc.next_state(ad, generator=_gen(1))
    b = rmc.next_state(ad, generator=_gen(1))
    assert all(torch.equal(v, ad.state.state_dict()[k]) for k, v in kept.items())  # the adaptation is untouched
    assert a is not ad.state and any(not torch.equal(p, q) for p, q in zip(a.parameters(), ad.state.parameters(),
                                                                            strict=True))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))  # seeded
    # BatchNorm trains (running statistics move) in the authors' recipe, not in the compact variant
    bn = [n for n, _ in mlp_bn.named_buffers() if n.endswith("running_mean")][0]
    assert not torch.equal(ad.state.inner.state_dict()[bn], mlp_bn.state_dict()[bn])
    frozen = _rmc(digits, mlp_bn).adapt(xte[:1], state=None, generator=_gen(0))
    assert torch.equal(frozen.state.inner.state_dict()[bn], mlp_bn.state_dict()[bn])
    assert _rmc(digits, mlp_bn).next_state(frozen, generator=_gen(1)) is frozen.state  # calibration_k = 0

    calls: list[int] = []

    class Spy(RMC):
        def next_state(self, adaptation, *, generator):
            calls.append(1)
            return super().next_state(adaptation, generator=generator)

    spy = Spy(mlp_bn, *digits[:2], k=8, aug_eps=0.1, aug_steps=1, max_epochs=1, patience=1, calibration_k=8)
    play_game(NoAttack(), spy, xte[:3], yte[:3], eps=0.1, batch_size=1)
    assert len(calls) == 3
    calls.clear()
    play_game(FPA(T=1, solver=PGD(steps=1)), spy, xte[:3], yte[:3], eps=0.1, batch_size=1)
    assert len(calls) == 6  # the defender's state and the attacker's own simulated state, every round
