"""The verdict's ``zeroe-noise`` check read from the experiment's own text-classification cells (no extra model
call): the same per-text outcomes as the tables, and the same statistic and rule as :func:`zeroe_perturb.noise_check`
(with one attack seed, the same perturbed texts and the same check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from robustsuite_common.verdict import Check

from ..audit import CHECK_ID, noise_check_from, rule_text
from ._cells import Task
from .config import Config

EVIDENCE = "zeroe_perturb section: table 'levels' and the per-sample records 'classification'"


def audit_checks(task: Task | None, clean: Mapping[str, Any] | None, cells: Mapping[tuple, Mapping[str, Any]],
                 config: Config, seeds: Sequence[int]) -> tuple[Check, ...]:
    """``(zeroe-noise,)`` when ``config.audit.enabled`` (else ``()``): from the classification task's clean outputs
    and its cells at ``audit.level``, one column per attacker (but full-shuffle) and attack seed. The check reads
    accuracy whatever ``classification.metric`` the tables use."""
    a = config.audit
    if not a.enabled:
        return ()
    attacks = tuple(x for x in config.attack.attacks if x != "full-shuffle")
    if task is None or clean is None:
        return (Check(id=CHECK_ID, group="lenses", title=f"Reads through human-readable noise (Zéroe, p = {a.level:g})",
                      status="not-applicable", rule=rule_text(a.level, a.max_drop, "the Zéroe attackers"),
                      detail="no text classifier and texts were given (models.classifier, data.classification)"),)
    y = np.asarray(task.y)
    right = np.asarray(clean["logits"], dtype=np.float64).argmax(axis=1) == y
    columns = [(x, s) for x in attacks for s in seeds]
    noisy = np.stack([np.asarray(cells[(x, a.level, s)]["logits"], dtype=np.float64).argmax(axis=1) == y
                      for x, s in columns], axis=1)
    chance = float(np.bincount(y).max() / len(y))  # accuracy's chance (task.chance is 0.5 when the metric is AUROC)
    return (noise_check_from(right, noisy, [x for x, _ in columns], chance, level=a.level, max_drop=a.max_drop,
                             confidence=config.seeds.level, n_boot=config.seeds.n_boot, seed=config.seed,
                             evidence=EVIDENCE),)
