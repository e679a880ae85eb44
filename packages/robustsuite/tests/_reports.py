"""Shared by the run tests that compare two reports of one config (test_batch, test_executor_ray, test_first_run):
what legitimately differs between two runs, and the tiny certcal unit they run."""

from __future__ import annotations

import json

# report fields that legitimately differ between two runs of one config (whatever the executor): when the run
# was created / finished, the command line, and the measured durations of units and sections
VARYING_RUN_KEYS = ("created", "finished", "command")
VARYING_UNIT_KEYS = ("seconds",)
VARYING_SECTION_KEYS = ("seconds",)

# a certcal unit on the 8x8 digits with tiny budgets (Monte-Carlo noise draws, ADMM, attacks): seeded randomness
# inside the unit is compared too; a test may append keys of [methods.certcal.config.certify]
CERTCAL_TINY = """[methods.certcal]
model = "builtin:digits-cnn"
dataset = "builtin:digits"
noise_models = ["builtin:digits-cnn"]
[methods.certcal.config]
test_samples = 20
smoothing = {sigmas = [0.25]}
calibration = {radii = [0.0, 0.25], n_boot = 20}
acce = {steps = 20}
ace = {steps = 2}
[methods.certcal.config.certify]
n0 = 20
n = 100
"""


def report_content(report: dict) -> dict:
    """The report without what differs between two runs of one config: times, command, durations."""
    report = json.loads(json.dumps(report))
    for k in VARYING_RUN_KEYS:
        report["run"].pop(k)
    for u in report["units"]:
        for k in VARYING_UNIT_KEYS:
            u.pop(k)
    for s in report["sections"].values():
        for k in VARYING_SECTION_KEYS:
            s.pop(k)
    return report
