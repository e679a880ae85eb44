"""Overview section: clean accuracy, confidence and calibration of every model in the run.

Calibration numbers (ECE with 15 equal-width bins, AdaECE, top-label Brier score, reliability diagram)
come from ``certcal``'s public metrics. Accuracy carries a Clopper-Pearson 95 % interval; ECE and Brier a
percentile bootstrap interval over the samples (seeded by the run's seed;
:func:`robustsuite.intervals.bootstrap_calibration`). With ``--log-samples`` every input
gets a row: ``id``, ``label``, ``prediction``, ``confidence``, ``correct``.
"""

from __future__ import annotations

from ..predict import predict_logits, softmax64
from ..report import Section, Table

NAME = "overview"
TITLE = "Models and data: clean accuracy, confidence and calibration"
PAPER = None
PACKAGES = ("certcal",)  # computes the calibration metrics
LOGS_SAMPLES = True
DEFAULTS = {
    "targets": [["builtin:fashion-cnn", "builtin:fashion-mnist"], ["builtin:fashion-cnn-at", "builtin:fashion-mnist"],
                ["builtin:wordnet-roberta", "builtin:wordnet-topics"]],
    "split": "test",
    "n_bins": 15,
    "n_boot": 1000,  # bootstrap resamples for the ECE and Brier intervals
}
BOUNDS = {"n_bins": {"ge": 1}, "n_boot": {"ge": 100}, "split": {"pattern": "^(train|val|test)$"}}


def run(ctx, params: dict) -> Section:
    import matplotlib.pyplot as plt
    import numpy as np

    import certcal

    from .._io import safe_name
    from ..intervals import bootstrap_calibration, clopper_pearson, with_interval

    p = {**DEFAULTS, **params}
    model_spec, data_spec = p["model"], p["dataset"]
    split_name = p["split"]
    if split_name not in ("train", "val", "test"):
        raise ValueError(f"split must be 'train', 'val' or 'test', got {split_name!r}")
    n_bins, n_boot = int(p["n_bins"]), int(p["n_boot"])
    model, ds = ctx.model(model_spec), ctx.dataset(data_spec)
    split = getattr(ds, split_name)
    if len(split) == 0:
        raise ValueError(f"the {split_name} split of {data_spec} is empty; choose another split")
    probs = softmax64(predict_logits(model, split.x, device=ctx.device))
    y = split.y.numpy()
    conf, pred = probs.max(1), probs.argmax(1)
    correct = pred == y
    n, k = len(y), int(correct.sum())
    diagram = certcal.reliability_diagram(conf, correct, n_bins=n_bins)
    boot = bootstrap_calibration(conf, correct.astype(np.float64), n_bins, seed=ctx.seed, n_boot=n_boot)
    acc_ci = clopper_pearson(k, n)

    fig, (ax_hist, ax_rel) = plt.subplots(1, 2, figsize=(9, 3.6))
    bins = np.linspace(1.0 / probs.shape[1], 1.0, 21)
    ax_hist.hist([conf[correct], conf[~correct]], bins=bins, stacked=True, label=["correct", "wrong"],
                 color=["tab:green", "tab:red"])
    ax_hist.set(xlabel="top-class confidence", ylabel="samples", yscale="log", title="confidence")
    ax_hist.legend()
    diagram.plot(ax_rel, title=f"reliability (ECE {100 * diagram.ece:.2f} %)")
    fig.suptitle(f"{model_spec} on {data_spec} ({split_name})")
    fig.tight_layout()
    figure = ctx.figure(fig, f"confidence-{safe_name(model_spec)}-{safe_name(data_spec)}",
                        f"Confidence histogram and reliability diagram of {model_spec} on the {data_spec} {split_name} "
                        f"split ({n} samples, accuracy {k / n:.2%}, ECE {100 * diagram.ece:.2f} %)")
    ctx.log_samples({"id": np.arange(n), "label": y, "prediction": pred, "confidence": conf,
                     "correct": correct})
    wrong_conf = float(conf[~correct].mean()) if (~correct).any() else None
    table = Table("dataset", "Dataset splits", ["split", "samples"],
                  [[s, v] for s, v in ds.summary()["sizes"].items()])
    metrics: dict = {}
    with_interval(metrics, "accuracy", k / n, *acc_ci)
    metrics |= {"mean_confidence": float(conf.mean()), "mean_confidence_wrong": wrong_conf}
    with_interval(metrics, "ece", diagram.ece, *boot["ece"])
    metrics["ada_ece"] = certcal.adaptive_calibration_error(conf, correct, n_bins=n_bins)
    with_interval(metrics, "brier", certcal.brier_score(conf, correct), *boot["brier"])
    metrics |= {"num_samples": n, "num_classes": int(probs.shape[1])}
    source = ds.summary().get("source")
    if source:
        metrics["data_source"] = source
    gap = float(conf.mean()) - k / n
    direction = "over-confident" if gap > 0 else "under-confident" if gap < 0 else "exactly calibrated on average"
    return Section(
        title=f"{model_spec} on {data_spec}",
        summary=f"Clean accuracy {k / n:.2%} (95 % CI {acc_ci[0]:.2%}–{acc_ci[1]:.2%}) on {n} {split_name} samples; "
                f"mean confidence {conf.mean():.3f}"
                + (f" ({wrong_conf:.3f} on wrong predictions)" if wrong_conf is not None else "")
                + f", {direction} by {abs(gap):.4f}; ECE {100 * diagram.ece:.2f} % "
                  f"(95 % CI {100 * boot['ece'][0]:.2f}–{100 * boot['ece'][1]:.2f} %).",
        metrics=metrics, tables=[table], figures=[figure],
        notes=([f"Data: {source}."] if source else [])
        + (["ECE lies below its percentile-bootstrap interval: resampling adds binning noise, so resampled ECEs "
            "are biased upward; read the interval as an upper range, not as centred on the estimate."]
           if diagram.ece < boot["ece"][0] else [])
        + ["Intervals: Clopper-Pearson for accuracy; percentile bootstrap over the samples "
           f"({n_boot} resamples, seed {ctx.seed}) for ECE and Brier."])
