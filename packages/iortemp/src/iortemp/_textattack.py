"""iortemp's use of the shared offline TextAttack fix (:mod:`robustsuite_common`): its cache and its extra.

The fix itself (a project-written stopword list installed as NLTK's ``stopwords`` corpus, TextAttack's
post-install download marked done) lives once, in ``robustsuite-common``; this module only says where
iortemp keeps its NLTK data (``$IORTEMP_CACHE``, default ``~/.cache/iortemp``) and which extra to name.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from robustsuite_common import ENGLISH_STOPWORDS as STOPWORDS
from robustsuite_common import import_textattack as _import_textattack
from robustsuite_common import prepare_textattack as _prepare_textattack

__all__ = ["STOPWORDS", "prepare_offline", "import_textattack"]

EXTRA = "iortemp[textattack]"


def _cache_dir() -> Path:
    root = os.environ.get("IORTEMP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "iortemp")
    return Path(root)


def prepare_offline(cache_dir: Path | None = None) -> Path:
    """Install the stopword corpus and the post-install marker; return the NLTK data directory."""
    return _prepare_textattack(cache_dir=cache_dir or _cache_dir(), extra=EXTRA)


def import_textattack() -> ModuleType:
    """Import textattack offline (~15 s), or raise ImportError naming the ``textattack`` extra."""
    return _import_textattack(cache_dir=_cache_dir(), extra=EXTRA)
