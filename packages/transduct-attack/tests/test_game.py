"""Rules of the game (§4): private randomness, state leaking, ordering, the referee (Eq. 1)."""

from __future__ import annotations

import pytest
import torch
from _fakes import CheatingAttack, Offset, RandomDefense, SpyAttack

from transduct_attack import Adaptation, NoAttack, ThreatModel, play_game, score_round


@pytest.fixture()
def batch():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(24, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (24,), generator=g)
    return x, y


def test_private_randomness_never_reaches_the_attacker(batch):
    x, y = batch
    outs = []
    for defender_seed in (1, 2):
        log: list = []
        res = play_game(SpyAttack(log), RandomDefense(log), x, y, eps=0.1, batch_size=8, seed=5,
                        defender_seed=defender_seed)
        outs.append((log, res))
    (log1, _), (log2, _) = outs
    attacks1 = [e for e in log1 if e[0] == "attack"]
    attacks2 = [e for e in log2 if e[0] == "attack"]
    defends1 = [e for e in log1 if e[0] == "defend"]
    defends2 = [e for e in log2 if e[0] == "defend"]
    # the attacker's generators are the same whatever the defender's seed ...
    for a1, a2 in zip(attacks1, attacks2, strict=True):
        assert torch.equal(a1[3].get_state(), a2[3].get_state())
    # ... so U' (what the defender received) does not depend on the defender's randomness ...
    for d1, d2 in zip(defends1, defends2, strict=True):
        assert torch.equal(d1[1], d2[1])
    # ... while the defender's private draws do
    assert not torch.equal(defends1[0][3], defends2[0][3])
    # the attacker's generator is never the defender's one
    assert all(e[3] is not d[3] for e, d in zip(attacks1, defends1, strict=True))


def test_private_randomness_is_drawn_after_the_attack(batch):
    x, y = batch
    log: list = []
    play_game(SpyAttack(log), RandomDefense(log), x, y, eps=0.1, batch_size=8, seed=0)
    assert [e[0] for e in log] == ["attack", "defend"] * 3


def test_attacker_and_defender_draws_are_distinct_streams(batch):
    x, y = batch
    log: list = []
    play_game(SpyAttack(log), RandomDefense(log), x, y, eps=0.1, batch_size=8, seed=0)
    draws = [e[3] for e in log if e[0] == "defend"]
    assert not torch.equal(draws[0], draws[1])  # fresh randomness each round


@pytest.mark.parametrize("leak", [True, False])
def test_state_leaking(batch, leak):
    x, y = batch
    log: list = []
    play_game(SpyAttack(log), RandomDefense(log, stateful=True), x, y, eps=0.1, batch_size=8,
              threat_model=ThreatModel(leak_state=leak))
    seen = [e[2] for e in log if e[0] == "attack"]
    defender = [e[2] for e in log if e[0] == "defend"]
    assert defender == [0, 1, 2]
    # leaking: the attacker sees the defender's real state; otherwise only the public initial state
    assert seen == ([0, 1, 2] if leak else [0, 0, 0])


def test_adversarial_order_sorts_pooled_batches_by_label(batch):
    x, y = batch
    log: list = []
    play_game(NoAttack(), RandomDefense(log), x, y, eps=0.0, batch_size=8,
              threat_model=ThreatModel(order="adversarial", pool_size=24))
    sent = torch.cat([e[1] for e in log if e[0] == "defend"])
    order = torch.sort(y, stable=True).indices
    assert torch.equal(sent, x[order])
    log2: list = []
    play_game(NoAttack(), RandomDefense(log2), x, y, eps=0.0, batch_size=8)
    assert torch.equal(torch.cat([e[1] for e in log2 if e[0] == "defend"]), x)


def test_referee_refuses_out_of_ball_attacks(batch):
    x, y = batch
    with pytest.raises(ValueError, match="L∞ ball"):
        play_game(CheatingAttack(), RandomDefense([]), x, y, eps=0.05, batch_size=8)


def test_referee_eq1_against_brute_force():
    g = torch.Generator().manual_seed(3)
    x_clean = torch.rand(50, 1, 8, 8, generator=g)
    x_adv = (x_clean + 0.05).clamp(0, 1)
    y = torch.randint(0, 10, (50,), generator=g)
    model = Offset(torch.zeros(10))

    def acceptor(z):
        return z.flatten(1).mean(1) < 0.52

    ad = Adaptation(model=model, acceptor=acceptor)
    score = score_round(ad, x_adv, y, x_clean=x_clean, rejects=True)
    pred = model(x_adv).argmax(1)
    acc_adv = [bool(a) for a in acceptor(x_adv)]
    err = sum(1 for i in range(50) if acc_adv[i] and pred[i] != y[i]) / 50
    rej = sum(1 for a in acceptor(x_clean) if not bool(a)) / 50
    assert score.error_accepted == pytest.approx(err)
    assert score.rejection_rate == pytest.approx(rej)
    assert score.accuracy == pytest.approx(float((pred == y).float().mean()))
    assert 0 < rej < 1 and err > 0  # the case is not degenerate


