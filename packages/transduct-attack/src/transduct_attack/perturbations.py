"""The perturbations of the paper's Figure 1(b, c) outside the L∞ game: the Carlini-Wagner L2 attack on the fixed
classifier (:func:`cw_l2`, appendix A.6: c = 1, κ = 0, learning rate 0.01, 100 steps) and the common corruptions
of Hendrycks & Dietterich (2019) as batched tensor code (:func:`corrupt`, A.6: brightness at severity 1).

Both work on images in [0, 1] (N, C, H, W) and keep that range; neither is bounded in L∞, as in the paper's
Figure 1(b, c), so URejectron plays them outside the referee's L∞ ball (:func:`~transduct_attack.urejectron.
perturbed_rejection_curve`).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int

from ._validate import as_input, check_generator, check_labels, check_positive, logits_model

__all__ = ["CORRUPTIONS", "SEVERITIES", "cw_l2", "corrupt"]

Corruption = Literal["brightness", "gaussian_noise", "gaussian_blur", "contrast"]
#: the corruptions implemented here (grey-scale or colour images in [0, 1])
CORRUPTIONS: tuple[str, ...] = ("brightness", "gaussian_noise", "gaussian_blur", "contrast")
#: per corruption, the parameter of severities 1-5 (Hendrycks & Dietterich's ImageNet-C code): the brightness
#: shift of the HSV value channel, the noise standard deviation, the blur's σ in pixels, the contrast factor
SEVERITIES: dict[str, tuple[float, ...]] = {
    "brightness": (0.1, 0.2, 0.3, 0.4, 0.5),
    "gaussian_noise": (0.08, 0.12, 0.18, 0.26, 0.38),
    "gaussian_blur": (1.0, 2.0, 3.0, 4.0, 6.0),
    "contrast": (0.4, 0.3, 0.2, 0.1, 0.05),
}


def _brightness(x: torch.Tensor, c: float) -> torch.Tensor:
    """ImageNet-C brightness: the HSV value channel V = max over channels raised by ``c`` (clipped at 1), hue and
    saturation kept, i.e. every channel scaled by V'/V (grey-scale: x + c, clipped)."""
    v = x.amax(dim=1, keepdim=True)
    v_new = (v + c).clamp(max=1.0)
    grey = v <= 0  # black pixels: hue and saturation undefined, the shifted value on every channel
    scale = torch.where(grey, torch.zeros_like(v), v_new / v.clamp(min=1e-12))
    return torch.where(grey, v_new.expand_as(x), x * scale)


def _gaussian_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """skimage's ``gaussian(sigma)`` (ImageNet-C): a separable kernel truncated at 4σ, edges replicated."""
    radius = int(4.0 * sigma + 0.5)
    t = torch.arange(-radius, radius + 1, dtype=x.dtype, device=x.device)
    k = torch.exp(-0.5 * (t / sigma) ** 2)
    k = k / k.sum()
    c = x.shape[1]
    out = F.pad(x, (radius, radius, radius, radius), mode="replicate")
    out = F.conv2d(out, k.view(1, 1, 1, -1).expand(c, 1, 1, -1).contiguous(), groups=c)
    return F.conv2d(out, k.view(1, 1, -1, 1).expand(c, 1, -1, 1).contiguous(), groups=c)


def corrupt(x: torch.Tensor, *, kind: Corruption = "brightness", severity: int = 1,
            generator: torch.Generator | None = None) -> torch.Tensor:
    """The common corruption ``kind`` at ``severity`` (1-5) of a batch of images in [0, 1], clipped to [0, 1]
    (Hendrycks & Dietterich, 2019, their ImageNet-C parameters :data:`SEVERITIES`): ``brightness`` (HSV value
    + c), ``gaussian_noise`` (x + N(0, c²), drawn from ``generator``, which it needs), ``gaussian_blur`` (σ = c),
    ``contrast`` ((x − mean) · c + mean, the mean per image and channel).

    Paper: appendix A.6 and Figure 1(c) (brightness, severity 1: the "benign" perturbations URejectron rejects).
    """
    check_images("x", x)
    kind = check_choice("kind", kind, CORRUPTIONS)
    severity = check_int("severity", severity, ge=1, le=5)
    if kind == "gaussian_noise":
        if generator is None:
            raise ValueError("generator is required for kind='gaussian_noise' (the noise is drawn from it)")
        check_generator(generator)
    c = SEVERITIES[kind][severity - 1]
    x = x.detach()
    if kind == "brightness":
        out = _brightness(x, c)
    elif kind == "gaussian_noise":
        noise = torch.randn(x.shape, generator=generator, device=generator.device, dtype=x.dtype)  # type: ignore[union-attr]
        out = x + c * noise.to(x.device)
    elif kind == "gaussian_blur":
        out = _gaussian_blur(x, c)
    else:
        mean = x.mean(dim=(2, 3), keepdim=True)
        out = (x - mean) * c + mean
    return out.clamp(0.0, 1.0)


