"""Issue 14, defect 3: inputs stream to the model's device batch by batch (never the whole dataset at once),
loaders are accepted, and peak memory does not grow with the number of samples."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from uncspan import OverConfidenceAttack, RankConfig, UnderConfidenceAttack, rank_models, uncertainty_span


def test_only_batches_are_moved_to_the_device(std_model, digits, monkeypatch):
    _, _, xte, yte = digits
    x = xte[:50]
    moved: list[int] = []
    original = torch.Tensor.to

    def counting_to(self, *args, **kwargs):
        if self.dim() >= 2 and (args or "device" in kwargs):
            moved.append(int(self.shape[0]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", counting_to)
    res = UnderConfidenceAttack(steps=3, batch_size=8, random_start=True)(std_model, x, 0.1, seed=0)
    uncertainty_span(std_model, x, eps=0.1, steps=2, batch_size=8, restarts=1)
    # PGD: the package's own attacks stream; AutoAttack (pyautoattack) receives the points as one tensor
    rank_models({"m": std_model}, x, yte[:50], config=RankConfig(eps=0.1, steps=2, batch_size=8, attack="pgd"))
    monkeypatch.setattr(torch.Tensor, "to", original)
    assert moved and max(moved) <= 8
    assert res.x_adv.shape == x.shape


def test_loader_gives_the_same_span_as_a_tensor(std_model, digits):
    _, _, xte, yte = digits
    x, y = xte[:30], yte[:30]
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=7)
    a = uncertainty_span(std_model, x, eps=0.1, steps=4, batch_size=7, seed=1)
    b = uncertainty_span(std_model, loader, eps=0.1, steps=4, batch_size=7, seed=1)
    # the same inputs and starts; float32 kernels may round differently on collated batches
    np.testing.assert_allclose(a.entropy_under, b.entropy_under, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(a.entropy_over, b.entropy_over, rtol=1e-4, atol=1e-7)
    # PGD for robust accuracy: AutoAttack runs per loader batch (its random starts depend on the batching)
    cfg = RankConfig(eps=0.1, steps=4, batch_size=7, seed=1, attack="pgd")
    board = rank_models({"m": std_model}, loader, None, config=cfg)
    ref = rank_models({"m": std_model}, x, y, config=cfg)
    got, want = board.rows[0].to_dict(), ref.rows[0].to_dict()
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == (pytest.approx(v, rel=1e-4, abs=1e-6) if isinstance(v, float) else v), k
    res = OverConfidenceAttack(steps=2, keep_adv=False)(std_model, loader, 0.1)
    assert res.x_adv is None and res.entropy_adv.shape == (30,)


_PEAK = textwrap.dedent('''
    import json, os, resource, sys
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch
    import uncspan
    from torch import nn

    class Lazy(torch.utils.data.Dataset):
        """Images generated on access (nothing held in memory)."""
        def __init__(self, n): self.n = n
        def __len__(self): return self.n
        def __getitem__(self, i):
            return torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(i))

    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 10)).eval()
    def run(n):
        loader = torch.utils.data.DataLoader(Lazy(n), batch_size=32)
        return uncspan.uncertainty_span(model, loader, eps=8 / 255, steps=2, batch_size=32, restarts=0)
    run(64)  # warm-up: allocator, kernels
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(int(sys.argv[1]))
    print(json.dumps({"growth_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base}))
''')


def _growth_kb(n: int) -> int:
    out = subprocess.run([sys.executable, "-c", _PEAK, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["growth_kb"]


@pytest.mark.slow  # two fresh interpreters importing torch
def test_peak_memory_flat_for_ten_times_the_data():
    """Peak RSS growth for 2,000 images over 200 images is far below the size of the extra images (the
    2,000 float32 3×32×32 images are 24 MB; holding them, or their adversarial copies, would show)."""
    small, big = _growth_kb(200), _growth_kb(2000)
    extra_data_kb = (2000 - 200) * 3 * 32 * 32 * 4 / 1024
    assert big - small < 0.25 * extra_data_kb, (small, big, extra_data_kb)
