"""certcal section: certified calibration of a Gaussian-smoothed vision model (paper 004).

Certified accuracy, certified Brier score and certified calibration error (exact optimum and the paper's
ADMM) across radii for one or more smoothing sigmas; beta-ACE calibration attacks on the base model
(Table 1's effect); adversarial calibration training against the un-fine-tuned noise model and SmoothAdv with
the paper's selection rule (Table 2 / 7 layout, demo-sized: ``act_*`` keys). Per-sample rows (``--log-samples``)
hold each input's smoothed prediction, confidence, certified radius and certified confidence bounds per radius. All method logic lives in the ``certcal`` package; this module only orchestrates it,
checkpointing fine-tuned models and certificates in the run's work directory so an interrupted run resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

from ..report import Section, Table

NAME = "certcal"
LOGS_SAMPLES = True
TITLE = "Certified calibration: CBS and CCE under Gaussian smoothing, calibration attacks, ACT"
PAPER = "004"
DEFAULTS: dict = {
    "model": "builtin:fashion-cnn",  # base model of the beta-ACE attacks (and of noise fine-tuning if needed)
    "dataset": "builtin:fashion-mnist",
    "sigmas": [0.25, 0.5],
    # shipped Gaussian-noise-trained smoothing base models, one per sigma (same order); an empty list
    # fine-tunes the umbrella model with Gaussian noise instead (Cohen et al.'s recipe, noise_* keys)
    "noise_models": ["builtin:fashion-cnn-noise-0.25", "builtin:fashion-cnn-noise-0.5"],
    "noise_epochs": 6,
    "noise_batch_size": 64,
    "noise_lr": 1e-3,
    "n0": 50,
    "n": 400,                     # Monte-Carlo draws per input (paper: 100,000); demo budget ~2 min on 2 cores
    "alpha": 0.001,
    "batch_size": 450,            # draws per forward pass (CPU prefers small batches; use 4096+ on a GPU)
    "max_samples": 150,           # test inputs certified and attacked
    "radii": [0.0, 0.125, 0.25, 0.375, 0.5],
    "bound": "cdf",               # confidence certificate: "cdf" or "standard"
    "n_bins": 15,
    "n_boot": 200,                # bootstrap resamples for the CBS / CCE / ECE intervals
    "admm_steps": 500,
    "admm_grid": False,           # True: the paper's 16-run ADMM grid (App. I.1), about 8x the ADMM time
    "ace_eps_linf": 0.1,
    "ace_eps_l2": 0.5,
    "ace_steps": 10,
    # ACT (Table 2 / Table 7 layout) on a demo budget: the sigma-noise model fine-tuned 1 epoch on 256 train
    # images by each method, one seed, one grid point; the README's table (tools/certcal_act_table.py) runs a
    # learning-rate grid, 3 seeds and more data. "none" is the un-fine-tuned noise model (the paper's baseline row)
    "act": True,
    "act_methods": ["none", "smoothadv", "acce_act"],
    "act_sigma": 0.25,
    "act_epsilon": 0.5,
    "act_epochs": 1,
    "act_train_samples": 256,     # 0: the whole train split
    "act_max_samples": 100,       # test inputs certified per fine-tuned model (0: max_samples)
    "act_admm_lr_a": 1e-3,        # ACCE-ACT's ADMM adversary: learning rate of the assignment (App. G.2)
    "act_batch_size": 128,
    "act_num_noise": 2,           # Gaussian draws per input (m in the paper)
    "act_attack_steps": 2,
    "act_attack_step_factor": 1.0,
    "act_lr": 2e-4,               # selected most often in the README table; with 1e-3 the demo lost 16 points of CA
    "act_lr_grid": [],            # weight learning rates to select from (App. I.3 grid); empty: [act_lr]
    "act_selection_margin": 0.03,  # the paper's rule: models within 3 % of the best CA, best calibration
    "act_warmup_epochs": 1,
    "act_seeds": [],              # empty: the run's seed only
    # where each certificate's Gaussian noise comes from: "batch" (one stream for all inputs, the demo's) or
    # "per_input" (keyed by seed and input index: results independent of batch_size and of sharding)
    "noise_stream": "batch",
    # split each sigma's certification into this many tasks (`--executor ray`, `run-unit --shard K`); needs
    # noise_stream = "per_input"; not part of the unit's identity (the result does not depend on it)
    "shards": 1,
}
EXECUTION_PARAMS = ("shards",)
# range checks applied by the config validation before any work (pydantic Field constraints); list-valued
# keys (sigmas, radii, noise_models, act_lr_grid, act_seeds) are checked at the top of run()
BOUNDS = {
    "noise_epochs": {"ge": 1}, "noise_batch_size": {"ge": 1}, "noise_lr": {"gt": 0},
    "n0": {"ge": 1}, "n": {"ge": 1}, "alpha": {"gt": 0, "lt": 1}, "batch_size": {"ge": 1},
    "max_samples": {"ge": 1}, "bound": {"pattern": "^(cdf|standard)$"}, "n_bins": {"ge": 1}, "n_boot": {"ge": 1},
    "admm_steps": {"ge": 1}, "ace_eps_linf": {"gt": 0, "le": 1}, "ace_eps_l2": {"gt": 0}, "ace_steps": {"ge": 1},
    "act_sigma": {"gt": 0}, "act_epsilon": {"ge": 0}, "act_epochs": {"ge": 1}, "act_train_samples": {"ge": 0},
    "act_max_samples": {"ge": 0}, "act_admm_lr_a": {"gt": 0}, "act_batch_size": {"ge": 1},
    "act_num_noise": {"ge": 1}, "act_attack_steps": {"ge": 1}, "act_attack_step_factor": {"gt": 0},
    "act_lr": {"gt": 0}, "act_selection_margin": {"ge": 0, "le": 1}, "act_warmup_epochs": {"ge": 0},
    "noise_stream": {"pattern": "^(batch|per_input)$"}, "shards": {"ge": 1},
}


def check_lists(p: dict) -> None:
    """Reject bad list-valued parameters (naming the key) before any model or data is loaded."""
    def numbers(key: str, ok, what: str, allow_empty: bool = False) -> None:
        v = p[key]
        if not isinstance(v, list | tuple) or (not v and not allow_empty):
            raise ValueError(f"{key} must be a {'' if allow_empty else 'non-empty '}list, got {v!r}")
        for e in v:
            if isinstance(e, bool) or not isinstance(e, int | float) or not np.isfinite(e) or not ok(e):
                raise ValueError(f"{key} values must be {what}, got {e!r}")

    numbers("sigmas", lambda e: e > 0, "finite numbers > 0")
    numbers("radii", lambda e: e >= 0, "finite numbers >= 0")
    numbers("act_lr_grid", lambda e: e > 0, "finite numbers > 0", allow_empty=True)
    numbers("act_seeds", lambda e: float(e).is_integer(), "integers", allow_empty=True)


def check_params(p: dict) -> None:
    """Checks across keys (run when the config is planned, and again at the top of :func:`run`)."""
    check_lists(p)
    if p.get("noise_models") and len(p["noise_models"]) != len(p["sigmas"]):
        raise ValueError(f"noise_models must list one model per sigma ({len(p['sigmas'])}), "
                         f"got {len(p['noise_models'])}")
    shards = p.get("shards", 1)
    if isinstance(shards, int) and not isinstance(shards, bool) and shards > 1 and p.get("noise_stream") != "per_input":
        raise ValueError(f"shards = {shards} needs noise_stream = 'per_input' (with the 'batch' stream an input's "
                         "noise depends on the inputs before it, so shards would not add up to one run)")


def shard_count(params: dict) -> int:
    """Shards of each sigma's certification (the ``shards`` parameter)."""
    return int({**DEFAULTS, **params}["shards"])


