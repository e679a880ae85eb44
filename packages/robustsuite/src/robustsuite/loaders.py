"""Resolve model and dataset spec strings (ARCHITECTURE.md, "The umbrella") to objects.

Model specs: ``builtin:<name>``, ``hf:<name-or-local-path>``, ``robustbench:<dataset>/<threat_model>/<name>``,
``torch:<path>`` (TorchScript) or ``torch:<path>#<architecture>`` (a state dict for a named architecture).
Dataset specs: ``builtin:<name>`` and the user-data specs of :mod:`robustsuite.userdata` (``csv:``, ``jsonl:``,
``npz:``, ``imagefolder:``, ``idx:``, ``hf-disk:``, ``hf-datasets:``, ``cifar10:``, ``mnist:``). Every failure is a :class:`~robustsuite.errors.SpecError` whose
message says what to put where.
"""

from __future__ import annotations

import inspect
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from robustsuite_common import import_robustbench

from . import data, models, userdata
from ._extras import optional_import
from ._io import cache_dir
from .errors import DatasetSpecError, ModelSpecError


@dataclass(frozen=True)
class SpecInfo:
    spec: str
    kind: str
    description: str


MODEL_SPECS = [
    SpecInfo("builtin:fashion-cnn", "vision", "CNN on Fashion-MNIST, standard training (shipped weights)"),
    SpecInfo("builtin:fashion-cnn-at", "vision", "the same CNN, PGD adversarial training, L∞ eps 0.1 (shipped)"),
    SpecInfo("builtin:fashion-cnn-noise-0.25", "vision", "the same CNN, Gaussian noise training σ=0.25 (shipped)"),
    SpecInfo("builtin:fashion-cnn-noise-0.5", "vision", "the same CNN, Gaussian noise training σ=0.5 (shipped)"),
    SpecInfo("builtin:fashion-osr-cnn", "vision", "the same CNN on the known classes 0–5 of "
             "builtin:fashion-mnist-osr (shipped)"),
    SpecInfo("builtin:wordnet-roberta", "text", "tiny RoBERTa + byte-level BPE on builtin:wordnet-topics (shipped)"),
    SpecInfo("builtin:wordnet-pairs-roberta", "text", "tiny RoBERTa (wordnet-roberta's tokenizer and encoder) "
             "fine-tuned on builtin:wordnet-pairs: premise/hypothesis pairs (shipped)"),
    SpecInfo("builtin:wordnet-multilabel-roberta", "text", "the same, multi-label over 8 topics on "
             "builtin:wordnet-multilabel (shipped)"),
    SpecInfo("builtin:wordnet-pos-roberta", "text", "the same, token tagger (NOUN/VERB/ADJ/ADV) on "
             "builtin:wordnet-pos (shipped)"),
    SpecInfo("builtin:digits-cnn", "vision", "CNN on 8×8 digits, standard training (trained on first use, cached)"),
    SpecInfo("builtin:digits-cnn-at", "vision", "the same CNN, PGD adversarial training, L∞ eps 0.1"),
    SpecInfo("builtin:digits-osr-cnn", "vision", "the same CNN trained on the known classes 0–7 of builtin:digits-osr"),
    SpecInfo("builtin:text-tiny", "text", "tiny BERT + local WordPiece tokenizer on builtin:sentiment-mini"),
    SpecInfo("hf:<name-or-path>[?max_length=N]", "text",
             "transformers sequence classifier (+ tokenizer) from a local dir or the hub cache; max_length defaults "
             "to the tokenizer's model_max_length, capped at 512"),
    SpecInfo("robustbench:<dataset>/<threat_model>/<name>", "vision",
             "RobustBench zoo model; checkpoint read from $ROBUSTBENCH_MODEL_DIR (default <cache>/robustbench)"),
    SpecInfo("torch:<path>[#<architecture>]", "vision",
             "TorchScript or torch.export (.pt2) file, or a state dict for an architecture (digits-cnn, "
             "torchvision.<name>)"),
]
DATASET_SPECS = [SpecInfo(f"builtin:{k}", "text" if "sentiment" in k or "wordnet" in k else "vision", v[1])
                 for k, v in data.BUILTIN_DATASETS.items()] + [
    SpecInfo("csv:<path>[?text=COL&label=COL&split=COL]", "text",
             "CSV with a text and a label column (names or integers) and an optional train/val/test column"),
    SpecInfo("jsonl:<path>[?text=KEY&label=KEY&split=KEY]", "text", "JSON lines, fields as for csv"),
    SpecInfo("npz:<path>", "vision", "NumPy archive: x (N,[C,]H,W uint8 or floats in [0,1]) and y (int labels), "
             "or x_train/y_train + x_test/y_test; optional classes"),
    SpecInfo("imagefolder:<root>[?size=HxW]", "vision",
             "torchvision ImageFolder layout root/<class>/<image> (optionally root/{train,val,test}/...)"),
    SpecInfo("idx:<dir>", "vision", "MNIST-format IDX files (train-*/t10k-*, optionally .gz), e.g. "
             "/usr/share/datasets/fashion-mnist"),
    SpecInfo("hf-disk:<path>[?split=NAME&text=COL|image=COL&label=COL]", "text/vision",
             "datasets.load_from_disk directory; split = the split to evaluate"),
    SpecInfo("hf-datasets:<name>[?split=..&text=..&label=..]", "text/vision",
             "Hugging Face hub dataset (from the cache when offline)"),
    SpecInfo("cifar10:<root>", "vision", "CIFAR-10 from <root>/cifar-10-batches-py (never downloads)"),
    SpecInfo("mnist:<root>", "vision", "MNIST from <root>/MNIST/raw (never downloads)"),
]


