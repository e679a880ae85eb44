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


def test_fingerprint_of_parts_as_tensors_reproduces_uncspans_keys():
    # uncspan's checkpoint keys: each part through torch.as_tensor, 16 hex digits (digests recorded from its former
    # own hash); a model's key hashes its state in sorted key order, then the number of entries
    x, m = _parts()

    def keys(*parts):
        return fingerprint(*(torch.as_tensor(p) for p in parts), length=16)

    state = m.state_dict()
    assert keys(x, torch.arange(6)) == "226a655de0dd0400"
    assert keys(x.numpy(), [1, 2, 3]) == "5a46580ac038f0d5"
    assert keys(*(state[k] for k in sorted(state)), torch.tensor([len(state)])) == "a2a351e1f9fcf559"
    assert keys(x.bfloat16()) == "9bfe240cefda13c5"
