"""The paper's experiment (Ledda et al., paper 001) as one call: ``run(models, data, config, *, store=None,
progress=True) -> Result``.

- :class:`Config` groups the paper's settings: ``attack`` (:class:`AttackConfig`: ε, norm, steps, optimizer,
  restarts, under-confidence objectives), ``leaderboard`` (:class:`LeaderboardConfig`: Table IV's test points and
  the robust-accuracy attack, standard AutoAttack with PGD beside it), ``metrics`` (:class:`MetricsConfig`: s-ECE
  bins, bootstrap resamples), ``sweep`` (:class:`SweepConfig`) and ``ood`` (:class:`OODConfig`, Table V);
- :data:`PRESETS` / :func:`preset`: ``"demo"`` (the robustsuite demo's settings), ``"paper"`` (§V-A) and
  ``"paper-cpu"`` (the paper's attack at a CPU size);
- :class:`Models` and :class:`Data` are the inputs; :class:`Result` the output (tables, metrics with intervals,
  per-sample records, summary, warnings); :func:`figures` draws the paper's figures from a result;
- :func:`paper_values` holds the paper's own numbers (Tables II–V), shipped as data (``paper.json``;
  ``paper_reference`` is its deprecated name).
"""

from .config import (
    EXECUTION_FIELDS,
    PRESETS,
    AttackConfig,
    AuditConfig,
    Config,
    LeaderboardConfig,
    MetricsConfig,
    OODConfig,
    SweepConfig,
    preset,
)
from .figures import figures
from .inputs import Data, Models
from .reference import paper_reference, paper_row, paper_values
from .result import TITLE, Result
from .run import run

__all__ = ["Config", "AttackConfig", "LeaderboardConfig", "MetricsConfig", "SweepConfig", "OODConfig", "AuditConfig",
           "PRESETS", "preset", "EXECUTION_FIELDS", "Models", "Data", "run", "Result", "TITLE", "figures",
           "paper_values", "paper_reference", "paper_row"]
