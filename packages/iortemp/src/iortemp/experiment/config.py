"""The experiment's typed configuration, grouped as the paper groups its settings, and its named presets.

Groups: ``systems`` (the served systems and the adversary's temperatures: modes, design temperatures,
calibration, the Brent search — §3.1, §4, Tables 1-3, 13), ``text`` (sizes and the out-of-the-box attacks,
§5.1), ``sweep`` (Fig. 1), ``vision`` (PGD under temperature beside standard AutoAttack: this project's
image counterpart of the paper's text tables), ``ddi_at`` (DDi-AT, App. A.2 and C; Table 4's transfer) and
``ablation`` (Table 5). ``seed`` is the run's seed (the umbrella writes its unit's seed there); attack seeds
are offsets added to it.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from robustsuite_common import contract
from robustsuite_common.config import Bool, Float, Int, Str, config, param

Mode = Literal["plain", "cal", "opt", "platt"]
TextAttackName = Literal["deepwordbug", "pwws", "textfooler", "bae", "wordswap"]
Normalization = Literal["normalise", "clip", "none"]

__all__ = ["EXECUTION_FIELDS", "AblationConfig", "AuditConfig", "AutoAttackConfig", "Config", "DDiATConfig", "DesignTemperatures",
           "PRESETS", "SearchConfig", "SweepConfig", "SystemsConfig", "TextAttacksConfig", "TextConfig",
           "VisionConfig", "paper_values", "preset", "reference"]


@config
class DesignTemperatures:
    """The design temperatures T_d of the two served, miscalibrated copies of the base model (Eq. 8)."""

    down_conf: Float = param(2e6, ge=1e-3, le=1e7, unit="temperature", paper="§5.2 (T_d = 2000000)",
                             doc="T_d of the underconfident system ↓conf")
    up_conf: Float = param(0.005, ge=1e-3, le=1e7, unit="temperature", paper="§5.2 (T_d = 0.005)",
                           doc="T_d of the overconfident system ↑conf")


@config
class SearchConfig:
    """The adversary's temperature optimisation T_a = argmin_T Q(T) on the validation set (§4.2, Eqs. 10-11):
    decade probes from T_cal, then scipy's bounded Brent method (``iortemp.optimize_temperature``)."""

    attack: TextAttackName = param("deepwordbug", unit="attack", paper="§5.2 (DeepWordBug attacks the validation set)",
                                   doc="text attack defining Q(T) (must be one of text.attacks.names)")
    max_evaluations: Int = param(5, ge=1, unit="attack runs on the validation set", paper="not stated in the paper",
                                 doc="budget of Q(T) evaluations per search")
    xatol: Float = param(0.05, gt=0, unit="decades of T", doc="Brent tolerance in log10 T (Q is a step function)")
    flat_patience: Int = param(3, ge=0, unit="decades", doc="flat decades crossed before a direction is given up")
    stall_patience: Int = param(4, ge=1, unit="evaluations",
                                doc="Brent stops after this many evaluations without a new minimum")
    log10_bounds: tuple[Float, Float] = param((-8.0, 8.0), unit="log10 T",
                                              doc="search interval of log10 T (within ±20)")

    def __post_init__(self) -> None:
        lo, hi = self.log10_bounds
        if not -20.0 <= lo < hi <= 20.0:
            raise ValueError(f"log10_bounds must satisfy -20 <= low < high <= 20, got {self.log10_bounds}")


@config
class SystemsConfig:
    """The attacked systems and the adversary's temperatures (§3.1, §4, §5; Tables 1-3 and 13)."""

    modes: tuple[Mode, ...] = param(("plain", "cal", "opt"), min_length=3, unit="adversary temperatures",
                                    paper="Table 3 (plain/cal/opt), Table 13 (platt)",
                                    doc="plain (T_a = 1), cal (NLL-calibrated T_a, Eq. 9), opt (Brent-optimised T_a, "
                                        "Eq. 11), platt (matrix Platt scaling, App. D.5); plain, cal and opt required")
    design_temperatures: DesignTemperatures = param(DesignTemperatures(), doc="the served systems ↓conf and ↑conf")
    calibration: Literal["exact", "gd"] = param("exact", unit="method", paper="§5.2 (GD, lr 0.01, 5000 iterations)",
                                                doc="adversary calibration: exact (bounded Brent on the NLL) or gd "
                                                    "(the paper's gradient descent)")
    search: SearchConfig = param(SearchConfig(), doc="the Brent search for the optimised temperature")

    def __post_init__(self) -> None:
        missing = [m for m in ("plain", "cal", "opt") if m not in self.modes]
        if missing or len(set(self.modes)) != len(self.modes):
            raise ValueError(f"modes must hold plain, cal and opt once each (platt optional), got {self.modes}")


