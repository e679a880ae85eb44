"""robustsuite_common.fingerprint: certcal's checkpoint-key scheme, unchanged (the hex digests below were
computed by ``certcal._store.fingerprint`` before it became this function), so stored certcal runs resume."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robustsuite_common.fingerprint import fingerprint  # noqa: E402


def _parts():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.uniform(0, 1, (6, 2, 4, 4)).astype(np.float32))
    m = torch.nn.Linear(3, 2)
    with torch.no_grad():
        m.weight.copy_(torch.arange(6.0).reshape(2, 3) / 7)
        m.bias.copy_(torch.tensor([0.5, -0.25]))
    return x, m


def test_fingerprint_reproduces_the_recorded_checkpoint_keys():
    x, m = _parts()
    assert fingerprint(x) == "55d38e85bad5"
    assert fingerprint(m) == "9ce6ad05ab6c"
    assert fingerprint({"a": 1, "b": [1.5, "x"]}) == "d7aa7c69cbeb"
    assert fingerprint(m, x, torch.arange(4)) == "2ca69a216dc4"
    assert fingerprint(x.double(), 0.25, "s") == "b3c035814985"
    assert fingerprint(m, x, torch.arange(4), length=20) == "2ca69a216dc41803a358"


def test_fingerprint_changes_with_values_shape_and_dtype():
    x, m = _parts()
    base = fingerprint(x)
    assert fingerprint(x.clone()) == base
    assert fingerprint(x + 1e-6) != base
    assert fingerprint(x.reshape(12, 16)) != base
    assert fingerprint(x.double()) != base
    assert fingerprint(x.numpy()) == base  # an array hashes as the tensor it holds
    assert fingerprint(x.bfloat16()) == fingerprint(x.bfloat16())  # bfloat16 (numpy lacks it) hashes too
