"""Exceptions raised by the umbrella; each is a ValueError so callers can catch broadly."""

import difflib
from collections.abc import Iterable


class SpecError(ValueError):
    """A model or dataset spec string that cannot be resolved."""


class ModelSpecError(SpecError):
    pass


class DatasetSpecError(SpecError):
    pass


class ConfigError(ValueError):
    """A run configuration that is invalid (unknown method, bad parameter, ...)."""


def did_you_mean(name: str, choices: Iterable[str], *, cutoff: float = 0.5) -> str:
    """``"; did you mean 'x'?"`` naming the choice closest to ``name``, or ``""`` when none is close."""
    return "".join(f"; did you mean {c!r}?" for c in difflib.get_close_matches(name, list(choices), n=1, cutoff=cutoff))


def user_error_message(e: BaseException) -> str | None:
    """The one line a user sees for ``e`` when it is their mistake (a bad config, spec or input file, a run directory
    that cannot be written), else ``None`` (an internal error: the CLI shows its traceback with --verbose)."""
    if isinstance(e, ConfigError | SpecError):
        return str(e)
    if isinstance(e, UnicodeError):
        return f"{getattr(e, 'filename', None) or 'input'}: not UTF-8 ({e})"
    if isinstance(e, OSError) and (e.filename is not None or e.strerror):
        where = e.filename if e.filename2 is None else f"{e.filename} -> {e.filename2}"
        return f"{where}: {e.strerror or e}"
    return None
