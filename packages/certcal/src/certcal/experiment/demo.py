"""Offline inputs for the experiment: scikit-learn's 8x8 digits and small CNNs trained in seconds
(``pip install 'certcal[demo]'``), so the paper's protocol runs with this package alone."""

from __future__ import annotations

from .config import Config
from .inputs import Data, Models

__all__ = ["digits"]


def digits(*, config: Config | None = None, seed: int = 0, epochs: int = 15) -> tuple[Models, Data]:
    """``(Models, Data)`` on scikit-learn's digits: 1,400 train and 397 test images (ids: the rows of
    ``sklearn.datasets.load_digits()``, label names "0".."9"); the base model a small CNN trained without noise,
    and one smoothing model per σ of ``config.smoothing.sigmas`` (default: the demo preset's), the same CNN
    trained with Gaussian noise of that σ (Cohen et al.'s recipe, ``epochs`` epochs, Adam; seconds each)."""
    from .._demo import digits_splits, train_digits_cnn
    from .config import preset

    cfg = preset("demo") if config is None else config
    train, test = digits_splits(seed)
    base = train_digits_cnn(train.x, train.y, 0.0, epochs=epochs, seed=seed)
    noise = {float(s): train_digits_cnn(train.x, train.y, float(s), epochs=epochs, seed=seed)
             for s in cfg.smoothing.sigmas}
    return Models(base=base, noise=noise), Data(train=train, test=test)
