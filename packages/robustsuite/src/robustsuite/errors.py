"""Exceptions raised by the umbrella; each is a ValueError so callers can catch broadly."""


class SpecError(ValueError):
    """A model or dataset spec string that cannot be resolved."""


class ModelSpecError(SpecError):
    pass


class DatasetSpecError(SpecError):
    pass


class ConfigError(ValueError):
    """A run configuration that is invalid (unknown method, bad parameter, ...)."""
