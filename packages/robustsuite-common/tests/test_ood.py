"""robustsuite_common.ood.photo_patches: one generator for the two former copies, each reproduced bit for bit
with its own keywords (digests recorded from uncspan's ``photo_patches`` and robustsuite's ``ood_patches``)."""

import hashlib

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("torch")

from robustsuite_common.ood import photo_patches  # noqa: E402


def _digest(t) -> str:
    return hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest()[:16]


def test_photo_patches_reproduce_both_former_copies():
    assert _digest(photo_patches(n=20, seed=3)) == "0460312e3a2a4477"  # uncspan: 16-63 px, float64 grey
    assert _digest(photo_patches(n=20, seed=3, sizes=(16, 49), grey="float32")) == "61d06596d6063e61"  # robustsuite


def test_photo_patches_shape_and_range():
    x = photo_patches(n=5, seed=0)
    assert tuple(x.shape) == (5, 1, 8, 8) and float(x.min()) >= 0.0 and float(x.max()) <= 1.0
    with pytest.raises(ValueError, match="grey"):
        photo_patches(n=1, grey="int8")  # type: ignore[arg-type]
