"""Helpers for every package's input-contract tests (issue 25): a model that counts its forward passes, a
snapshot of a model's state to compare after a call, and one catalogue of bad inputs.

A contract test feeds each public entry point the catalogue and asserts: a ``ValueError``/``TypeError``
naming the argument, raised before any forward pass (:class:`CountingModel`), or a correct result; and the
model unchanged afterwards (:func:`snapshot` / :meth:`ModelSnapshot.assert_same`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CountingModel", "ModelSnapshot", "snapshot", "bad_images", "bad_labels", "bad_texts",
           "readme_python_blocks", "run_readme_blocks", "readme_blocks_module", "readme_tests", "TIMM_ENTRY",
           "tiny_timm_net", "register_offline_timm_entry", "write_timm_checkpoint", "refuse_network",
           "OutputForm", "output_forms", "transformed", "refusal", "public_names_problems",
           "modules_imported_by", "run_demo_with", "assert_refuses_probabilities"]


def _torch() -> Any:
    import torch

    return torch


class CountingModel:
    """Wraps a vision model and counts forward calls (``calls``); behaves like the model otherwise."""

    def __new__(cls, model: Any) -> Any:
        torch = _torch()

        class Counting(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = model
                self.calls = 0

            def forward(self, x: Any) -> Any:
                self.calls += 1
                return self.inner(x)

        return Counting()


@dataclass(frozen=True)
class ModelSnapshot:
    """A model's ``state_dict`` values, per-module ``training`` flags and per-parameter ``requires_grad``."""

    state: dict[str, Any]
    modes: tuple[bool, ...]
    grads: tuple[bool, ...]

    def assert_same(self, model: Any) -> None:
        torch = _torch()
        now = snapshot(model)
        assert now.modes == self.modes, "the model's train/eval mode changed"
        assert now.grads == self.grads, "the model's requires_grad flags changed"
        assert now.state.keys() == self.state.keys(), "the model's state_dict keys changed"
        for k, v in self.state.items():
            assert torch.equal(now.state[k], v), f"the model's {k} changed"


def snapshot(model: Any) -> ModelSnapshot:
    """What :meth:`ModelSnapshot.assert_same` compares later."""
    return ModelSnapshot({k: v.detach().clone() for k, v in model.state_dict().items()},
                         tuple(m.training for m in model.modules()),
                         tuple(p.requires_grad for p in model.parameters()))


def bad_images(shape: tuple[int, int, int, int] = (4, 1, 8, 8)) -> dict[str, Any]:
    """Named bad image batches for an argument expecting ``(N, C, H, W)`` floats in [0, 1]."""
    torch = _torch()
    n, c, h, w = shape
    good = torch.rand(shape, generator=torch.Generator().manual_seed(0))
    nan = good.clone()
    nan[0, 0, 0, 0] = float("nan")
    inf = good.clone()
    inf[-1, -1, -1, -1] = float("inf")
    return {
        "nan": nan,
        "inf": inf,
        "empty": good[:0],
        "no_batch_dim": good[0],
        "integer_pixels": (good * 255).to(torch.uint8),
        "range_0_255": good * 255,
        "negative": good - 1.0,
        "wrong_ndim": good.reshape(n, -1),
        "not_a_tensor": good.numpy(),
    }


def bad_labels(n: int, n_classes: int) -> dict[str, Any]:
    """Named bad label vectors for ``n`` inputs of a ``n_classes``-class model."""
    torch = _torch()
    return {
        "out_of_range": torch.full((n,), n_classes, dtype=torch.int64),
        "negative": torch.full((n,), -1, dtype=torch.int64),
        "float": torch.zeros(n, dtype=torch.float32),
        "wrong_length": torch.zeros(n + 1, dtype=torch.int64),
        "two_dimensional": torch.zeros((n, n_classes), dtype=torch.int64),
    }


def bad_texts() -> dict[str, Any]:
    """Named bad text inputs for an argument expecting ``list[str]``."""
    return {"bare_string": "great food", "not_strings": [1, 2], "empty": [], "none": None}


@dataclass(frozen=True)
class OutputForm:
    """A model output form (``name``) and a wrapper turning a logits model into one returning that form."""

    name: str
    wrap: Callable[[Any], Any]


def transformed(model: Any, *, inputs: Callable[[Any], Any] | None = None,
                outputs: Callable[[Any], Any] | None = None) -> Any:
    """``model`` as a module computing ``outputs(model(inputs(x)))`` (either left out: the identity): e.g. its logits
    scaled x1000 (same predictions, extreme confidence) or its inputs quantised (no useful gradient)."""
    torch = _torch()
    before = inputs if inputs is not None else (lambda x: x)
    after = outputs if outputs is not None else (lambda z: z)

    class Transformed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, x: Any) -> Any:
            return after(self.inner(before(x)))

    return Transformed()


