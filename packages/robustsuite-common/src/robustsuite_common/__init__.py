"""The one copy of the plumbing robustsuite's method packages share; no method code.

Submodules (import what you need; ``import robustsuite_common`` itself loads neither torch nor scipy):

- :mod:`~robustsuite_common.config`: typed, frozen, validated experiment configs (``config``, ``param``,
  ``from_dict``, ``schema_rows``);
- :mod:`~robustsuite_common.experiment`: ``Split``, the checkpoint ``Store`` protocol, ``Metric``, ``Table``,
  ``ExperimentResult``, ``Figure``;
- :mod:`~robustsuite_common.intervals`: Clopper-Pearson, BCa/paired bootstrap, Student-t over seeds, McNemar,
  all returning an ``Interval`` that cannot exclude its estimate;
- :mod:`~robustsuite_common.checks`: ``check_<what>(name, value, ...)`` argument checks;
- :mod:`~robustsuite_common.models`: the model-output contract (``logits_from``) and ``evaluating`` (a
  caller's model comes back untouched);
- :mod:`~robustsuite_common.io`: atomic writes;
- :mod:`~robustsuite_common.extras`: ``optional_import``, the lazy import of an optional dependency whose
  ImportError names the extra that installs it;
- :mod:`~robustsuite_common.robustbench` / :mod:`~robustsuite_common.autoattack`: RobustBench models from a
  local ``model_dir``, and standard AutoAttack;
- offline fixes for the third-party stack: :func:`import_textattack` / :func:`prepare_textattack` (TextAttack
  loads NLTK data and downloads at import), :func:`import_robustbench` / :func:`alias_autoattack` (RobustBench
  imports ``autoattack``, which PyPI installs as ``pyautoattack``).

The offline fixes take ``extra=`` (e.g. ``"iortemp[textattack]"``) so a missing library is reported as
``pip install 'iortemp[textattack]'`` by whichever package called them.
"""

from __future__ import annotations

from .autoattack_alias import alias_autoattack, import_robustbench
from .stopwords import ENGLISH_STOPWORDS
from .textattack_offline import default_cache_dir, import_textattack, nltk_data_dir, prepare_textattack

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "ENGLISH_STOPWORDS",
    "default_cache_dir",
    "nltk_data_dir",
    "prepare_textattack",
    "import_textattack",
    "alias_autoattack",
    "import_robustbench",
]