def _tag(v: float) -> str:
    return f"{v:g}".replace(".", "p")


def _pct(v: float | None) -> float | None:
    return None if v is None else round(100.0 * float(v), 2)


def _save_state(model: torch.nn.Module, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(model.state_dict(), tmp)
    os.replace(tmp, path)


def _finetuned(ctx, base: torch.nn.Module, name: str, train_fn) -> torch.nn.Module:
    """Fine-tune once per run; resume from the work directory's checkpoint if present."""
    import copy

    path = ctx.work_dir() / f"{name}.pt"
    if path.exists():
        model = copy.deepcopy(base)
        model.load_state_dict(torch.load(path, weights_only=True, map_location=ctx.device))
        return model.eval()
    model = train_fn()
    _save_state(model, path)
    return model.eval()


def _shard_bounds(n_inputs: int, index: int, count: int) -> tuple[int, int]:
    """Inputs ``[start, stop)`` of shard ``index`` of ``count`` (contiguous, sizes differing by at most one)."""
    return n_inputs * index // count, n_inputs * (index + 1) // count


def _certificate(ctx, model, x, sigma: float, p: dict, name: str, shard: tuple[int, int] | None = None):
    """The certificate of ``x`` (or of shard ``(index, count)`` of it), cached in the unit's work directory.

    With ``shards`` > 1 the certificate is the concatenation of the shards' certificates, each computed here
    or earlier by :func:`run_shard` (on another worker); ``noise_stream = "per_input"`` makes that equal one
    call over all inputs.
    """
    import certcal

    count = int(p.get("shards", 1))
    if shard is None and count > 1:
        return certcal.CertifyResult.concatenate(
            [_certificate(ctx, model, x, sigma, p, name, (k, count)) for k in range(count)])
    start, stop = (0, x.shape[0]) if shard is None else _shard_bounds(x.shape[0], *shard)
    path = ctx.work_dir() / (f"cert-{name}.npz" if shard is None else f"cert-{name}.shard-{shard[0]}-of-{count}.npz")
    if path.exists():
        with np.load(path) as f:
            return certcal.CertifyResult(prediction=f["prediction"], radius=f["radius"], p_lower=f["p_lower"],
                                         counts=f["counts"], sigma=sigma, n0=p["n0"], n=p["n"],
                                         alpha=p["alpha"], scores=f["scores"])
    stream = p.get("noise_stream", "batch")
    cert = certcal.certify(model, x[start:stop], sigma, n0=p["n0"], n=p["n"], alpha=p["alpha"],
                           batch_size=p["batch_size"], seed=ctx.seed, return_scores=True, progress=ctx.progress,
                           stream=stream, first_index=start if stream == "per_input" else 0)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, prediction=cert.prediction, radius=cert.radius, p_lower=cert.p_lower,
                        counts=cert.counts, scores=cert.scores)
    os.replace(tmp, path)
    return cert