def test_game_is_deterministic_and_does_not_mutate(batch):
    x, y = batch
    x0, y0 = x.clone(), y.clone()
    a = play_game(SpyAttack([]), RandomDefense([]), x, y, eps=0.1, batch_size=8, seed=11)
    b = play_game(SpyAttack([]), RandomDefense([]), x, y, eps=0.1, batch_size=8, seed=11)
    assert a.to_dict() == b.to_dict()
    assert torch.equal(x, x0) and torch.equal(y, y0)
    assert len(a.rounds) == 3 and a.n == 24
    import json

    json.dumps(a.to_dict())


@pytest.mark.parametrize("kwargs,match", [
    ({"eps": -0.1, "batch_size": 8}, "eps"),
    ({"eps": 0.1, "batch_size": 0}, "batch_size"),
])
def test_bad_arguments(batch, kwargs, match):
    x, y = batch
    with pytest.raises(ValueError, match=match):
        play_game(NoAttack(), RandomDefense([]), x, y, **kwargs)


def test_bad_threat_model():
    with pytest.raises(ValueError, match="order"):
        ThreatModel(order="random")
    with pytest.raises(ValueError, match="pool_size"):
        ThreatModel(pool_size=0)


@pytest.mark.parametrize("pool_size", [24, 16])
def test_adversarial_order_attacks_exactly_the_batch_the_defender_receives(batch, pool_size):
    """Each round, the perturbed batch the attacker returns is exactly the batch Γ adapts on (issue 17, defect 3)."""
    x, y = batch

    class Recording(SpyAttack):
        def _attack(self, x, y, *, eps, defense, generator, state):
            res = super()._attack(x, y, eps=eps, defense=defense, generator=generator, state=state)
            self.log.append(("returned", res.x_adv.clone(), y.clone()))
            return res

    log: list = []
    res = play_game(Recording(log), RandomDefense(log), x, y, eps=0.1, batch_size=8,
                    threat_model=ThreatModel(order="adversarial", pool_size=pool_size))
    # per-sample records come back in test-stream order, not in the order the rounds were played
    assert sorted(res.order) == list(range(24)) and list(res.order) != list(range(24))
    assert (res.correct == (res.predictions == y.numpy())).all()
    returned = [e for e in log if e[0] == "returned"]
    received = [e[1] for e in log if e[0] == "defend"]
    assert len(returned) == len(received) == 3
    for (_, x_adv, _), got in zip(returned, received, strict=True):
        assert torch.equal(x_adv, got)
    # the batches still follow A.7's label order within each pool
    labels = torch.cat([e[2] for e in returned])
    for start in range(0, 24, pool_size):
        assert torch.equal(labels[start:start + pool_size], torch.sort(y[start:start + pool_size]).values)


def test_repeat_game_over_seeds_matches_single_games(batch):
    from transduct_attack import repeat_game

    x, y = batch
    res = repeat_game(SpyAttack([]), lambda s: RandomDefense([]), x, y, eps=0.1, n=16, batch_size=8, seeds=[3, 4, 5])
    for s, acc in zip(res.seeds, res.accuracies, strict=True):
        idx = torch.randperm(24, generator=torch.Generator().manual_seed(s))[:16]
        single = play_game(SpyAttack([]), RandomDefense([]), x[idx], y[idx], eps=0.1, batch_size=8, seed=s)
        assert single.accuracy == acc
    # each seed's game and drawn points are kept (per-sample logs)
    for s, game, idx in zip(res.seeds, res.games, res.indices, strict=True):
        assert list(idx) == torch.randperm(24, generator=torch.Generator().manual_seed(s))[:16].tolist()
        assert game.accuracy == pytest.approx(float(game.correct.mean()))
        assert (game.correct == (game.predictions == y[list(idx)].numpy())).all()
    assert len(res.to_dict()["games"]) == 3
    assert res.mean == pytest.approx(sum(res.accuracies) / 3)
    assert res.ci_low <= res.mean <= res.ci_high and res.std >= 0  # three seeds: a Student-t interval
    with pytest.raises(ValueError, match="n must"):
        repeat_game(NoAttack(), lambda s: RandomDefense([]), x, y, eps=0.0, n=25, batch_size=8, seeds=[0])
