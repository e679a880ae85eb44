"""Issue 23: the one optional-import helper every package uses; a missing module names the extra to install."""

from __future__ import annotations

import email.mime.text
import json
import sys

import pytest

from robustsuite_common.extras import optional_import


def test_an_installed_module_is_returned():
    assert optional_import("json", extra="x[y]", feature="f") is json
    # a dotted name gives the submodule, as ``import email.mime.text`` binds it
    assert optional_import("email.mime.text", extra="x[y]", feature="f") is email.mime.text


def test_a_missing_module_names_the_extra_and_keeps_the_cause():
    name = "robustsuite_common_no_such_module_xyz"
    with pytest.raises(ImportError) as info:
        optional_import(name, extra="certcal[plot]", feature="plotting")
    assert str(info.value) == (f"plotting needs the optional extra: pip install 'certcal[plot]' "
                               f"(module '{name}' is not installed)")
    assert isinstance(info.value.__cause__, ModuleNotFoundError) and info.value.__cause__.name == name


def test_a_blocked_submodule_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "json.decoder", None)  # as a missing extra looks to ``import``
    with pytest.raises(ImportError, match=r"^drawing figures needs the optional extra: pip install 'pkg\[plot\]' "
                                          r"\(module 'json.decoder' is not installed\)$"):
        optional_import("json.decoder", extra="pkg[plot]", feature="drawing figures")