def _act_summary(comp, radii: list[float]) -> str:
    """One sentence from the ACT table: ACCE-ACT (else the last ACT method) against the un-fine-tuned model at
    the largest radius where both have a CCE, saying whether their intervals overlap."""
    base = "none" if "none" in comp.methods else comp.methods[0]
    act = next((m for m in ("acce_act", "brier_act", "acce_act_exact", "smoothadv") if m in comp.methods), None)
    if act is None or act == base:
        return ""
    for r in sorted(radii, reverse=True):
        a, b = comp.row(act, r), comp.row(base, r)
        if a.cce is not None and b.cce is not None:
            overlap = not (a.cce_ci_high < b.cce_ci_low or b.cce_ci_high < a.cce_ci_low)
            verdict = ("intervals overlap: no difference shown" if overlap else
                       ("ACT lowers the CCE" if a.cce < b.cce else "ACT raises the CCE") + " (intervals disjoint)")
            return (f" ACT at r={r:g}: {act} CCE {_pct(a.cce)}% [{_pct(a.cce_ci_low)}, {_pct(a.cce_ci_high)}] vs "
                    f"{base} {_pct(b.cce)}% [{_pct(b.cce_ci_low)}, {_pct(b.cce_ci_high)}], CA "
                    f"{_pct(a.certified_accuracy)}% vs {_pct(b.certified_accuracy)}%; {verdict}.")
    return f" ACT: no radius where both {act} and {base} have a selected model with a CCE."


def _log_samples(ctx, cert, y_np: np.ndarray, sigma: float, radii: list[float], p: dict) -> None:
    """Per-sample rows (one file per sigma): the smoothed prediction (-1 = abstain), its Monte-Carlo confidence
    (mean softmax score of the certified class over the n draws), the certified radius, and at every radius the
    certified confidence bounds [lower, upper] used by CBS/CCE (None where the input is not certified there)."""
    import certcal

    if getattr(ctx, "log_format", None) is None:
        return
    n = y_np.shape[0]
    cols: dict = {"id": np.arange(n), "label": y_np, "prediction": cert.prediction,
                  "confidence": cert.scores.mean(1).astype(np.float64), "certified_radius": cert.radius,
                  "correct": cert.prediction == y_np, "sigma": np.full(n, sigma)}
    for r in radii:
        mask = cert.certified_at(r)
        lower: list = [None] * n
        upper: list = [None] * n
        if mask.any():
            b = certcal.confidence_bounds(cert.scores[mask], sigma, r, alpha=cert.alpha, method=p["bound"])
            for i, lo, hi in zip(np.flatnonzero(mask), b.lower, b.upper, strict=True):
                lower[i], upper[i] = float(lo), float(hi)
        cols[f"lower_r{_tag(r)}"], cols[f"upper_r{_tag(r)}"] = lower, upper
    ctx.log_samples(cols, name=f"sigma{_tag(sigma)}")



# --- report rows: formatting of the package's results (percentages rounded to 2 decimals) ---

ACT_LABELS = {"none": "noise model (not fine-tuned)", "gaussian": "noise fine-tuning", "smoothadv": "AT (SmoothAdv)",
              "brier_act": "Brier-ACT", "acce_act": "ACCE-ACT", "acce_act_exact": "ACCE-ACT (exact adversary)"}


