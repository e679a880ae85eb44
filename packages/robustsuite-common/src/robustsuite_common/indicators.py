"""The checks that tell a real robust accuracy from a failed evaluation, computed beside AutoAttack on the same
points: the verdict's *validity* and *attack strength* groups.

Sources (each rule cites its own): AutoAttack's own checks (Croce & Hein 2020, ``flags_doc.md``: randomized and
dynamic models, probability outputs, zero gradients, Square beating the white-box attacks), the Indicators of
Attack Failure (Pintor et al., NeurIPS 2022: silent success, unavailable gradients, unstable predictions,
incomplete optimisation, unconstrained-attack failure) and the automatable items of Carlini et al. 2019 (*On
Evaluating Adversarial Robustness*, §5: iterative beats single-step, more iterations change nothing, accuracy
falls monotonically with ε and reaches zero with an unbounded budget, black-box weaker than white-box, compare
per example).

Two steps, so that every rule is a pure function of recorded numbers: :func:`probe` (in
:mod:`~robustsuite_common.probes`) runs the extra attacks and
measurements on the model (FGSM, PGD, APGD-CE over an ε sweep and with doubled iterations, input gradients, two
identical calls, a trace of the forward pass) and returns a JSON-safe :class:`Probes`; :func:`attack_checks`
turns the probes and AutoAttack's outcome into :class:`~robustsuite_common.verdict.Check` rows. Both are callable
alone; the overview experiment calls them after its AutoAttack batches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .probes import Probes, large_eps, pgd, probe
from .verdict import Check

__all__ = ["AutoAttackOutcome", "Probes", "attack_checks", "large_eps", "pgd", "probe", "validity_checks"]

#: AutoAttack's own tolerance for Square lowering robust accuracy (``check_square_sr``), used for every
#: "k points broken that should not be" rule below: fail when the Clopper-Pearson lower bound of k/n exceeds it.
ALPHA = 0.002
#: The half-width of the robust accuracy's 95 % interval a leaderboard-grade evaluation reaches.
HALF_WIDTH = 0.03
#: PGD minus AutoAttack above this (an estimate, in accuracy) fails: the PGD number overstates robustness.
PGD_GAP = 0.10


@dataclass(frozen=True)
class AutoAttackOutcome:
    """AutoAttack on ``n`` points, as :func:`robustsuite_common.autoattack.autoattack` returns it (merged over
    batches): per point ``robust`` (after the attack, recomputed on the returned inputs), ``clean`` (correct
    before), ``reported_robust`` (AutoAttack's own returned label is the true one; ``None`` when not kept),
    ``robust_after`` (points still robust after each attack in order, ``"clean"`` first), AutoAttack's own
    ``flags`` and the ``attack`` that ran (with its ``version``)."""

    robust: Sequence[bool]
    clean: Sequence[bool]
    attack: str
    version: str = "standard"
    robust_after: dict[str, int] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    reported_robust: Sequence[bool] | None = None

    @property
    def n(self) -> int:
        return len(self.robust)



def _rate(k: int, n: int) -> tuple[float, tuple[float, float]]:
    from .intervals import proportion

    iv = proportion(int(k), int(n))
    return iv.estimate, iv.ci


def _paired(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray, seed: int) -> tuple[float, tuple[float, float]]:
    from .intervals import paired_difference

    iv = paired_difference(np.asarray(a, dtype=float), np.asarray(b, dtype=float), seed=seed, bounds=(-1.0, 1.0))
    return iv.estimate, iv.ci


def _flag(flags: Sequence[str], *words: str) -> str:
    return "; ".join(f for f in flags if any(w in f.lower() for w in words))


def validity_checks(correct: Sequence[bool], labels: Sequence[int], *, aa: AutoAttackOutcome | None = None,
                    probes: Probes | None = None, split_size: int | None = None, standard_budget: bool = True,
                    evidence: str = "") -> list[Check]:
    """The *validity* group: accuracy above chance (Clopper-Pearson against the majority-class share), the sample
    size (half-width of AutoAttack's interval against ±0.03), a deterministic and static model, logits as
    outputs, and a standard budget on the whole split (else "not leaderboard-comparable")."""
    hits = np.asarray(correct, dtype=bool)
    y = np.asarray(labels)
    n = int(hits.size)
    chance = float(np.bincount(y).max() / y.size)
    acc, ci = _rate(int(hits.sum()), n)
    out = [Check("above-chance", "validity", "Clean accuracy above chance", "pass" if ci[0] > chance else "fail",
                 f"fail when the 95 % Clopper-Pearson interval of clean accuracy reaches the majority-class share "
                 f"{chance:.3f}", acc, ci, n, evidence,
                 "" if ci[0] > chance else "the model is at chance on this data: check the labels, the "
                 "preprocessing (?mean=&std=) and the class order before reading any attack number")]
    if aa is not None and aa.n:
        k = int(np.sum(aa.robust))
        r, rci = _rate(k, aa.n)
        half = (rci[1] - rci[0]) / 2
        need = math.ceil(1.96 ** 2 * max(r * (1 - r), 0.05 * 0.95) / HALF_WIDTH ** 2)
        out.append(Check("sample-size", "validity", "Enough points for the robust accuracy",
                         "pass" if half <= HALF_WIDTH else "warn",
                         f"warn when the 95 % interval of robust accuracy is wider than ±{HALF_WIDTH}", half,
                         None, aa.n, evidence,
                         "" if half <= HALF_WIDTH else f"about {need} points give ±{HALF_WIDTH} (--limit {need})",
                         detail=f"robust accuracy {r:.3f} [{rci[0]:.3f}, {rci[1]:.3f}] on {aa.n} points"))
    if probes is not None:
        heard = _flag(aa.flags, "randomized") if aa is not None else ""
        bad = probes.logit_change > 1e-4 or bool(heard)
        out.append(Check("randomized-model", "validity", "Deterministic model", "fail" if bad else "pass",
                         "fail when two identical calls change the L2-normalised logits by more than 1e-4 "
                         "(AutoAttack's check_randomized) or AutoAttack flags the model", probes.logit_change,
                         None, len(probes.pgd), evidence,
                         "randomized model: evaluate with AutoAttack's version='rand' (expectation over "
                         "transformation) and report that version" if bad else "",
                         detail=heard))
        heard = _flag(aa.flags, "dynamic") if aa is not None else ""
        bad = probes.autograd_calls > 0 or bool(heard)
        out.append(Check("dynamic-model", "validity", "Static model (no autograd in the forward pass)",
                         "fail" if bad else "pass",
                         "fail when the forward pass calls autograd (AutoAttack's check_dynamic): the model adapts "
                         "at test time and a static attack does not evaluate it", float(probes.autograd_calls),
                         None, None, evidence,
                         "a test-time-adaptive model: declare it adaptive (?adaptive=1) so the audit plays the "
                         "transductive threat models, and attack it adaptively" if bad else "", detail=heard))
        heard = _flag(aa.flags, "probabilit") if aa is not None else ""
        bad = probes.probability_rows > 0 or bool(heard)
        m = len(probes.pgd)
        out.append(Check("logits-output", "validity", "Outputs are logits", "fail" if bad else "pass",
                         "fail when output rows look like probabilities (in [0, 1], summing to 1): attacks on "
                         "softmax outputs have vanishing gradients", probes.probability_rows / max(m, 1), None, m,
                         evidence, "declare the outputs (?outputs=probabilities) so log p is attacked, or serve "
                                   "logits" if bad else "", detail=heard))
    if aa is not None and aa.n:
        whole = split_size is None or aa.n >= split_size
        ok = standard_budget and aa.version == "standard" and whole
        why = [w for w, c in ((f"version {aa.version!r}", aa.version != "standard"),
                               ("iterations or restarts changed", not standard_budget),
                               (f"{aa.n} of {split_size} test points", not whole)) if c]
        out.append(Check("standard-budget", "validity", "Standard AutoAttack on the whole split",
                         "pass" if ok else "warn",
                         "warn (not leaderboard-comparable) unless standard AutoAttack ran with its own iterations "
                         "on every test point", aa.n / split_size if split_size else 1.0, None, aa.n, evidence,
                         "" if ok else "for a leaderboard-comparable number run standard AutoAttack on the whole "
                         "test split (no --limit)", detail="; ".join(why) + f" ({aa.attack})"))
    return out


def attack_checks(aa: AutoAttackOutcome, probes: Probes, *, seed: int = 0, claim: float | None = None,
                  evidence: str = "") -> list[Check]:
    """The *attack strength* group (and ``--claim``), from AutoAttack's outcome and :func:`probe`'s on the same
    points; each rule is in the check. Checks on p-values carry them for :func:`~robustsuite_common.verdict
    .apply_fdr`."""
    n = aa.n
    if not n or len(probes.pgd) != n:
        raise ValueError(f"probes must be measured on AutoAttack's {n} points, got {len(probes.pgd)}")
    robust = np.asarray(aa.robust, dtype=bool)
    out: list[Check] = []

    d, ci = _paired(probes.pgd, robust, seed)
    status = "fail" if d > PGD_GAP else "warn" if ci[0] > 0 else "pass"
    out.append(Check("pgd-vs-autoattack", "attack-strength", "PGD agrees with AutoAttack", status,
                     f"PGD-{probes.n_iter} minus AutoAttack robust accuracy on the same points (paired bootstrap): "
                     f"warn when the interval lies above 0, fail when the estimate exceeds {PGD_GAP}", d, ci, n,
                     evidence, "" if status == "pass" else "report AutoAttack, not PGD; a large gap is the mark of "
                     "masked gradients (check the temperature illusion)"))

    out += _square_check(aa, n, evidence)
    out += _gradient_checks(aa, probes, n, seed, evidence)
    out += _budget_checks(probes, n, seed, evidence)

    if aa.reported_robust is not None:
        reported = np.asarray(aa.reported_robust, dtype=bool)
        k = int((~reported & robust).sum())
        rate, rci = _rate(k, n)
        status = "fail" if rci[0] > ALPHA else "warn" if k else "pass"
        out.append(Check("silent-success", "attack-strength", "Returned points match the attack's own outcome",
                         status, "points AutoAttack counted as broken whose returned input the model still "
                         f"classifies correctly, k/n: fail when the Clopper-Pearson lower bound exceeds {ALPHA}, "
                         "warn when k > 0 (unstable predictions, Pintor et al. 2022)", rate, rci, n, evidence,
                         "" if status == "pass" else "predictions are unstable near the boundary: evaluate "
                         "with the rand version and report the recomputed number"))

    if claim is not None:
        from .intervals import proportion

        iv = proportion(int(robust.sum()), n)
        status = "fail" if claim > iv.high else "pass"
        out.append(Check("claim", "lenses", "The claimed robust accuracy is within reach", status,
                         f"fail when the claimed {claim:.4g} exceeds the upper end of AutoAttack's 95 % "
                         "Clopper-Pearson interval", iv.estimate, iv.ci, n, evidence,
                         "" if status == "pass" else "the claim is not supported by AutoAttack: report "
                         f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"))
    return out


def _square_check(aa: AutoAttackOutcome, n: int, evidence: str) -> list[Check]:
    """Square, the black-box attack, must not break points the white-box attacks left robust."""
    out: list[Check] = []
    after = aa.robust_after
    if "square" in after and len(after) > 2:
        white = min(v for k, v in after.items() if k not in ("square", "clean"))
        k = max(0, white - after["square"])
        rate, rci = _rate(k, n)
        status = "fail" if rci[0] > ALPHA else "warn" if k else "pass"
        out.append(Check("square-beats-white-box", "attack-strength", "Black-box attack weaker than white-box",
                         status, f"points Square broke after the white-box attacks left them robust, k/n: fail when "
                         f"the Clopper-Pearson lower bound exceeds {ALPHA} (AutoAttack's check_square_sr), warn "
                         "when k > 0", rate, rci, n, evidence,
                         "" if status == "pass" else "gradients mislead the white-box attacks: run Square with more "
                         "queries and an adaptive attack", detail=_flag(aa.flags, "square")))
    else:
        out.append(Check("square-beats-white-box", "attack-strength", "Black-box attack weaker than white-box",
                         "not-applicable", "needs Square after the white-box attacks", None, None, n, evidence,
                         detail=f"attacks run: {', '.join(k for k in after if k != 'clean') or 'unknown'}"))
    return out


def _gradient_checks(aa: AutoAttackOutcome, probes: Probes, n: int, seed: int, evidence: str) -> list[Check]:
    """Input gradients exist, and the iterative attack beats the single-step one."""
    out: list[Check] = []
    k = int(np.sum(probes.zero_grad))
    rate, rci = _rate(k, n)
    heard = _flag(aa.flags, "zero gradient")
    status = "fail" if rci[0] > ALPHA else "warn" if k or heard else "pass"
    out.append(Check("zero-gradients", "attack-strength", "Input gradients available", status,
                     f"points whose cross-entropy input gradient is zero or not finite, k/n: fail when the "
                     f"Clopper-Pearson lower bound exceeds {ALPHA}, warn when k > 0 or AutoAttack saw any", rate, rci,
                     n, evidence, "" if status == "pass" else "gradients are masked (saturated softmax, "
                     "non-differentiable preprocessing): use BPDA or a gradient-free attack, and the temperature "
                     "lens", detail=heard))

    d, ci = _paired(probes.fgsm, probes.pgd, seed + 1)
    status = "fail" if ci[1] < 0 else "pass"
    out.append(Check("iterative-beats-single-step", "attack-strength", "Iterative attack stronger than single-step",
                     status, "FGSM minus PGD robust accuracy (paired): fail when the interval lies below 0 (one step "
                     "beats many: the loss surface is masked)", d, ci, n, evidence,
                     "" if status == "pass" else "gradient masking: the iterative attack is stuck; try other "
                     "losses, step sizes and restarts"))
    return out


def _budget_checks(probes: Probes, n: int, seed: int, evidence: str) -> list[Check]:
    """The attack's budget behaves: accuracy falls with ε, reaches zero unbounded, and more iterations change
    nothing."""
    out: list[Check] = []
    sweep = [np.asarray(s, dtype=bool) for s in probes.sweep]
    rises = [_paired(b, a, seed + 2 + i) for i, (a, b) in enumerate(zip(sweep, sweep[1:], strict=False))]
    if rises:
        worst = max(range(len(rises)), key=lambda i: rises[i][0])
        d, ci = rises[worst]
        status = "fail" if any(r[1][0] > 0 for r in rises) else "pass"
        accs = ", ".join(f"ε {e:g}: {s.mean():.3f}" for e, s in zip(probes.sweep_eps, sweep, strict=True))
        out.append(Check("epsilon-monotone", "attack-strength", "Accuracy falls as ε grows", status,
                         "APGD-CE robust accuracy at ε/2, ε, 2ε, 4ε on the same points: fail when it rises from one "
                         "ε to the next (paired interval above 0); statistic: the largest rise", d, ci, n, evidence,
                         "" if status == "pass" else "a larger budget must not help the model: the attack is "
                         "failing (masked gradients)", detail=accs))

    k = int(np.sum(probes.large))
    rate, rci = _rate(k, n)
    status = "fail" if rci[0] > ALPHA else "pass"
    out.append(Check("unbounded-attack", "attack-strength", "An unbounded attack reaches zero accuracy", status,
                     f"robust accuracy of APGD-CE at ε {probes.large_eps:g} (the whole input box): fail when its "
                     f"Clopper-Pearson lower bound exceeds {ALPHA} (Carlini et al. 2019; Pintor et al. 2022)", rate,
                     rci, n, evidence, "" if status == "pass" else "the attack cannot succeed even without a "
                     "budget: its gradients are broken, so every bounded number is an overestimate"))

    from .intervals import mcnemar

    t = mcnemar(probes.sweep[probes.sweep_eps.index(probes.eps)], probes.doubled, seed=seed + 9)
    out.append(Check("more-iterations", "attack-strength", "Doubling the iterations changes nothing", "pass",
                     f"APGD-CE robust accuracy with {probes.n_iter} minus {2 * probes.n_iter} iterations on the same "
                     "points: warn when the exact McNemar test is significant after Benjamini-Hochberg",
                     t.difference.estimate, t.difference.ci, n, evidence,
                     "the attack has not converged: raise its iterations until the number stops moving",
                     p_value=t.p_value, status_if_significant="warn"))
    return out
