"""zeroe-perturb's use of the shared offline TextAttack fix (:mod:`robustsuite_common`): cache and extra.

The fix itself (a project-written stopword list installed as NLTK's ``stopwords`` corpus, TextAttack's
post-install download marked done) lives once, in ``robustsuite-common``; this module only says where
zeroe-perturb keeps its NLTK data (``$ZEROE_PERTURB_CACHE``, default ``~/.cache/zeroe_perturb``) and which
extra to name.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from robustsuite_common import ENGLISH_STOPWORDS
from robustsuite_common import import_textattack as _import_textattack

__all__ = ["ENGLISH_STOPWORDS", "import_textattack"]

EXTRA = "zeroe-perturb[textattack]"


def _cache_dir() -> Path:
    return Path(os.environ.get("ZEROE_PERTURB_CACHE", Path.home() / ".cache" / "zeroe_perturb"))


def import_textattack() -> ModuleType:
    """Import textattack offline (slow, ~15 s); raises ImportError naming the extra if missing."""
    return _import_textattack(cache_dir=_cache_dir(), extra=EXTRA)