def certified_rows(sigma: float, curve) -> list[list]:
    """Rows of the ``certified`` table from a :class:`certcal.CertifiedCalibrationCurve`."""
    rows = []
    for r in curve.rows:
        ca_ci, cbs_ci = r.certified_accuracy_ci or (None, None), r.cbs_ci or (None, None)
        cce_ci = r.cce_ci.get("exact", (None, None))
        rows.append([sigma, r.radius, _pct(r.certified_accuracy), _pct(ca_ci[0]), _pct(ca_ci[1]), r.n_certified,
                     _pct(r.cbs), _pct(cbs_ci[0]), _pct(cbs_ci[1]), _pct(r.cce["exact"]), _pct(cce_ci[0]),
                     _pct(cce_ci[1]), _pct(r.cce["admm"]), _pct(r.cce["brier"]), _pct(r.clean_ece)])
    return rows


def fixed_rows(sigma: float, cs) -> list[list]:
    """Rows of the ``fixed_set`` table from a :class:`certcal.CommonSetCurve`."""
    return [[sigma, r, cs.n_inputs, _pct(cs.cbs[j]), _pct(cs.cbs_ci[j][0]), _pct(cs.cbs_ci[j][1]), _pct(cs.cce[j]),
             _pct(cs.cce_ci[j][0]), _pct(cs.cce_ci[j][1])] for j, r in enumerate(cs.radii)]


def bound_rows(w) -> list[list]:
    """Rows of the ``bounds`` table from a :class:`certcal.CertificateWidths`."""
    return [[w.sigma, r, round(s, 4), round(c, 4), round(q, 4)]
            for r, s, c, q in zip(w.radii, w.standard, w.cdf, w.ratio, strict=True)]


def ace_rows(bench) -> list[list]:
    """Rows of the ``ace`` table from a :class:`certcal.ACEBenchmark`."""
    return [[r.configuration, r.norm, r.eps, _pct(r.accuracy), _pct(r.accuracy_ci[0]), _pct(r.accuracy_ci[1]),
             _pct(r.clean_ece), _pct(r.clean_ece_ci[0]), _pct(r.clean_ece_ci[1]), _pct(r.adv_ece),
             _pct(r.adv_ece_ci[0]), _pct(r.adv_ece_ci[1]), _pct(r.diff_ece_ci[0]), _pct(r.diff_ece_ci[1]),
             r.prediction_unchanged] for r in bench.rows]


def act_rows(comp) -> list[list]:
    """Rows of the ``act`` table from a :class:`certcal.ACTComparison`."""
    return [[ACT_LABELS.get(r.method, r.method), r.radius, _pct(r.certified_accuracy),
             _pct(r.certified_accuracy_ci_low), _pct(r.certified_accuracy_ci_high), _pct(r.cbs), _pct(r.cbs_ci_low),
             _pct(r.cbs_ci_high), _pct(r.cce), _pct(r.cce_ci_low), _pct(r.cce_ci_high), r.n_selected]
            for r in comp.rows]


