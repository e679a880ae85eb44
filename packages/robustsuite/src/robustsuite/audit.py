"""``robustsuite audit``: the run config that puts every lens that applies to a model on it, as ordinary units.

Images: the robust-accuracy overview with the indicators (``certcal.overview`` + ``robustsuite_common.indicators``),
and each method package's ``audit`` preset that applies to a vision model (the temperature illusion, uncertainty
and calibration under attack); text: the overview's validity checks and Zéroe noise; ``--adaptive``: DENT played
over the model against the static model under the transductive threat models. The verdict
itself is assembled with the report (:mod:`robustsuite.report.verdicts`).
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import ConfigError

__all__ = ["LENSES", "audit_config", "parse_eps"]

@dataclass(frozen=True)
class Lens:
    """A lens of the audit: ``method`` (its runner), the ``package`` whose experiment holds the ``audit`` preset, the
    model ``kinds`` it applies to, whether it needs a model declared ``adaptive``, its runner ``inputs``
    (``{model}``/``{data}`` filled in) and where its config takes the budget (``budget``: ``{"eps": dotted key,
    "norm": dotted key}``)."""

    method: str
    package: str
    kinds: tuple[str, ...]
    inputs: dict[str, Any]
    budget: dict[str, str] = field(default_factory=dict)
    adaptive: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    norms: tuple[str, ...] = ("Linf", "L2")


LENSES: tuple[Lens, ...] = (
    Lens("iortemp", "iortemp", ("vision",), {"model": "{model}", "dataset": "{data}", "vision_model": ""},
         {"eps": "audit.eps", "norm": "audit.norm"}),
    Lens("uncspan", "uncspan", ("vision",), {"model": "{model}", "dataset": "{data}", "compare": [], "osr_models": []},
         {"eps": "attack.eps", "norm": "attack.norm"}),
    Lens("certcal", "certcal", ("vision",), {"model": "{model}", "dataset": "{data}", "noise_models": []},
         {"eps": "ace.eps_{norm}", "norm": "ace.norms"}),
    Lens("zeroe_perturb", "zeroe_perturb", ("text",), {"model": "{model}", "dataset": "{data}"}),
    # DENT played over the user's model (its BatchNorm layers adapt on each test batch), against the static model
    Lens("transduct_attack", "transduct_attack", ("vision",),
         {"model": "{model}", "at_model": "{model}", "dataset": "{data}"}, {"eps": "threat.eps"}, adaptive=True,
         config={"audit": {"adaptive": "dent"}}, norms=("Linf",)),
)


def parse_eps(text: str | float) -> float:
    """ε as a number or a fraction (``0.031``, ``8/255``); ``ConfigError`` naming ``--eps`` otherwise."""
    try:
        value = float(Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        raise ConfigError(f"--eps must be a number or a fraction like 8/255, got {text!r}") from None
    if not value > 0:
        raise ConfigError(f"--eps must be > 0 (a budget in [0, 1] pixel space), got {text!r}")
    return value


def _has_audit_preset(package: str) -> bool:
    try:
        return "audit" in importlib.import_module(f"{package}.experiment").PRESETS
    except ImportError:
        return False


def _fill(value: Any, model: str, data: str) -> Any:
    if isinstance(value, str):
        return value.format(model=model, data=data)
    if isinstance(value, list):
        return [_fill(v, model, data) for v in value]
    return value


def audit_config(model: str, data: str, *, eps: float | None, norm: str = "Linf", limit: int | None = 1000,
                 claim: float | None = None, adaptive: bool = False, seed: int = 0, device: str = "cpu") -> dict:
    """The run config of ``robustsuite audit MODEL DATA``: the overview (AutoAttack at ``eps`` with the
    indicators for an image model) and every lens whose package has an ``audit`` preset and applies to the model's
    modality. ``limit``: first N samples of every split (``None``: all)."""
    from .zoo import modality

    kind = modality(model)
    if norm not in ("Linf", "L2"):
        raise ConfigError(f"--norm must be Linf or L2, got {norm!r}")
    if kind == "vision" and eps is None:
        raise ConfigError("--eps is required for an image model (the budget in [0, 1] pixel space, e.g. 8/255)")
    if kind == "vision" and norm == "Linf" and eps is not None and eps > 1:
        raise ConfigError(f"--eps must be <= 1 for the L∞ norm on images in [0, 1], got {eps}")
    if claim is not None and not 0 <= claim <= 1:
        raise ConfigError(f"--claim must be a robust accuracy in [0, 1], got {claim}")
    overview: dict[str, Any] = {"preset": "demo", "targets": [[model, data]],
                                "config": {"robust_accuracy": "always" if kind == "vision" else "never",
                                           "autoattack_n": 0}}
    if kind == "vision":
        overview["config"] |= {"eps": float(eps), "norm": norm, "claim": float(claim or 0.0)}
    methods: dict[str, Any] = {"overview": overview}
    for lens in LENSES:
        if kind not in lens.kinds or lens.adaptive and not adaptive or not _has_audit_preset(lens.package):
            continue
        if norm not in lens.norms:
            if lens.adaptive:
                raise ConfigError(f"--adaptive plays the transductive games in {' or '.join(lens.norms)} only; "
                                  f"got --norm {norm}")
            continue
        entry: dict[str, Any] = {"preset": "audit", **{k: _fill(v, model, data) for k, v in lens.inputs.items()}}
        if lens.config:
            entry["config"] = copy.deepcopy(lens.config)
        for name, key in lens.budget.items():
            value = {"eps": eps, "norm": norm}[name]
            key = key.format(norm=norm.lower())
            value = [norm.lower()] if key == "ace.norms" else value  # certcal names its norms in lower case
            if value is not None:
                node = entry.setdefault("config", {})
                *path, leaf = key.split(".")
                for part in path:
                    node = node.setdefault(part, {})
                node[leaf] = value
        methods[lens.method] = entry
    config: dict[str, Any] = {"seed": seed, "device": device, "methods": methods}
    if limit:
        config["limit"] = int(limit)
    return config