def _split_spec(spec: str, error: type[ValueError], known: list[SpecInfo]) -> tuple[str, str]:
    if not isinstance(spec, str) or ":" not in spec:
        schemes = sorted({s.spec.split(":")[0] for s in known})
        raise error(f"spec {spec!r} must look like '<scheme>:<value>' with scheme one of {schemes}")
    scheme, _, value = spec.partition(":")
    if not value:
        raise error(f"spec {spec!r} has an empty value after '{scheme}:'")
    return scheme, value


def robustbench_model_dir() -> Path:
    return Path(os.environ.get("ROBUSTBENCH_MODEL_DIR") or cache_dir() / "robustbench")


def load_robustbench(value: str, *, model_dir: Path | None = None, allow_download: bool = False) -> torch.nn.Module:
    """``<dataset>/<threat_model>/<name>`` from the RobustBench zoo, reading ``model_dir/<ds>/<tm>/<name>.pt``."""
    parts = value.split("/")
    if len(parts) != 3:
        raise ModelSpecError(f"robustbench spec needs '<dataset>/<threat_model>/<model_name>', got {value!r} "
                             "(e.g. robustbench:cifar10/Linf/Standard)")
    dataset, threat, name = parts
    model_dir = Path(model_dir or robustbench_model_dir())
    rb = import_robustbench(extra="robustsuite[robustbench]")
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel

    try:
        ds_enum, tm_enum = BenchmarkDataset(dataset), ThreatModel(threat)
    except ValueError as e:
        raise ModelSpecError(f"robustbench: {e}; datasets {[d.value for d in BenchmarkDataset]}, "
                             f"threat models {[t.value for t in ThreatModel]}") from e
    zoo = model_dicts[ds_enum].get(tm_enum, {})
    if name not in zoo:
        raise ModelSpecError(f"robustbench: no model {name!r} for {dataset}/{threat}; "
                             f"known: {', '.join(sorted(zoo)[:12])}, ...")
    ckpt = model_dir / dataset / threat / f"{name}.pt"
    if not ckpt.is_file() and not allow_download:
        raise ModelSpecError(f"robustbench checkpoint not found: put {name}.pt at {ckpt} (set ROBUSTBENCH_MODEL_DIR "
                             "to use another model_dir), or allow downloading where the network permits")
    return rb.utils.load_model(name, model_dir=str(model_dir), dataset=dataset, threat_model=threat).eval()


def _architecture(name: str) -> Callable[[], torch.nn.Module]:
    if name in models.ARCHITECTURES:
        return models.ARCHITECTURES[name]
    if name.startswith("torchvision."):
        torchvision = optional_import("torchvision", "robustbench", "torchvision.<model> architectures")

        fn = getattr(torchvision.models, name.split(".", 1)[1], None)
        if fn is not None:
            return fn
    raise ModelSpecError(f"unknown architecture {name!r}; use one of {sorted(models.ARCHITECTURES)} "
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
    kwargs = {}
    out_dim = _output_dim(state)
    sig = inspect.signature(_architecture(arch)).parameters
    takes = "num_classes" in sig or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.values())
    if out_dim is not None and takes:
        kwargs["num_classes"] = out_dim
    model = _architecture(arch)(**kwargs)
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise ModelSpecError(f"torch:{value}: the state dict does not fit architecture {arch!r}: {e}") from e
    return model.eval()


MAX_LENGTH_CAP = 512


