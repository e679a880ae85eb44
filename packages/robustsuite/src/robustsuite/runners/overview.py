"""Overview section: clean accuracy, confidence and calibration of every model in the run.

Calibration numbers (ECE with 15 equal-width bins, AdaECE, top-label Brier score, reliability diagram)
come from ``certcal``'s public metrics.
"""

from __future__ import annotations

from ..predict import predict_logits, softmax64
from ..report import Section, Table

NAME = "overview"
TITLE = "Models and data: clean accuracy, confidence and calibration"
PAPER = None
DEFAULTS = {
    "targets": [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"],
                ["builtin:text-tiny", "builtin:sentiment-mini"]],
    "split": "test",
    "n_bins": 15,
}


def run(ctx, params: dict) -> Section:
    import matplotlib.pyplot as plt
    import numpy as np

    import certcal

    model_spec, data_spec = params["model"], params["dataset"]
    split_name = params.get("split", "test")
    if split_name not in ("train", "val", "test"):
        raise ValueError(f"split must be 'train', 'val' or 'test', got {split_name!r}")
    n_bins = int(params.get("n_bins", 15))
    model, ds = ctx.model(model_spec), ctx.dataset(data_spec)
    split = getattr(ds, split_name)
    probs = softmax64(predict_logits(model, split.x, device=ctx.device))
    y = split.y.numpy()
    conf, pred = probs.max(1), probs.argmax(1)
    correct = pred == y
    diagram = certcal.reliability_diagram(conf, correct, n_bins=n_bins)

    fig, (ax_hist, ax_rel) = plt.subplots(1, 2, figsize=(9, 3.6))
    bins = np.linspace(1.0 / probs.shape[1], 1.0, 21)
    ax_hist.hist([conf[correct], conf[~correct]], bins=bins, stacked=True, label=["correct", "wrong"],
                 color=["tab:green", "tab:red"])
    ax_hist.set(xlabel="top-class confidence", ylabel="samples", yscale="log", title="confidence")
    ax_hist.legend()
    diagram.plot(ax_rel, title=f"reliability (ECE {100 * diagram.ece:.2f} %)")
    fig.suptitle(f"{model_spec} on {data_spec} ({split_name})")
    fig.tight_layout()
    slug = model_spec.replace(":", "-").replace("/", "-")
    figure = ctx.figure(fig, f"confidence-{slug}",
                        f"Confidence histogram and reliability diagram of {model_spec} on the {data_spec} {split_name} split")
    wrong_conf = float(conf[~correct].mean()) if (~correct).any() else None
    table = Table("dataset", "Dataset splits", ["split", "samples"],
                  [[k, v] for k, v in ds.summary()["sizes"].items()])
    return Section(
        title=f"{model_spec} on {data_spec}",
        summary=f"Clean accuracy {correct.mean():.2%} on {len(y)} {split_name} samples; mean confidence "
                f"{conf.mean():.3f}" + (f" ({wrong_conf:.3f} on wrong predictions)" if wrong_conf is not None else "")
                + f"; ECE {100 * diagram.ece:.2f} %.",
        metrics={"accuracy": float(correct.mean()), "mean_confidence": float(conf.mean()),
                 "mean_confidence_wrong": wrong_conf,
                 "ece": diagram.ece,
                 "ada_ece": certcal.adaptive_calibration_error(conf, correct, n_bins=n_bins),
                 "brier": certcal.brier_score(conf, correct),
                 "num_samples": int(len(y)), "num_classes": int(probs.shape[1])},
        tables=[table], figures=[figure])
