"""The experiment's entry point: ``run(models, data, config, *, store=None, progress=True) -> Result``; its two
halves are :mod:`.text` (Tables 1-5, Fig. 1) and :mod:`.vision` (PGD under temperature beside AutoAttack)."""

from __future__ import annotations

from robustsuite_common.experiment import Store

from .config import Config
from .inputs import Data, Models, check_inputs
from .result import Result, assemble

__all__ = ["run"]


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """Run the experiment (see :mod:`iortemp.experiment`). ``models``/``data``/``config`` are checked before any
    work; with ``store`` every attack run, fine-tuned model and table is checkpointed and a rerun resumes from them;
    with ``store=None`` nothing is written."""
    check_inputs(models, data, config)
    if config.audit.only:
        from .audit import audit_result

        return audit_result(Result, models, data, config)
    from .text import run_text
    from .vision import run_vision

    t = run_text(models.text, data, config, store, progress)
    v = run_vision(models.vision, data, config, store, progress) if models.vision is not None else None
    return assemble(t, v, models, data, config)
