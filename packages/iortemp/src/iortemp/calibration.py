"""Adversary temperature calibration (Sec. 4.1, Eq. 9) and multi-class Platt scaling (App. D.5, Table 13)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.special import log_softmax
from torch import nn

from robustsuite_common.checks import check_choice, check_int
from robustsuite_common.models import logits_from

from ._numerics import scaled_log_softmax64
from ._validation import check_logits_labels, check_temperature
from .temperature import _device_of

__all__ = ["PlattScaler", "TemperatureFit", "calibrate_temperature", "fit_temperature", "temperature_nll"]

# Search interval of the exact method, in natural log of T: T from 1e-13 to 1e13 covers logits served at
# any design temperature in 1e-3..1e7 combined with any reasonable base temperature.
_LOG_T_BOUNDS = (-30.0, 30.0)


def temperature_nll(logits, labels, *, temperature: float) -> float:
    """Mean negative log-likelihood of ``labels`` under ``softmax(logits / T)``, in float64 (Eq. 9)."""
    z, y = check_logits_labels(logits, labels)
    lp = scaled_log_softmax64(z, check_temperature(temperature))
    return float(-lp[np.arange(len(y)), y].mean())


@dataclass(frozen=True)
class TemperatureFit:
    """Adversary calibration on a validation set (Eq. 9), with the separable case made explicit.

    ``separable``: every validation example is classified correctly, so the NLL decreases monotonically as
    T -> 0 and Eq. 9 has no minimiser (an unbounded fit would return T ~ 1e-13 and make an overconfident
    model look calibrated). ``temperature`` is then bounded: the T at which the mean predicted-class
    confidence equals ``alpha ** (1 / n)``, the one-sided (1 - alpha) lower confidence bound of the accuracy of
    a model that got all ``n`` examples right (the least sharp temperature the data cannot reject).
    """

    temperature: float
    separable: bool
    nll: float
    unbounded_temperature: float  # the NLL minimiser inside the search interval (the edge when separable)
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def fit_temperature(logits, labels, *, method: str = "exact", alpha: float = 0.05, **kwargs) -> TemperatureFit:
    """:func:`calibrate_temperature` with the separable case detected and bounded (see :class:`TemperatureFit`).

    ``alpha`` sets the bound's confidence level; ``kwargs`` go to :func:`calibrate_temperature`'s GD options.

    Paper: the adversary's calibrated temperature, §4.1, Eq. 9.
    """
    z, y = check_logits_labels(logits, labels)
    if not (0.0 < alpha < 1.0):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    t_nll = _nll_temperature(z, y, method=method, **kwargs)
    separable = bool(np.all(z.argmax(axis=1) == y)) and bool(np.all(_top2_gap(z) > 0))
    t = t_nll
    if separable:
        target = float(alpha ** (1.0 / len(y)))
        t = max(t_nll, _temperature_for_confidence(z, target))
    return TemperatureFit(float(t), separable, temperature_nll(z, y, temperature=t), float(t_nll), int(len(y)))


def _top2_gap(z: np.ndarray) -> np.ndarray:
    part = np.sort(z, axis=1)
    return part[:, -1] - part[:, -2]


def _temperature_for_confidence(z: np.ndarray, target: float) -> float:
    """The T at which the mean max-softmax probability equals ``target`` (monotone decreasing in T)."""
    k = z.shape[1]

    def gap(log_t: float) -> float:
        lp = log_softmax(z / math.exp(log_t), axis=1)
        return float(np.exp(lp.max(axis=1)).mean()) - target

    lo, hi = _LOG_T_BOUNDS
    if target <= 1.0 / k or gap(hi) >= 0:
        return math.exp(hi)
    if gap(lo) <= 0:
        return math.exp(lo)
    root = brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12)  # pyright: ignore[reportArgumentType] - scipy stubs want float64
    return float(math.exp(root))  # pyright: ignore[reportArgumentType] - brentq without full_output is a float


def calibrate_temperature(
    logits,
    labels,
    *,
    method: str = "exact",
    lr: float = 0.01,
    iterations: int = 5000,
    init: float = 1.0,
) -> float:
    """Adversarial calibrating temperature T_a = argmin_T NLL (Eq. 9).

    ``method="exact"`` minimises the NLL over log T with scipy's bounded Brent method to 1e-10 in log T;
    the NLL is a convex function of 1/T, hence unimodal in log T, so this is the global optimum (at the
    interval edge 1e-13 only if the validation set is perfectly separated). ``method="gd"`` is the paper's
    procedure (plain gradient descent on T, ``lr=0.01``, ``iterations=5000``, from ``init``), kept for faithful
    reproduction: it stalls far from the optimum when T_a is orders of magnitude away from ``init``
    (e.g. the T_d = 2e6 model of Table 3, where calibration did not help).

    On a perfectly classified (separable) validation set Eq. 9 has no minimiser; the bounded temperature of
    :func:`fit_temperature` is returned instead (use it to see whether that happened).
    """
    return fit_temperature(logits, labels, method=method, lr=lr, iterations=iterations, init=init).temperature


def _nll_temperature(
    z: np.ndarray, y: np.ndarray, *, method: str = "exact", lr: float = 0.01, iterations: int = 5000,
    init: float = 1.0,
) -> float:
    check_choice("method", method, ("exact", "gd"))
    check_int("iterations", iterations, ge=1)
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if not (init > 0 and math.isfinite(init)):
        raise ValueError(f"init must be a finite number > 0, got {init!r}")
    idx = np.arange(len(y))

    if method == "exact":

        def f(log_t: float) -> float:
            return float(-log_softmax(z / math.exp(log_t), axis=1)[idx, y].mean())

        res = minimize_scalar(
            f, bounds=_LOG_T_BOUNDS, method="bounded", options={"xatol": 1e-10, "maxiter": 500}
        )
        return float(math.exp(res.x))

    # Plain gradient descent on T with the analytic gradient dNLL/dT = mean(z_y - E_p[z]) / T^2.
    zy = z[idx, y]
    t = float(init)
    for _ in range(iterations):
        p = np.exp(log_softmax(z / t, axis=1))
        grad = float(np.mean(zy - (p * z).sum(axis=1))) / (t * t)
        t = max(t - lr * grad, 1e-12)  # keep T positive: a GD step can overshoot through zero
    return t


@dataclass(frozen=True)
class _Affine:
    weight: np.ndarray  # (K, K)
    bias: np.ndarray  # (K,)


class PlattScaler:
    """Multi-class Platt scaling: ``z -> W z + b`` with full ``W`` ("matrix") or diagonal ``W`` ("vector").

    Fitted by minimising the validation NLL in float64: ``method="exact"`` with L-BFGS (analytic gradient),
    ``method="gd"`` with the paper's plain gradient descent (lr 0.01, 5000 iterations, App. D.5). Unlike
    temperature scaling it can change the argmax, which is why it transfers worse (Table 13).
    """

    def __init__(
        self, *, kind: str = "matrix", method: str = "exact", lr: float = 0.01, iterations: int = 5000
    ):
        self.kind = check_choice("kind", kind, ("matrix", "vector"))
        self.method = check_choice("method", method, ("exact", "gd"))
        self.lr = float(lr)
        self.iterations = check_int("iterations", iterations, ge=1)
        self._affine: _Affine | None = None

    def fit(self, logits, labels) -> PlattScaler:
        z, y = check_logits_labels(logits, labels)
        n, k = z.shape
        # The exact fit runs on z / s (s = the logits' RMS) and folds s into W: an affine map absorbs any
        # positive scale, so logits served at T_d = 2e6 (entries ~1e-6, gradients too small for L-BFGS's
        # tolerances) or at 1e8 reach the same calibrated NLL. GD keeps the paper's raw logits.
        s = float(np.sqrt(np.mean(z * z))) if self.method == "exact" else 1.0
        if not (s > 0 and math.isfinite(s)):
            s = 1.0
        z = z / s
        onehot = np.eye(k)[y]

        def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if self.kind == "matrix":
                return theta[: k * k].reshape(k, k), theta[k * k :]
            return np.diag(theta[:k]), theta[k:]

        theta0 = np.concatenate([np.eye(k).ravel() if self.kind == "matrix" else np.ones(k), np.zeros(k)])

        def fun(theta):
            w, b = unpack(theta)
            s = z @ w.T + b
            lp = log_softmax(s, axis=1)
            g = (np.exp(lp) - onehot) / n  # dNLL/ds
            gw = g.T @ z
            grad_w = gw.ravel() if self.kind == "matrix" else np.diag(gw)
            return float(-(lp * onehot).sum() / n), np.concatenate([grad_w, g.sum(0)])

        if self.method == "exact":
            res = minimize(fun, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
            w, b = unpack(res.x)
            w = w / s
        else:
            theta = theta0.copy()
            for _ in range(self.iterations):
                theta -= self.lr * fun(theta)[1]
            w, b = unpack(theta)
        self._affine = _Affine(np.array(w, dtype=np.float64), np.array(b, dtype=np.float64))
        return self

    @property
    def weight(self) -> np.ndarray:
        return self._fitted().weight.copy()

    @property
    def bias(self) -> np.ndarray:
        return self._fitted().bias.copy()

    def _fitted(self) -> _Affine:
        if self._affine is None:
            raise RuntimeError("PlattScaler is not fitted; call fit(logits, labels) first")
        return self._affine

    def transform(self, logits) -> np.ndarray:
        """Float64 calibrated logits ``W z + b``."""
        a = self._fitted()
        return np.asarray(logits, dtype=np.float64) @ a.weight.T + a.bias

    def wrap(self, model):
        """The model with Platt-scaled outputs (text classifier callable or ``nn.Module``)."""
        a = self._fitted()
        if isinstance(model, nn.Module):
            return _PlattModule(model, a)
        if callable(model):
            return _PlattText(model, a)
        raise TypeError("model must be a torch.nn.Module or a callable text classifier")


class _PlattText:
    def __init__(self, model, affine: _Affine):
        self.inner = model
        self.model = getattr(model, "model", model)
        self._w32 = affine.weight.astype(np.float32)
        self._b32 = affine.bias.astype(np.float32)
        self._affine = affine

    def __call__(self, text_list):
        raw = np.asarray(self.inner(list(text_list)), dtype=np.float32)
        return (raw @ self._w32.T + self._b32).astype(np.float32)

    def logits64(self, text_list):
        from .temperature import logits64

        return logits64(self.inner, list(text_list)) @ self._affine.weight.T + self._affine.bias


class _PlattModule(nn.Module):
    def __init__(self, model: nn.Module, affine: _Affine):
        super().__init__()
        self.inner = model
        dev = _device_of(model)
        self.register_buffer("weight", torch.as_tensor(affine.weight, dtype=torch.float32, device=dev))
        self.register_buffer("bias", torch.as_tensor(affine.bias, dtype=torch.float32, device=dev))

    def forward(self, x):
        out = logits_from(self.inner(x), n=x.shape[0])
        return out @ self.weight.to(out.dtype).T + self.bias.to(out.dtype)
