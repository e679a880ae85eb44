"""Temperature-scaled models (Eq. 8): the design temperature T_d of a served model and the adversary's T_a.

Two numerics are kept apart on purpose:

* **served** (``__call__`` / ``forward``): the model's own float32 logits divided by T in float32, exactly
  what a deployed model returns. A softmax of these in float32 saturates at T_d = 0.005 (the true-class
  probability is exactly 1.0 for any margin above ~0.08), which is part of what stalls attack searches
  (Sec. 3, Eq. 6); reproductions must attack this output.
* **reporting** (``logits64``): the underlying logits cast to float64 first and then divided by T, so
  confidences and calibration are computed without that saturation, e.g. a T_d = 2e6 model reports
  50.00007 % (Table 1) rather than 50 % or NaN.

The argmax is unchanged by any T > 0 in both numerics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_int, check_texts
from robustsuite_common.models import as_model_input, evaluating, logits_from, text_logits

from ._validation import check_temperature

__all__ = ["TemperatureScaled", "TemperatureScaledModule", "TemperatureScaledText", "logits64", "served_systems"]


class TemperatureScaledText:
    """A text classifier returning ``logits / T`` (float32), usable as a TextAttack ``ModelWrapper``.

    ``model`` is any callable ``list[str] -> np.ndarray (N, K)`` of logits. The TextAttack wrapper
    contract is met by duck typing: ``__call__(text_list)``, ``.model`` (the wrapped network, for
    TextAttack's compatibility check) and ``.tokenizer`` when the inner classifier has one.

    Paper: a system served at the design temperature T_d, Eq. 8 (§3.1).
    """

    def __init__(self, model: Callable[[list[str]], Any], *, temperature: float):
        if not callable(model):
            raise TypeError("model must be a callable list[str] -> np.ndarray of logits")
        self.inner = model
        self.temperature = check_temperature(temperature)
        self.model = getattr(model, "model", model)
        tok = getattr(model, "tokenizer", None)
        if tok is not None:
            self.tokenizer = tok

    def __call__(self, text_list: Sequence[str]) -> np.ndarray:
        """Served scores: float32 ``logits / T`` computed in float32, as the deployed model returns them."""
        raw = np.asarray(self.inner(check_texts("text_list", text_list, allow_empty=True)))
        served = raw.astype(np.float32, copy=False) / np.float32(self.temperature)
        return served.astype(np.float32, copy=False)

    def logits64(self, text_list: Sequence[str]) -> np.ndarray:
        """Reporting logits: the base logits in float64 divided by the (composed) temperature in float64."""
        return logits64(self.inner, check_texts("text_list", text_list, allow_empty=True)) / self.temperature

    def get_grad(self, text_input: str) -> Any:  # pragma: no cover - TextAttack gradient recipes only
        raise NotImplementedError("gradient-based word importance is not supported by TemperatureScaledText")

    def __repr__(self) -> str:
        return f"TemperatureScaledText(T={self.temperature:g}, model={type(self.model).__name__})"


class TemperatureScaledModule(nn.Module):
    """A vision model ``x -> model(x) / T``; served in the model's dtype, ``logits64`` for reporting.

    Paper: a system served at the design temperature T_d, Eq. 8 (§3.1).
    """

    def __init__(self, model: nn.Module, *, temperature: float):
        super().__init__()
        if not isinstance(model, nn.Module):
            raise TypeError("model must be a torch.nn.Module")
        self.inner = model
        self.temperature = check_temperature(temperature)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = logits_from(self.inner(x), n=x.shape[0])  # tensor, tuple, dict or ModelOutput -> logits
        return out / torch.as_tensor(self.temperature, dtype=out.dtype, device=out.device)

    @torch.no_grad()
    def logits64(self, x: torch.Tensor) -> torch.Tensor:
        reporting = getattr(self.inner, "logits64", None)
        if reporting is not None:
            base = reporting(x)
        else:
            base = logits_from(self.inner(x), n=x.shape[0]).double()
        return base / self.temperature


def TemperatureScaled(model, *, temperature: float):  # noqa: N802 - reads as a type at call sites
    """Wrap ``model`` so its logits are divided by ``temperature`` (Eq. 8).

    Returns a :class:`TemperatureScaledModule` for a ``torch.nn.Module`` (vision contract) and a
    :class:`TemperatureScaledText` for a text classifier callable. Temperatures from 1e-3 to 1e7 give
    finite outputs; the argmax is that of ``model``.
    """
    if isinstance(model, nn.Module):
        return TemperatureScaledModule(model, temperature=temperature)
    if callable(model):
        return TemperatureScaledText(model, temperature=temperature)
    raise TypeError(
        f"model must be a torch.nn.Module or a callable text classifier, got {type(model).__name__}"
    )


def logits64(model, inputs, *, batch_size: int = 256) -> np.ndarray:
    """Float64 logits of ``model`` on ``inputs`` (an ``(N, C, H, W)`` tensor in [0, 1] for a vision
    ``nn.Module``, a list of str for a text classifier; a bare string is refused).

    Uses the reporting numerics of temperature wrappers (no float32 round trip through the scaled
    logits), batched without gradients for vision models on the model's device, in eval mode (the model's
    mode, buffers and ``requires_grad`` restored afterwards). Vision models may return a tensor, a tuple, a
    dict with ``"logits"`` or a ``ModelOutput`` (:func:`robustsuite_common.models.logits_from`).
    """
    check_int("batch_size", batch_size, ge=1)
    if isinstance(model, nn.Module):
        check_images("inputs", inputs, allow_empty=True)
        outs = []
        with evaluating(model), torch.no_grad():
            for i in range(0, inputs.shape[0], batch_size):
                xb = as_model_input(model, inputs[i : i + batch_size])
                reporting = getattr(model, "logits64", None)
                if reporting is not None:
                    out = reporting(xb)
                else:
                    out = logits_from(model(xb), n=xb.shape[0]).double()
                outs.append(out.detach().cpu().double().numpy())
        return np.concatenate(outs, axis=0) if outs else np.zeros((0, 0))
    if not callable(model):
        raise TypeError(f"model must be a torch.nn.Module or a callable text classifier, got {type(model).__name__}")
    texts = check_texts("inputs", inputs, allow_empty=True)
    if hasattr(model, "logits64"):
        return np.asarray(model.logits64(texts), dtype=np.float64)
    return text_logits(model, texts, batch_size=batch_size)  # every batch: shape, rows, probabilities refused


def _device_of(model: nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")


def served_systems(model, *, design_temperatures: dict[str, float] | None = None) -> dict:
    """The served systems of Tables 1-3: ``{"base": model}`` plus ``TemperatureScaled(model, temperature=T_d)`` per entry
    of ``design_temperatures`` (default the paper's ``{"down_conf": 2e6, "up_conf": 0.005}``)."""
    temps = {"down_conf": 2e6, "up_conf": 0.005} if design_temperatures is None else dict(design_temperatures)
    if "base" in temps:
        raise ValueError("design_temperatures must not name a system 'base' (that is the unscaled model)")
    return {"base": model} | {str(k): TemperatureScaled(model, temperature=check_temperature(t, f"design_temperatures[{k!r}]"))
                              for k, t in temps.items()}
