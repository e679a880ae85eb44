"""The checkpoint protocol that lets a caller resume an interrupted experiment: a :class:`Store` holds bytes by
string key (:class:`MemoryStore`, :class:`DirStore`), a :class:`Codec` turns a value into bytes and back
(:data:`JSON`, :data:`TORCH`, :data:`NUMPY`), and :func:`cached` computes a piece of work once. Without a store
nothing is written."""

from __future__ import annotations

import hashlib
import io
import json
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

import numpy as np

from .io import write_bytes

__all__ = ["Store", "MemoryStore", "DirStore", "Codec", "JSON", "TORCH", "NUMPY", "cached"]

T = TypeVar("T")


@runtime_checkable
class Store(Protocol):
    """Where an experiment checkpoints finished pieces of work: bytes by string key."""

    def get(self, key: str) -> bytes | None: ...

    def put(self, key: str, value: bytes) -> None: ...


class MemoryStore:
    """A dict-backed :class:`Store` (tests, or resuming within one process)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    def put(self, key: str, value: bytes) -> None:
        self.data[key] = bytes(value)

    def __len__(self) -> int:
        return len(self.data)


class DirStore:
    """A :class:`Store` of one file per key in ``root`` (written atomically: a killed run leaves whole files)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", key).strip("._") or "key"
        if len(safe) > 120 or safe != key:
            safe = safe[:80] + "-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        return self.root / safe

    def get(self, key: str) -> bytes | None:
        p = self.path(key)
        return p.read_bytes() if p.is_file() else None

    def put(self, key: str, value: bytes) -> None:
        write_bytes(self.path(key), bytes(value))


@dataclass(frozen=True)
class Codec:
    """How a value becomes bytes in a :class:`Store` and back."""

    name: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]


def _torch_encode(obj: Any) -> bytes:
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _torch_decode(data: bytes) -> Any:
    import torch

    return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)


def _npz_encode(arrays: Mapping[str, Any]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **cast("dict[str, Any]", {k: np.asarray(v) for k, v in arrays.items()}))
    return buf.getvalue()


def _npz_decode(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


JSON = Codec("json", lambda v: json.dumps(v, allow_nan=True).encode(), lambda b: json.loads(b.decode()))
TORCH = Codec("torch", _torch_encode, _torch_decode)  # tensors and state dicts (loaded with weights_only=True)
NUMPY = Codec("npz", _npz_encode, _npz_decode)        # dicts of arrays


def cached(store: Store | None, key: str, compute: Callable[[], T], codec: Codec = JSON) -> T:
    """``compute()``, or its value saved earlier under ``key`` in ``store``. With ``store=None`` nothing is
    read or written. A stored value that cannot be decoded (a truncated file) is recomputed with a warning."""
    if store is None:
        return compute()
    data = store.get(key)
    if data is not None:
        try:
            return codec.decode(data)
        except Exception as err:  # noqa: BLE001 - any decoding failure means: recompute
            warnings.warn(f"checkpoint {key!r} could not be read ({type(err).__name__}: {err}); recomputing it",
                          RuntimeWarning, stacklevel=2)
    value = compute()
    store.put(key, codec.encode(value))
    return value
