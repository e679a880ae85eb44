"""What every table of the experiment shares: the result under construction (tables, metrics with readable
labels and intervals, per-sample records, verdicts), row labels, and the store-backed memo of games."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np
import torch

from robustsuite_common import contract
from robustsuite_common.experiment import Metric, Store, Table
from robustsuite_common.intervals import Interval

#: the attacks of every defense row, in table order (transfer PGD, then the model-space attacks)
ATTACKS = ("pgd", "fpa", "gmsa-avg", "gmsa-min")
LABEL = {"dent-aa": "DENT-AA (AutoAttack through DENT)", "aa": "AA (transfer)", "none": "clean",
         "pgd": "PGD (transfer)", "fpa": "FPA", "gmsa-avg": "GMSA-AVG", "gmsa-min": "GMSA-MIN",
         "cw": "CW-L2 (transfer)"}
STATIC_LABEL = {"none": "clean", "pgd": "PGD (white-box)", "aa": "AA (white-box)",
                "autoattack": "AutoAttack (white-box, standard)"}
COLUMNS = ("defense", "attack", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "paper (MNIST)")
UNITS = {"accuracy": "fraction", "accuracy_ci_low": "fraction", "accuracy_ci_high": "fraction"}
BOUNDS = {"accuracy": (0.0, 1.0)}


def paper_values() -> dict[str, Any]:
    """The paper's reference values (``paper.json`` beside this module), as fractions (``_source`` says where
    each comes from)."""
    return contract.paper_values("transduct_attack.experiment")


def fingerprint(*tensors: torch.Tensor | torch.nn.Module) -> str:
    """A short hash of tensors' values or of a model's ``state_dict`` (what a checkpoint key depends on)."""
    h = hashlib.sha256()
    for t in tensors:
        items = sorted(t.state_dict().items()) if isinstance(t, torch.nn.Module) else [("", t)]
        for name, v in items:
            a = v.detach().cpu().contiguous()
            h.update(name.encode())
            h.update(str((tuple(a.shape), str(a.dtype))).encode())
            h.update(a.numpy().tobytes() if a.dtype != torch.bfloat16 else a.float().numpy().tobytes())
    return h.hexdigest()[:12]


def cp_interval(estimate: float, ci: tuple[float, float]) -> Interval:
    """A rate with its (already computed) Clopper-Pearson interval."""
    return Interval(float(estimate), ci[0], ci[1], method="Clopper-Pearson", bounds=(0.0, 1.0))


class StoreCells(MutableMapping):
    """A ``transduct_attack`` memo (``cells=`` / ``curves=``) backed by a :class:`Store`: one JSON value per game
    under ``prefix-key``, so an interrupted run resumes from its finished games (a value that does not decode is
    replayed). With ``store=None`` it is a plain dict."""

    def __init__(self, store: Store | None, prefix: str, decode) -> None:
        self.store, self.prefix, self.decode = store, prefix, decode
        self.local: dict[str, Any] = {}

    def _key(self, key: str) -> str:
        return f"{self.prefix}-{key}"

    def __getitem__(self, key: str):
        if key in self.local:
            return self.local[key]
        data = None if self.store is None else self.store.get(self._key(key))
        if data is None:
            raise KeyError(key)
        try:
            value = self.decode(json.loads(data.decode()))
        except (KeyError, TypeError, ValueError) as err:
            raise KeyError(key) from err
        self.local[key] = value
        return value

    def __setitem__(self, key: str, value) -> None:
        self.local[key] = value
        if self.store is not None:
            self.store.put(self._key(key), json.dumps(value.to_dict()).encode())

    def __delitem__(self, key: str) -> None:
        del self.local[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.local)

    def __len__(self) -> int:
        return len(self.local)


def row_labels(key: str, defense: str, static: str) -> tuple[str, str]:
    """(defense, attack) labels of a row: ``key`` "static <attack>" or an attack key of Γ."""
    if key.startswith("static "):
        return static, STATIC_LABEL[key.split()[1]]
    return defense, LABEL[key]


def cells_of(table, seed: int, keys) -> dict:
    """``{"static none": cell, ..., "none": cell, ...}`` of one seed of a ``DefenseTable``."""
    return {k: table.cell(*(("static", k.split()[1]) if k.startswith("static ") else ("defense", k)), seed)
            for k in keys}


class Out:
    """The result under construction: tables, metrics, bar heights, verdicts, per-sample records."""

    def __init__(self, test, device) -> None:
        self.test, self.device = test, device
        self.y = [int(v) for v in test.y.tolist()]
        self.tables: dict[str, Table] = {}
        self.metrics: dict[str, Metric] = {}
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.bars: dict[str, list[float]] = {}
        self.curves: dict[str, Any] = {}
        self.comparisons: list[str] = []
        self.records: dict[str, list[dict]] = {}

    def table(self, name: str, title: str, columns, rows, units=None, bounds=None) -> None:
        self.tables[name] = Table(name, title, tuple(columns), tuple(tuple(r) for r in rows),
                                  units=dict(UNITS if units is None else units),
                                  bounds=dict(BOUNDS if bounds is None else bounds))

    def base_view(self, model, x, idx) -> tuple[list[int], list[float]]:
        """The static model's prediction and confidence on the clean points (the per-sample records' columns)."""
        from robustsuite_common.models import forward_logits

        logp = torch.log_softmax(forward_logits(model, x[list(idx)]).double(), dim=1)
        conf, pred = logp.max(dim=1)
        return pred.tolist(), conf.exp().tolist()

    def log_cell(self, table: str, defense: str, attack: str, cell, base, clean=None) -> None:
        """Per-sample rows of one (defense, attack, seed) cell (``cell.indices`` maps positions to test rows):
        the user's row id, the input's reference, the label's name, the static model's clean prediction, Γ's
        prediction on the attacker's point (and on the clean point, from the defense's clean game ``clean``)."""
        pred, conf = base
        adv = cell.game.predictions
        clean_pred = None if clean is None else clean.game.predictions
        name_of = self.test.name_of
        for j, i in enumerate(cell.indices):
            label = self.y[i]
            row = {"id": self.test.id_of(i), "input": f"test[{i}]", "label": name_of(label),
                   "prediction": name_of(pred[j]), "confidence": float(conf[j]), "table": table,
                   "defense": defense, "attack": attack, "seed": cell.seed,
                   "adv_prediction": name_of(int(adv[j])), "correct": bool(adv[j] == label)}
            if clean_pred is not None:
                row["defense_clean_prediction"] = name_of(int(clean_pred[j]))
            self.records.setdefault(table, []).append(row)

    def cell_rows(self, table: str, cells: dict, defense: str, static: str, paper: dict, base,
                  suffix: dict[str, str] | None = None) -> list[list]:
        """The rows of one seed's ``cells`` (:func:`cells_of`; ``defense`` / ``static`` name the two models):
        labels (an attack's label extended by its ``suffix``), accuracy with its interval and the paper's value,
        each cell's per-sample records logged under ``table`` (Γ's beside its clean game ``cells["none"]``)."""
        rows = []
        for a, c in cells.items():
            name, attack = row_labels(a, defense, static)
            attack += (suffix or {}).get(a, "")
            rows.append(cp_row(name, attack, c, paper_of(paper, a)))
            self.log_cell(table, name, attack, c, base, None if a.startswith("static") else cells["none"])
        return rows

    def add_metrics(self, key: str, cells: dict, what: str) -> None:
        """One accuracy metric per cell, with its Clopper-Pearson interval and a readable label."""
        for a, c in cells.items():
            name = f"{key}_{a.replace('-', '_').replace(' ', '_')}"
            attack = STATIC_LABEL[a.split()[1]] if a.startswith("static ") else LABEL[a]
            self.metrics[name] = Metric.of(cp_interval(c.accuracy, c.ci), f"{what}: accuracy under {attack}",
                                           "fraction")

    def compare(self, label: str, table, seed: int) -> None:
        """The ordering the paper reports, stated from the numbers (``DefenseTable.compare``: paired bootstrap)."""
        c = table.compare(seed=seed, boot_seed=seed)
        self.comparisons.append(f"{label}: {LABEL[c.attack]} {c.accuracy:.2f} is {c.verdict} transfer PGD "
                                f"{c.reference_accuracy:.2f} ({paired_text(c)})")


def paired_text(c) -> str:
    """The paired interval behind a :class:`~transduct_attack.Comparison`'s verdict, as the summary states it."""
    return f"paired difference {c.difference:+.2f}, 95% bootstrap [{c.ci_low:+.2f}, {c.ci_high:+.2f}]"


