"""The verdict's Zéroe lens: does the text classifier read through the low-level noise humans read through?

:func:`noise_check` returns one :class:`robustsuite_common.verdict.Check` (id ``zeroe-noise``, group ``lenses``):
the classifier's accuracy on the same texts clean and under the Zéroe attackers (Eger & Benz 2020, §3.2) at one
perturbation level p, as the relative drop 1 − s*(p) with s*(p) = s(p) / s(0) (§4.2, Eq. 1), s(p) the accuracy
averaged over the attackers, with an interval that resamples the texts (each with its clean outcome and its
outcomes under every attacker: paired).

The rule (stated in the check): ``fail`` when the accuracy under noise is at chance by its interval (its lower
bound reaches the majority-class share: the noise leaves the model guessing); else ``warn`` when the relative
drop's interval lies above ``max_drop`` (0.2 by default: the paper designs its attackers so that humans still read
the text, §3; a model that loses more than a fifth of its accuracy to them is brittle where readers are not);
``pass`` otherwise. ``not-applicable`` when the clean accuracy is itself at chance (the noise numbers then carry
no information; the validity checks report it).

Full-shuffle is left out by default: the paper keeps it "for completeness, even though we do not assume high
degrees of human robustness to it" (§3.2), so a drop under it says nothing about reading through human-readable
noise. The rule reads the mean over the attackers, a statistic fixed before looking: the most harmful attacker
(Table 5's first) is reported in the detail with its own interval, but choosing the worst of several attackers
on the same texts overstates its drop, so no status rests on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from robustsuite_common.checks import check_float, check_int, check_labels, check_texts
from robustsuite_common.contract import renamed
from robustsuite_common.intervals import Interval, at_chance, bootstrap, proportion
from robustsuite_common.verdict import Check

from ._api import ATTACKS
from .benchmark import TextClassifier, attack_texts, predict_logits
from .protocol import check_p

__all__ = ["CHECK_ID", "HUMAN_READABLE_ATTACKS", "noise_check"]

CHECK_ID = "zeroe-noise"
#: the attackers humans are assumed robust to (§3.2): all ten but full-shuffle
HUMAN_READABLE_ATTACKS: tuple[str, ...] = tuple(a for a in ATTACKS if a != "full-shuffle")
NEXT_STEP = ("train on noisy copies of the training texts (the paper's adversarial training, §4.3, restores much "
             "of the loss) or put a spelling-normalisation layer in front of the model; report its accuracy under "
             "noise beside the clean number")


def _drop(c: np.ndarray, a: np.ndarray, axis: int = -1) -> np.ndarray:
    """1 − mean(a) / mean(c) along ``axis`` (the relative drop 1 − s*(p), Eq. 1); a resample without a correct
    clean text has no ratio and counts as a total drop."""
    mc, ma = np.mean(c, axis=axis), np.mean(a, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mc > 0, 1.0 - ma / np.where(mc > 0, mc, 1.0), 1.0)


def _mean(a: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(a, axis=axis)


def noise_status(drop: Interval, noisy: Interval, clean_at_chance: bool, chance: float, *,
                 max_drop: float) -> tuple[str, str]:
    """The check's status and why, from the relative drop's interval, the accuracy under noise's interval, whether
    the clean accuracy is at chance, and the chance score (the rule of the module docstring)."""
    if clean_at_chance:
        return "not-applicable", "the clean accuracy is at chance: the noise numbers carry no information"
    if noisy.low <= chance:
        return "fail", (f"accuracy under noise {noisy.estimate:.3f} [{noisy.low:.3f}, {noisy.high:.3f}] reaches the "
                        f"chance score {chance:.3f}")
    if drop.low > max_drop:
        return "warn", (f"relative drop {drop.estimate:.3f} [{drop.low:.3f}, {drop.high:.3f}] lies above "
                        f"{max_drop:g}")
    return "pass", (f"relative drop {drop.estimate:.3f} [{drop.low:.3f}, {drop.high:.3f}] does not lie above "
                    f"{max_drop:g} and the accuracy under noise stays above chance")


def rule_text(level: float, max_drop: float, attackers: str) -> str:
    return (f"accuracy on the same texts clean (s(0)) and under {attackers} at p = {level:g} (s(p), mean over the "
            f"attackers); statistic 1 − s(p)/s(0) (Eq. 1), paired interval over the texts. fail when the interval of "
            f"s(p) reaches the chance score (majority-class share); else warn when the drop's interval lies above "
            f"{max_drop:g} (humans read through this noise, §3); pass otherwise; not-applicable when s(0) is at "
            "chance")


def noise_check_from(clean: np.ndarray, noisy: np.ndarray, columns: Sequence[str], chance: float, *, level: float,
                     max_drop: float = 0.2, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0,
                     evidence: str = "") -> Check:
    """The check from per-text outcomes: ``clean`` (N,) right/wrong on the clean texts, ``noisy`` (N, M) right/wrong
    on their perturbations, column j drawn by attacker ``columns[j]`` (an attacker may fill several columns, one
    per attack seed). The experiment and :func:`noise_check` both end here."""
    c = np.asarray(clean, dtype=np.float64)
    a = np.asarray(noisy, dtype=np.float64)
    n = c.shape[0]
    names: list[str] = list(dict.fromkeys(columns))
    abar = a.mean(axis=1)  # per text: the share of the attacked copies it still gets right
    kw: dict[str, Any] = {"seed": seed, "level": confidence, "n_resamples": n_boot}
    drop = bootstrap((c, abar), _drop, bounds=(None, 1.0), **kw)
    noisy_iv = bootstrap(abar, _mean, bounds=(0.0, 1.0), **kw)
    k = int(c.sum())
    clean_iv = proportion(k, n, level=confidence)
    clean_chance = at_chance(k, n, chance, level=confidence)
    status, why = noise_status(drop, noisy_iv, clean_chance, chance, max_drop=max_drop)
    per = {m: a[:, [j for j, x in enumerate(columns) if x == m]].mean(axis=1) for m in names}
    worst = min(names, key=lambda m: float(per[m].mean()))
    worst_iv = bootstrap((c, per[worst]), _drop, bounds=(None, 1.0), **kw)
    attackers = (f"the {len(names)} Zéroe attackers ({', '.join(names)})" if len(names) > 1
                 else f"the Zéroe attacker {names[0]}")
    detail = (f"{why}. Clean accuracy s(0) {c.mean():.3f} [{clean_iv.low:.3f}, {clean_iv.high:.3f}] "
              f"(Clopper-Pearson); under noise s({level:g}) {noisy_iv.estimate:.3f} [{noisy_iv.low:.3f}, "
              f"{noisy_iv.high:.3f}], chance {chance:.3f}; most harmful attacker {worst}: accuracy "
              f"{per[worst].mean():.3f}, relative drop {worst_iv.estimate:.3f} [{worst_iv.low:.3f}, "
              f"{worst_iv.high:.3f}] (chosen as the worst: not the rule's statistic); {n} texts, "
              f"{confidence:.0%} bootstrap intervals ({n_boot} resamples, seed {seed}).")
    return Check(id=CHECK_ID, group="lenses", title=f"Reads through human-readable noise (Zéroe, p = {level:g})",
                 status=status, rule=rule_text(level, max_drop, attackers), statistic=drop.estimate,
                 interval=drop.ci, n=n, evidence=evidence,
                 next_step="" if status in ("pass", "not-applicable") else NEXT_STEP, detail=detail)


def _check_attacks(attacks: Any) -> tuple[str, ...]:
    if isinstance(attacks, str) or not isinstance(attacks, Sequence):
        raise TypeError(f"attacks must be a sequence of attacker names from {list(ATTACKS)}, got "
                        f"{type(attacks).__name__}")
    out = tuple(attacks)
    bad = [a for a in out if a not in ATTACKS]
    if not out or bad or len(set(out)) != len(out):
        raise ValueError(f"attacks must be distinct names from {list(ATTACKS)}, at least one, got {list(out)}")
    return out


@renamed(n_resamples="n_boot")
def noise_check(model: Any, texts: Sequence[str], labels: Any, *, level: float = 0.3,
                attacks: Sequence[str] = HUMAN_READABLE_ATTACKS, seed: int = 0, max_drop: float = 0.2,
                confidence: float = 0.95, n_boot: int = 2000, batch_size: int = 64,
                evidence: str = "zeroe_perturb.audit.noise_check") -> Check:
    """The ``zeroe-noise`` check of ``model`` (a text classifier ``list[str] -> logits (N, K)``) on ``texts`` and
    their integer ``labels`` (see the module docstring for the statistic and the rule).

    Each attacker of ``attacks`` (default: all but full-shuffle, §3.2) perturbs every text at perturbation level
    ``level`` (§3.1, φ = p) with the cell seed :func:`zeroe_perturb.evaluate` uses for ``seed``, so the perturbed
    texts are those of the benchmark and of the experiment at the same seed. ``max_drop`` is the warning threshold
    of the relative drop 1 − s*(p) (Eq. 1); intervals at ``confidence`` resample the texts ``n_boot`` times
    (BCa, seeded by ``seed``). The model is called ``len(attacks) + 1`` times per ``batch_size`` texts and is
    never changed; its logits are read as :func:`zeroe_perturb.evaluate` reads them. Bad arguments raise before
    the first model call."""
    if not callable(model):
        raise TypeError(f"model must be a callable list[str] -> logits (N, K), got {type(model).__name__}")
    texts = check_texts("texts", texts)
    y = check_labels("labels", labels, length=len(texts))
    level = check_p(level, "level")
    if level == 0.0:
        raise ValueError("level must be in (0, 1], got 0.0 (no noise)")
    attacks = _check_attacks(attacks)
    seed = check_int("seed", seed, ge=0)
    max_drop = check_float("max_drop", max_drop, ge=0.0, le=1.0)
    confidence = check_float("confidence", confidence, gt=0.0, lt=1.0)
    n_boot = check_int("n_boot", n_boot, ge=100)
    batch_size = check_int("batch_size", batch_size, ge=1)
    classifier = cast("TextClassifier", model)
    z = predict_logits(classifier, texts, batch_size=batch_size)
    if int(y.max()) >= z.shape[1]:
        raise ValueError(f"labels must be class indices < the model's {z.shape[1]} classes, got {int(y.max())}")
    clean = z.argmax(axis=1) == y
    noisy = np.empty((len(texts), len(attacks)), dtype=bool)
    for j, a in enumerate(attacks):
        adv, _, _ = attack_texts(texts, a, level, seed=seed)
        noisy[:, j] = predict_logits(classifier, adv, batch_size=batch_size).argmax(axis=1) == y
    chance = float(np.bincount(y).max() / len(y))
    return noise_check_from(clean, noisy, attacks, chance, level=level, max_drop=max_drop, confidence=confidence,
                            n_boot=n_boot, seed=seed, evidence=evidence)
