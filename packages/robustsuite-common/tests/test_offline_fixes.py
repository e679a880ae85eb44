"""The shared offline fixes: what each one patches, that it is idempotent, and that a missing library is
reported with the caller's extra."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import robustsuite_common as rc
from robustsuite_common.testing import modules_imported_by, public_names_problems

HAS_NLTK = importlib.util.find_spec("nltk") is not None
HAS_TEXTATTACK = importlib.util.find_spec("textattack") is not None
HAS_PYAA = importlib.util.find_spec("pyautoattack") is not None


def test_public_names_are_pinned():
    assert public_names_problems(rc, ["__version__", "ENGLISH_STOPWORDS", "default_cache_dir", "nltk_data_dir",
                                      "prepare_textattack", "import_textattack", "alias_autoattack",
                                      "import_robustbench"]) == []


def test_import_is_free_of_the_fixed_libraries():
    assert modules_imported_by("import robustsuite_common", ("nltk", "textattack", "robustbench", "pyautoattack",
                                                             "autoattack", "torch", "numpy")) == []


def test_stopwords_are_lowercase_unique_words():
    words = rc.ENGLISH_STOPWORDS
    assert len(words) == len(set(words)) > 100
    assert all(w.isalpha() and w == w.lower() for w in words)
    assert {"the", "and", "not", "of"} <= set(words)


def test_default_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBUSTSUITE_COMMON_CACHE", str(tmp_path / "a"))
    assert rc.default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("ROBUSTSUITE_COMMON_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert rc.default_cache_dir() == tmp_path / "xdg" / "robustsuite-common"


def test_nltk_data_dir_writes_the_corpus_once(tmp_path):
    root = rc.nltk_data_dir(cache_dir=tmp_path)
    target = root / "corpora" / "stopwords" / "english"
    assert root == tmp_path / "nltk_data"
    assert target.read_text(encoding="utf-8").split() == list(rc.ENGLISH_STOPWORDS)
    target.write_text("kept\n", encoding="utf-8")  # an existing corpus is not rewritten
    assert rc.nltk_data_dir(cache_dir=tmp_path) == root
    assert target.read_text(encoding="utf-8") == "kept\n"
    assert [p.name for p in target.parent.iterdir()] == ["english"]  # no temporary file left behind


@pytest.mark.skipif(not HAS_NLTK, reason="nltk not installed (textattack extra)")
def test_prepare_textattack_makes_nltk_read_our_stopwords(tmp_path, monkeypatch):
    import nltk
    from nltk.corpus.reader import WordListCorpusReader

    monkeypatch.setenv("TA_CACHE_DIR", str(tmp_path / "ta"))
    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    root = rc.prepare_textattack(cache_dir=tmp_path / "cache")
    assert nltk.data.path[0] == str(root)
    rc.prepare_textattack(cache_dir=tmp_path / "cache")  # idempotent: the path is not added twice
    assert nltk.data.path.count(str(root)) == 1
    assert (tmp_path / "ta" / "post_install_check_3").is_file()
    reader = WordListCorpusReader(str(nltk.data.find("corpora/stopwords")), ["english"])
    assert tuple(reader.words("english")) == rc.ENGLISH_STOPWORDS


def test_missing_library_names_the_callers_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install 'iortemp\[textattack\]'"):
        rc.import_textattack(extra="iortemp[textattack]")
    monkeypatch.setitem(sys.modules, "robustbench", None)
    monkeypatch.setitem(sys.modules, "autoattack", None)
    with pytest.raises(ImportError, match=r"pip install 'uncspan\[robustbench\]'"):
        rc.import_robustbench(extra="uncspan[robustbench]")
    with pytest.raises(ImportError, match="extra"):
        rc.import_robustbench()


@pytest.mark.skipif(not HAS_PYAA, reason="pyautoattack not installed (robustbench extra)")
def test_alias_autoattack_maps_module_and_submodules(monkeypatch):
    for name in [n for n in sys.modules if n == "autoattack" or n.startswith("autoattack.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_Block("autoattack"), *sys.meta_path])  # no real autoattack
    rc.alias_autoattack()
    import pyautoattack

    assert sys.modules["autoattack"] is pyautoattack
    from autoattack import AutoAttack  # what robustbench's __init__ does

    assert AutoAttack is pyautoattack.AutoAttack
    assert sys.modules["autoattack.autopgd_base"] is importlib.import_module("pyautoattack.autopgd_base")
    rc.alias_autoattack()  # idempotent
    assert sys.modules["autoattack"] is pyautoattack


def test_alias_keeps_a_real_autoattack(monkeypatch):
    import types

    real = types.ModuleType("autoattack")
    monkeypatch.setitem(sys.modules, "autoattack", real)
    rc.alias_autoattack()
    assert sys.modules["autoattack"] is real


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TEXTATTACK, reason="textattack not installed")
def test_textattack_imports_offline_in_a_fresh_process(tmp_path):
    """A fresh interpreter with no network and empty NLTK/TextAttack caches imports TextAttack and builds the
    stopword constraint from our corpus."""
    code = (
        "import socket\n"
        "def _no(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = _no\n"
        "import robustsuite_common as rc\n"
        f"ta = rc.import_textattack(cache_dir={str(tmp_path / 'c')!r})\n"
        "from textattack.constraints.pre_transformation import StopwordModification\n"
        "print(len(StopwordModification().stopwords))\n"
    )
    env = {**__import__("os").environ, "TA_CACHE_DIR": str(tmp_path / "ta"), "NLTK_DATA": str(tmp_path / "none"),
           "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.strip().splitlines()[-1]) == len(set(rc.ENGLISH_STOPWORDS))


class _Block:
    """A meta-path finder that refuses one top-level module name."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name or fullname.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {fullname!r}")
        return None
