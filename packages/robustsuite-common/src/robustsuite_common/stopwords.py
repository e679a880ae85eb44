"""An English stopword list written for this project (common function words), not NLTK's file.

TextAttack's ``StopwordModification`` and iortemp's word-importance ranking use it; it is installed as
NLTK's ``stopwords`` corpus by :func:`robustsuite_common.nltk_data_dir`.
"""

from __future__ import annotations

ENGLISH_STOPWORDS: tuple[str, ...] = tuple(
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
