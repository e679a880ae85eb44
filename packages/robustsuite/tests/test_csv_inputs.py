"""CSV inputs a spreadsheet or another locale produces (issue 36): a UTF-8 BOM is read, a non-UTF-8 file is
refused naming the line and the fix, a huge integer label is refused before one name per class is built."""

from __future__ import annotations

import pytest

from robustsuite import DatasetSpecError, load_dataset

ROWS = "".join(f"text {i},{i % 2}\n" for i in range(20))


def test_a_utf8_byte_order_mark_is_read(tmp_path):
    (tmp_path / "d.csv").write_bytes(b"\xef\xbb\xbf" + ("text,label\n" + ROWS).encode())
    ds = load_dataset(f"csv:{tmp_path / 'd.csv'}")
    assert ds.num_classes == 2 and len(ds.train) + len(ds.val) + len(ds.test) == 20


def test_a_latin1_byte_is_refused_with_its_line_and_the_fix(tmp_path):
    (tmp_path / "d.csv").write_bytes(("text,label\n" + ROWS).encode() + "caf\xe9 au lait,1\n".encode("latin-1"))
    with pytest.raises(DatasetSpecError, match=r"d\.csv:22: not UTF-8 \(byte 0xe9.*iconv -f latin1"):
        load_dataset(f"csv:{tmp_path / 'd.csv'}")


def test_a_huge_label_is_refused_naming_the_row(tmp_path):
    (tmp_path / "d.csv").write_text("text,label\n" + ROWS + "odd one,1000000000\n")
    with pytest.raises(DatasetSpecError, match=r"row 21 has label 1000000000: integer labels must be class indices"):
        load_dataset(f"csv:{tmp_path / 'd.csv'}")
    (tmp_path / "e.csv").write_text("text,label\n" + ROWS + "odd one,99999999999999999999999\n")
    with pytest.raises(DatasetSpecError, match="row 21 has label 99999999999999999999999"):
        load_dataset(f"csv:{tmp_path / 'e.csv'}")
