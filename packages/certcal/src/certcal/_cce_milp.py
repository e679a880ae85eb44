"""Program (6) as a MILP in cvxpy, solved by HiGHS: an independent cross-check of the exact solver.

Linearisation: y_nm stands for a_nm z_nm (l_nm a_nm <= y_nm <= u_nm a_nm), bin gap S_m = sum_n c_n a_nm - y_nm,
and |S_m| is modelled by w_m <= S_m + B (1 - s_m), w_m <= -S_m + B s_m with a binary s_m and B = 2N + 1.
"""

from __future__ import annotations

import numpy as np

from robustsuite_common.extras import optional_import

from ._program import Program


def solve_milp(prog: Program, time_limit: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    cp = optional_import("cvxpy", extra="certcal[milp]", feature="method='milp' (cvxpy with HiGHS)")
    n, m = prog.n, prog.n_bins
    a = cp.Variable((n, m), boolean=True)
    y = cp.Variable((n, m))
    s = cp.Variable(m, boolean=True)
    w = cp.Variable(m)
    big = float(2 * n + 1)  # |S_m| <= N, so w <= S + B needs B >= 2N
    gap = prog.correct @ a - cp.sum(y, axis=0)
    cons = [
        cp.sum(a, axis=1) == 1,
        cp.multiply(a, (~prog.reachable).astype(float)) == 0,
        y >= cp.multiply(prog.lo, a),
        y <= cp.multiply(prog.hi, a),
        w <= gap + big * (1 - s),
        w <= -gap + big * s,
    ]
    problem = cp.Problem(cp.Maximize(cp.sum(w) / n), cons)
    opts: dict = {"mip_rel_gap": 1e-9}  # HiGHS stops at a 1e-4 relative gap by default
    if time_limit is not None:
        opts["time_limit"] = float(time_limit)
    problem.solve(solver=cp.HIGHS, **opts)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"HiGHS did not solve the CCE MILP: status {problem.status}")
    a_val = np.asarray(a.value)
    bins = np.argmax(np.where(prog.reachable, a_val, -np.inf), axis=1)
    idx = np.arange(n)
    a_sel = np.maximum(a_val[idx, bins], 1e-12)
    z = np.clip(np.asarray(y.value)[idx, bins] / a_sel, prog.lo[idx, bins], prog.hi[idx, bins])
    return bins, z, float(problem.value)