def _metrics(curves: dict, fixed: dict, widths: dict, ace, comp) -> dict:
    """The section's flat metrics (fractions, unrounded) from the package's results."""
    m: dict = {}
    for sigma, (_, curve) in curves.items():
        for r in curve.rows:
            t = f"sigma_{_tag(sigma)}_r_{_tag(r.radius)}"
            m[f"{t}_certified_accuracy"] = r.certified_accuracy
            m[f"{t}_certified_accuracy_ci_low"], m[f"{t}_certified_accuracy_ci_high"] = (
                r.certified_accuracy_ci or (None, None))
            m[f"{t}_cbs"] = r.cbs
            m[f"{t}_cbs_ci_low"], m[f"{t}_cbs_ci_high"] = r.cbs_ci or (None, None)
            m[f"{t}_cce_exact"] = r.cce["exact"]
            m[f"{t}_cce_exact_ci_low"], m[f"{t}_cce_exact_ci_high"] = r.cce_ci.get("exact", (None, None))
            m[f"{t}_cce_admm"] = r.cce["admm"]
        cs = fixed.get(sigma)
        if cs is None:
            continue
        for j, r in enumerate(cs.radii):
            t = f"fixed_sigma_{_tag(sigma)}_r_{_tag(r)}"
            m[f"{t}_cbs"], m[f"{t}_cce_exact"] = cs.cbs[j], cs.cce[j]
            m[f"{t}_cbs_ci_low"], m[f"{t}_cbs_ci_high"] = cs.cbs_ci[j]
            m[f"{t}_cce_exact_ci_low"], m[f"{t}_cce_exact_ci_high"] = cs.cce_ci[j]
        t = f"fixed_sigma_{_tag(sigma)}"
        m[f"{t}_n_inputs"] = cs.n_inputs
        m[f"{t}_cbs_increase"] = cs.cbs_increase
        m[f"{t}_cbs_increase_ci_low"], m[f"{t}_cbs_increase_ci_high"] = cs.diff_cbs_ci
        m[f"{t}_cce_increase"] = cs.cce_increase
        m[f"{t}_cce_increase_ci_low"], m[f"{t}_cce_increase_ci_high"] = cs.diff_cce_ci
    for sigma, w in widths.items():
        for r, q in zip(w.radii, w.ratio, strict=True):
            m[f"sigma_{_tag(sigma)}_r_{_tag(r)}_cdf_over_standard_width"] = q
    for r in ace.rows:
        t = f"ace_{r.configuration}_{r.norm}"
        m[f"{t}_ece"] = r.adv_ece
        m[f"{t}_ece_ci_low"], m[f"{t}_ece_ci_high"] = r.adv_ece_ci
        m[f"{t}_ece_increase"] = r.diff_ece
        m[f"{t}_ece_increase_ci_low"], m[f"{t}_ece_increase_ci_high"] = r.diff_ece_ci
        m["ace_clean_ece"] = r.clean_ece
        m["ace_clean_ece_ci_low"], m["ace_clean_ece_ci_high"] = r.clean_ece_ci
        m["ace_accuracy"] = r.accuracy
        m["ace_accuracy_ci_low"], m["ace_accuracy_ci_high"] = r.accuracy_ci
        m["ace_predictions_unchanged"] = ace.predictions_unchanged
    for r in comp.rows if comp is not None else ():
        t = f"act_{r.method}_r_{_tag(r.radius)}"
        m[f"{t}_certified_accuracy"] = r.certified_accuracy
        m[f"{t}_certified_accuracy_ci_low"] = r.certified_accuracy_ci_low
        m[f"{t}_certified_accuracy_ci_high"] = r.certified_accuracy_ci_high
        m[f"{t}_cce_exact"], m[f"{t}_cbs"] = r.cce, r.cbs
        m[f"{t}_cce_exact_ci_low"], m[f"{t}_cce_exact_ci_high"] = r.cce_ci_low, r.cce_ci_high
        m[f"{t}_cbs_ci_low"], m[f"{t}_cbs_ci_high"] = r.cbs_ci_low, r.cbs_ci_high
    gaps = [g for _, c in curves.values() if (g := c.solver_gap("admm", "exact")) is not None]
    m["max_exact_minus_admm"] = max(gaps) if gaps else None
    return m


def _summary(curves: dict, fixed: dict, ace, comp, radii: list[float]) -> str:
    """The section's summary, every number read from the package's results."""
    sigma0 = next(iter(curves))
    s0 = curves[sigma0][1].rows
    r_mid = s0[min(2, len(s0) - 1)]
    best = ace.worst
    text = (f"σ={sigma0:g}: certified accuracy {r_mid.certified_accuracy:.1%} at radius {r_mid.radius:g}, "
            f"certified Brier score {_pct(r_mid.cbs)}% and certified calibration error {_pct(r_mid.cce['exact'])}% "
            f"(ADMM finds {_pct(r_mid.cce['admm'])}%). beta-ACE attacks move the base model's ECE from "
            f"{_pct(ace.rows[-1].clean_ece)}% up to {_pct(best.adv_ece)}% ({best.configuration}, {best.norm}) "
            + ("without changing a single prediction" if ace.predictions_unchanged else
               "but CHANGED some predictions")
            + f"; in {ace.n_increase_above_zero} of {len(ace.rows)} attacks the bootstrap interval of the ECE "
            f"increase lies above 0 and in {ace.n_attacked_above_clean} the attacked ECE's interval lies above the "
            "clean one's (in the others they overlap or the attack lowers the ECE).")
    for sigma, cs in fixed.items():
        text += (f" On the {cs.n_inputs} inputs certified at r={max(radii):g} (σ={sigma:g}) CBS grows by "
                 f"{_pct(cs.cbs_increase)} points and CCE by {_pct(cs.cce_increase)} points from r={min(radii):g} "
                 f"({'both' if cs.increase_separated else 'not both'} separated from 0 by their bootstrap "
                 "intervals).")
    v = comp.verdict() if comp is not None else None
    if v is not None and v.radius is None:
        text += f" ACT: no radius where both {v.method} and {v.baseline} have a selected model with a CCE."
    elif v is not None:
        verdict = ("intervals overlap: no difference shown" if v.overlap else
                   ("ACT lowers the CCE" if v.lowers else "ACT raises the CCE") + " (intervals disjoint)")
        text += (f" ACT at r={v.radius:g}: {v.method} CCE {_pct(v.cce)}% [{_pct(v.cce_ci[0])}, {_pct(v.cce_ci[1])}] "
                 f"vs {v.baseline} {_pct(v.baseline_cce)}% [{_pct(v.baseline_cce_ci[0])}, "
                 f"{_pct(v.baseline_cce_ci[1])}], CA {_pct(v.certified_accuracy)}% vs "
                 f"{_pct(v.baseline_certified_accuracy)}%; {verdict}.")
    return text


