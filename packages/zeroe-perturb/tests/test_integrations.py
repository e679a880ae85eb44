"""CLI, Hugging Face datasets mapper, TextAttack transformations."""

from __future__ import annotations

import io
import json
import re

import pytest

import zeroe_perturb as zp
from zeroe_perturb.cli import main

LINES = ["Adversarial attacks are harmless.", "", "the movie was really great", "Ünïcödé wörds stay fine"]


def test_cli_streams_stdin_to_stdout(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(LINES) + "\n"))
    assert main(["--attack", "intrude", "--p", "0.8", "--seed", "4"]) == 0
    out = capsys.readouterr().out.split("\n")
    assert out[:-1] == zp.perturb_batch(LINES, "intrude", 0.8, seed=4)


def test_cli_jsonl_files_with_report(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps({"id": i, "text": t}) for i, t in enumerate(LINES)) + "\n", encoding="utf-8")
    dst = tmp_path / "out.jsonl"
    assert main(["-a", "visual", "--p", "0.5", "--seed", "1", "-i", str(src), "-o", str(dst),
                 "--output-field", "adv", "--report"]) == 0
    rows = [json.loads(x) for x in dst.read_text(encoding="utf-8").splitlines()]
    reports = zp.perturb_batch(LINES, "visual", 0.5, seed=1, report=True)
    assert [r["adv"] for r in rows] == [r.perturbed for r in reports]
    assert [r["text"] for r in rows] == LINES and [r["id"] for r in rows] == [0, 1, 2, 3]
    assert [r["zeroe_edit_distance"] for r in rows] == [r.edit_distance for r in reports]
    assert not list(tmp_path.glob(".*.tmp"))


def _exit_2(capsys, argv, message):
    """The CLI prints ``zeroe-perturb: error: <message>`` and exits with status 2, no traceback."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err, err
    assert re.search(message, err), err


def test_cli_bad_arguments_and_missing_files_exit_2(tmp_path, capsys):
    _exit_2(capsys, ["--attack", "typo"], "invalid choice: 'typo'")
    _exit_2(capsys, ["--attack", "truncate", "--p", "3"], "p must be in")
    _exit_2(capsys, ["--attack", "truncate", "--p", "x"], "invalid float value")
    _exit_2(capsys, ["--attack", "truncate", "-i", str(tmp_path / "missing.txt")], "missing.txt: no such file")
    _exit_2(capsys, ["--attack", "truncate", "-i", str(tmp_path)], "no such file")  # a directory
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    _exit_2(capsys, ["--attack", "truncate", "-i", str(src), "-o", str(tmp_path / "nodir" / "o.txt")],
            "directory .*nodir does not exist")
    src.write_bytes(b"caf\xe9\n")  # Latin-1, not UTF-8
    _exit_2(capsys, ["--attack", "truncate", "-i", str(src), "-o", str(tmp_path / "o.txt")], "not UTF-8")
    assert not (tmp_path / "o.txt").exists()
    src = tmp_path / "bad.jsonl"
    src.write_text('{"body": "x"}\n', encoding="utf-8")
    _exit_2(capsys, ["--attack", "truncate", "-i", str(src), "-o", str(tmp_path / "o.jsonl")],
            "line 1: field 'text' missing")
    assert not (tmp_path / "o.jsonl").exists() and not list(tmp_path.glob(".*.tmp"))
    assert main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(zp.ATTACKS)


def test_datasets_mapper_matches_batch_form():
    datasets = pytest.importorskip("datasets")
    from zeroe_perturb.integrations import map_dataset

    ds = datasets.Dataset.from_dict({"text": LINES * 3, "label": list(range(12))})
    out = map_dataset(ds, "text", "keyboard-typo", 0.5, seed=2, output_column="adv", batch_size=5)
    assert out["adv"] == zp.perturb_batch(LINES * 3, "keyboard-typo", 0.5, seed=2)
    assert out["text"] == LINES * 3
    with pytest.raises(ValueError, match="column must be one of"):
        map_dataset(ds, "sentence", "truncate", 0.5)


@pytest.mark.slow
def test_textattack_transformations_compose_with_augmenter():
    import importlib.util

    if importlib.util.find_spec("textattack") is None:  # not importorskip: the offline shim must run first
        pytest.skip("textattack not installed")
    from zeroe_perturb.integrations import textattack_transformation, textattack_transformations

    ts = textattack_transformations(phi=0.5, seed=0)  # imports textattack through the offline shim
    from textattack.augmentation import Augmenter
    from textattack.shared import AttackedText

    assert set(ts) == set(zp.ATTACKS)
    text = AttackedText("the movie was really wonderful and the acting great")
    for name, t in ts.items():
        cands = t(text, pre_transformation_constraints=[])
        assert cands, name
        for c in cands:
            assert c.text != text.text
    trunc = [c.text for c in ts["truncate"](text, pre_transformation_constraints=[], indices_to_modify={4})]
    assert trunc == ["the movie was really wonderfu and the acting great"]
    aug = Augmenter(transformation=textattack_transformation("disemvowel"), pct_words_to_swap=0.5,
                    transformations_per_example=1)
    (out,) = aug.augment("the movie was really wonderful and the acting great")
    assert out != "the movie was really wonderful and the acting great"