def cw_l2(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, c: float = 1.0, kappa: float = 0.0,
          steps: int = 100, lr: float = 0.01, binary_search_steps: int = 1, batch_size: int = 1024) -> torch.Tensor:
    """The Carlini-Wagner L2 attack (Carlini & Wagner, 2017, §V.A): in tanh space x' = (tanh w + 1) / 2, Adam
    (``lr``) minimises ‖x' − x‖₂² + c · max(Z_y − max_{k≠y} Z_k, −κ) for ``steps`` steps; per point the
    adversarial x' of smallest L2 distance found is kept (the clean x where none was found). With
    ``binary_search_steps`` > 1, c is searched per point as in C&W: halved towards the last success, raised
    tenfold while none was found (1: c fixed, as the paper and torchattacks' ``CW`` run it).

    Paper: appendix A.6 (L2, c = 1, κ = 0, learning rate 0.01, 100 steps) and Figure 1(b).
    """
    model = logits_model("model", model)
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device, model=model, x=x)
    c = check_positive("c", c)
    if not math.isfinite(float(kappa)) or float(kappa) < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa!r}")
    steps = check_int("steps", steps, ge=1)
    lr = check_positive("lr", lr)
    binary_search_steps = check_int("binary_search_steps", binary_search_steps, ge=1)
    batch_size = check_int("batch_size", batch_size, ge=1)
    x = as_input(model, x)
    y = y.to(x.device)
    # the wrapped model runs every forward in eval mode and gives the caller's flags back (logits_model)
    out = [_cw_batch(model, x[i:i + batch_size].detach(), y[i:i + batch_size], c=c, kappa=float(kappa), steps=steps,
                     lr=lr, search=binary_search_steps) for i in range(0, x.shape[0], batch_size)]
    return torch.cat(out)


def _cw_batch(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, c: float, kappa: float, steps: int, lr: float,
              search: int) -> torch.Tensor:
    n = x.shape[0]
    w0 = torch.atanh((2 * x - 1).clamp(-1 + 1e-6, 1 - 1e-6))
    best, best_l2 = x.clone(), torch.full((n,), math.inf, device=x.device)
    const = torch.full((n,), c, device=x.device)
    lower, upper = torch.zeros(n, device=x.device), torch.full((n,), math.inf, device=x.device)
    onehot = F.one_hot(y, num_classes=-1).bool()
    for _ in range(search):
        w = w0.clone().requires_grad_(True)
        opt = torch.optim.Adam([w], lr=lr)
        found = torch.zeros(n, dtype=torch.bool, device=x.device)
        for _ in range(steps):
            adv = (torch.tanh(w) + 1) / 2
            logits = model(adv)
            if onehot.shape[1] != logits.shape[1]:
                onehot = F.one_hot(y, num_classes=logits.shape[1]).bool()
            l2 = (adv - x).pow(2).flatten(1).sum(1)
            real = logits[onehot]
            other = logits.masked_fill(onehot, -math.inf).amax(1)
            loss = (l2 + const * torch.clamp(real - other, min=-kappa)).sum()
            (grad,) = torch.autograd.grad(loss, [w])
            with torch.no_grad():
                hit = (other - real >= kappa) & logits.argmax(1).ne(y)
                better = hit & (l2 < best_l2)
                best[better], best_l2[better] = adv[better].detach(), l2[better].detach()
                found |= hit
            w.grad = grad
            opt.step()
        with torch.no_grad():  # C&W's search over c, per point
            upper = torch.where(found, torch.minimum(upper, const), upper)
            lower = torch.where(found, lower, torch.maximum(lower, const))
            const = torch.where(torch.isfinite(upper), (lower + upper) / 2, const * 10)
    return best.detach()
