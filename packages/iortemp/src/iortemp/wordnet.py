"""WordNet 3.0 from local files, for PWWS's synonym swaps (Ren et al., 2019; the paper's Sec. 5.1 attacks).

TextAttack's PWWS calls ``nltk.download("omw-1.4")`` and NLTK's ``wordnet`` corpus, which need the network
on first use. We read WordNet offline instead, from (first found): the ``root`` argument, ``$IORTEMP_WORDNET``,
Debian's ``wordnet-base`` files in ``/usr/share/wordnet``, or an NLTK data directory holding
``corpora/wordnet``. Debian's files lack NLTK's ``lexnames`` index (the 45 lexicographer file names of
WordNet 3.0, lexnames(5WN)); we write it beside a copy of the Debian files in our NLTK data directory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["find_wordnet", "wordnet_candidates", "wordnet_reader", "wordnet_synonyms"]

DEBIAN_WORDNET = Path("/usr/share/wordnet")
_FILES = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb", "index.adj",
          "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")
# lexnames(5WN) of WordNet 3.0: file number, name, syntactic category
_LEXNAMES = """adj.all 3|adj.pert 3|adv.all 4|noun.Tops 1|noun.act 1|noun.animal 1|noun.artifact 1|noun.attribute 1|
noun.body 1|noun.cognition 1|noun.communication 1|noun.event 1|noun.feeling 1|noun.food 1|noun.group 1|
noun.location 1|noun.motive 1|noun.object 1|noun.person 1|noun.phenomenon 1|noun.plant 1|noun.possession 1|
noun.process 1|noun.quantity 1|noun.relation 1|noun.shape 1|noun.state 1|noun.substance 1|noun.time 1|
verb.body 2|verb.change 2|verb.cognition 2|verb.communication 2|verb.competition 2|verb.consumption 2|
verb.contact 2|verb.creation 2|verb.emotion 2|verb.motion 2|verb.perception 2|verb.possession 2|verb.social 2|
verb.stative 2|verb.weather 2|adj.ppl 3"""


def _is_wordnet_dir(p: Path) -> bool:
    return all((p / f).is_file() for f in ("data.noun", "index.noun"))


def find_wordnet(root: str | os.PathLike | None = None) -> Path | None:
    """``root`` (``FileNotFoundError`` if it holds no WordNet files), else the first WordNet 3.0 directory
    found (see the module docstring), or ``None``."""
    if root is not None:
        if not _is_wordnet_dir(Path(root)):
            raise FileNotFoundError(f"root {root!s} holds no WordNet 3.0 files (data.noun, index.noun)")
        return Path(root)
    cands: list[Path] = []
    if os.environ.get("IORTEMP_WORDNET"):
        cands.append(Path(os.environ["IORTEMP_WORDNET"]))
    cands.append(DEBIAN_WORDNET)
    try:
        import nltk

        cands += [Path(d) / "corpora" / "wordnet" for d in nltk.data.path]
    except ImportError:  # pragma: no cover - nltk comes with the textattack extra
        pass
    for c in cands:
        if _is_wordnet_dir(c):
            return c
    return None


def _nltk_layout(src: Path) -> Path:
    """A directory NLTK's reader accepts: ``src`` itself if it has ``lexnames``, else a copy with lexnames.

    NLTK only opens files under its data path and refuses symbolic links out of a corpus root, so the
    Debian files (~30 MB) are copied once into our NLTK data directory.
    """
    import hashlib
    import shutil

    import nltk

    from ._textattack import prepare_offline

    root = prepare_offline()  # our NLTK data directory, put on nltk.data.path
    if (src / "lexnames").is_file():
        if str(src.resolve()) not in nltk.data.path:
            nltk.data.path.append(str(src.resolve()))
        return src
    dst = root / "wordnet-local" / hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:12]
    if not (dst / "lexnames").is_file():
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=dst.parent, prefix=".wordnet."))
        for f in _FILES:
            if (src / f).is_file():
                shutil.copyfile(src / f, tmp / f)
        names = [n.strip() for n in _LEXNAMES.replace("\n", "").split("|")]
        (tmp / "lexnames").write_text(
            "".join(f"{i:02d}\t{n.split()[0]}\t{n.split()[1]}\n" for i, n in enumerate(names)), encoding="utf-8"
        )
        try:
            os.replace(tmp, dst)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    return dst


_READERS: dict[str, Any] = {}


def wordnet_reader(root: str | os.PathLike | None = None):
    """An NLTK ``WordNetCorpusReader`` over local WordNet 3.0 files; ``FileNotFoundError`` naming what to
    install when none is found."""
    src = find_wordnet(root)
    if src is None:
        raise FileNotFoundError(
            "WordNet 3.0 not found: install Debian's wordnet-base (/usr/share/wordnet), set IORTEMP_WORDNET to a "
            "WordNet dict directory, or run python -m nltk.downloader wordnet where the network is available"
        )
    key = str(src.resolve())
    if key not in _READERS:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        class _LocalWordNet(WordNetCorpusReader):
            # NLTK maps a non-default WordNet onto its downloaded 'wordnet' corpus for the multilingual
            # (OMW) functions; these files are WordNet 3.0 itself and PWWS needs English only
            def map_wn(self, version="wordnet"):
                return None

        _READERS[key] = _LocalWordNet(str(_nltk_layout(src)), None)
    return _READERS[key]


def wordnet_synonyms(word: str, *, root: str | os.PathLike | None = None) -> list[str]:
    """Single-word WordNet synonyms of ``word`` (all senses, all parts of speech), as TextAttack's
    ``WordSwapWordNet`` collects them for PWWS; sorted for determinism."""
    wn = wordnet_reader(root)
    out = set()
    for syn in wn.synsets(word):
        for lemma in syn.lemma_names():
            if lemma != word and "_" not in lemma and lemma.isalpha():
                out.add(lemma)
    return sorted(out)


_WN_CANDIDATES: dict[tuple[str, str], list[str]] = {}


def wordnet_candidates(word: str, root=None) -> list[str]:
    """TextAttack's ``WordSwapWordNet`` candidates of ``word`` (single-word lemmas of every synset, the word
    itself excluded), read from local WordNet files and cached per (WordNet directory, word) for the process:
    PWWS asks for the same words at every temperature, seed and system of a table."""
    key = (str(root) if root is not None else str(find_wordnet(None)), word)
    if key not in _WN_CANDIDATES:
        wn = wordnet_reader(root)
        out = set()
        for syn in wn.synsets(word):
            for lemma in syn.lemma_names():
                if lemma != word and "_" not in lemma and " " not in lemma:
                    out.add(lemma)
        _WN_CANDIDATES[key] = sorted(out)
    return list(_WN_CANDIDATES[key])
