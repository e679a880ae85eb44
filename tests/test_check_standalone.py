"""tools/dev/check_standalone.py: which sibling wheels and which torch a package's standalone check installs."""

import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_standalone", ROOT / "tools" / "dev" / "check_standalone.py")
cs = sys.modules.setdefault("check_standalone", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(cs)

# Requires-Dist lines shaped like the real wheels' (hatchling writes `extra == "x"` markers)
METADATA = {
    "robustsuite": ['robustsuite-common', 'uncspan[plot]', 'torch>=2.4',
                    'robustsuite[all]; extra == "test"', 'pytest>=8; extra == "test"',
                    'robustsuite[robustbench]; extra == "all"',
                    'robustbench>=1.1.1; extra == "robustbench"', 'uncspan[robustbench]; extra == "robustbench"',
                    'transduct-attack[robustbench]; extra == "robustbench"', 'ray>=2.10; extra == "ray"'],
    "robustsuite-common": ['nltk>=3.8; extra == "textattack"'],
    "uncspan": ['robustsuite-common', 'torch>=2.4', 'matplotlib>=3.8; extra == "plot"',
                'timm>=0.9; extra == "robustbench"', 'robustbench>=1.1.1; extra == "robustbench"'],
    "transduct-attack": ['robustsuite-common', 'torch>=2.4', "robustbench>=1.1.1; extra == 'robustbench'"],
    "certcal": ['torch>=2.4', 'cvxpy>=1.6; extra == "milp"'],
}


@pytest.fixture
def wheels(tmp_path):
    out = {}
    for name, reqs in METADATA.items():
        dist = name.replace("-", "_")
        path = tmp_path / f"{dist}-0.1.0-py3-none-any.whl"
        requires = "".join(f"Requires-Dist: {r}\n" for r in reqs)
        meta = f"Metadata-Version: 2.4\nName: {name}\nVersion: 0.1.0\n{requires}\n"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(f"{dist}-0.1.0.dist-info/METADATA", meta)
        out[name] = path
    return out


def test_closure_follows_core_requirements_and_named_extras(wheels):
    assert cs.sibling_closure("uncspan", wheels) == ["uncspan", "robustsuite-common"]
    assert cs.sibling_closure("certcal", wheels, ("milp",)) == ["certcal"]
    assert set(cs.sibling_closure("robustsuite", wheels)) == {"robustsuite", "robustsuite-common", "uncspan"}
    # robustsuite[test] names robustsuite[all], which names robustsuite[robustbench], which names transduct-attack
    assert set(cs.sibling_closure("robustsuite", wheels, ("test",))) == {
        "robustsuite", "robustsuite-common", "uncspan", "transduct-attack"}
    assert cs.sibling_closure("robustsuite", wheels, ("test",))[0] == "robustsuite"
    assert "transduct-attack" not in cs.sibling_closure("robustsuite", wheels, ("ray",))


def test_torchvision_is_detected_through_self_extras_and_robustbench(wheels):
    assert not cs.needs_torchvision("robustsuite", wheels)
    assert not cs.needs_torchvision("robustsuite", wheels, ("ray",))
    for extras in (("robustbench",), ("all",), ("test",)):
        assert cs.needs_torchvision("robustsuite", wheels, extras), extras
    assert cs.needs_torchvision("uncspan", wheels, ("robustbench",))
    assert not cs.needs_torchvision("uncspan", wheels, ("plot",))
    assert not cs.needs_torchvision("certcal", wheels, ("milp",))


def test_the_torchvision_pair_replaces_torch_only_where_torchvision_is_installed(wheels):
    cpu, pair = ["torch==2.13.0"], ["torch==2.14.1", "torchvision==0.29.1"]
    assert cs.torch_specs("robustsuite", wheels, True, cpu, pair) == pair
    assert cs.torch_specs("robustsuite", wheels, False, cpu, pair) == cpu  # the core install has no torchvision
    assert cs.torch_specs("uncspan", wheels, True, cpu, pair) == cpu
    assert cs.torch_specs("robustsuite", wheels, True, cpu, []) == cpu


def test_a_torchvision_that_does_not_import_beside_torch_is_reported(tmp_path):
    """The check runs `python -c` in `cwd`, whose modules shadow the installed ones: stand-ins for torch and
    torchvision, one that imports and one that fails as a torchvision built for another torch does."""
    (tmp_path / "torch.py").write_text("")
    (tmp_path / "torchvision.py").write_text("")
    cs._check_torchvision(Path(sys.executable), tmp_path, ["torch==2.14.1", "torchvision==0.29.1"])
    (tmp_path / "torchvision.py").write_text("raise RuntimeError('operator torchvision::nms does not exist')\n")
    with pytest.raises(RuntimeError, match=r"torchvision does not import beside.*torchvision::nms.*--torch-with-vision"):
        cs._check_torchvision(Path(sys.executable), tmp_path, ["torch==2.13.0"])