def _figures(ctx, curves: dict, y_np: np.ndarray, radii: list[float], p: dict) -> list:
    import matplotlib.pyplot as plt

    import certcal

    figures = []
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for sigma, (_, curve) in curves.items():
        rr = [r.radius for r in curve.rows if r.n_certified]
        axes[0].plot(rr, [100 * r.cbs for r in curve.rows if r.n_certified], "o-", label=f"σ={sigma:g}")
        line, = axes[1].plot(rr, [100 * r.cce["exact"] for r in curve.rows if r.n_certified], "o-",
                             label=f"exact σ={sigma:g}")
        axes[1].plot(rr, [100 * r.cce["admm"] for r in curve.rows if r.n_certified], "s--", color=line.get_color(),
                     label=f"ADMM σ={sigma:g}")
    axes[0].set(xlabel="certified radius (L2)", ylabel="CBS (%)", title="Certified Brier score")
    axes[1].set(xlabel="certified radius (L2)", ylabel="CCE (%)", title="Certified calibration error")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    figures.append(ctx.figure(fig, "cbs-cce-vs-radius",
                              "Certified Brier score and certified calibration error against the certified radius"))

    # reliability diagram of the smoothed classifier (first sigma), clean and at its worst case (exact CCE)
    sigma0 = next(iter(curves))
    cert0, _ = curves[sigma0]
    mask = cert0.certified_at(0.0)
    if mask.any():
        c0 = cert0.prediction[mask] == y_np[mask]
        r_show = radii[min(2, len(radii) - 1)]
        mask_r = cert0.certified_at(r_show)
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
        certcal.reliability_diagram(cert0.scores[mask].mean(1), c0, int(p["n_bins"])).plot(
            axes[0], title=f"smoothed, σ={sigma0:g}, clean")
        if mask_r.any():
            b = certcal.confidence_bounds(cert0.scores[mask_r], sigma0, r_show, alpha=p["alpha"], method=p["bound"])
            cr = cert0.prediction[mask_r] == y_np[mask_r]
            worst = certcal.certified_calibration_error(b.lower, b.upper, cr, int(p["n_bins"]))
            certcal.reliability_diagram(worst.confidences, cr, int(p["n_bins"])).plot(
                axes[1], title=f"worst case at r={r_show:g} (CCE {100 * worst.value:.1f}%)")
        figures.append(ctx.figure(fig, "reliability", "Reliability diagram of the smoothed classifier: clean "
                                  "Monte-Carlo confidences and the exact worst-case confidences of the CCE"))
    return figures


def _setup(ctx, params: dict):
    """Parameters after defaults (checked), the checkpoint key, the base model, the train split and the
    certified test inputs: what :func:`run` and :func:`run_shard` share."""
    p = {**DEFAULTS, **params}
    check_params(p)
    # checkpoint names carry a hash of the parameters and seed, so a resumed run never reuses stale units
    key = hashlib.sha256(json.dumps({**p, "seed": ctx.seed}, sort_keys=True, default=str).encode()).hexdigest()[:10]
    base = ctx.model(p["model"])
    if not isinstance(base, torch.nn.Module):
        raise TypeError(f"certcal needs a vision model (torch.nn.Module), got {type(base).__name__} for {p['model']}")
    ds = ctx.dataset(p["dataset"])
    return p, key, base, (ds.train.x, ds.train.y), (ds.test.x[: p["max_samples"]], ds.test.y[: p["max_samples"]])


def _smoothing_model(ctx, p: dict, base, train, i: int, sigma: float, name: str) -> torch.nn.Module:
    """The smoothing base model of the ``i``-th sigma: the shipped noise model, or ``base`` fine-tuned with
    Gaussian noise (checkpointed in the work directory)."""
    import certcal

    if p["noise_models"]:
        return ctx.model(p["noise_models"][i]).eval()
    xtr, ytr = train
    return _finetuned(ctx, base, name, lambda: certcal.gaussian_noise_training(
        base, xtr, ytr, sigma=sigma, epochs=int(p["noise_epochs"]), batch_size=int(p["noise_batch_size"]),
        lr=float(p["noise_lr"]), seed=ctx.seed, progress=ctx.progress).model)


