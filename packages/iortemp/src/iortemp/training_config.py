"""The hyper-parameters of adversarial training (:class:`TrainingConfig`, App. C defaults), shared by the training
loop (:mod:`iortemp.training`) and its adversaries (:mod:`iortemp.embedding`, :mod:`iortemp.ascc`,
:mod:`iortemp.ddi`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from robustsuite_common.checks import check_choice, check_int

__all__ = ["ADV_SCALES", "METHODS", "NORMALIZATIONS", "TrainingConfig"]

METHODS = ("base", "ddi-at", "pgd", "freelb", "ascc")
NORMALIZATIONS = ("normalise", "clip", "none")
ADV_SCALES = ("absolute", "embedding")


@dataclass(frozen=True)
class TrainingConfig:
    """Hyper-parameters (Appendix C defaults). ``ddi_normalization`` is the Table 5 switch.

    ``adv_scale`` says how ``adv_init_mag``, ``adv_lr`` and ``adv_max_norm`` are read: ``"absolute"`` (the
    paper / TextDefender: plain L2 norms over the perturbed sequence of token embeddings, tuned for base-size
    models whose input-embedding vectors have norms of about 1) or ``"embedding"`` (the same numbers in units
    of the model's mean input-embedding-vector L2 norm, measured when training starts, so that one setting
    means the same relative perturbation for a base-size model and a tiny one; for a model whose mean
    embedding norm is 1 both readings coincide).
    """

    lr: float = 1e-5
    batch_size: int = 8
    epochs: int = 5
    warmup_steps: int = 0
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    max_length: int = 128
    adv_steps: int = 5
    adv_lr: float = 0.03
    adv_init_mag: float = 0.05
    adv_max_norm: float = 1.0
    ddi_m: int = 3
    ddi_k: int = 3
    ddi_normalization: str = "normalise"
    ddi_clip_norm: float = 1.0
    ddi_solver: str = "auto"
    # ASCC (Dong et al., 2021; the paper's other defense baseline): adversarial sparse convex combinations of
    # each word's synonym embeddings; their defaults: beta = 4 (KL weight), 10 ascent steps, entropy weight 10
    ascc_beta: float = 4.0
    ascc_steps: int = 10
    ascc_lr: float = 10.0
    ascc_entropy: float = 10.0
    ascc_max_synonyms: int = 8
    adv_scale: str = "absolute"

    def __post_init__(self):
        check_choice("ddi_normalization", self.ddi_normalization, NORMALIZATIONS)
        check_choice("adv_scale", self.adv_scale, ADV_SCALES)
        check_choice("ddi_solver", self.ddi_solver, ("auto", "exact", "cvxpy"))
        for name in ("batch_size", "epochs", "max_length", "adv_steps", "ddi_m", "ddi_k", "ascc_steps",
                     "ascc_max_synonyms"):
            check_int(name, getattr(self, name), ge=1)
        if self.ascc_beta < 0 or self.ascc_entropy < 0:
            raise ValueError("ascc_beta and ascc_entropy must be >= 0")
        for name in ("lr", "adv_lr", "ddi_clip_norm", "ascc_lr"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a finite number > 0, got {v}")
        if self.adv_init_mag < 0 or self.adv_max_norm < 0:
            raise ValueError("adv_init_mag and adv_max_norm must be >= 0 (0 disables)")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["betas"] = list(self.betas)
        return d
