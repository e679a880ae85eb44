"""The experiment's per-sample records, with the user's ids and label names: the certificates per σ (confidence
bounds at every radius), every β-ACE attack's outcome, and ACT's certificates."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..confidence import confidence_bounds
from .inputs import check_split
from .run import Computed, tag

__all__ = ["records"]


def records(c: Computed) -> dict[str, list[dict[str, Any]]]:
    p = c.prepared
    test = p.data.test
    cal = p.cfg.calibration
    y = p.y
    out: dict[str, list[dict[str, Any]]] = {}

    def name(k: int) -> str:
        return "abstain" if k < 0 else test.name_of(k)

    for sigma, cert in c.certificates.items():
        rows = []
        conf = cert.scores.mean(1) if cert.scores is not None else np.full(len(y), np.nan)
        per_r = {}
        for r in cal.radii:
            mask = cert.certified_at(r)
            lo, hi = np.full(len(y), None, dtype=object), np.full(len(y), None, dtype=object)
            if mask.any() and cert.scores is not None:
                b = confidence_bounds(cert.scores[mask], sigma=cert.sigma, radius=r, alpha=cert.alpha, method=cal.bound)
                lo[mask], hi[mask] = b.lower, b.upper
            per_r[r] = (lo, hi)
        for i in range(len(y)):
            row = {"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y[i])),
                   "label_index": int(y[i]), "prediction": name(int(cert.prediction[i])),
                   "prediction_index": int(cert.prediction[i]), "correct": bool(cert.prediction[i] == y[i]),
                   "confidence": float(conf[i]), "p_lower": float(cert.p_lower[i]),
                   "certified_radius": float(cert.radius[i]), "sigma": float(sigma)}
            for r, (lo, hi) in per_r.items():
                row[f"lower_r{tag(r)}"] = None if lo[i] is None else float(lo[i])
                row[f"upper_r{tag(r)}"] = None if hi[i] is None else float(hi[i])
            rows.append(row)
        out[f"certificates-sigma{tag(sigma)}"] = rows
    ace_rows = []
    for row, res in zip(c.ace.rows, c.ace.results, strict=True):
        for i in range(len(y)):
            ace_rows.append({"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y[i])),
                             "attack": row.configuration, "norm": row.norm, "eps": row.eps,
                             "prediction": test.name_of(int(res.clean_prediction[i])),
                             "attacked_prediction": test.name_of(int(res.adv_prediction[i])),
                             "correct": bool(res.correct[i]), "clean_confidence": float(res.clean_confidence[i]),
                             "attacked_confidence": float(res.adv_confidence[i])})
    out["ace"] = ace_rows
    comp = c.act
    if comp is not None:
        act_rows = []
        n_act = max((cert.prediction.shape[0] for cert in comp.certificates.values()), default=0)
        y_act = y if n_act <= len(y) else check_split("data.test", test, n_act)[1]  # ACT beyond the sweep's inputs
        for (method, gi, seed), cert in comp.certificates.items():
            params = comp.grid_points[method][gi]
            conf = cert.scores.mean(1) if cert.scores is not None else np.full(cert.prediction.shape, np.nan)
            for i in range(cert.prediction.shape[0]):
                act_rows.append({"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y_act[i])),
                                 "method": method, "lr": params.get("lr"),
                                 "attack_step_factor": params.get("attack_step_factor"), "seed": seed,
                                 "prediction": name(int(cert.prediction[i])),
                                 "correct": bool(cert.prediction[i] == y_act[i]),
                                 "confidence": float(conf[i]), "certified_radius": float(cert.radius[i])})
        out["act"] = act_rows
    return out
