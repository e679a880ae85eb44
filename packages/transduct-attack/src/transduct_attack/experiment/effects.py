"""The ``paper_effects`` table of the transduct-attack experiment: the paper's headline effects
(``paper_effects.json``), each a paired comparison on the same points, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`).

:func:`effect_metrics` computes the comparisons from the per-sample records (one row per defense, attack, point and
seed, with ``correct``): McNemar's exact test and the paired bootstrap interval of the accuracy difference on the
points both conditions played (same row id, same seed). They become metrics ``effect_<key>`` (the difference) and
``effect_<key>_mcnemar_p``, from which :func:`paper_effects` builds the table. URejectron's two effects (Figure
1b/c: CW points accepted and misclassified, corrupted points rejected, each against the clean points under the same
discriminator) are paired over the same points too, by :mod:`.urejectron`, which records the same two metrics."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robustsuite_common.effects import (
    Effect,
    Measurement,
    from_metric,
    package_effects,
    paper_effects_table,
)
from robustsuite_common.experiment import Metric, Table

__all__ = ["COMPARISONS", "paper_effects", "measure_effects", "effects_spec", "effect_metrics", "paired_outcomes"]

Select = Callable[[str, str], bool]  # (defense label, attack label) -> this condition


def _is(defense: Callable[[str], bool], attack: str) -> Select:
    return lambda d, a: defense(d) and a.startswith(attack)


def _static(role: str | None = None) -> Callable[[str], bool]:
    return lambda d: d.startswith("static") and (role is None or role in d)


def _defense(name: str, role: str | None = None) -> Callable[[str], bool]:
    return lambda d: d.startswith(name) and (role is None or role in d)


#: per effect: (table of the records, condition a, condition b, fallbacks for b) — the effect is mean(a) − mean(b)
COMPARISONS: dict[str, tuple[str, Select, Sequence[Select]]] = {
    "rmc_transfer_overestimates": ("rmc", _is(_defense("RMC", "standard"), "PGD (transfer)"),
                                   (_is(_defense("RMC", "standard"), "GMSA-AVG"),)),
    "rmc_at_worse_than_static": ("rmc", _is(_defense("RMC", "adv. trained"), "GMSA-MIN"),
                                 (_is(_static("adv. trained"), "PGD (white-box)"),)),
    "dent_aa_overstates_dent": ("dent", _is(_defense("DENT"), "DENT-AA"), (_is(_defense("DENT"), "GMSA-MIN"),)),
    "tadv_improves_on_at": ("tadv", _is(_defense("TADV"), "GMSA-AVG"),
                            (_is(_static(), "AutoAttack (white-box, standard)"), _is(_static(), "PGD (white-box)"))),
}


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("transduct_attack.experiment")


def paired_outcomes(rows: Sequence[Mapping[str, Any]], select: Select) -> dict[tuple[Any, Any], bool]:
    """``{(row id, seed): correct}`` of the records ``select`` picks."""
    return {(r["id"], r["seed"]): bool(r["correct"]) for r in rows if select(str(r["defense"]), str(r["attack"]))}


def effect_metrics(records: Mapping[str, Sequence[Mapping[str, Any]]], *, seed: int = 0) -> dict[str, Metric]:
    """``effect_<key>`` (accuracy difference, paired bootstrap over the shared points) and
    ``effect_<key>_mcnemar_p`` for every comparison whose two conditions were both played."""
    from robustsuite_common.intervals import mcnemar

    out: dict[str, Metric] = {}
    for key, (table, sel_a, sels_b) in COMPARISONS.items():
        rows = records.get(table, ())
        a = paired_outcomes(rows, sel_a)
        for sel_b in sels_b:
            b = paired_outcomes(rows, sel_b)
            shared = [k for k in a if k in b]
            if shared:
                break
        if not a or not shared:
            continue
        test = mcnemar([a[k] for k in shared], [b[k] for k in shared], seed=seed)
        what = next(e.effect for e in effects_spec() if e.key == key)
        out[f"effect_{key}"] = Metric.of(test.difference, f"{what} (n = {len(shared)})", "fraction")
        out[f"effect_{key}_mcnemar_p"] = Metric(test.p_value, f"McNemar exact p of that comparison ({test.only_a} "
                                                f"points only the first gets right, {test.only_b} only the second)",
                                                "p-value")
    return out


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run)."""
    return {e.key: from_metric(metrics.get(f"effect_{e.key}")) for e in effects_spec()}


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
