"""Atomic writes: a file is written to a temporary name in its directory and renamed, so a reader (or a
resumed run after ``kill -9``) sees the old file or the new one, never half of one; and file-name-safe names."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "safe_name", "write_bytes", "write_text", "write_json"]


def atomic_write(path: str | Path, writer: Callable[[Path], Any]) -> Path:
    """Call ``writer(tmp_path)`` to write a temporary file beside ``path``, fsync it and rename it to
    ``path`` (creating parent directories). On any error the temporary file is removed and ``path`` is left
    as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        writer(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600: give the file the permissions open() would
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    return atomic_write(path, lambda p: p.write_bytes(data))


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> Path:
    """Write ``obj`` as JSON (NaN and infinity refused: they are not JSON) to ``path`` atomically."""
    return write_text(path, json.dumps(obj, indent=indent, allow_nan=False, ensure_ascii=False) + "\n")


def safe_name(text: str, max_len: int = 48) -> str:
    """A file-name-safe rendering of a user string (a model or dataset spec): characters other than letters, digits
    and ``_.-`` become ``-``, and a short hash of the string is appended when that changed or truncated it, so
    different strings get different names."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"
    if slug != text or len(slug) > max_len:
        slug = f"{slug[:max_len].rstrip('-.')}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return slug
