"""Offline shims for the third-party stack (see the root README, "Dependency notes").

Each shim is the narrowest fix measured to work; all are idempotent and safe to call many times.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path

# A stopword list written by this project (common English function words), supplied to NLTK as
# its `stopwords` corpus so that `import textattack` (which builds a StopwordModification at import
# time) works without downloading NLTK data.
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


def nltk_data_dir(cache_dir: Path) -> Path:
    """Write the project's stopword corpus under ``cache_dir/nltk_data`` and return that directory."""
    root = Path(cache_dir) / "nltk_data"
    target = root / "corpora" / "stopwords" / "english"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text("\n".join(ENGLISH_STOPWORDS) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    return root


def prepare_textattack(cache_dir: Path) -> None:
    """Make ``import textattack`` work offline; call before importing it.

    - supplies the stopword corpus through ``nltk.data.path`` (TextAttack loads it at import);
    - marks TextAttack's one-time post-install step as done, because that step calls
      ``nltk.download`` for six corpora, which cannot succeed offline and only wastes time.
    """
    import nltk

    data = str(nltk_data_dir(cache_dir))
    if data not in nltk.data.path:
        nltk.data.path.insert(0, data)
    ta_cache = Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))
    ta_cache.mkdir(parents=True, exist_ok=True)
    (ta_cache / "post_install_check_3").touch(exist_ok=True)


def alias_autoattack() -> None:
    """Make ``from autoattack import AutoAttack`` resolve to the ``pyautoattack`` distribution.

    robustbench 1.1.1 imports ``autoattack`` (the original, unpublished-on-PyPI module name) in its
    ``__init__``; its dependency ``pyautoattack`` installs the same code under another name. The
    alias is only installed when no real ``autoattack`` module is importable.
    """
    if "autoattack" in sys.modules:
        return
    try:
        importlib.import_module("autoattack")
        return
    except ImportError:
        pass
    pyaa = importlib.import_module("pyautoattack")
    sys.modules["autoattack"] = pyaa
    for sub in ("state", "autopgd_base", "fab_pt", "square", "other_utils", "checks"):
        try:
            sys.modules[f"autoattack.{sub}"] = importlib.import_module(f"pyautoattack.{sub}")
        except ImportError:  # pragma: no cover - depends on pyautoattack's layout
            pass


def import_robustbench():
    """Import robustbench with the autoattack alias in place."""
    alias_autoattack()
    return importlib.import_module("robustbench")


def import_textattack(cache_dir: Path):
    """Import textattack offline (slow: about 15 s on two cores; import lazily)."""
    prepare_textattack(cache_dir)
    ta = importlib.import_module("textattack")
    logging.getLogger("textattack.shared.utils.install").setLevel(logging.WARNING)  # per-attack INFO lines
    return ta
