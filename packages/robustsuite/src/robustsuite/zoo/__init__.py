"""Models: the architectures (:mod:`.nets`), the shipped-model registry (:mod:`.shipped`) and the loaders of users'
model specs (:mod:`.external`); text models are wrapped by :mod:`robustsuite_common.text` and
:mod:`zeroe_perturb.hf`. :func:`load_model` resolves a spec.

Any model spec may end in ``?outputs=probabilities`` (or ``log_probabilities``): the model is declared to return
probabilities, and is seen through their logarithm, so every method gets logits with the same softmax. Without
it, a model whose outputs look like probabilities is refused before any unit runs (:mod:`robustsuite.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from ..errors import ModelSpecError
from ..specs import SpecInfo, split_spec
from .shipped import SHIPPED

if TYPE_CHECKING:
    import torch

OUTPUTS = ("logits", "probabilities", "log_probabilities")
MODEL_SPECS = [SpecInfo(f"builtin:{name}", "vision" if kind == "vision" else "text", f"{what} (shipped)")
               for name, (kind, _, what) in SHIPPED.items()] + [
    SpecInfo("hf:<name-or-path>[?max_length=N]", "text",
             "transformers sequence classifier (+ tokenizer) from a local dir or the hub cache; max_length defaults "
             "to the tokenizer's model_max_length, capped at 512"),
    SpecInfo("robustbench:<dataset>/<threat_model>/<name>", "vision",
             "RobustBench zoo model; checkpoint read from $ROBUSTBENCH_MODEL_DIR (default <cache>/robustbench)"),
    SpecInfo("torch:<path>[#<architecture>]", "vision",
             "TorchScript or torch.export (.pt2) file, or a state dict for an architecture (digits-cnn, "
             "fashion-cnn, torchvision.<name>)"),
    SpecInfo("<any model spec>?outputs=probabilities", "any",
             "the model returns probabilities (not logits); without this such a model is refused"),
    SpecInfo("<image model spec>?mean=M1,M2,M3&std=S1,S2,S3", "vision",
             "the model expects (x - mean) / std per channel: it is wrapped so that data, ε and every attack stay "
             "in [0, 1] pixel space"),
]


def _floats(spec: str, key: str, text: str) -> tuple[float, ...]:
    import math

    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ModelSpecError(f"{spec}: {key} must be comma-separated numbers (one per channel), got {text!r}") \
            from None
    if not vals or not all(math.isfinite(v) for v in vals):
        raise ModelSpecError(f"{spec}: {key} must be finite numbers, got {text!r}")
    return vals


def normalization_of(spec: str) -> tuple[str, tuple[float, ...] | None, tuple[float, ...] | None]:
    """``(spec without its mean/std options, mean, std)``: the input normalisation a model is declared to expect
    (``None, None`` when it declares none). Both or neither, one value per channel (or one for all), std > 0."""
    base, sep, query = spec.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True) if sep else []
    opts = {k: v for k, v in pairs if k in ("mean", "std")}
    if not opts:
        return spec, None, None
    if set(opts) != {"mean", "std"}:
        raise ModelSpecError(f"{spec}: give both ?mean= and &std= (one value per channel), got only "
                             f"{sorted(opts)}")
    mean, std = _floats(spec, "mean", opts["mean"]), _floats(spec, "std", opts["std"])
    if len(mean) != len(std):
        raise ModelSpecError(f"{spec}: mean and std must have one value per channel each, got {len(mean)} and "
                             f"{len(std)}")
    if min(std) <= 0:
        raise ModelSpecError(f"{spec}: std must be > 0, got {opts['std']!r}")
    rest = [(k, v) for k, v in pairs if k not in ("mean", "std")]
    return base + (f"?{urlencode(rest)}" if rest else ""), mean, std


def modality(spec: str) -> str:
    """``"vision"`` or ``"text"``: what a model spec names, from its scheme (a shipped model from the registry)."""
    scheme, _, value = outputs_of(normalization_of(spec)[0])[0].partition(":")
    if scheme == "builtin":
        return "text" if SHIPPED.get(value.split("?")[0], ("vision",))[0] != "vision" else "vision"
    return "text" if scheme == "hf" else "vision"


def outputs_of(spec: str) -> tuple[str, str]:
    """``(spec without its outputs option, outputs)``: what the model is declared to return (default logits)."""
    base, sep, query = spec.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True) if sep else []
    declared = [v for k, v in pairs if k == "outputs"]
    if not declared:
        return spec, "logits"
    if declared[-1] not in OUTPUTS:
        raise ModelSpecError(f"{spec}: outputs must be one of {list(OUTPUTS)}, got {declared[-1]!r}")
    rest = [(k, v) for k, v in pairs if k != "outputs"]
    return base + (f"?{urlencode(rest)}" if rest else ""), declared[-1]


def load_model(spec: str, *, device: str | torch.device = "cpu", trust_checkpoint: bool = False, allow_download: bool = False,
               progress: Callable | None = None):
    """Resolve a model spec to a vision ``nn.Module`` or a text classifier (``list[str] -> (N, K)`` logits)."""
    from . import external, shipped

    spec, mean, std = normalization_of(spec)
    spec, outputs = outputs_of(spec)
    scheme, value = split_spec(spec, ModelSpecError, MODEL_SPECS)
    if scheme == "builtin":
        if value not in SHIPPED:
            raise ModelSpecError(f"unknown builtin model {value!r}; known: {sorted(SHIPPED)}")
        model = shipped.load(value)
    elif scheme == "hf":
        model = external.load_hf(value)
    elif scheme == "robustbench":
        model = external.load_robustbench(value, allow_download=allow_download)
    elif scheme == "torch":
        model = external.load_torch(value, trust_checkpoint=trust_checkpoint)
    else:
        raise ModelSpecError(f"unknown model scheme {scheme!r} in {spec!r}; use builtin, hf, robustbench or torch")
    if mean is not None and std is not None:
        from robustsuite_common.models import normalized

        if modality(scheme + ":" + value) == "text":
            raise ModelSpecError(f"{spec}: ?mean=&std= declare the input normalisation of an image model; this is a "
                                 "text classifier")
        model = normalized(model, mean, std)
    model = model.to(device)
    if outputs == "probabilities":
        from robustsuite_common.models import as_logits_model

        model = as_logits_model(model)
    return model


def local_path(spec: str) -> Path | None:
    """The local file or directory a model spec reads (``torch:P#arch``, ``hf:DIR``, a RobustBench checkpoint in
    the model dir), if it exists."""
    from .external import robustbench_checkpoint

    scheme, _, value = outputs_of(normalization_of(spec)[0])[0].partition(":")
    if scheme == "robustbench" and value.count("/") == 2:
        return robustbench_checkpoint(value)
    if scheme not in ("torch", "hf"):
        return None
    for candidate in (value, value.split("?", 1)[0], value.rpartition("#")[0]):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None


def missing_path(spec: str) -> str | None:
    """For a model spec that names a local path (``torch:``, or ``hf:`` with ``/``, ``./`` or ``~``) that does not
    exist: that path, so the error can be raised before any work."""
    scheme, _, value = outputs_of(normalization_of(spec)[0])[0].partition(":")
    path = value.split("?", 1)[0]
    if scheme == "torch":
        path = path if Path(path).exists() else path.rpartition("#")[0] or path
    elif not (scheme == "hf" and path.startswith(("/", "./", "../", "~"))):
        return None
    return None if Path(path).expanduser().exists() else path
