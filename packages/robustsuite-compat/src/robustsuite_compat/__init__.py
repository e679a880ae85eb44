"""One copy of the offline fixes that robustsuite's packages need for their third-party stack.

No method code lives here; each fix is the narrowest one measured to work, idempotent, and imports the
library it fixes only when called, so ``import robustsuite_compat`` costs nothing:

- :func:`import_textattack` / :func:`prepare_textattack`: TextAttack loads NLTK's ``stopwords`` corpus and
  runs ``nltk.download`` at import time, which cannot work offline (:mod:`robustsuite_compat.textattack_offline`);
- :func:`import_robustbench` / :func:`alias_autoattack`: RobustBench 1.1.1 imports ``autoattack``, which its
  PyPI dependency installs as ``pyautoattack`` (:mod:`robustsuite_compat.autoattack_alias`).

The functions take ``extra=`` (e.g. ``"iortemp[textattack]"``) so that a missing library is reported as
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