def output_forms() -> list[OutputForm]:
    """The output forms every package accepts: tensor, tuple, dict with ``logits``, ``ModelOutput``-like."""

    def wrapper(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda model: transformed(model, outputs=fn)

    class _Output(dict):  # a ModelOutput-like mapping with a .logits attribute
        @property
        def logits(self) -> Any:
            return self["logits"]

    return [OutputForm("tensor", wrapper(lambda z: z)), OutputForm("tuple", wrapper(lambda z: (z, None))),
            OutputForm("dict", wrapper(lambda z: {"logits": z})),
            OutputForm("model_output", wrapper(lambda z: _Output(logits=z)))]


def refusal(call: Callable[[Any], Any], model: Any, *, max_calls: int = 0) -> str:
    """The message of the ``ValueError``/``TypeError`` that ``call(model)`` must raise, after asserting that the
    :class:`CountingModel` ``model`` ran at most ``max_calls`` forward passes and came back unchanged (its
    :func:`snapshot` taken before the call). Another exception propagates; no exception fails."""
    before = snapshot(model)
    try:
        call(model)
    except (ValueError, TypeError) as err:
        message = str(err)
    else:
        raise AssertionError("the bad input was accepted (no ValueError/TypeError)")
    assert model.calls <= max_calls, f"{model.calls} forward passes before the refusal (at most {max_calls})"
    before.assert_same(model)
    return message


def public_names_problems(module: Any, expected: Any) -> list[str]:
    """What is wrong with ``module.__all__`` against ``expected`` (a list: the same names in that order; a set:
    the same names), and the public names the module lacks as attributes; ``[]`` when nothing is."""
    names = list(module.__all__)
    problems = []
    if (names if isinstance(expected, list) else set(names)) != expected:
        problems.append(f"__all__ is {names}, expected {expected}")
    problems += [f"{name} is in __all__ but not an attribute" for name in names if not hasattr(module, name)]
    return problems


def modules_imported_by(statement: str, candidates: Any) -> list[str]:
    """The names in ``candidates`` that are in ``sys.modules`` of a fresh interpreter after it ran ``statement``
    (e.g. ``"import certcal"``: which heavy libraries importing it pulls in), sorted."""
    import ast
    import subprocess
    import sys

    code = f"import sys; {statement}; print(sorted(m for m in {tuple(candidates)!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def run_demo_with(experiment: Any, models: Any, data: Any, changes: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Run a package's ``experiment`` module on ``models`` and ``data`` with its ``demo`` preset changed by
    ``changes`` (:func:`robustsuite_common.config.from_dict`), into a fresh ``MemoryStore``, without progress
    lines. Returns ``(result, store, config)``."""
    from .config import from_dict
    from .experiment import MemoryStore

    config = from_dict(experiment.Config, changes, base=experiment.preset("demo"))
    store = MemoryStore()
    return experiment.run(models, data, config, store=store, progress=False), store, config


def assert_refuses_probabilities(call: Callable[[Any, Any], Any], *, n_inputs: int, n_classes: int) -> None:
    """Issue 36: ``call(model, x)`` must raise ``ModelOutputError`` naming probabilities for a model that returns
    softmax probabilities (a linear layer on ``n_inputs`` 1x4x4 images drawn after ``torch.manual_seed(0)``, its
    logits sharpened x5), whatever the batch size (one row included)."""
    import re

    from .models import ModelOutputError

    torch = _torch()
    torch.manual_seed(0)
    x = torch.rand(n_inputs, 1, 4, 4)
    model = transformed(torch.nn.Linear(16, n_classes), inputs=lambda v: v.flatten(1),
                        outputs=lambda z: torch.softmax(z * 5, 1))
    try:
        call(model, x)
    except ModelOutputError as err:
        assert re.search("probabilities", str(err)), str(err)
    else:
        raise AssertionError("a model returning probabilities was accepted (no ModelOutputError)")


def readme_python_blocks(path: Any) -> list[str]:
    """The ```python code blocks of a README, in order (each package's test runs them as written)."""
    import re
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def run_readme_blocks(path: Any, *, forbid: tuple[str, ...] = ("robustsuite",)) -> int:
    """Execute every ```python block of ``path`` in one namespace (later blocks may use earlier names), after
    checking that none imports a package in ``forbid`` (a package's README must run with that package
    alone). Returns the number of blocks run; an exception propagates with the block's number."""
    import re
    import sys
    import types

    blocks = readme_python_blocks(path)
    module = types.ModuleType("__readme__")  # a real module: dataclasses defined in a block look it up
    namespace = module.__dict__
    sys.modules[module.__name__] = module
    for i, code in enumerate(blocks, 1):
        for name in forbid:
            if re.search(rf"^\s*(from|import)\s+{name}(\s|\.|$)", code, flags=re.M):
                raise AssertionError(f"{path} block {i} imports {name}: a package README must run without it")
        try:
            exec(compile(code, f"{path}#block{i}", "exec"), namespace)
        except Exception as err:
            raise AssertionError(f"{path} block {i} failed: {type(err).__name__}: {err}") from err
    return len(blocks)


def readme_blocks_module(root: Any) -> Any:
    """The repository's ``tools/dev/readme_blocks.py`` (under ``root``), loaded once as module ``readme_blocks``."""
    import importlib.util
    import sys
    from pathlib import Path

    if "readme_blocks" in sys.modules:
        return sys.modules["readme_blocks"]
    spec = importlib.util.spec_from_file_location("readme_blocks", Path(root) / "tools" / "dev" / "readme_blocks.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no tools/dev/readme_blocks.py under {root}")
    module = sys.modules.setdefault("readme_blocks", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


def readme_tests(test_file: Any, *, forbid: tuple[str, ...] = ("robustsuite",)
                 ) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """The two README tests of the package whose ``tests/<test_file>`` this is (assign them to ``test_…`` names):
    its README's code runs as written (tools/dev/readme_blocks.py: every python and bash block in order, in one
    namespace and one working directory, without importing ``forbid``), and the README has the one shape."""
    from pathlib import Path

    here = Path(test_file).resolve()
    readme, rb = here.parents[1] / "README.md", readme_blocks_module(here.parents[3])

    def runs_as_written(tmp_path: Any) -> None:
        counts = rb.run_readme(readme, cwd=tmp_path, forbid=forbid)
        assert counts["run"] >= 1

    def has_the_one_shape() -> None:
        assert rb.shape_problems(readme.read_text(encoding="utf-8")) == []

    return runs_as_written, has_the_one_shape


#: the RobustBench name (cifar10, Linf) that RobustBench routes to the timm entry ``tiny2099offline_cifar10_linf``
TIMM_ENTRY = "Tiny2099Offline"


@functools.cache
def tiny_timm_net() -> Any:
    """The class of the tiny timm-routed model (a conv and a linear layer; (N, 3, H, W) -> 10 logits)."""
    torch = _torch()

    class TinyTimmNet(torch.nn.Module):
        def __init__(self, num_classes: int = 10) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.fc = torch.nn.Linear(4, num_classes)

        def forward(self, x: Any) -> Any:
            return self.fc(torch.relu(self.conv(x)).mean((2, 3)))

    return TinyTimmNet


def register_offline_timm_entry(monkeypatch: Any) -> tuple[str, Any]:
    """Register (through pytest's ``monkeypatch``) a tiny timm entry under the name RobustBench routes
    :data:`TIMM_ENTRY` to; like a real timm entry, ``pretrained=True`` downloads. Returns ``(TIMM_ENTRY, class)``."""
    import timm
    from timm.models import _registry

    torch, net = _torch(), tiny_timm_net()

    def tiny2099offline_cifar10_linf(pretrained: bool = False, num_classes: int = 10, **kwargs: Any) -> Any:
        model = net(num_classes)
        if pretrained:  # what a timm entry does: fetch the published weights
            model.load_state_dict(torch.hub.load_state_dict_from_url("https://example.invalid/tiny.pt",
                                                                     progress=False))
        return model

    monkeypatch.setitem(_registry._model_entrypoints, "tiny2099offline_cifar10_linf", tiny2099offline_cifar10_linf)
    assert timm.is_model("tiny2099offline_cifar10_linf")
    return TIMM_ENTRY, net


def write_timm_checkpoint(model_dir: Any, *, generator: Any) -> Any:
    """A tiny timm-routed model with weights drawn from ``generator``, saved as RobustBench does
    (``model_dir/cifar10/Linf/<TIMM_ENTRY>.pt``, a ``state_dict`` with ``module.`` prefixes); returns the model."""
    from pathlib import Path

    torch = _torch()
    ref = tiny_timm_net()()
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=generator))
    folder = Path(model_dir) / "cifar10" / "Linf"
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": {f"module.{k}": v for k, v in ref.state_dict().items()}}, folder / f"{TIMM_ENTRY}.pt")
    return ref


def refuse_network(monkeypatch: Any) -> None:
    """Make every socket connection and name lookup fail with ``OSError`` (through pytest's ``monkeypatch``)."""
    import socket

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
