"""Method runners: each module here turns one package's public API into a report section.

A runner module defines ``NAME`` (section key), ``TITLE``, ``PAPER``, ``DEFAULTS`` (the demo's parameters,
including ``model`` and ``dataset`` specs) and ``run(ctx: RunContext, params: dict) -> Section``. Modules are
discovered by name; those starting with ``_`` are private helpers.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from ..errors import ConfigError
from ..report import Figure


@dataclass
class RunContext:
    """What a runner gets: run directory, seed, device, cached loaders and figure saving."""

    run_dir: Path
    method: str
    seed: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    progress: bool = False
    _cache: dict[str, Any] = field(default_factory=dict)

    def model(self, spec: str):
        """The model for ``spec`` on ``self.device`` (loaded once per run)."""
        key = f"model::{spec}"
        if key not in self._cache:
            from tqdm.auto import tqdm

            from ..loaders import load_model

            bars: list = []

            def on_epoch(done: int, total: int) -> None:  # builtin models train on first use
                if not bars:
                    bars.append(tqdm(total=total, desc=f"training {spec}", unit="epoch", leave=False,
                                     disable=not self.progress))
                bars[0].update(done - bars[0].n)

            try:
                self._cache[key] = load_model(spec, device=self.device, progress=on_epoch)
            finally:
                for bar in bars:
                    bar.close()
        return self._cache[key]

    def dataset(self, spec: str):
        key = f"dataset::{spec}"
        if key not in self._cache:
            from ..loaders import load_dataset

            self._cache[key] = load_dataset(spec)
        return self._cache[key]

    def figure(self, fig, name: str, caption: str) -> Figure:
        """Save a matplotlib figure as ``figures/<method>/<name>.png`` (atomically) and close it."""
        import matplotlib.pyplot as plt

        from .._io import atomic_write

        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"figure name must use letters, digits, '_', '.', '-': {name!r}")
        rel = Path("figures") / self.method / f"{name}.png"
        atomic_write(self.run_dir / rel, lambda p: fig.savefig(p, format="png", dpi=110, bbox_inches="tight"))
        plt.close(fig)
        return Figure(name=name, path=rel.as_posix(), caption=caption)

    def work_dir(self) -> Path:
        """Scratch directory of this method inside the run (for checkpoints of finished sub-units)."""
        path = self.run_dir / "work" / self.method
        path.mkdir(parents=True, exist_ok=True)
        return path


_REQUIRED = ("NAME", "TITLE", "DEFAULTS", "run")


@functools.cache
def available() -> dict[str, ModuleType]:
    """All runner modules by ``NAME``: ``overview`` first, then the methods alphabetically (scanned once)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        missing = [a for a in _REQUIRED if not hasattr(mod, a)]
        if missing:
            raise ImportError(f"runner module {mod.__name__} lacks {missing}")
        found[mod.NAME] = mod
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "overview", kv[0])))


def get(name: str) -> ModuleType:
    runners = available()
    if name not in runners:
        raise ConfigError(f"unknown method {name!r}; available: {sorted(runners)}")
    return runners[name]