def static_attacks(cfg, warnings: list[str] | None = None) -> tuple[str, ...]:
    """The static rows of every table: clean, white-box PGD and, when configured and installed, standard
    AutoAttack (issue 27: the row that stands for the model's own robust accuracy)."""
    if not cfg.robustness.autoattack:
        return ("none", "pgd")
    import importlib.util

    if importlib.util.find_spec("pyautoattack") is None:
        note = ("The static models' standard AutoAttack rows are not run: robustness.autoattack needs the "
                "'autoattack' extra (pyautoattack), which is not importable here; the white-box PGD rows overstate "
                "robust accuracy.")
        if warnings is not None and note not in warnings:
            warnings.append(note)
        return ("none", "pgd")
    return ("none", "pgd", "autoattack")


def static_checks(out: Out, key: str, tab, name: str, seed: int) -> None:
    """What a reader must know about a table's static model before its numbers: whether its clean accuracy is
    at chance (then its attack numbers carry no information), and whether white-box PGD leaves clearly more
    points robust than standard AutoAttack on the same points (the sanity flag of issue 27)."""
    from robustsuite_common.experiment import chance_rate
    from robustsuite_common.intervals import at_chance

    clean = tab.cell("static", "none", seed)
    chance = chance_rate([out.y[i] for i in clean.indices])
    flag = at_chance(clean.k, clean.n, chance)
    out.metrics[f"{key}_static_at_chance"] = Metric(flag, f"{name}: clean accuracy at chance ({chance:.2f})", "")
    if flag:
        out.warnings.append(f"{name} is at chance on these points (clean {clean.accuracy:.2f}, 95% interval "
                            f"[{clean.ci[0]:.2f}, {clean.ci[1]:.2f}] contains the majority-class share {chance:.2f}): "
                            f"the attack numbers of table {key!r} carry no information.")
    if "autoattack" not in tab.attacks("static"):
        return
    c = tab.compare_cells("autoattack", "pgd", role="static", reference_role="static", seed=seed, boot_seed=seed)
    out.metrics[f"{key}_pgd_minus_autoattack"] = Metric.of(
        Interval(c.difference, c.ci_low, c.ci_high, method="paired bootstrap (BCa)", bounds=(-1.0, 1.0)),
        f"{name}: white-box PGD minus standard AutoAttack robust accuracy, same points", "fraction")
    overstates = c.verdict == "below"
    out.metrics[f"{key}_pgd_overstates"] = Metric(overstates, f"{name}: white-box PGD leaves clearly more points "
                                                  "robust than standard AutoAttack", "")
    if overstates:
        out.warnings.append(f"Sanity flag ({key}): white-box PGD leaves {c.reference_accuracy:.2f} of {name}'s points "
                            f"robust, standard AutoAttack {c.accuracy:.2f} ({paired_text(c)}): PGD overstates its "
                            f"robustness; the AutoAttack row is its robust accuracy, and this table's PGD-based attacks "
                            f"are weaker than the field's.")


def cp_row(defense: str, attack: str, cell, paper: float | None) -> list:
    return [defense, attack, cell.accuracy, *cell.ci, paper]


def paper_of(ref: dict, key: str) -> float | None:
    """The paper's value of a row: its own key, the static AutoAttack row reading the paper's static AA."""
    return ref.get("static aa") if key == "static autoattack" else ref.get(key)


def as_array(values) -> np.ndarray:
    return np.asarray(values)
