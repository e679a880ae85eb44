"""The ACT comparison of paper §5.3 / Table 2 (App. F, I.2-I.3, J.1): fine-tune one smoothing base model with
each training method on a hyper-parameter grid and several seeds, certify every fine-tuned model, select per
radius with the paper's rule, and tabulate certified accuracy, CBS and CCE across radii with 95 % intervals.

Selection rule (§5.3, App. J.1: "we compare all models that come within 3 % of the highest certified accuracy
achieved by any model at a given radius, and evaluate the best certified calibration of these models"): for
each seed and radius, every model of every method (grid points, and the un-fine-tuned base ``"none"``) is
eligible when its certified accuracy is at least the best one minus ``selection_margin``; each method then
reports its eligible model with the lowest CCE (its CA is that model's) and, separately, the lowest CBS. In a
seed where none of a method's models is eligible, the method's CA is its best model's and it contributes no
CBS/CCE: those are means over the ``n_selected`` seeds that had an eligible model (None when no seed had one).

Intervals (robustsuite_common): certified accuracy pools the selected models' test predictions over seeds
(Clopper-Pearson on k of seeds x N); CBS and CCE (exact optimum) are means over the seeds that had a selected
model, with a BCa bootstrap over the test inputs (the same resampled inputs for every seed: paired), so the
interval covers which inputs were drawn; the seed-to-seed spread is shown beside it (``cce_per_seed``), and the
selection itself is not redone inside the bootstrap. The difference of each ACT variant's CCE from AT's
(``paired_baseline``, SmoothAdv) gets a paired bootstrap interval (:mod:`.paired`): both selected models'
CCE on the same resamples of the shared test inputs (``ACTComparison.differences``).

What the budget can decide (issue 26): no input is certified beyond ``max_certifiable_radius(sigma, n,
alpha)``, so a row at a larger radius is labelled inconclusive; a method whose CCE interval overlaps the
baseline's is inconclusive too (:meth:`ACTComparison.comparisons`). ``weights`` records how far each fine-tune
moved the weights from the start (max and mean |w - w_start|): a fine-tune that barely moves them cannot
differ from its start whatever the method.

Departures from the paper, and why: the grid is the caller's (the paper's 16-point grids lost their values
in our copy, and 16 x methods x seeds fine-tunes do not fit a CPU); CCE is the exact optimum (an upper bound
on the paper's ACCE, the max over 16 ADMM runs); the base model is whatever the caller passes (the paper
fine-tunes SmoothAdv-trained models).
"""

from .config import ACT_GRID_KEYS, ACT_METHODS, ACT_VARIANTS, ACTComparisonConfig
from .paired import CertifiedSet, cce_differences, paired_cce_difference
from .result import ACTComparison, ACTDifference, ACTModel, ACTRow, ACTVerdict, ACTWeights
from .run import act_comparison

__all__ = ["ACT_GRID_KEYS", "ACT_METHODS", "ACT_VARIANTS", "ACTComparison", "ACTComparisonConfig", "ACTDifference",
           "ACTModel", "ACTRow", "ACTVerdict", "ACTWeights", "CertifiedSet", "act_comparison", "cce_differences",
           "paired_cce_difference"]
