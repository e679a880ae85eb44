"""The overview's figure, drawn from a :class:`~certcal.overview.Result` alone (its per-input records and metrics;
matplotlib, imported lazily: ``pip install 'certcal[plot]'``)."""

from __future__ import annotations

import numpy as np

from robustsuite_common.experiment import Figure
from robustsuite_common.io import safe_name

from ..experiment.figures import _plt
from ..metrics import reliability_diagram

__all__ = ["figures"]


def figures(result) -> list[Figure]:
    """The confidence histogram (correct vs wrong predictions) beside the reliability diagram."""
    rows = result.records.get("samples") or []
    if not rows:
        return []
    plt = _plt()
    conf = np.array([r["confidence"] for r in rows], dtype=np.float64)
    correct = np.array([r["correct"] for r in rows], dtype=bool)
    split, n_bins = result.config["split"], int(result.config["n_bins"])
    ece, debiased = result.value("ece"), result.value("ece_debiased")
    fig, (ax_hist, ax_rel) = plt.subplots(1, 2, figsize=(9, 3.6))
    bins = np.linspace(1.0 / int(result.value("num_classes")), 1.0, 21)
    ax_hist.hist([conf[correct], conf[~correct]], bins=bins, stacked=True, label=["correct", "wrong"],
                 color=["tab:green", "tab:red"])
    ax_hist.set(xlabel="top-class confidence", ylabel="samples", yscale="log", title="confidence")
    ax_hist.legend()
    reliability_diagram(conf, correct, n_bins=n_bins).plot(
        ax_rel, title=f"reliability (plug-in ECE {100 * ece:.2f} %, debiased {100 * debiased:.2f} %)")
    fig.suptitle(f"{result.model} on {result.data} ({split})")
    fig.tight_layout()
    return [Figure(f"confidence-{safe_name(result.model)}-{safe_name(result.data)}",
                   f"Confidence histogram and reliability diagram of {result.model} on the {result.data} {split} split "
                   f"({len(rows)} samples, accuracy {result.value('accuracy'):.2%}, plug-in ECE {100 * ece:.2f} %)",
                   fig)]
