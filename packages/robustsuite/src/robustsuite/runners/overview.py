"""Overview section: clean accuracy, calibration and (for adversarially trained models) robust accuracy of every
model in the run.

- Clean accuracy with its Clopper-Pearson interval; a model whose interval contains the chance rate (the
  majority class's share) is flagged ``model_at_chance`` with a warning.
- Calibration (``certcal.calibration_error``, 15 equal-width bins): the plug-in ECE is biased upward (an average of
  absolute values of noisy gaps), so the section reports the **debiased ECE** (plug-in minus its mean under the
  perfectly calibrated null, labels drawn from the model's own confidences: consistency resampling, Bröcker &
  Smith 2007) with an interval that contains it, and the **calibration test**'s p-value (how often the null's
  plug-in ECE reaches the observed one); Brier score with a BCa bootstrap interval.
- Robust accuracy, for a model marked adversarially trained (``eps`` here, or the ε of its training recipe in the
  shipped registry, e.g. ``builtin:fashion-cnn-at``): standard AutoAttack (``robustsuite_common.autoattack``,
  seeded, the version named in the metric) at that ε on the first ``autoattack_n`` test images, in checkpointed
  batches (a killed run resumes), with its Clopper-Pearson interval, as the section's ``headline`` table.

Nothing here depends on the run's seed (resampling and AutoAttack use ``resample_seed``): the unit is
computed once (``SEEDED = False``). With ``--log-samples`` every input gets a row: ``id``, ``input``, ``label``,
``prediction``, ``confidence``, ``correct`` and ``robust`` (``None`` where AutoAttack did not run).
"""

from __future__ import annotations

from typing import Literal

from robustsuite_common.config import Float, Int, Str, config, param, to_dict

from ..report import Section, Table

NAME = "overview"
TITLE = "Models and data: clean accuracy, calibration and robust accuracy"
PAPER = None
PACKAGES = ("certcal", "robustsuite-common")  # calibration metrics; intervals and AutoAttack
LOGS_SAMPLES = True
SEEDED = False  # the run's seed does not enter: computed once however many seeds a run asks for


@config
class Params:
    """The overview's parameters (``[methods.overview]``, besides the targets' ``model``/``dataset``/``models``)."""

    targets: tuple[tuple[Str, Str], ...] = param(
        (("builtin:fashion-cnn", "builtin:fashion-mnist"), ("builtin:fashion-cnn-at", "builtin:fashion-mnist"),
         ("builtin:wordnet-roberta", "builtin:wordnet-topics")), unit="[model spec, dataset spec]",
        doc="the models and data described, one section each")
    split: Literal["train", "val", "test"] = param("test", doc="split evaluated")
    n_bins: Int = param(15, ge=1, unit="bins", doc="equal-width confidence bins of the ECE")
    n_boot: Int = param(1000, ge=100, unit="resamples", doc="bootstrap and null (consistency) resamples of the "
                        "calibration numbers")
    resample_seed: Int = param(0, ge=0, doc="seed of those resamples and of AutoAttack (fixed: not the run's seed)")
    robust_accuracy: Literal["auto", "always", "never"] = param(
        "auto", doc="AutoAttack robust accuracy: auto for adversarially trained models (eps given or in the registry)")
    eps: Float = param(0.0, ge=0, le=1, unit="L∞, pixels in [0, 1]", doc="AutoAttack's budget; 0: the ε the model "
                       "was adversarially trained at (shipped registry)")
    autoattack_n: Int = param(200, ge=0, unit="images", doc="first N images of the split attacked (0: all)")
    autoattack_batch: Int = param(100, ge=1, unit="images", doc="images per AutoAttack call = per checkpoint")
    autoattack_version: Literal["standard", "plus", "rand"] = param("standard", doc="AutoAttack version")


def training_eps(spec: str) -> float | None:
    """The L∞ ε a shipped model (``builtin:NAME``) was adversarially trained at (its recipe), else ``None``."""
    from ..zoo.shipped import adversarial_eps

    return adversarial_eps(spec.split(":", 1)[1]) if spec.startswith("builtin:") else None


