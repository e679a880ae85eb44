"""One content fingerprint for checkpoint keys: a short SHA-256 of tensors, arrays, models and JSON-able values.

A checkpoint key must change whenever the data or weights a piece of work depends on change, and must not change
otherwise (a stored run resumes only if it recomputes the same key). :func:`fingerprint` is that hash, one scheme
for every kind of part:

- a ``torch.nn.Module``: every ``state_dict`` entry, in its order, as its name and raw bytes;
- a ``torch.Tensor``: its shape and dtype, then its raw bytes (``bfloat16``, which numpy lacks, as float32);
- a ``numpy.ndarray``: the same as the tensor ``torch.from_numpy`` would give;
- anything else: its JSON (sorted keys, ``str`` for what JSON cannot hold).

The scheme is certcal's checkpoint fingerprint, unchanged, so keys of existing certcal runs stay valid.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["fingerprint"]


def _tensor_bytes(t: Any) -> tuple[bytes, bytes]:
    """(shape-and-dtype header, raw bytes) of a detached CPU copy of ``t``."""
    import torch

    a = t.detach().cpu().contiguous()
    header = str(tuple(a.shape)).encode() + str(a.dtype).encode()
    data = a.float().numpy().tobytes() if a.dtype == torch.bfloat16 else a.numpy().tobytes()
    return header, data


def fingerprint(*parts: Any, length: int = 12) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``parts`` (see the module docstring for the scheme):
    the part of a checkpoint key that changes whenever the data or weights a piece of work depends on change."""
    import numpy as np
    import torch

    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            p = torch.from_numpy(np.array(p, copy=True, order="C"))
        if isinstance(p, torch.nn.Module):
            for k, v in p.state_dict().items():
                h.update(k.encode())
                h.update(_tensor_bytes(v)[1])
        elif isinstance(p, torch.Tensor):
            header, data = _tensor_bytes(p)
            h.update(header)
            h.update(data)
        else:
            h.update(json.dumps(p, sort_keys=True, default=str).encode())
    return h.hexdigest()[:length]
