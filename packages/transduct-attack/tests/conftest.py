"""Shared fixtures: scikit-learn's bundled digits (8x8, real data) and tiny models trained in seconds."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))  # for the _fakes helper module
os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    y = torch.tensor(d.target, dtype=torch.int64)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    tr, te = perm[:1200], perm[1200:]
    return x[tr], y[tr], x[te], y[te]


@pytest.fixture(scope="session")
def mlp_std(digits):
    from transduct_attack import train_classifier
    from transduct_attack.networks import MLP, build

    xtr, ytr, _, _ = digits
    g = torch.Generator().manual_seed(1)
    return train_classifier(build(lambda: MLP(hidden=64), g), xtr, ytr, epochs=20, generator=g)


@pytest.fixture(scope="session")
def mlp_bn(digits):
    from transduct_attack import train_classifier
    from transduct_attack.networks import MLP, build

    xtr, ytr, _, _ = digits
    g = torch.Generator().manual_seed(3)
    return train_classifier(build(lambda: MLP(hidden=64, batch_norm=True), g), xtr, ytr, epochs=10, generator=g)
