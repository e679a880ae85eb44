"""Offline TextAttack import: a project-written stopword corpus for NLTK and TextAttack's post-install marker.

``import textattack`` builds a ``StopwordModification`` at import time (NLTK ``stopwords`` corpus) and
once tries ``nltk.download`` of six corpora; neither can work offline. We write our own stopword list as
an NLTK corpus under a cache directory and mark the post-install step as done. Import lazily: ~15 s.
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile
from pathlib import Path

# Common English function words, written for this project (not copied from NLTK's list).
STOPWORDS = tuple(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can cannot could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves ll re ve don didn doesn isn wasn weren won wouldn shouldn
couldn aren hasn haven hadn mustn needn shan s t d m o y ain ma
""".split()
)


def _cache_dir() -> Path:
    root = os.environ.get("IORTEMP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "iortemp")
    return Path(root)


def prepare_offline(cache_dir: Path | None = None) -> Path:
    """Install the stopword corpus and the post-install marker; return the NLTK data directory."""
    import nltk

    root = Path(cache_dir or _cache_dir()) / "nltk_data"
    target = root / "corpora" / "stopwords" / "english"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".english.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(STOPWORDS) + "\n")
        os.replace(tmp, target)
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    ta_cache = Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))
    ta_cache.mkdir(parents=True, exist_ok=True)
    (ta_cache / "post_install_check_3").touch(exist_ok=True)
    return root


def import_textattack():
    """Import textattack offline, or raise ImportError naming the ``textattack`` extra."""
    try:
        importlib.import_module("nltk")
    except ImportError as e:  # pragma: no cover
        raise ImportError("TextAttack support needs the extra: pip install 'iortemp[textattack]'") from e
    prepare_offline()
    try:
        ta = importlib.import_module("textattack")
    except ImportError as e:  # pragma: no cover
        raise ImportError("TextAttack support needs the extra: pip install 'iortemp[textattack]'") from e
    # TextAttack logs an INFO line per attack built ("Goal function ... compatible with model"); keep
    # warnings only, so library calls stay quiet
    logging.getLogger("textattack.shared.utils.install").setLevel(logging.WARNING)
    return ta