def robust_accuracy(model, x, y, *, eps: float, n: int, batch: int, version: str, seed: int, store=None,
                    progress: bool = False) -> dict:
    """Standard AutoAttack on the first ``n`` images in batches of ``batch`` (each a checkpoint in ``store``):
    ``{"robust": [...], "clean": [...], "attack": str}``; batch ``i`` is ``autoattack(model, x[i:j], y[i:j],
    eps=eps, version=version, seed=seed)``."""
    from tqdm.auto import tqdm

    from robustsuite_common.autoattack import autoattack
    from robustsuite_common.config import config_hash
    from robustsuite_common.experiment import JSON, cached

    out: dict = {"robust": [], "clean": [], "attack": ""}
    for start in tqdm(range(0, n, batch), desc="AutoAttack", unit="batch", disable=not progress, leave=False):
        stop = min(start + batch, n)

        def compute(start=start, stop=stop) -> dict:
            r = autoattack(model, x[start:stop], y[start:stop], eps=eps, version=version, seed=seed,
                           batch_size=stop - start)
            return {"robust": r.robust.tolist(), "clean": r.clean_correct.tolist(), "attack": r.attack}

        part = cached(store, f"autoattack-{config_hash(eps, version, seed, start, stop)}", compute, JSON)
        out["robust"] += part["robust"]
        out["clean"] += part["clean"]
        out["attack"] = part["attack"]
    return out


def check_params(params: dict) -> None:
    """At planning time: ``robust_accuracy = "always"`` needs an ε for every model (``eps``, or the registry's)."""
    if params.get("robust_accuracy") != "always" or params.get("eps"):
        return
    models = params.get("models") or ([params["model"]] if params.get("model") else
                                      [t[0] for t in params.get("targets") or []])
    missing = [m for m in models if training_eps(m) is None]
    if missing:
        raise ValueError(f"robust_accuracy = 'always' needs eps > 0 for {missing} (not adversarially trained models "
                         "of the shipped registry)")


def _robust(ctx, p: dict, model_spec: str, model, split, n_classes: int) -> tuple[float | None, str]:
    """``(eps, reason)``: the ε to attack at, or ``None`` with the reason it is not attacked."""
    import torch

    if p["robust_accuracy"] == "never":
        return None, "robust accuracy not asked for (robust_accuracy = 'never')"
    eps = float(p["eps"]) or training_eps(model_spec)
    if p["robust_accuracy"] == "auto" and not p["eps"] and eps is None:
        return None, ""
    if eps is None:
        raise ValueError(f"robust_accuracy = 'always' needs eps > 0 for {model_spec} (not in the shipped registry)")
    if not isinstance(split.x, torch.Tensor) or not isinstance(model, torch.nn.Module):
        return None, f"robust accuracy not computed: AutoAttack attacks images, {model_spec} is not a vision model"
    if n_classes < 4 and p["autoattack_version"] in ("standard", "plus"):
        return None, f"robust accuracy not computed: standard AutoAttack needs >= 4 classes ({n_classes} here)"
    return eps, ""


def _name(split, label) -> str | int:
    """The user's name of a class (the integer itself when the data names none)."""
    return split.name_of(int(label)) if split.label_names is not None else int(label)