def run_shard(ctx, params: dict, index: int, count: int) -> None:
    """Certify shard ``index`` of ``count`` of the test inputs at every sigma into the work directory (a task of
    its own under ``--executor ray`` or ``run-unit --shard``); :func:`run` merges the shards."""
    p, key, base, train, (x, _) = _setup(ctx, params)
    if count != int(p["shards"]):
        raise ValueError(f"shard count {count} differs from the unit's shards = {p['shards']}")
    for i, sigma in enumerate(float(s) for s in p["sigmas"]):
        name = f"noise-sigma{_tag(sigma)}-{key}"
        _certificate(ctx, _smoothing_model(ctx, p, base, train, i, sigma, name), x, sigma, p, name, (index, count))


def run(ctx, params: dict) -> Section:
    import certcal

    p, key, base, (xtr, ytr), (x, y) = _setup(ctx, params)
    y_np = y.numpy()
    radii = [float(r) for r in p["radii"]]
    admm = (certcal.admm_grid(int(p["admm_steps"])) if p["admm_grid"]
            else certcal.ADMMConfig(steps=int(p["admm_steps"])))
    sigmas = [float(s) for s in p["sigmas"]]
    noise_models = list(p["noise_models"] or [])  # one per sigma (check_params)
    n_boot, n_bins = int(p["n_boot"]), int(p["n_bins"])

    def noise_model(sigma: float) -> torch.nn.Module:  # Cohen et al.'s noise fine-tuning, checkpointed
        return _smoothing_model(ctx, {**p, "noise_models": []}, base, (xtr, ytr), 0, sigma,
                                f"noise-sigma{_tag(sigma)}-{key}")

    # --- certified calibration across radii, per sigma ---
    curves, fixed, models = {}, {}, {}
    for i, sigma in enumerate(sigmas):
        name = f"noise-sigma{_tag(sigma)}-{key}"
        model = _smoothing_model(ctx, p, base, (xtr, ytr), i, sigma, name)
        models[sigma] = model
        cert = _certificate(ctx, model, x, sigma, p, name)
        curve = certcal.certified_calibration_curve(cert, y_np, radii, bound=p["bound"], methods=("exact", "admm", "brier"),
                                                    n_bins=n_bins, admm=admm, n_boot=n_boot, seed=ctx.seed)
        curves[sigma] = (cert, curve)
        _log_samples(ctx, cert, y_np, sigma, radii, p)
        # CBS/CCE on one fixed input set (certified at the largest radius): non-decreasing in r exactly
        if cert.certified_at(max(radii)).any():
            fixed[sigma] = certcal.common_set_curve(cert, y_np, radii, bound=p["bound"], n_bins=n_bins,
                                                    n_boot=n_boot, seed=ctx.seed)
    # Kumar et al.'s two confidence certificates on the same samples (paper App. C: CDF is tighter)
    widths = {s: w for s, (cert, _) in curves.items()
              if (w := certcal.certificate_widths(cert, radii, alpha=float(p["alpha"]))) is not None}
    # --- beta-ACE attacks on the base model (Table 1's effect) ---
    ace = certcal.ace_benchmark(base, x, y, {"linf": float(p["ace_eps_linf"]), "l2": float(p["ace_eps_l2"])},
                                steps=int(p["ace_steps"]), n_bins=n_bins, n_boot=n_boot, seed=ctx.seed)
    # --- adversarial calibration training vs SmoothAdv (Table 2's layout) ---
    comp = None
    if p["act"]:
        act_sigma = float(p["act_sigma"])
        start = models[act_sigma] if act_sigma in models else noise_model(act_sigma)
        k = p["act_train_samples"]
        xa, ya = (xtr, ytr) if not k else (xtr[:k], ytr[:k])
        ka = int(p["act_max_samples"]) or len(y)
        seeds = [int(v) for v in (p["act_seeds"] or [ctx.seed])]
        lr_grid = [float(v) for v in p["act_lr_grid"]] or [float(p["act_lr"])]
        comp = certcal.act_comparison(
            start, xa, ya, x[:ka], y[:ka], methods=list(p["act_methods"]), seeds=seeds, sigma=act_sigma,
            epsilon=float(p["act_epsilon"]), radii=radii, epochs=int(p["act_epochs"]),
            batch_size=int(p["act_batch_size"]), num_noise=int(p["act_num_noise"]),
            attack_steps=int(p["act_attack_steps"]), attack_step_factor=float(p["act_attack_step_factor"]),
            lr=float(p["act_lr"]), grid={"lr": lr_grid}, selection_margin=float(p["act_selection_margin"]),
            n0=int(p["n0"]), n=int(p["n"]), alpha=float(p["alpha"]), certify_batch_size=int(p["batch_size"]),
            n_bins=n_bins, bound=p["bound"], n_boot=n_boot, warmup_epochs=int(p["act_warmup_epochs"]),
            admm=certcal.ADMMConfig(lr_a=float(p["act_admm_lr_a"])), checkpoint_dir=ctx.work_dir() / f"act-{key}",
            progress=(lambda msg: print(f"  certcal ACT: {msg}", file=sys.stderr, flush=True)) if ctx.progress else None)

    # --- report: tables, metrics, figures, notes and summary, all read from the package's results ---
    tables = [Table("certified", "Certified accuracy, CBS and CCE (%) across radii (inputs certified at each radius)",
                    ["sigma", "radius", "CA", "CA_ci_low", "CA_ci_high", "certified", "CBS", "CBS_ci_low",
                     "CBS_ci_high", "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high", "CCE ADMM", "CCE Brier",
                     "ECE (MC)"], [row for s, (_, c) in curves.items() for row in certified_rows(s, c)]),
              Table("fixed_set", "CBS and exact CCE (%) on one fixed input set (those certified at the largest "
                    "radius): non-decreasing in the radius", ["sigma", "radius", "inputs", "CBS", "CBS_ci_low",
                    "CBS_ci_high", "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high"],
                    [row for s, cs in fixed.items() for row in fixed_rows(s, cs)]),
              Table("bounds", "Mean width of the certified confidence interval: Standard vs CDF certificate",
                    ["sigma", "radius", "Standard", "CDF", "CDF / Standard"],
                    [row for w in widths.values() for row in bound_rows(w)]),
              Table("ace", "beta-ACE calibration attacks on the base model (ECE %, accuracy %)",
                    ["configuration", "norm", "eps", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
                     "clean ECE", "clean ECE_ci_low", "clean ECE_ci_high", "attacked ECE", "attacked ECE_ci_low",
                     "attacked ECE_ci_high", "ECE increase_ci_low", "ECE increase_ci_high",
                     "predictions unchanged"], ace_rows(ace))]
    notes = [
        ("Smoothing base models are the shipped Gaussian-noise-trained models "
         + ", ".join(f"{m} (σ={s:g})" for m, s in zip(noise_models, sigmas, strict=True)) + "."
         if noise_models else
         "Smoothing base models are the umbrella model fine-tuned with Gaussian noise of each sigma "
         f"({p['noise_epochs']} epochs, Cohen et al.'s recipe: certcal.gaussian_noise_training)."),
        f"Intervals are 95 %: Clopper-Pearson for certified accuracy and accuracy, percentile bootstrap "
        f"({n_boot} resamples of the inputs) for CBS, CCE and ECE.",
        f"Certificates use n = {p['n']} Monte-Carlo draws (paper: 100,000) at alpha = {p['alpha']}; confidence "
        f"bounds are Kumar et al.'s {p['bound'].upper()} certificate; CBS and CCE are computed over the inputs "
        "certified at each radius.",
        "CCE (exact) is the exact optimum of the paper's mixed-integer program (6) (sign decomposition solved by a "
        "dynamic programme); CCE (ADMM) is the paper's ACCE solver; Brier is the ECE of the Brier-maximising "
        "confidences.",
    ]
    if comp is not None:
        n_train, n_test = comp.config["n_train"], comp.config["n_test"]
        tables.append(Table("act", f"Adversarial calibration training at σ={comp.sigma:g}, ε={comp.epsilon:g} "
                            f"({p['act_epochs']} fine-tuning epoch(s) on {n_train} train images, lr grid "
                            f"{comp.config['grid']['lr']}, seeds {list(comp.seeds)}, {n_test} test inputs; selection: "
                            f"models within {100 * float(p['act_selection_margin']):g} % of the best CA, lowest "
                            "CCE / CBS): CA, CBS, CCE exact (%)",
                            ["method", "radius", "CA", "CA_ci_low", "CA_ci_high", "CBS", "CBS_ci_low", "CBS_ci_high",
                             "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high", "seeds selected"], act_rows(comp)))
        shipped = (f"the shipped {noise_models[sigmas.index(comp.sigma)]}" if noise_models and comp.sigma in sigmas
                   else "fine-tuned here")
        notes.append(f"ACT rows fine-tune the σ={comp.sigma:g} noise model ({shipped}) "
                     f"for {p['act_epochs']} epoch(s) on {n_train} {p['dataset']} train images: a demo-sized run "
                     "(the paper fine-tunes SmoothAdv models for 10 epochs on a 16-point grid); the package README's "
                     "ACT table (tools/certcal_act_table.py) uses a learning-rate grid, 3 seeds and more data. "
                     "A method's CBS/CCE is empty where none of its models came within the selection margin.")
    figures = _figures(ctx, curves, y_np, radii, p)
    return Section(title=TITLE, summary=_summary(curves, fixed, ace, comp, radii),
                   metrics=_metrics(curves, fixed, widths, ace, comp), tables=tables, figures=figures, notes=notes)
