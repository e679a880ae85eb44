"""Loaders of users' model specs: ``hf:<name-or-path>``, ``torch:<path>[#<architecture>]`` and
``robustbench:<dataset>/<threat_model>/<name>`` (through robustsuite_common's one RobustBench loader, which loads
timm-routed entries offline). Every failure is a :class:`~robustsuite.errors.ModelSpecError`."""

from __future__ import annotations

import inspect
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import torch

from robustsuite_common.extras import optional_import
from robustsuite_common.text import TextClassifier

from .._io import cache_dir
from ..errors import ModelSpecError
from .nets import ARCHITECTURES


def robustbench_model_dir() -> Path:
    return Path(os.environ.get("ROBUSTBENCH_MODEL_DIR") or cache_dir() / "robustbench")


def _robustbench_parts(value: str) -> tuple[str, str, str]:
    parts = value.split("/")
    if len(parts) != 3:
        raise ModelSpecError(f"robustbench spec needs '<dataset>/<threat_model>/<model_name>', got {value!r} "
                             "(e.g. robustbench:cifar10/Linf/Standard)")
    return parts[0], parts[1], parts[2]


def robustbench_checkpoint(value: str) -> Path | None:
    """The local checkpoint a ``robustbench:`` spec reads from the model dir, if present."""
    from robustsuite_common.robustbench import checkpoint_path

    dataset, threat, name = _robustbench_parts(value)
    return checkpoint_path(robustbench_model_dir(), name, dataset, threat)


def load_robustbench(value: str, *, model_dir: Path | None = None, allow_download: bool = False) -> torch.nn.Module:
    """``<dataset>/<threat_model>/<name>`` from the RobustBench zoo, read from ``model_dir/<ds>/<tm>/<name>.pt``
    (default ``$ROBUSTBENCH_MODEL_DIR``) by :func:`robustsuite_common.robustbench.load_robustbench_model`."""
    from robustsuite_common.robustbench import load_robustbench_model

    dataset, threat, name = _robustbench_parts(value)
    try:
        return load_robustbench_model(name, model_dir=Path(model_dir or robustbench_model_dir()), dataset=dataset,
                                      threat_model=threat, allow_download=allow_download,
                                      extra="robustsuite[robustbench]")
    except (ValueError, TypeError) as e:  # unknown dataset/threat/name, checkpoint not found: say it as a spec error
        raise ModelSpecError(f"robustbench:{value}: {e} (set ROBUSTBENCH_MODEL_DIR to use another model dir)") from e


def _architecture(name: str) -> Callable[[], torch.nn.Module]:
    if name in ARCHITECTURES:
        return ARCHITECTURES[name]
    if name.startswith("torchvision."):
        torchvision = optional_import("torchvision", extra="robustsuite[robustbench]",
                                      feature="torchvision.<model> architectures")

        fn = getattr(torchvision.models, name.split(".", 1)[1], None)
        if fn is not None:
            return fn
    raise ModelSpecError(f"unknown architecture {name!r}; use one of {sorted(ARCHITECTURES)} "
                         "or torchvision.<model_fn>")


def _output_dim(state: dict) -> int | None:
    """Classes of a classifier state dict: rows of its last 2-D weight (the output layer is registered last in
    torchvision and timm models), whatever the layer is called (``fc``, ``head``, ``classifier.3`` ...)."""
    weights = [v for k, v in state.items() if k.endswith("weight") and getattr(v, "ndim", 0) == 2]
    return int(weights[-1].shape[0]) if weights else None


def load_torch(value: str, *, trust_checkpoint: bool = False) -> torch.nn.Module:
    """TorchScript or a ``torch.export`` program (``torch:<path>``, ``.pt2``), or a state dict for a named
    architecture (``torch:<path>#<arch>``).

    State dicts load with ``weights_only=True``; a full pickled module needs ``trust_checkpoint=True``,
    because unpickling a file from the internet can execute code.
    """
    path_s, _, arch = value.rpartition("#") if "#" in value and not Path(value).is_file() else (value, "", "")
    path = Path(path_s)
    if not path.is_file():
        raise ModelSpecError(f"torch: checkpoint file not found: {path}")
    if not arch and path.suffix == ".pt2":  # a torch.export program (TorchScript's successor)
        return torch.export.load(str(path)).module()
    if not arch:
        is_script = zipfile.is_zipfile(path) and any(n.endswith("/code/") or "/code/" in n
                                                      for n in zipfile.ZipFile(path).namelist())
        if is_script:
            return torch.jit.load(str(path), map_location="cpu").eval()
        if not trust_checkpoint:
            raise ModelSpecError(f"torch:{value} is not TorchScript; name the architecture (torch:{path}#digits-cnn) "
                                 "to load a state dict safely, or opt in with trust_checkpoint to unpickle a module")
        obj = torch.load(path, map_location="cpu", weights_only=False)
        if not isinstance(obj, torch.nn.Module):
            raise ModelSpecError(f"torch:{value} unpickled a {type(obj).__name__}, not an nn.Module")
        return obj.eval()
    state = torch.load(path, map_location="cpu", weights_only=not trust_checkpoint)
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    out_dim, build = _output_dim(state), _architecture(arch)
    sig = inspect.signature(build).parameters
    takes = "num_classes" in sig or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.values())
    model = build(**({"num_classes": out_dim} if out_dim is not None and takes else {}))
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise ModelSpecError(f"torch:{value}: the state dict does not fit architecture {arch!r}: {e}") from e
    return model.eval()


def load_hf(value: str, *, max_length: int | None = None) -> TextClassifier:
    """A transformers sequence classifier from a local directory, the hub cache, or (with network) the hub.

    ``value`` may end in ``?max_length=N``; otherwise :class:`~robustsuite_common.text.TextClassifier` takes the
    tokenizer's ``model_max_length`` (capped at 512).
    """
    from ..specs import parse_options

    name, opts = parse_options(value, ("max_length",), f"hf:{value}", ModelSpecError)
    if "max_length" in opts:
        if not opts["max_length"].isdigit() or int(opts["max_length"]) < 1:
            raise ModelSpecError(f"hf:{value}: max_length must be a positive integer, got {opts['max_length']!r}")
        max_length = int(opts["max_length"])
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    local = Path(name).exists()
    if local and not (Path(name) / "config.json").is_file():
        raise ModelSpecError(f"hf:{name} is a path without config.json; point at a save_pretrained directory")
    kw = {"local_files_only": True} if local else {}
    try:
        model = AutoModelForSequenceClassification.from_pretrained(name, **kw)
        tokenizer = AutoTokenizer.from_pretrained(name, **kw)
    except (OSError, ValueError) as e:
        raise ModelSpecError(
            f"hf:{name} is neither a local directory nor loadable from the Hugging Face hub/cache ({e}). Offline, "
            "save the model with save_pretrained on a machine with network and pass hf:/path/to/that/dir."
        ) from e
    return TextClassifier(model, tokenizer, max_length=max_length)
