"""Standard AutoAttack (Croce & Hein, 2020) as the field runs it: the one call every package uses when it
reports "robust accuracy" without naming another attack (RobustBench's leaderboards report this number).

Uses PyPI's ``pyautoattack`` (the ``autoattack`` extra). AutoAttack seeds torch's global RNG itself; the call
runs inside ``torch.random.fork_rng`` so the caller's RNG state is unchanged, and the model comes back as it
came (:func:`robustsuite_common.models.evaluating`). Models returning dicts, tuples or ``ModelOutput`` are
adapted to plain logits first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .checks import check_choice, check_float, check_int, check_labels
from .extras import optional_import
from .models import as_model_input, evaluating, forward_logits, logits_from, model_device

__all__ = ["AUTOATTACK_VERSIONS", "AutoAttackResult", "autoattack", "autoattack_version"]

AUTOATTACK_VERSIONS = ("standard", "plus", "rand", "custom")


def autoattack_version() -> str:
    """``"pyautoattack <version>"``, for provenance; ImportError naming the extra when it is missing."""
    pyautoattack = optional_import("pyautoattack", extra="robustsuite-common[autoattack]", feature="AutoAttack")
    return f"pyautoattack {pyautoattack.__version__}"


@dataclass(frozen=True)
class AutoAttackResult:
    """``x_adv`` (same shape as the inputs), per-sample ``robust`` (the model still answers ``y`` on
    ``x_adv``), ``clean_correct``, and what ran (``attack``: e.g. ``"pyautoattack 0.2.0 standard, Linf
    eps=0.1, seed 0"``).

    What AutoAttack itself saw, kept for the verdict's indicators (``robustsuite_common.indicators``):
    ``robust_after`` the number of points still robust after each attack in the order run (``"clean"`` first),
    ``flags`` the warnings of AutoAttack's own checks (randomized or dynamic model, probability outputs, zero
    gradients, Square beating the white-box attacks), and ``reported_robust`` whether AutoAttack's own returned
    label is still ``y`` (it can differ from ``robust`` when the model is unstable or an attack succeeded
    silently).
    """

    x_adv: Any
    robust: Any
    clean_correct: Any
    attack: str
    robust_after: dict[str, int] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    reported_robust: Any = None

    @property
    def robust_accuracy(self) -> float:
        return float(self.robust.float().mean())


class _Logits:
    """Wraps a model so AutoAttack sees plain logits (AutoAttack reads ``.parameters()`` for the device)."""

    def __new__(cls, model: Any, outputs: str) -> Any:
        import torch

        class Adapter(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = model

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return logits_from(self.inner(x), outputs=outputs, n=x.shape[0])

        return Adapter()


def autoattack(model: Any, x: Any, y: Any, *, eps: float, norm: str = "Linf", version: str = "standard",
               seed: int = 0, batch_size: int = 250, attacks: list[str] | None = None, n_iter: int | None = None,
               n_restarts: int | None = None, outputs: str = "logits") -> AutoAttackResult:
    """Run AutoAttack (``version="standard"``: APGD-CE, APGD-T, FAB-T, Square) on ``model`` at ``eps``.

    ``x``: ``(N, C, H, W)`` in [0, 1]; ``y``: integer labels. ``attacks``/``n_iter``/``n_restarts`` are for
    ``version="custom"`` or cheaper runs (a departure from standard AutoAttack that the caller must name).
    """
    import torch

    from .checks import check_images, check_seed

    check_images("x", x)
    y_np = check_labels("y", y, length=x.shape[0])
    eps = check_float("eps", eps, gt=0.0)
    norm = check_choice("norm", norm, ("Linf", "L2", "L1"))
    version = check_choice("version", version, AUTOATTACK_VERSIONS)
    if norm == "Linf" and eps > 1:
        raise ValueError(f"eps must be <= 1 for Linf on inputs in [0, 1], got {eps}")
    check_seed("seed", seed)
    check_int("batch_size", batch_size, ge=1)
    if version == "custom" and not attacks:
        raise ValueError("version='custom' needs attacks=[...] (e.g. ['apgd-ce', 'apgd-t'])")
    what = autoattack_version()
    import logging

    from pyautoattack import AutoAttack

    device = model_device(model)
    logging.getLogger("auto-attack").setLevel(logging.WARNING)
    yt = torch.as_tensor(y_np, device=device)
    with evaluating(model, freeze_parameters=True):
        logits = forward_logits(model, x, outputs=outputs, batch_size=batch_size)
        targeted = version in ("standard", "plus") or any(a.endswith("-t") for a in attacks or [])
        if targeted and logits.shape[1] < 4:
            raise ValueError(f"model has {logits.shape[1]} classes: AutoAttack's targeted attacks (APGD-T, FAB-T, in "
                             "version 'standard') need at least 4; use version='custom' with attacks=['apgd-ce', "
                             "'square'] and name that attack in the report")
        clean = logits.argmax(1) == yt
        wrapped = _Logits(model, outputs)
        devices = [device] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            kwargs: dict[str, Any] = {"eps": eps, "norm": norm, "seed": int(seed), "device": device,
                                      "version": version}
            if version == "custom":
                kwargs["attacks"] = list(attacks or [])
            adversary = AutoAttack(wrapped, **kwargs)
            adversary.verbose = False
            for sub in (adversary.apgd_targeted, adversary.fab):  # 9 target classes in the standard version
                sub.n_target_classes = min(sub.n_target_classes, logits.shape[1] - 1)
            for sub in (adversary.apgd, adversary.apgd_targeted, adversary.fab):
                if n_iter is not None:
                    sub.n_iter = check_int("n_iter", n_iter, ge=1)
                if n_restarts is not None:
                    sub.n_restarts = check_int("n_restarts", n_restarts, ge=1)
            # contiguous: pyautoattack reshapes with .view, which refuses strided batches
            with _listening() as heard:
                out = adversary.run_standard_evaluation(as_model_input(model, x).contiguous(), yt,
                                                        batch_size=batch_size)
        x_adv = (out[0] if isinstance(out, tuple) else out).detach()
        reported = (out[1].to(yt.device) == yt) if isinstance(out, tuple) else None
        if norm == "Linf":
            xin = as_model_input(model, x)
            x_adv = torch.minimum(torch.maximum(x_adv, xin - eps), xin + eps).clamp(0, 1)
        robust = (forward_logits(model, x_adv, outputs=outputs, batch_size=batch_size).argmax(1) == yt) & clean
    label = f"{what} {version}" + (f" {list(attacks or [])}" if version == "custom" else "")
    if n_iter is not None or n_restarts is not None:
        label += f" (n_iter={n_iter}, n_restarts={n_restarts}: not the standard budget)"
    n = int(yt.shape[0])
    after = {k: int(round(v * n)) for k, v in heard["robust_accuracy"].items()}
    return AutoAttackResult(x_adv=x_adv.to(x.device), robust=robust.cpu(), clean_correct=clean.cpu(),
                            attack=f"{label}, {norm} eps={eps:g}, seed {seed}", robust_after=after,
                            flags=tuple(dict.fromkeys(heard["flags"])),
                            reported_robust=None if reported is None else reported.cpu())


@contextmanager
def _listening() -> Iterator[dict]:
    """For the duration of one AutoAttack run: AutoAttack's warnings (its ``auto-attack`` logger) and the robust
    accuracy after each attack (the dict it hands to its own Square check), which it otherwise only logs."""
    import logging

    from pyautoattack import checks

    heard: dict = {"flags": [], "robust_accuracy": {}}

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                heard["flags"].append(record.getMessage())

    log, handler, square_check = logging.getLogger("auto-attack"), Keep(), checks.check_square_sr

    def keep_square(acc_dict, *args, **kwargs):
        heard["robust_accuracy"] = dict(acc_dict)
        return square_check(acc_dict, *args, **kwargs)

    for name in checks.funcs:  # check_dynamic's counters are module globals that never reset: one dynamic model
        checks.funcs[name] = 0  # seen earlier in the process would flag every later model
    log.addHandler(handler)
    checks.check_square_sr = keep_square
    try:
        yield heard
    finally:
        checks.check_square_sr = square_check
        log.removeHandler(handler)
