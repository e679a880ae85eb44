"""Make ``import textattack`` work offline (private; mirrors the umbrella's shim without depending on it).

TextAttack builds a ``StopwordModification()`` at import time, which loads NLTK's ``stopwords``
corpus, and once per install tries to ``nltk.download`` six corpora.  We supply a project-written
stopword list as an NLTK corpus through ``nltk.data.path`` and mark the one-time step as done.
"""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path

# Common English function words, written for this project (not NLTK's list).
ENGLISH_STOPWORDS = """
a about above after again against all am an and any are as at be because been before being below
between both but by can cannot could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves ll re ve don didn doesn isn wasn weren won wouldn shouldn
couldn aren hasn haven hadn mustn needn shan s t d m o y ain ma
""".split()


def cache_dir() -> Path:
    return Path(os.environ.get("ZEROE_PERTURB_CACHE", Path.home() / ".cache" / "zeroe_perturb"))


def prepare_textattack() -> None:
    import nltk

    root = cache_dir() / "nltk_data"
    target = root / "corpora" / "stopwords" / "english"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"english.{os.getpid()}.tmp")
        tmp.write_text("\n".join(ENGLISH_STOPWORDS) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    ta_cache = Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))
    ta_cache.mkdir(parents=True, exist_ok=True)
    (ta_cache / "post_install_check_3").touch(exist_ok=True)


def import_textattack():
    """Import textattack offline (slow, ~15 s); raises ImportError naming the extra if missing."""
    try:
        importlib.import_module("nltk")
    except ImportError as e:
        raise ImportError("TextAttack integration needs: pip install 'zeroe-perturb[textattack]'") from e
    prepare_textattack()
    try:
        ta = importlib.import_module("textattack")
    except ImportError as e:
        raise ImportError("TextAttack integration needs: pip install 'zeroe-perturb[textattack]'") from e
    # TextAttack logs an INFO line per attack built ("Goal function ... compatible with model"); keep
    # warnings only, so library calls stay quiet
    logging.getLogger("textattack.shared.utils.install").setLevel(logging.WARNING)
    return ta
