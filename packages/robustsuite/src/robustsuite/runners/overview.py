"""Overview section: clean accuracy and confidence of every model in the run."""

from __future__ import annotations

import numpy as np

from ..predict import predict_logits, softmax64
from ..report import Section, Table

NAME = "overview"
TITLE = "Models and data: clean accuracy and confidence"
PAPER = None
DEFAULTS = {
    "targets": [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"],
                ["builtin:text-tiny", "builtin:sentiment-mini"]],
    "split": "test",
}


def run(ctx, params: dict) -> Section:
    import matplotlib.pyplot as plt

    model_spec, data_spec = params["model"], params["dataset"]
    model, ds = ctx.model(model_spec), ctx.dataset(data_spec)
    split = getattr(ds, params.get("split", "test"))
    logits = predict_logits(model, split.x, device=ctx.device)
    probs = softmax64(logits)
    y = split.y.numpy()
    conf, pred = probs.max(1), probs.argmax(1)
    correct = pred == y
    fig, ax = plt.subplots(figsize=(5, 3.2))
    bins = np.linspace(1.0 / probs.shape[1], 1.0, 21)
    ax.hist([conf[correct], conf[~correct]], bins=bins, stacked=True, label=["correct", "wrong"],
            color=["tab:green", "tab:red"])
    ax.set_xlabel("top-class confidence")
    ax.set_ylabel("samples")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"{model_spec} on {data_spec}")
    slug = model_spec.replace(":", "-").replace("/", "-")
    figure = ctx.figure(fig, f"confidence-{slug}", f"Confidence of {model_spec} on the {data_spec} test split")
    table = Table("dataset", "Dataset splits", ["split", "samples"],
                  [[k, v] for k, v in ds.summary()["sizes"].items()])
    return Section(
        title=f"{model_spec} on {data_spec}",
        summary=f"Clean accuracy {correct.mean():.2%} on {len(y)} test samples; mean confidence {conf.mean():.3f}"
                + (f" (on wrong predictions {conf[~correct].mean():.3f})." if (~correct).any() else "."),
        metrics={"accuracy": float(correct.mean()), "mean_confidence": float(conf.mean()),
                 "mean_confidence_wrong": float(conf[~correct].mean()) if (~correct).any() else None,
                 "num_samples": int(len(y)), "num_classes": int(probs.shape[1])},
        tables=[table], figures=[figure])