def run(ctx, params: dict) -> Section:
    import matplotlib.pyplot as plt
    import numpy as np

    import certcal
    from robustsuite_common.experiment import DirStore, chance_rate
    from robustsuite_common.experiment import Metric as M
    from robustsuite_common.intervals import at_chance, proportion

    from .._io import safe_name
    from ..predict import predict_logits, softmax64

    p = {**to_dict(Params()), **params}
    model_spec, data_spec, split_name = p["model"], p["dataset"], p["split"]
    if split_name not in ("train", "val", "test"):
        raise ValueError(f"split must be 'train', 'val' or 'test', got {split_name!r}")
    n_bins, n_boot, seed = int(p["n_bins"]), int(p["n_boot"]), int(p["resample_seed"])
    model, ds = ctx.model(model_spec), ctx.dataset(data_spec)
    split = getattr(ds, split_name)
    if len(split) == 0:
        raise ValueError(f"the {split_name} split of {data_spec} is empty; choose another split")
    probs = softmax64(predict_logits(model, split.x, device=ctx.device))
    y = np.asarray(split.y)
    conf, pred = probs.max(1), probs.argmax(1)
    correct = pred == y
    n, k, n_classes = len(y), int(correct.sum()), int(probs.shape[1])
    acc = proportion(k, n)
    chance = chance_rate(y, n_classes)
    flat = at_chance(k, n, chance)
    cal = certcal.calibration_error(conf, correct, n_bins, seed=seed, n_boot=n_boot)
    wrong_conf = float(conf[~correct].mean()) if (~correct).any() else None

    metrics: dict = {
        "accuracy": M.of(acc, f"clean accuracy ({split_name}, {n} samples)", "fraction"),
        "chance_rate": M(chance, "chance rate (majority class share)", "fraction"),
        "model_at_chance": M(flat, "clean accuracy's interval contains the chance rate"),
        "ece_debiased": M.of(cal.debiased, f"ECE, debiased ({n_bins} equal-width bins)", "fraction",
                             note=f"plug-in ECE minus its mean under perfect calibration ({cal.null_mean:.4g}); "
                                  "can be below 0"),
        "calibration_p_value": M(cal.p_value, "calibration test p-value (null: perfectly calibrated)", "",
                                 note=f"{n_boot} consistency resamples: labels drawn from the model's confidences"),
        "ece": M(cal.ece, f"ECE, plug-in ({n_bins} equal-width bins)", "fraction",
                 note="biased upward by binning noise: read the debiased ECE and the calibration test"),
        "ada_ece": M(certcal.adaptive_calibration_error(conf, correct, n_bins=n_bins),
                     f"adaptive ECE, plug-in ({n_bins} equal-mass bins)", "fraction"),
        "brier": M.of(cal.brier, "Brier score (top label)", "fraction"),
        "mean_confidence": M(float(conf.mean()), "mean top-class confidence", "fraction"),
        "mean_confidence_wrong": M(wrong_conf, "mean confidence on wrong predictions", "fraction"),
        "num_samples": M(n, "samples", "count"), "num_classes": M(n_classes, "classes", "count"),
    }
    source = ds.summary().get("source")
    if source:
        metrics["data_source"] = M(source, "data")
    tables = [Table("dataset", "Dataset splits", ["split", "samples"], [[s, v] for s, v in ds.summary()["sizes"].items()],
                    units={"samples": "count"})]
    notes = ([f"Data: {source}."] if source else []) + [
        f"Intervals: Clopper-Pearson for accuracy; the debiased ECE's interval is the plug-in ECE's bootstrap spread "
        f"({n_boot} resamples over the samples, seed {seed}) around it; BCa bootstrap for Brier."]
    warnings = []
    if flat:
        warnings.append(f"clean accuracy {acc.estimate:.2%} [{acc.low:.2%}, {acc.high:.2%}] contains the chance rate "
                        f"{chance:.2%} (the majority class's share): this model's calibration and robustness numbers "
                        "carry no information.")

    eps, reason = _robust(ctx, p, model_spec, model, split, n_classes)
    robust_flags: list = [None] * n
    attack_text = ""
    if eps is not None:
        try:
            from robustsuite_common.autoattack import autoattack_version

            autoattack_version()
        except ImportError as err:  # the section says what is missing instead of failing the unit
            eps, reason = None, ""
            warnings.append(f"robust accuracy of this adversarially trained model not computed: {err}")
    if eps is not None:
        m = min(int(p["autoattack_n"]) or n, n)
        res = robust_accuracy(model, split.x, split.y, eps=eps, n=m, batch=int(p["autoattack_batch"]),
                              version=p["autoattack_version"], seed=seed, store=DirStore(ctx.work_dir()),
                              progress=ctx.progress)
        robust_flags[:m] = [bool(v) for v in res["robust"]]
        rob, cln = proportion(int(sum(res["robust"])), m), proportion(int(sum(res["clean"])), m)
        attack_text = f"{p['autoattack_version']} AutoAttack, L∞ ε = {eps:g}"
        metrics["robust_accuracy_autoattack"] = M.of(
            rob, f"robust accuracy under {attack_text} (first {m} {split_name} images)", "fraction",
            note=res["attack"])
        metrics["clean_accuracy_attacked_points"] = M.of(cln, f"clean accuracy on those {m} images", "fraction")
        tables.insert(0, Table(
            "headline", f"Clean vs {attack_text} accuracy of {model_spec} (first {m} {split_name} images)",
            ["condition", "clean", "clean_ci_low", "clean_ci_high", "attacked", "attacked_ci_low", "attacked_ci_high",
             "attack", "n"],
            [[attack_text, cln.estimate, *cln.ci, rob.estimate, *rob.ci, res["attack"], m]],
            units={"clean": "fraction", "attacked": "fraction", "n": "count"},
            bounds={"clean": (0.0, 1.0), "attacked": (0.0, 1.0)}))
    elif reason:
        notes.append(reason + ".")

    fig, (ax_hist, ax_rel) = plt.subplots(1, 2, figsize=(9, 3.6))
    bins = np.linspace(1.0 / n_classes, 1.0, 21)
    ax_hist.hist([conf[correct], conf[~correct]], bins=bins, stacked=True, label=["correct", "wrong"],
                 color=["tab:green", "tab:red"])
    ax_hist.set(xlabel="top-class confidence", ylabel="samples", yscale="log", title="confidence")
    ax_hist.legend()
    certcal.reliability_diagram(conf, correct, n_bins=n_bins).plot(
        ax_rel, title=f"reliability (plug-in ECE {100 * cal.ece:.2f} %, debiased {100 * cal.debiased.estimate:.2f} %)")
    fig.suptitle(f"{model_spec} on {data_spec} ({split_name})")
    fig.tight_layout()
    figure = ctx.figure(fig, f"confidence-{safe_name(model_spec)}-{safe_name(data_spec)}",
                        f"Confidence histogram and reliability diagram of {model_spec} on the {data_spec} {split_name} "
                        f"split ({n} samples, accuracy {acc.estimate:.2%}, plug-in ECE {100 * cal.ece:.2f} %)")
    texts = not hasattr(split.x, "shape")
    ctx.log_samples([{"id": split.id_of(i), "input": split.x[i] if texts else f"{split_name}[{i}]",
                      "label": _name(split, y[i]), "prediction": _name(split, pred[i]), "confidence": float(conf[i]),
                      "correct": bool(correct[i]), "robust": robust_flags[i]} for i in range(n)])

    gap = float(conf.mean()) - k / n
    direction = "over-confident" if gap > 0 else "under-confident" if gap < 0 else "exactly calibrated on average"
    iv = cal.debiased
    summary = (("The model is at chance: " + warnings[0] + " ") if flat else "") + (
        f"Clean accuracy {acc.estimate:.2%} (95 % CI {acc.low:.2%}–{acc.high:.2%}) on {n} {split_name} samples "
        f"(chance {chance:.2%}); mean confidence {conf.mean():.3f}"
        + (f" ({wrong_conf:.3f} on wrong predictions)" if wrong_conf is not None else "")
        + f", {direction} by {abs(gap):.4f}; debiased ECE {100 * iv.estimate:.2f} % (95 % CI {100 * iv.low:.2f} to "
          f"{100 * iv.high:.2f} %; plug-in {100 * cal.ece:.2f} %), calibration test p = {cal.p_value:.3g} ("
        + ("miscalibration detected" if cal.p_value < 0.05 else "consistent with perfect calibration") + ").")
    if eps is not None:
        r = metrics["robust_accuracy_autoattack"].interval
        summary += (f" Robust accuracy under {attack_text}: {r.estimate:.2%} (95 % CI {r.low:.2%}–{r.high:.2%}) on "
                    f"the first {len(res['robust'])} images" + (", which carries no information at chance." if flat
                                                                 else "."))
    return Section(title=f"{model_spec} on {data_spec}", summary=summary, metrics=metrics, tables=tables,
                   figures=[figure], notes=notes, warnings=warnings, model_at_chance=flat)
