"""How certcal's finished pieces of work go into a checkpoint store (robustsuite_common.experiment.Store):
certificates and attack outcomes as plain arrays (``NUMPY``), fine-tuned weights as state dicts (``TORCH``,
loaded with ``weights_only=True``), and a content fingerprint for keys that must change with the data."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from robustsuite_common.experiment import JSON, NUMPY, TORCH, Codec, Store, cached
from robustsuite_common.fingerprint import fingerprint

from .smoothing import CertifyResult

__all__ = ["CERTIFICATE", "JSON", "NUMPY", "TORCH", "Store", "cached", "fingerprint", "fine_tuned"]

CERTIFICATE = Codec("certificate", lambda c: NUMPY.encode(c.to_arrays()),
                    lambda b: CertifyResult.from_arrays(NUMPY.decode(b)))


def fine_tuned(store: Store | None, key: str, train: Callable[[], torch.nn.Module],
               like: torch.nn.Module) -> torch.nn.Module:
    """``train()``'s model, or a copy of ``like`` with the weights saved under ``key`` by an earlier run."""
    state = cached(store, key, lambda: {k: v.detach().cpu() for k, v in train().state_dict().items()}, TORCH)
    model = copy.deepcopy(like)
    dev = next((t.device for t in like.parameters()), torch.device("cpu"))
    model.load_state_dict({k: v.to(dev) for k, v in state.items()})
    return model.eval()