@config
class TextAttacksConfig:
    """The out-of-the-box text attacks (§5.1) and the offline resources they read."""

    names: tuple[TextAttackName, ...] = param(("deepwordbug", "pwws"), min_length=1, unit="attacks",
                                              paper="§5.1 (bae, textfooler, pwws, deepwordbug)",
                                              doc="attacks run on every system and temperature (wordswap: the "
                                                  "package's offline embedding-neighbour swap)")
    seeds: tuple[Int, ...] = param((0, 1, 2), min_length=1, unit="offsets added to seed",
                                   paper="§5.1 (three random seeds)", doc="attack seeds")
    wordnet: Str | None = param(None, unit="path", doc="WordNet 3.0 directory for pwws (None: $IORTEMP_WORDNET, "
                                                        "/usr/share/wordnet, NLTK data)")
    embedding: Str | None = param(None, unit="path", doc="counter-fitted word vectors (text file) for textfooler")
    masked_lm: Str | None = param(None, unit="path", doc="local masked-LM directory for bae")
    wordswap_neighbours: Int = param(8, ge=1, unit="candidates", doc="embedding neighbours per word (wordswap)")
    cache_logits: Bool = param(True, unit="", doc="memoise the base model's logits per text across systems, "
                                                  "temperatures and seeds (execution only)")

    def __post_init__(self) -> None:
        for name, values in (("names", self.names), ("seeds", self.seeds)):
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must not repeat a value, got {values}")
        if any(s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be >= 0, got {self.seeds}")


@config
class TextConfig:
    """The text part: Tables 1-3 and 11 on the text classifier."""

    n_test: Int = param(40, ge=1, unit="texts", paper="§5.1 (Rotten Tomatoes: 1840 test texts)",
                        doc="first test texts attacked")
    n_val: Int = param(40, ge=1, unit="texts", paper="§5.1 (1066 validation texts)",
                       doc="first validation texts (calibration, Brent search)")
    attacks: TextAttacksConfig = param(TextAttacksConfig(), doc="the attacks")


@config
class SweepConfig:
    """Fig. 1: adversarial accuracy of the base model served at temperature T."""

    enabled: Bool = param(True, unit="", doc="run the sweep")
    attack: TextAttackName = param("deepwordbug", unit="attack", doc="attack of the sweep (one of text.attacks.names)")
    temperatures: tuple[Float, ...] = param((1e-3, 1e-1, 1.0, 1e1, 1e7), min_length=1, unit="temperature",
                                            paper="Fig. 1", doc="temperatures swept (each in [1e-3, 1e7])")

    def __post_init__(self) -> None:
        if any(not 1e-3 <= t <= 1e7 for t in self.temperatures):
            raise ValueError(f"temperatures must lie in [1e-3, 1e7], got {self.temperatures}")


@config
class AutoAttackConfig:
    """Standard AutoAttack on the same points, beside PGD (issue 27: the field's robust accuracy)."""

    enabled: Bool = param(True, unit="", doc="run AutoAttack on every served vision system")
    version: Literal["standard", "plus", "rand"] = param("standard", unit="", doc="AutoAttack version")


@config
class VisionConfig:
    """The vision part: L∞ PGD under temperature (gradient masking, the image analogue of the IOR) on the
    served vision systems, and standard AutoAttack on the same points (not in the paper; this project's)."""

    n: Int = param(200, ge=1, unit="images", doc="first test (and validation) images")
    eps: Float = param(0.1, gt=0, le=1, unit="L∞, pixels in [0, 1]", doc="attack radius")
    steps: Int = param(10, ge=1, unit="iterations", doc="PGD steps (step size 2.5 eps / steps)")
    random_start: Bool = param(True, unit="", doc="PGD's random start (what makes vision seeds differ)")
    seeds: tuple[Int, ...] = param((0, 1, 2), min_length=1, unit="offsets added to seed", doc="PGD seeds")
    autoattack: AutoAttackConfig = param(AutoAttackConfig(), doc="AutoAttack beside PGD")

    def __post_init__(self) -> None:
        if len(set(self.seeds)) != len(self.seeds) or any(s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be distinct integers >= 0, got {self.seeds}")


@config
class DDiATConfig:
    """DDi-AT (App. A.2, Eq. 12-17): the implicitly overconfident system ddi-at fine-tuned from the base model,
    and Table 4's transfer attack from base to ddi-at."""

    enabled: Bool = param(False, unit="", doc="fine-tune and attack ddi-at (minutes on 2 cores)")
    train_size: Int = param(800, ge=1, unit="texts", paper="App. C (the whole training set)", doc="training texts")
    epochs: Int = param(10, ge=1, unit="epochs", paper="App. C (5)", doc="fine-tuning epochs")
    lr: Float = param(1e-3, gt=0, unit="AdamW learning rate", paper="App. C (1e-5)", doc="learning rate")
    batch_size: Int = param(8, ge=1, unit="texts", paper="App. C (8)", doc="batch size")
    m: Int = param(3, ge=1, unit="PGD starts", paper="App. C (M = 3)", doc="adversaries per step (M)")
    k: Int = param(3, ge=1, unit="PGD steps", paper="App. C (K = 3)", doc="steps per adversary (K)")
    normalization: Normalization = param("normalise", unit="", paper="Eq. 12, Table 5",
                                         doc="global gradient normalisation (Eq. 12), clip, or none")
    adv_scale: Literal["embedding", "absolute"] = param("embedding", unit="",
                                                        paper="App. C (absolute L2 sizes for base-size models)",
                                                        doc="embedding: the adversary's L2 sizes in units of the "
                                                            "mean input-embedding norm; absolute: as given")


@config
class AblationConfig:
    """Table 5 (App. B): DDi-AT's gradient normalisation ablation over seeds (uses the ddi_at recipe)."""

    enabled: Bool = param(False, unit="", doc="run the ablation (one fine-tuning per setting and seed)")
    settings: tuple[Normalization, ...] = param(("normalise", "clip", "none"), min_length=1, unit="",
                                                paper="Table 5", doc="normalisations compared")
    seeds: tuple[Int, ...] = param((0, 1, 2), min_length=1, unit="offsets added to seed", doc="training seeds")


@config
class AuditConfig:
    """The audit's ``temperature-illusion`` check (:func:`iortemp.audit.temperature_illusion_check`) on the vision
    model (``models.vision``, the first ``n`` images of ``data.vision_test``); not in the paper: its IOR detector
    (§4, Eqs. 9-11) applied to a user's model as served. ``Config.threshold`` is the drop that fails."""

    enabled: Bool = param(False, unit="", doc="compute the check when a vision model is given")
    only: Bool = param(False, unit="", doc="run the check alone (no text or vision tables; no text model needed)")
    eps: Float = param(0.1, gt=0, unit="pixels in [0, 1] (L∞ or L2 radius)", doc="attack radius")
    norm: Literal["Linf", "L2"] = param("Linf", unit="", doc="threat model of the attack")
    n: Int = param(100, ge=1, unit="images", doc="first test images attacked (and used to fit the temperatures)")
    steps: Int = param(10, ge=1, unit="iterations", doc="PGD steps (step size 2.5 eps / steps)")
    max_evaluations: Int = param(4, ge=1, unit="attack runs", paper="§4.2 (Eq. 11)",
                                 doc="budget of the Brent search for the optimised temperature")
    confidence_limit: Float = param(0.99, gt=0, lt=1, unit="mean max-softmax probability", paper="§3, Table 1",
                                    doc="a mean clean confidence above this is extreme (warn)")

    def __post_init__(self) -> None:
        if self.norm == "Linf" and self.eps > 1:
            raise ValueError(f"eps must lie in (0, 1] for norm 'Linf' (pixels in [0, 1]), got {self.eps}")


@config
class Config:
    """The illusion-of-robustness experiment (paper 000)."""

    seed: Int = param(0, ge=0, unit="", doc="run seed (attack and training seeds are offsets from it)")
    threshold: Float = param(0.05, ge=0, lt=1, unit="fraction", paper="§5.2",
                             doc="IOR: the adversary's best temperature cuts adversarial accuracy by more than this")
    systems: SystemsConfig = param(SystemsConfig(), doc="served systems and adversary temperatures")
    text: TextConfig = param(TextConfig(), doc="the text part")
    sweep: SweepConfig = param(SweepConfig(), doc="Fig. 1")
    vision: VisionConfig = param(VisionConfig(), doc="the vision part")
    ddi_at: DDiATConfig = param(DDiATConfig(), doc="DDi-AT and Table 4")
    ablation: AblationConfig = param(AblationConfig(), doc="Table 5")
    audit: AuditConfig = param(AuditConfig(), doc="the audit's temperature-illusion check (vision)")

    def __post_init__(self) -> None:
        names = self.text.attacks.names
        for where, name in (("systems.search.attack", self.systems.search.attack), ("sweep.attack", self.sweep.attack)):
            if name not in names:
                raise ValueError(f"{where} must be one of text.attacks.names {list(names)}, got {name!r}")


EXECUTION_FIELDS = ("text.attacks.cache_logits",)  # changes how, not what, is computed

# The demo: the umbrella runner's former DEFAULTS exactly. 40 test texts suffice: the paired test resolves the
# headline illusion (↑conf under PWWS, McNemar p = 0.001; its estimated power at the observed rates is 0.98 at
# n = 40, 0.88 at n = 30), where two independent Clopper-Pearson intervals needed about 80 texts (README, "Demo
# size").
DEMO = Config()

# The paper's settings where it states them (§5, App. C, Table 5); comments where a value is unknown or
# impossible here.
PAPER = Config(
    systems=SystemsConfig(
        modes=("plain", "cal", "opt", "platt"),  # Table 13 adds Platt scaling
        calibration="gd",  # §5.2: gradient descent, lr 0.01, 5000 iterations
        search=SearchConfig(max_evaluations=16),  # the paper does not state its budget; the package default
    ),
    # Rotten Tomatoes sizes (1840 test / 1066 validation texts; the run takes the first n of the given data).
    # textfooler and bae need counter-fitted vectors, a masked LM and TensorFlow Hub's USE: local paths in
    # text.attacks (embedding=, masked_lm=); offline they are noted as not run.
    text=TextConfig(n_test=1840, n_val=1066,
                    attacks=TextAttacksConfig(names=("bae", "textfooler", "pwws", "deepwordbug"))),
    ddi_at=DDiATConfig(enabled=True, train_size=8530, epochs=5, lr=1e-5, batch_size=8, m=3, k=3,
                       adv_scale="absolute"),  # App. C on base-size (110M) models
    ablation=AblationConfig(enabled=True),
    # the vision part is not in the paper: the demo's PGD with 20 steps
    vision=VisionConfig(steps=20),
)

# A CPU-sized run of the headline tables (Tables 1-3, 11 with ddi-at, Table 4, Fig. 1, the vision check): about
# 0.35 CPU-hours (before DDi-AT moved to App. C's full schedule, below) on the demo's models, estimated linearly from small runs of each piece (tools/bench/bench_iortemp.py
# --paper-cpu; README, "paper-cpu"); not run at full size here.
# Calibration is exact (bounded Brent on log T, checked against a grid in tests/test_calibration.py): the paper's
# plain GD from T = 1 (lr 0.01, 5000 iterations) stalls far below the optimum on the ↑conf system (T_cal 30 where
# the NLL optimum is near 200 × the base's; issue 35), so its calibrated adversary could not show Table 2's claim.
PAPER_CPU = Config(
    systems=SystemsConfig(calibration="exact", search=SearchConfig(max_evaluations=8)),
    text=TextConfig(n_test=500, n_val=250),
    # DDi-AT at App. C's settings (issue 35): lr 1e-5, batch 8, 5 epochs, M = K = 3, every training text of the
    # shipped task (14,000): 8,750 steps at 0.20 CPU-s each, about 29 CPU-minutes (timed: 500 steps in 99 CPU-s).
    # On this small model it does not reach the paper's 99.97 % confidence: 500 such steps moved the mean clean
    # confidence from 92.73 % to 93.01 % (about 96.5 % after 8,750 steps if the log-odds keep that pace); lr 1e-3
    # on distinct texts reached 95.7 % (500 steps) and 95.0 % (750 steps), and the former 800 texts x 5 epochs at
    # lr 1e-3 98.74 %, so no CPU-sized setting measured here reaches it (README, "paper-cpu").
    ddi_at=DDiATConfig(enabled=True, train_size=14000, epochs=5, lr=1e-5, batch_size=8),
    vision=VisionConfig(n=500, steps=20),
)

# The audit (``robustsuite audit``): the temperature-illusion check alone, on the user's vision model; ε and norm
# from ``audit.eps`` / ``audit.norm`` (override them), small budgets (100 images, PGD-10, 4 search runs).
AUDIT = Config(audit=AuditConfig(enabled=True, only=True))

PRESETS: dict[str, Config] = {"demo": DEMO, "paper": PAPER, "paper-cpu": PAPER_CPU, "audit": AUDIT}


def preset(name: str) -> Config:
    """The named preset (``ValueError`` listing the names)."""
    return contract.choose_preset(PRESETS, name)


def paper_values() -> dict[str, Any]:
    """The paper's reference values (Tables 1, 3, 4, 5, 11, 13), read from ``paper.json`` beside this module."""
    return contract.paper_values("iortemp.experiment")



def reference() -> dict[str, Any]:
    """Deprecated alias of :func:`paper_values` (kept for one release)."""
    warnings.warn("iortemp.experiment.reference() is deprecated; use paper_values()", DeprecationWarning, stacklevel=2)
    return paper_values()
