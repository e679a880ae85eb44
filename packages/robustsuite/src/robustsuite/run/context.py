"""What a runner gets for one unit of work: :class:`RunContext` (run directory, seed, device, cached loaders,
figure saving, per-sample records and a private scratch directory)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..report import Figure

if TYPE_CHECKING:
    import torch

log = logging.getLogger("robustsuite")


def _cpu() -> torch.device:
    import torch  # not at module level: listing methods (`robustsuite methods`) must not import torch

    return torch.device("cpu")


@dataclass
class RunContext:
    """What a runner gets: run directory, seed, device, cached loaders, figure saving and per-sample logs.

    A context belongs to one unit of work (``unit_id``): its scratch directory (:meth:`work_dir`) and its
    per-sample file (:meth:`log_samples`) are keyed by that unit, never shared with another unit.
    """

    run_dir: Path
    method: str
    seed: int = 0
    device: torch.device = field(default_factory=_cpu)
    progress: bool = False
    _cache: dict[str, Any] = field(default_factory=dict)
    unit_id: str = ""
    model_spec: str | None = None      # the unit's main model: its dataset is aligned to the model's label names
    dataset_spec: str | None = None    # the unit's main dataset (None: align every dataset requested)
    labels: list[str] | None = None    # explicit ``labels = [...]`` from the config (for models without id2label)
    limit: int | None = None           # first N samples of every split (``--limit``)
    allowed_models: frozenset[str] | None = None  # builtin models a user run may load (None: any)
    log_format: str | None = None      # "parquet" | "jsonl" | None (``--log-samples``)
    samples: list[str] = field(default_factory=list)  # per-sample files written by this unit (relative paths)

    def model(self, spec: str):
        """The model for ``spec`` on ``self.device`` (loaded once per run).

        In a user run (a config that names its own models) a ``builtin:`` model the config does not name is
        refused before it is loaded.
        """
        if (self.allowed_models is not None and isinstance(spec, str) and spec.startswith("builtin:")
                and spec not in self.allowed_models):
            raise ConfigError(
                f"[methods.{self.method}] would load the builtin model {spec!r} from the method's defaults, but this "
                "config names its own models; name every model the method uses (see `robustsuite methods`), e.g. "
                f"set the parameter that defaults to {spec!r} to one of your models")
        key = f"model::{spec}"
        if key not in self._cache:
            from ..loaders import load_model

            log.info("%s: loading model %s", self.unit_id or self.method, spec)
            self._cache[key] = load_model(spec, device=self.device)
        return self._cache[key]

    def label_names(self) -> tuple[list[str] | None, str]:
        """The label list datasets are mapped through: the unit model's names (``id2label``), else the config's
        explicit ``labels``; both, disagreeing, is an error showing both (:func:`robustsuite.data.labels.label_order`)."""
        from ..data.labels import label_order

        names = getattr(self.model(self.model_spec), "labels", None) if self.model_spec is not None else None
        return label_order(self.labels, names, self.model_spec)

    def dataset(self, spec: str):
        """The dataset for ``spec``, cut to ``limit``; the unit's own dataset has its labels mapped through the
        config's ``labels`` or the unit model's label names (:func:`robustsuite.data.labels.align_labels`)."""
        main = self.dataset_spec is None or spec == self.dataset_spec
        names, source = self.label_names() if main else (None, "the model")
        key = f"dataset::{spec}::{names}::{self.limit}"
        if key not in self._cache:
            from ..data.labels import align_labels
            from ..loaders import load_dataset

            raw_key = f"dataset::{spec}"
            if raw_key not in self._cache:
                log.info("%s: loading dataset %s", self.unit_id or self.method, spec)
                self._cache[raw_key] = load_dataset(spec)
            ds = align_labels(self._cache[raw_key], names, source=source)
            if self.limit is not None:
                from dataclasses import replace

                ds = replace(ds, train=ds.train.head(self.limit), val=ds.val.head(self.limit),
                             test=ds.test.head(self.limit),
                             extras={k: v.head(self.limit) for k, v in ds.extras.items()})
            self._cache[key] = ds
        return self._cache[key]

    def dataset_sizes(self, spec: str) -> dict[str, int]:
        """Samples per split of the dataset ``spec`` as loaded, before ``limit`` cut it (what a leaderboard
        evaluates)."""
        self.dataset(spec)
        raw = self._cache.get(f"dataset::{spec}")
        if raw is None:  # the cut dataset came from a shared cache without the whole one
            from ..loaders import load_dataset

            raw = self._cache[f"dataset::{spec}"] = load_dataset(spec)
        return {k: len(s) for k, s in raw.splits().items()}

    def figure(self, fig, name: str, caption: str) -> Figure:
        """Save a matplotlib figure as ``figures/<method>/<name>.png`` (atomically) and close it."""
        import matplotlib.pyplot as plt

        from .._io import atomic_write

        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
            raise ValueError(f"figure name must use letters, digits, '_', '.', '-' (see robustsuite._io.safe_name): "
                             f"{name!r}")
        rel = Path("figures") / self.method / f"{name}.png"
        atomic_write(self.run_dir / rel, lambda p: fig.savefig(p, format="png", dpi=110, bbox_inches="tight"))
        plt.close(fig)
        return Figure(name=name, path=rel.as_posix(), caption=caption)

    def work_dir(self) -> Path:
        """Scratch directory of this unit inside the run (for checkpoints of finished sub-units).

        Keyed by the unit's identity, so a changed parameter, model, dataset, seed or package version never
        reads another unit's work.
        """
        from .._io import safe_name

        path = self.run_dir / "work" / safe_name(self.unit_id or self.method, max_len=160)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def log_samples(self, samples, name: str = "") -> Path | None:
        """Write one row per input to ``samples/<unit id>[--name].parquet|jsonl`` when ``--log-samples`` is on.

        ``samples`` is a list of dicts (one per input) or a dict of equal-length columns (lists, numpy arrays or
        tensors). Use stable column names: ``id``, ``label``, ``prediction``, ``confidence`` and the method's own
        per-sample fields (``adv_prediction``, ``certified_radius``, ``perturbed_text`` ...). Returns the file
        written, or ``None`` when logging is off.
        """
        from ..report.samples import write_samples

        if self.log_format is None:
            return None
        from .._io import safe_name

        stem = safe_name(self.unit_id or self.method, max_len=160) + (f"--{safe_name(name)}" if name else "")
        path = write_samples(self.run_dir / "samples" / stem, samples, self.log_format)
        rel = path.relative_to(self.run_dir).as_posix()
        if rel not in self.samples:
            self.samples.append(rel)
        return path
