"""The referee of §4: scores the adapted model on the perturbed batch (and Eq. 1 for rejection)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch

from .threat_model import Adaptation

__all__ = ["RoundScore", "score_round"]


@dataclass(frozen=True)
class RoundScore:
    """Referee's verdict on one round.

    - ``accuracy``: fraction of U' that F* classifies correctly (the paper's robustness when the
      attack perturbs, its accuracy when it does not);
    - ``error_accepted``: err_{U'}(F|_S) of Eq. 1 = |{x' in U' ∩ S : F(x') != y}| / |U'|;
    - ``rejection_rate``: rej_U(S) of Eq. 1 = |U \\ S| / |U|, on the *clean* batch U;
    - ``accepted_fraction``: |U' ∩ S| / |U'|. The last three are ``None`` for a Γ without rejection;
    - ``correct``: the per-sample record, True where F*(x') = y (for paired comparisons of two attacks);
    - ``predictions``: F*(x') per sample (the class Γ's adapted model predicts on the perturbed point);
    - ``accepted``: per sample, x' ∈ S (only for a rejecting Γ; empty otherwise).
    """

    round: int
    n: int
    accuracy: float
    error_accepted: float | None = None
    rejection_rate: float | None = None
    accepted_fraction: float | None = None
    correct: tuple[bool, ...] = ()
    predictions: tuple[int, ...] = ()
    accepted: tuple[bool, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["correct"] = [bool(c) for c in self.correct]
        d["predictions"] = [int(c) for c in self.predictions]
        d["accepted"] = [bool(c) for c in self.accepted]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RoundScore:
        """The inverse of :meth:`to_dict`."""
        return cls(round=int(d["round"]), n=int(d["n"]), accuracy=float(d["accuracy"]),
                   error_accepted=d["error_accepted"], rejection_rate=d["rejection_rate"],
                   accepted_fraction=d["accepted_fraction"], correct=tuple(bool(c) for c in d["correct"]),
                   predictions=tuple(int(c) for c in d["predictions"]), accepted=tuple(bool(c) for c in d["accepted"]))


def score_round(adaptation: Adaptation, x_adv: torch.Tensor, y: torch.Tensor, *,
                x_clean: torch.Tensor | None = None, rejects: bool = False, round_index: int = 0) -> RoundScore:
    """Score F* = ``adaptation.model`` on (U', y); with ``rejects`` also Eq. 1 (needs ``x_clean``)."""
    from robustsuite_common.checks import check_images

    from ._validate import check_labels

    if not isinstance(adaptation, Adaptation):
        raise TypeError(f"adaptation must be an Adaptation, got {type(adaptation).__name__}")
    check_images("x_adv", x_adv)
    y = check_labels("y", y, x_adv.shape[0], device=x_adv.device, model=adaptation.model, x=x_adv)
    if x_clean is not None:
        check_images("x_clean", x_clean)
    pred = adaptation.predict(x_adv)
    correct = pred.eq(y.to(pred.device))
    n = int(y.shape[0])
    accuracy = float(correct.float().mean())
    record = tuple(bool(c) for c in correct.tolist())
    preds = tuple(int(c) for c in pred.tolist())
    if not rejects:
        return RoundScore(round=round_index, n=n, accuracy=accuracy, correct=record, predictions=preds)
    if x_clean is None:
        raise ValueError("x_clean is needed to score the rejection rate rej_U(S) of a rejecting defense")
    accepted = adaptation.accepts(x_adv).to(correct.device)
    err = float((accepted & ~correct).float().sum()) / n
    rej = 1.0 - float(adaptation.accepts(x_clean).float().mean())
    return RoundScore(round=round_index, n=n, accuracy=accuracy, error_accepted=err, rejection_rate=rej,
                      accepted_fraction=float(accepted.float().mean()), correct=record, predictions=preds,
                      accepted=tuple(bool(a) for a in accepted.tolist()))


def attack_error(adaptation: Adaptation, x_adv: torch.Tensor, y: torch.Tensor, *, rejects: bool,
                 logits: torch.Tensor | None = None) -> float:
    """The L(F^(i+1), V^(i)) of Algorithms 1–2, line 5: 0-1 error (on accepted points if Γ rejects).
    ``logits`` = F^(i+1)(x_adv) when the caller already has them."""
    pred = adaptation.predict(x_adv) if logits is None else logits.argmax(dim=1)
    wrong = pred.ne(y.to(pred.device))
    if rejects:
        wrong = wrong & adaptation.accepts(x_adv).to(wrong.device)
    return float(wrong.float().mean())
