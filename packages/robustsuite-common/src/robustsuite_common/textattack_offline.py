"""Make ``import textattack`` work offline.

TextAttack (0.3.x) builds a ``StopwordModification()`` at import time, which loads NLTK's ``stopwords``
corpus, and on its first import calls ``nltk.download`` for six corpora; neither can succeed without a
network. The fix: write :data:`ENGLISH_STOPWORDS` as an NLTK corpus under a cache directory, put that
directory on ``nltk.data.path``, and mark TextAttack's one-time post-install step as done
(``$TA_CACHE_DIR/post_install_check_3``, TextAttack's own marker file) before importing it.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from types import ModuleType

from .extras import optional_import
from .stopwords import ENGLISH_STOPWORDS

FEATURE = "TextAttack support"
EXTRA = "robustsuite-common[textattack]"  # the extra named when the caller does not name its own


def default_cache_dir() -> Path:
    """``$ROBUSTSUITE_COMMON_CACHE``, else ``$XDG_CACHE_HOME/robustsuite-common`` (``~/.cache`` by default)."""
    if os.environ.get("ROBUSTSUITE_COMMON_CACHE"):
        return Path(os.environ["ROBUSTSUITE_COMMON_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "robustsuite-common"


def nltk_data_dir(*, cache_dir: str | os.PathLike | None = None) -> Path:
    """Write the stopword corpus under ``cache_dir/nltk_data`` (once, atomically) and return that directory."""
    root = Path(cache_dir if cache_dir is not None else default_cache_dir()) / "nltk_data"
    target = root / "corpora" / "stopwords" / "english"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".english.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(ENGLISH_STOPWORDS) + "\n")
        os.replace(tmp, target)
    return root


def prepare_textattack(*, cache_dir: str | os.PathLike | None = None, extra: str | None = None) -> Path:
    """Put the stopword corpus on ``nltk.data.path`` and mark TextAttack's post-install download as done.

    Call before ``import textattack``; returns the NLTK data directory (callers may put more corpora
    there). ``ImportError`` naming ``extra`` (default: robustsuite-common's own) when NLTK is not installed.
    """
    nltk = optional_import("nltk", extra=extra or EXTRA, feature=FEATURE)
    data = str(nltk_data_dir(cache_dir=cache_dir))
    if data not in nltk.data.path:
        nltk.data.path.insert(0, data)
    ta_cache = Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))
    ta_cache.mkdir(parents=True, exist_ok=True)
    (ta_cache / "post_install_check_3").touch(exist_ok=True)
    return Path(data)


def import_textattack(*, cache_dir: str | os.PathLike | None = None, extra: str | None = None) -> ModuleType:
    """``textattack``, imported offline (slow: about 15 s on two cores, so import lazily).

    ``ImportError`` naming ``extra`` (default: robustsuite-common's own) when TextAttack or NLTK is not installed.
    """
    prepare_textattack(cache_dir=cache_dir, extra=extra)
    ta = optional_import("textattack", extra=extra or EXTRA, feature=FEATURE)
    # TextAttack logs an INFO line per attack built ("Goal function ... compatible with model"); keep
    # warnings only, so library calls stay quiet
    logging.getLogger("textattack.shared.utils.install").setLevel(logging.WARNING)
    return ta