def load_hf(value: str, *, max_length: int | None = None) -> models.TextClassifier:
    """A transformers sequence classifier from a local directory, the hub cache, or (with network) the hub.

    ``value`` may end in ``?max_length=N``; otherwise :class:`~robustsuite.models.TextClassifier` takes the
    tokenizer's ``model_max_length`` (capped at 512).
    """
    from urllib.parse import parse_qsl

    name, sep, query = value.partition("?")
    opts = dict(parse_qsl(query)) if sep else {}
    if set(opts) - {"max_length"}:
        raise ModelSpecError(f"hf:{value}: unknown option(s) {sorted(set(opts) - {'max_length'})}; allowed: max_length")
    if "max_length" in opts:
        if not opts["max_length"].isdigit() or int(opts["max_length"]) < 1:
            raise ModelSpecError(f"hf:{value}: max_length must be a positive integer, got {opts['max_length']!r}")
        max_length = int(opts["max_length"])
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = Path(name)
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelSpecError(f"hf:{name} is a path without config.json; point at a save_pretrained directory")
        kw = {"local_files_only": True}
    else:
        kw = {}
    try:
        model = AutoModelForSequenceClassification.from_pretrained(name, **kw)
        tokenizer = AutoTokenizer.from_pretrained(name, **kw)
    except (OSError, ValueError) as e:
        raise ModelSpecError(
            f"hf:{name} is neither a local directory nor loadable from the Hugging Face hub/cache ({e}). Offline, "
            "save the model with save_pretrained on a machine with network and pass hf:/path/to/that/dir."
        ) from e
    return models.TextClassifier(model, tokenizer, max_length=max_length, max_length_cap=MAX_LENGTH_CAP)


def load_model(spec: str, *, device: str | torch.device = "cpu", progress: Callable[[int, int], None] | None = None,
               trust_checkpoint: bool = False, allow_download: bool = False):
    """Resolve a model spec to a vision ``nn.Module`` or a :class:`~robustsuite.models.TextClassifier`."""
    scheme, value = _split_spec(spec, ModelSpecError, MODEL_SPECS)
    if scheme == "builtin":
        if value in models.VISION_RECIPES:
            model = models.builtin_vision(value, progress=progress)
        elif value in models.TEXT_RECIPES:
            model = models.builtin_text(value, progress=progress)
        elif value in models.SHIPPED_MODELS:
            model = models.load_shipped(value)
        else:
            known = sorted([*models.VISION_RECIPES, *models.TEXT_RECIPES, *models.SHIPPED_MODELS])
            raise ModelSpecError(f"unknown builtin model {value!r}; known: {known}")
    elif scheme == "hf":
        model = load_hf(value)
    elif scheme == "robustbench":
        model = load_robustbench(value, allow_download=allow_download)
    elif scheme == "torch":
        model = load_torch(value, trust_checkpoint=trust_checkpoint)
    else:
        raise ModelSpecError(f"unknown model scheme {scheme!r} in {spec!r}; use builtin, hf, robustbench or torch")
    if isinstance(model, models.TextClassifier):
        model.model.to(device)
        return model
    return model.to(device)


def load_dataset(spec: str) -> data.Dataset:
    """Resolve a dataset spec to a :class:`~robustsuite.data.Dataset` (user data: a
    :class:`~robustsuite.userdata.UserDataset`, validated on load)."""
    scheme, value = _split_spec(spec, DatasetSpecError, DATASET_SPECS)
    if scheme == "builtin":
        if value not in data.BUILTIN_DATASETS:
            raise DatasetSpecError(f"unknown builtin dataset {value!r}; known: {sorted(data.BUILTIN_DATASETS)}")
        return data.BUILTIN_DATASETS[value][0]()
    if scheme not in userdata.LOADERS:
        raise DatasetSpecError(f"unknown dataset scheme {scheme!r} in {spec!r}; use one of "
                               f"{sorted(['builtin', *userdata.LOADERS])}")
    return userdata.LOADERS[scheme](value)


LOCAL_SCHEMES = {"torch", "hf", *userdata.LOADERS}


def local_path(spec: str) -> Path | None:
    """The local file or directory a spec reads (``torch:P#arch``, ``hf:DIR``, ``csv:P?...``, a RobustBench
    checkpoint in the model dir), if it exists."""
    if not isinstance(spec, str) or ":" not in spec:
        return None
    scheme, _, value = spec.partition(":")
    if scheme == "robustbench" and value.count("/") == 2:  # the zoo checkpoint read from the model dir
        ckpt = robustbench_model_dir() / f"{value}.pt"
        return ckpt if ckpt.is_file() else None
    if scheme not in LOCAL_SCHEMES:
        return None
    for candidate in (value, value.split("?", 1)[0], value.rpartition("#")[0]):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None
