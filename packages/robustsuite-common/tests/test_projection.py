"""robustsuite_common.projection: the ε-ball projection, bit-identical to the copies it replaces (the digests
below are of the outputs of certcal's, uncspan's, transduct-attack's and the indicators' projections on these
inputs, recorded before they became this function)."""

import hashlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robustsuite_common.projection import project  # noqa: E402


def _digest(t) -> str:
    return hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest()[:16]


def _inputs():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.uniform(0, 1, (6, 2, 4, 4)).astype(np.float32))
    xa = x + torch.from_numpy(rng.normal(0, 0.2, (6, 2, 4, 4)).astype(np.float32))
    return x, xa


@pytest.mark.parametrize("norm, eps, digest", [("Linf", 0.1, "0366e15c625b77d5"), ("L2", 0.5, "8c762448cf54182c")])
def test_project_reproduces_the_replaced_copies(norm, eps, digest):
    x, xa = _inputs()
    tensor_eps = torch.full((6, 1, 1, 1), eps)
    assert _digest(project(xa, x, eps=eps, norm=norm)) == digest
    assert _digest(project(xa, x, eps=tensor_eps, norm=norm.lower(), linf="delta")) == digest
    assert _digest(project(xa, x, eps=tensor_eps, norm=norm)) == digest


@pytest.mark.parametrize("norm", ["Linf", "L2"])
def test_project_lands_in_the_ball_and_the_box(norm):
    x, xa = _inputs()
    out = project(xa * 3, x, eps=0.2, norm=norm)
    d = (out - x).flatten(1)
    size = d.abs().amax(1) if norm == "Linf" else d.norm(dim=1)
    assert bool((size <= 0.2 + 1e-6).all()) and float(out.min()) >= 0 and float(out.max()) <= 1
    inside = x + 0.01
    assert torch.equal(project(inside.clamp(0, 1), x, eps=0.2, norm=norm), inside.clamp(0, 1))


def test_project_refuses_unknown_norms_and_forms():
    x, xa = _inputs()
    with pytest.raises(ValueError, match="norm"):
        project(xa, x, eps=0.1, norm="L1")
    with pytest.raises(ValueError, match="linf"):
        project(xa, x, eps=torch.tensor(0.1), norm="Linf", linf="other")  # type: ignore[arg-type]
