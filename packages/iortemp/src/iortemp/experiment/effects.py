"""The ``paper_effects`` table of the iortemp experiment: the paper's headline effects (``paper_effects.json``)
measured from the result's own metrics, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`).

:func:`effect_metrics` adds the one comparison the verdict table does not already hold: plain against the
calibrated adversary alone (Table 2's claim that T_cal removes the ↑conf illusion), paired over the same texts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from robustsuite_common.effects import (
    Effect,
    Measurement,
    from_metric,
    package_effects,
    paper_effects_table,
)
from robustsuite_common.experiment import Metric, Table
from robustsuite_common.intervals import Interval

__all__ = ["PAPER_ATTACK", "paper_effects", "measure_effects", "effects_spec", "effect_metrics"]

#: the attack of the paper's headline numbers (Tables 1–3)
PAPER_ATTACK = "pwws"


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("iortemp.experiment")


def _suffix(metrics: Mapping[str, Metric], attack: str) -> str | None:
    """The metric-key suffix of ``attack`` (``""`` for the Brent search's attack), ``None`` when it was not run."""
    run = metrics.get("attacks_run")
    if run is None or attack not in str(run.value).split(","):
        return None
    return "" if metrics["opt_attack"].value == attack else f"_{attack}"


def effect_metrics(t: Any, verdicts: Mapping[tuple[str, str], Mapping[str, Any]], threshold: float,
                   attack: str = PAPER_ATTACK) -> dict[str, Metric]:
    """Two additions to the verdict table's metrics, both paired over the same texts:

    - ``ior_exceeds_<system>[_<attack>]``: the rule "drop > threshold" as a test — the paired interval of the drop
      (plain − best temperature) lies wholly above ``threshold`` (where ``ior_<system>`` compares the point
      estimate alone);
    - ``ior_cal_drop_<system>[_<attack>]``: adversarial accuracy plain − calibrated adversary (seeds averaged per
      text; the interval of :func:`iortemp.paired_verdict`), for ↑conf and DDi-AT, under ``attack``."""
    from ..ior import paired_verdict

    out: dict[str, Metric] = {}
    if attack not in t.attacks:
        attack = t.opt_attack
    for (k, a), x in verdicts.items():
        sfx = "" if a == t.opt_attack else f"_{a}"
        low = float(x["difference"]["low"])
        out[f"ior_exceeds_{k}{sfx}"] = Metric(bool(low > threshold), f"paired test: the drop's interval lies above "
                                              f"{100 * threshold:g} points: {k} under {a}", "")
    sfx = "" if attack == t.opt_attack else f"_{attack}"
    for k in ("up_conf", "ddi_at"):
        rows = {r["mode"]: r for r in t.rows if r["system"] == k}
        if "plain" not in rows or "cal" not in rows or "adversarial_correct" not in rows["plain"]:
            continue
        x = paired_verdict(rows["plain"]["adversarial_correct"][attack], rows["cal"]["adversarial_correct"][attack],
                           seed=int(rows["plain"]["seeds"][0]))
        out[f"ior_cal_drop_{k}{sfx}"] = Metric.of(Interval.from_dict(x["difference"]), "adversarial-accuracy drop, "
                                                  f"plain − calibrated adversary (T_cal): {k} under {attack} (paired)",
                                                  "fraction")
    return out


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run)."""
    sfx = _suffix(metrics, PAPER_ATTACK)
    if sfx is None and "opt_attack" in metrics:
        sfx = ""  # PWWS not run: the Brent search's attack
    if sfx is None:
        return {e.key: None for e in effects_spec()}
    return {
        "up_conf_illusion": from_metric(metrics.get(f"ior_drop_up_conf{sfx}")),
        "cal_removes_up_conf": from_metric(metrics.get(f"ior_cal_drop_up_conf{sfx}")),
        "ddi_at_illusion": from_metric(metrics.get(f"ior_drop_ddi_at{sfx}")),
        "down_conf_illusion": from_metric(metrics.get(f"ior_drop_down_conf{sfx}")),
    }


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
