"""Reader for the IDX format of MNIST-style datasets (LeCun et al.), plain or gzip-compressed.

Used by ``builtin:fashion-mnist`` (Debian's ``dataset-fashion-mnist`` files) and the ``idx:DIR`` dataset
spec. Only numpy; no torchvision needed.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from ..errors import DatasetSpecError

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path) -> np.ndarray:
    """The array stored in one IDX file (``.gz`` is decompressed transparently).

    Raises :class:`DatasetSpecError` naming the file when the magic number, dtype code or size is wrong.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _DTYPES:
        raise DatasetSpecError(f"{path}: not an IDX file (bad magic number {raw[:4].hex()!r})")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DatasetSpecError(f"{path}: truncated IDX header")
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(_DTYPES[raw[2]])
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise DatasetSpecError(f"{path}: IDX payload has {len(raw) - header} bytes, shape {shape} needs {expected}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def find_idx(directory: str | Path, stem: str) -> Path:
    """The file for ``stem`` (e.g. ``train-images-idx3-ubyte``) in ``directory``, with or without ``.gz``
    and with ``-`` or ``.`` before ``idx`` (both spellings circulate)."""
    directory = Path(directory)
    variants = {stem, stem.replace("-idx", ".idx")}
    for name in sorted(variants):
        for candidate in (directory / name, directory / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    raise DatasetSpecError(f"{directory}: no IDX file {stem}[.gz] (expected the four MNIST-format files "
                           "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                           "t10k-labels-idx1-ubyte, optionally gzipped)")
