"""ε-sweeps (the paper's figures over budgets): MUS with its bootstrap interval, the entropy band
(mean entropy after the over attack, clean, after the under attack) and s-ECE (Eq. 19) clean / over / under
as functions of ε."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_int
from robustsuite_common.extras import optional_import

from ._data import check_data, check_label_range, iter_batches, labels_of
from ._model import check_model, check_outputs, n_classes, using
from ._validation import check_eps, check_seed
from .attacks import STRONGEST_UNDER_OBJECTIVES
from .calibration import signed_ece
from .span import UncertaintySpan, uncertainty_span

__all__ = ["EpsSweepRow", "EpsSweep", "eps_sweep", "plot_eps_sweep"]


@dataclass(frozen=True)
class EpsSweepRow:
    """One budget: MUS μ with its 95 % bootstrap interval, mean entropies and s-ECE clean / over / under."""

    eps: float
    mus_mean: float
    mus_mean_ci_low: float
    mus_mean_ci_high: float
    entropy_clean: float
    entropy_over: float
    entropy_under: float
    sece_clean: float
    sece_over: float
    sece_under: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class EpsSweep:
    """Rows in increasing ε, and the spans behind them (keyed by ε): the per-sample entropies, predictions and
    confidences every row is computed from."""

    norm: str
    steps: int
    n: int
    rows: tuple[EpsSweepRow, ...]
    spans: Mapping[float, UncertaintySpan]

    @property
    def eps(self) -> list[float]:
        return [r.eps for r in self.rows]

    def column(self, name: str) -> np.ndarray:
        """One field of every row, as a float array in ε order."""
        if name not in EpsSweepRow.__dataclass_fields__:
            raise ValueError(f"name must be a field of EpsSweepRow: {sorted(EpsSweepRow.__dataclass_fields__)}")
        return np.array([getattr(r, name) for r in self.rows], dtype=np.float64)

    def to_dict(self, per_sample: bool = False) -> dict:
        """JSON-safe dict; ``per_sample=True`` adds the spans (one per row, in row order) so that
        :meth:`from_dict` restores them."""
        d = {"norm": self.norm, "steps": self.steps, "n": self.n, "rows": [r.to_dict() for r in self.rows]}
        if per_sample:
            d["spans"] = [self.spans[r.eps].to_dict() for r in self.rows]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> EpsSweep:
        """Rebuild from :meth:`to_dict` output (with the spans when it has them)."""
        rows = tuple(EpsSweepRow(**r) for r in d["rows"])
        spans = d.get("spans", [])
        if spans and len(spans) != len(rows):
            raise ValueError("d['spans'] must hold one span per row")
        return cls(str(d["norm"]), int(d["steps"]), int(d["n"]), rows,
                   {r.eps: UncertaintySpan.from_dict(s) for r, s in zip(rows, spans, strict=False)})


def eps_sweep(
    model: nn.Module,
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    *,
    eps: Sequence[float],
    norm: str = "Linf",
    steps: int = 150,
    seed: int = 0,
    optimizer: str = "pgd",
    restarts: int = 1,
    under_objective: str | Sequence[str] = STRONGEST_UNDER_OBJECTIVES,
    n_bins: int = 15,
    n_boot: int = 2000,
    batch_size: int = 256,
    progress: bool = False,
    outputs: str = "logits",
) -> EpsSweep:
    """The uncertainty span (strongest setting by default, see :func:`uncertainty_span`) at every budget in
    ``eps`` (sorted; 0 gives the clean row without attacking), with MUS intervals (BCa bootstrap, ``n_boot``
    resamples) and s-ECE (Eq. 19, ``n_bins`` bins). The spans stay on the result (``spans``). The model runs in
    eval mode and comes back as it came."""
    check_model("model", model)
    check_data(x, reiterable=True)
    outputs = check_outputs(outputs)
    yt = labels_of(x, y)
    if isinstance(eps, int | float) or not isinstance(eps, Sequence) or not eps:
        raise ValueError("eps must be a non-empty sequence of budgets >= 0")
    checked = {check_eps(e) for e in eps}
    budgets = sorted(e for e in checked if isinstance(e, float))
    if len(budgets) != len(checked):
        raise ValueError("eps must hold scalar budgets")
    steps = check_int("steps", steps, ge=0)
    n_bins = check_int("n_bins", n_bins, ge=1)
    n_boot = check_int("n_boot", n_boot, ge=1)
    checked_seed = check_seed(seed)
    seed = 0 if checked_seed is None else checked_seed
    yn = yt.numpy()
    spans = {}
    with using(model, outputs) as net:
        check_label_range("y", yt, n_classes(net, next(iter_batches(x, None, 1))[0]))
        for e in budgets:
            spans[e] = uncertainty_span(net, x, eps=e, norm=norm, steps=steps if e > 0 else 0, seed=seed,
                                        optimizer=optimizer, restarts=restarts if e > 0 else 0, under_objective=under_objective,
                                        batch_size=batch_size, progress=progress)
    return sweep_from_spans(spans, yn, norm=norm, steps=steps, n_bins=n_bins, n_boot=n_boot, seed=seed)


def sweep_from_spans(spans: Mapping[float, UncertaintySpan], y: object, *, norm: str, steps: int, n_bins: int = 15,
                     n_boot: int = 2000, seed: int = 0) -> EpsSweep:
    """The :class:`EpsSweep` of spans computed elsewhere (one per budget, on the same points with labels ``y``):
    the rows :func:`eps_sweep` gives for them."""
    yn = np.asarray(y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else y)
    rows = []
    for e in sorted(spans):
        sp = spans[e]
        iv = sp.mus_ci(seed=seed, n_boot=n_boot)
        sece = {k: signed_ece(getattr(sp, f"conf_{k}"), getattr(sp, f"pred_{k}") == yn, n_bins=n_bins)
                for k in ("clean", "over", "under")}
        rows.append(EpsSweepRow(float(e), sp.mus.mean, iv.low, iv.high, float(sp.entropy_clean.mean()),
                                float(sp.entropy_over.mean()), float(sp.entropy_under.mean()), sece["clean"],
                                sece["over"], sece["under"]))
    return EpsSweep(norm, steps, int(yn.size), tuple(rows), {float(e): spans[e] for e in sorted(spans)})


def plot_eps_sweep(sweeps: EpsSweep | Mapping[str, EpsSweep]):
    """Three panels against ε: MUS with its 95 % interval band; mean entropy after the over attack (orange),
    clean (green) and after the under attack (blue), the span being the band between them; s-ECE over /
    clean / under. One line style per model. Returns a matplotlib ``Figure``."""
    mpl_figure = optional_import("matplotlib.figure", extra="uncspan[plot]", feature="drawing figures")

    from .plots import COLOURS

    if isinstance(sweeps, EpsSweep):
        sweeps = {"model": sweeps}
    if not isinstance(sweeps, Mapping) or not sweeps or not all(isinstance(v, EpsSweep) for v in sweeps.values()):
        raise TypeError("sweeps must be an EpsSweep or a non-empty mapping name -> EpsSweep")
    fig = mpl_figure.Figure(figsize=(11, 3.2), layout="constrained")
    ax_mus, ax_h, ax_s = fig.subplots(1, 3)
    styles = ["-", "--", ":", "-."]
    for i, (name, sw) in enumerate(sweeps.items()):
        e, ls = np.asarray(sw.eps), styles[i % len(styles)]
        ax_mus.plot(e, sw.column("mus_mean"), ls=ls, marker="o", ms=3, color="k", label=name)
        ax_mus.fill_between(e, sw.column("mus_mean_ci_low"), sw.column("mus_mean_ci_high"), color="grey", alpha=0.3)
        for kind in ("over", "clean", "under"):
            lab = f"{name}: {kind}" if i == 0 or len(sweeps) == 1 else None
            ax_h.plot(e, sw.column(f"entropy_{kind}"), ls=ls, marker="o", ms=3, color=COLOURS[kind], label=lab)
            ax_s.plot(e, sw.column(f"sece_{kind}"), ls=ls, marker="o", ms=3, color=COLOURS[kind],
                      label=f"{name}: {kind}")
        ax_h.fill_between(e, sw.column("entropy_over"), sw.column("entropy_under"), color="tab:blue", alpha=0.08)
    ax_mus.set_title("MUS (95 % bootstrap band)")
    ax_h.set_title("mean entropy (span = band)")
    ax_s.set_title("s-ECE (negative = over-confident)")
    ax_s.axhline(0, color="grey", lw=0.8)
    for ax in (ax_mus, ax_h, ax_s):
        ax.set_xlabel(f"eps ({next(iter(sweeps.values())).norm})")
    ax_mus.set_ylabel("nats")
    ax_mus.legend(fontsize="small")
    ax_s.legend(fontsize="x-small")
    return fig
