"""The experiment's typed configuration, grouped as the paper groups its hyper-parameters, and its presets.

``demo`` is exactly the umbrella demo's settings (the runner's former ``DEFAULTS``), so the demo's numbers stay
the same for the same seed; ``paper`` the paper's values where our copy of the text keeps them (a comment says
where a value is lost or impossible here); ``paper-cpu`` the CPU-sized benchmark of issue 26 item 4.
"""

from __future__ import annotations

from typing import Any, Literal

from robustsuite_common import contract
from robustsuite_common.config import Bool, Float, Int, config, param
from robustsuite_common.contract import choose_preset

from ..act import ACT_METHODS
from ..attacks import ACE_CONFIGURATIONS
from ..cce import ADMMConfig, admm_grid

__all__ = ["ACCEConfig", "ACEConfig", "ACTConfig", "AuditConfig", "CalibrationConfig", "CertifyConfig", "Config",
           "EXECUTION_FIELDS", "NoiseTrainingConfig", "PRESETS", "SmoothingConfig", "paper_values", "preset"]

ACTMethod = Literal["none", "gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact"]
ACEName = Literal["lower_label", "raise_label", "lower_prediction", "raise_prediction"]
assert set(ACTMethod.__args__) == set(ACT_METHODS) and set(ACEName.__args__) == set(ACE_CONFIGURATIONS)


def _positive(name: str, values: tuple, *, allow_zero: bool = False) -> None:
    for v in values:
        if not (v >= 0 if allow_zero else v > 0):
            raise ValueError(f"{name} values must be {'>= 0' if allow_zero else '> 0'}, got {v!r}")


def _distinct(name: str, values: tuple) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {list(values)}")


@config
class SmoothingConfig:
    """Gaussian smoothing (Cohen et al. 2019; paper §3 "Prerequisites", App. A.1): one smoothed classifier per σ."""

    sigmas: tuple[Float, ...] = param((0.25, 0.5), min_length=1, unit="L2 norm, pixels in [0, 1]",
                                      doc="noise levels σ of the smoothed classifiers (one smoothing model each)",
                                      paper="§5.1, App. A.1")

    def __post_init__(self) -> None:
        _positive("sigmas", self.sigmas)
        _distinct("sigmas", self.sigmas)


@config
class NoiseTrainingConfig:
    """Cohen et al.'s Gaussian-noise fine-tuning of the base model: used for each σ that has no smoothing model
    of its own (``Models.noise``), and for ACT's σ when it has none."""

    epochs: Int = param(6, ge=1, unit="epochs", doc="noise fine-tuning epochs", paper="App. A.1 (Cohen et al.)")
    batch_size: Int = param(64, ge=1, unit="images", doc="mini-batch size")
    lr: Float = param(1e-3, gt=0, unit="Adam learning rate", doc="learning rate (Adam; Cohen et al. use SGD)")


@config
class CertifyConfig:
    """CERTIFY (Cohen et al. 2019, Alg. 1; paper App. A.1): n0 selection draws, n estimation draws, level α."""

    n0: Int = param(50, ge=1, unit="draws", doc="noise draws that select the top class", paper="App. A.1 (100)")
    n: Int = param(400, ge=1, unit="draws", doc="noise draws that estimate its probability (caps the radius: "
                   "σ Φ⁻¹(α^(1/n)))", paper="§5.1: 100,000")
    alpha: Float = param(0.001, gt=0, lt=1, unit="probability", doc="failure probability of the certificates",
                         paper="App. A.1")
    batch_size: Int = param(450, ge=1, unit="draws per forward pass",
                            doc="noise draws evaluated per forward pass (CPU: small; GPU: 4096+)")
    noise_stream: Literal["batch", "per_input"] = param(
        "batch", doc="where an input's noise comes from: one stream for the call ('batch', the demo's) or its own, "
        "keyed by seed and input index ('per_input': independent of batch size and sharding)", unit="choice")
    shards: Int = param(1, ge=1, unit="tasks", doc="split each σ's certification into this many tasks (needs "
                        "noise_stream = 'per_input'; changes how, not what, is computed)")

    def __post_init__(self) -> None:
        if self.shards > 1 and self.noise_stream != "per_input":
            raise ValueError(f"shards = {self.shards} needs noise_stream = 'per_input' (with the 'batch' stream an "
                             "input's noise depends on the inputs before it, so shards would not add up to one run)")


@config
class CalibrationConfig:
    """Certified calibration across radii (paper §3.1-3.3, §5): the radii, the confidence certificate, the ECE's
    bins and the bootstrap of the intervals."""

    radii: tuple[Float, ...] = param((0.0, 0.125, 0.25, 0.375, 0.5), min_length=1, unit="L2 radius",
                                     doc="certified radii ε at which CA, CBS and CCE are reported", paper="Table 2 / 7")
    bound: Literal["cdf", "standard"] = param("cdf", unit="choice", doc="confidence certificate C2 (Kumar et al.)",
                                              paper="§5.3, App. C")
    n_bins: Int = param(15, ge=1, unit="bins", doc="equal-width bins of the ECE", paper="§2.1")
    n_boot: Int = param(200, ge=1, unit="resamples", doc="bootstrap resamples of every CBS / CCE / ECE interval")

    def __post_init__(self) -> None:
        _positive("radii", self.radii, allow_zero=True)
        _distinct("radii", self.radii)


@config
class ACCEConfig:
    """The paper's ADMM solver of the CCE program (ACCE; §3.4, App. G, I.1), reported beside the exact optimum."""

    steps: Int = param(500, ge=1, unit="iterations", doc="ADMM steps per run", paper="App. G.3: < 3,000")
    grid: Bool = param(False, unit="", doc="the 16-run grid of App. I.1 (initialisation x learning rates x ρ "
                       "schedule, best value kept; about 8x the time) instead of one run", paper="App. I.1")

    def solver(self) -> ADMMConfig | tuple[ADMMConfig, ...]:
        return admm_grid(steps=self.steps) if self.grid else ADMMConfig(steps=self.steps)


@config
class ACEConfig:
    """β-ACE calibration attacks on the base model (paper §2.2, Eq. 2, Table 1, App. B.2)."""

    norms: tuple[Literal["linf", "l2"], ...] = param(("linf", "l2"), min_length=1, unit="choice",
                                                     doc="threat models attacked", paper="Table 1 (L∞)")
    eps_linf: Float = param(0.1, gt=0, le=1, unit="L∞, pixels in [0, 1]", doc="L∞ budget", paper="Table 1: 8/255")
    eps_l2: Float = param(0.5, gt=0, unit="L2, pixels in [0, 1]", doc="L2 budget")
    steps: Int = param(10, ge=1, unit="iterations", doc="PGD steps", paper="App. B.2: 100")
    configurations: tuple[ACEName, ...] = param(tuple(ACE_CONFIGURATIONS), min_length=1, unit="choice",
                                                doc="(η, ω) configurations", paper="Eq. 2, Table 1")

    def __post_init__(self) -> None:
        _distinct("norms", self.norms)
        _distinct("configurations", self.configurations)

    def budgets(self) -> dict[str, float]:
        return {k: {"linf": self.eps_linf, "l2": self.eps_l2}[k] for k in self.norms}


@config
class ACTConfig:
    """Adversarial calibration training against SmoothAdv (paper §4, §5.3, Table 2 / 7, App. F, I.3, J.1)."""

    RENAMED = {"epsilon": "eps"}  # the project's vocabulary (issue 34); the old key works one release

    enabled: Bool = param(True, unit="", doc="run the ACT comparison")
    methods: tuple[ACTMethod, ...] = param(("none", "smoothadv", "acce_act"), min_length=1, unit="choice",
                                           doc="rows: 'none' is the start model itself (the paper's pre-trained row)",
                                           paper="Table 2 / 7")
    sigma: Float = param(0.25, gt=0, unit="L2 norm", doc="σ of the smoothing model that is fine-tuned")
    eps: Float = param(0.5, ge=0, unit="L2 radius", doc="attack radius ε of the inner maximisation",
                       paper="App. I.3 (the checkpoint's)")
    start: Literal["noise", "smoothadv"] = param(
        "noise", unit="choice", doc="start model: the σ noise model as is, or that model fine-tuned with SmoothAdv "
        "first (the paper fine-tunes SmoothAdv models)", paper="§5.3")
    start_epochs: Int = param(0, ge=0, unit="epochs", doc="SmoothAdv epochs that make the start model "
                              "(start = 'smoothadv'; same data, lr, batch and attack as below)")
    epochs: Int = param(1, ge=1, unit="epochs", doc="fine-tuning epochs", paper="App. I.3: 10")
    train_samples: Int = param(256, ge=0, unit="images", doc="first train images fine-tuned on (0: the whole split)")
    test_samples: Int = param(100, ge=0, unit="images", doc="test inputs certified per fine-tuned model "
                              "(0: the experiment's test_samples)", paper="App. J.1: 500")
    batch_size: Int = param(128, ge=1, unit="images", doc="fine-tuning mini-batch",
                            paper="App. I.3: 256 (Brier-ACT), 2048 (ACCE-ACT)")
    num_noise: Int = param(2, ge=1, unit="draws", doc="Gaussian draws per input (m)", paper="App. I.3 (checkpoint's)")
    attack_steps: Int = param(2, ge=1, unit="iterations", doc="PGD steps of the inner maximisation",
                              paper="App. I.3 (grid)")
    attack_step_factor: Float = param(1.0, gt=0, unit="", doc="factor on the attack step 2ε/steps",
                                      paper="App. I.3 (grid)")
    optimizer: Literal["adam", "sgd"] = param("adam", unit="choice", doc="weight optimiser of every fine-tune "
                                              "(and of the SmoothAdv start): Adam, or SGD with momentum",
                                              paper="App. I.3: SGD, weight decay 1e-4")
    momentum: Float = param(0.9, ge=0, lt=1, unit="", doc="SGD momentum (optimizer = 'sgd')",
                            paper="not stated; Salman et al.'s code: 0.9")
    lr: Float = param(2e-4, gt=0, unit="learning rate", doc="weight learning rate (selected most often in "
                      "the README table; 1e-3 lost 16 points of CA in the demo)", paper="App. I.3 (grid)")
    lr_grid: tuple[Float, ...] = param((), unit="learning rate", doc="weight learning rates selected from "
                                       "with the paper's rule (empty: lr only)", paper="App. I.3")
    step_factor_grid: tuple[Float, ...] = param((), unit="", doc="attack step factors selected from with the "
                                                "paper's rule, crossed with lr_grid (empty: attack_step_factor only)",
                                                paper="App. I.3; App. J.4 (ImageNet): {1.0, 5.0}")
    paired: Bool = param(False, unit="", doc="paired bootstrap of each ACT variant's CCE difference against AT "
                         "(SmoothAdv) on the shared test inputs (about as costly as one CCE interval per radius)")
    selection_margin: Float = param(0.03, ge=0, le=1, unit="fraction", doc="models within this margin of the best "
                                    "certified accuracy are eligible; the best calibrated is shown", paper="§5.3, J.1")
    warmup_epochs: Int = param(1, ge=0, unit="epochs", doc="ε grows linearly over these epochs", paper="App. I.3: 3")
    seeds: tuple[Int, ...] = param((), unit="", doc="fine-tuning and certification seeds (empty: the run's seed)")
    admm_lr_a: Float = param(1e-3, gt=0, unit="learning rate", doc="ACCE-ACT's ADMM adversary: step size of the "
                             "assignment a", paper="App. G.2")

    def __post_init__(self) -> None:
        _distinct("methods", self.methods)
        _positive("lr_grid", self.lr_grid)
        _distinct("lr_grid", self.lr_grid)
        _positive("step_factor_grid", self.step_factor_grid)
        _distinct("step_factor_grid", self.step_factor_grid)
        _positive("seeds", self.seeds, allow_zero=True)
        _distinct("seeds", self.seeds)
        if self.start == "smoothadv" and self.start_epochs < 1:
            raise ValueError("start = 'smoothadv' needs start_epochs >= 1")


@config
class AuditConfig:
    """The audit's ``calibration-under-attack`` check (:func:`certcal.audit.calibration_under_attack_check`) of
    ``models.base``: the β-ACE attacks of ``ace`` (its first norm, that norm's budget, its steps and
    configurations), ECE bins and bootstrap of ``calibration``; not in the paper: its Table 1 turned into a rule."""

    enabled: Bool = param(False, unit="", doc="add the check to the result (from the β-ACE table's own attacks)")
    only: Bool = param(False, unit="", doc="run the check alone (no certification, no ACT; data.train not needed)")
    n: Int = param(100, ge=1, unit="images", doc="first test inputs attacked when the check runs alone")


@config
class Config:
    """The certified-calibration experiment (paper 004): certification per σ, CBS / CCE across radii, β-ACE
    attacks on the base model, and ACT against SmoothAdv."""

    seed: Int = param(0, ge=0, unit="", doc="seed of every noise draw, bootstrap and fine-tune")
    test_samples: Int = param(150, ge=1, unit="images", doc="first test inputs certified and attacked",
                              paper="App. J.1: 500")
    smoothing: SmoothingConfig = param(SmoothingConfig(), doc="Gaussian smoothing")
    noise_training: NoiseTrainingConfig = param(NoiseTrainingConfig(), doc="noise fine-tuning (σ without a model)")
    certify: CertifyConfig = param(CertifyConfig(), doc="certification")
    calibration: CalibrationConfig = param(CalibrationConfig(), doc="certified calibration across radii")
    acce: ACCEConfig = param(ACCEConfig(), doc="the ADMM solver (ACCE)")
    ace: ACEConfig = param(ACEConfig(), doc="β-ACE attacks")
    act: ACTConfig = param(ACTConfig(), doc="adversarial calibration training")
    audit: AuditConfig = param(AuditConfig(), doc="the audit's calibration-under-attack check")


#: dotted config paths that change how, not what, is computed (left out of a unit's identity)
EXECUTION_FIELDS = ("certify.shards",)

PRESETS: dict[str, Config] = {
    # the umbrella demo, exactly (the former runner DEFAULTS)
    "demo": Config(),
    # the paper's settings where our copy keeps them. Lost in our copy: the App. I.3 training grids (learning
    # rates, attack steps and factors, rho growth) and m / ε of the SmoothAdv checkpoints; the ADMM grid's
    # numbers are reconstructed (certcal.admm_grid). Impossible here: the paper fine-tunes SmoothAdv models
    # trained from scratch (Salman et al.); 'start = smoothadv' fine-tunes the noise model with SmoothAdv first.
    "paper": Config(
        test_samples=500,                                                   # App. J.1 (Fashion-MNIST)
        smoothing=SmoothingConfig(sigmas=(0.12, 0.25, 0.5, 1.0)),           # §5.1
        certify=CertifyConfig(n0=100, n=100_000, alpha=0.001, batch_size=4096, noise_stream="per_input"),
        calibration=CalibrationConfig(radii=(0.05, 0.1, 0.2, 0.5, 1.0), bound="cdf", n_bins=15, n_boot=1000),
        acce=ACCEConfig(steps=3000, grid=True),                              # App. G.3, I.1
        ace=ACEConfig(norms=("linf",), eps_linf=8 / 255, steps=100),        # Table 1 (CIFAR-10), App. B.2
        act=ACTConfig(methods=("none", "smoothadv", "brier_act", "acce_act"), sigma=0.25, eps=0.5,
                      start="smoothadv", start_epochs=10, epochs=10, train_samples=0, test_samples=500,
                      batch_size=256, num_noise=2, attack_steps=2, warmup_epochs=3, optimizer="sgd",
                      lr=1e-2, lr_grid=(1e-3, 1e-2), step_factor_grid=(1.0, 5.0), paired=True)),  # grid lost: ours
    # issue 26 item 4 and issue 35: >= 10,000 draws, ACT at σ = 0.5 (10,000 draws certify up to r = 0.80 at
    # σ = 0.25 but 1.60 at σ = 0.5, and the paper's gains are at 0.5 and 1.0). ACT as App. I.3 states it: SGD
    # (momentum 0.9, Salman et al.'s code; weight decay 1e-4), batch 256, 10 epochs, ε warm-up over 3, the weight
    # lr / 10 every 4 epochs; 500 test images (App. J.1); paired intervals of the CCE difference against AT. Grid
    # (4 points, the same for AT and both ACT variants, as App. I.5 fine-tunes AT with Brier-ACT's settings; the
    # paper's 16-point values are lost in our copy): weight lr {1e-3, 1e-2} (Salman et al. train with SGD at 0.1,
    # / 10 every 30 epochs: 1e-2 moves a SmoothAdv model, 1e-3 keeps it near) x attack step factor {1, 5} (the
    # only factor values the paper prints, App. J.4). ACCE-ACT's batch stays 256 (paper: 2,048, i.e. 2 steps an
    # epoch on 5,000 images). The start: 10 SmoothAdv epochs (was 2: AT fine-tuning then still added 10 points of
    # CA at r = 1, which put every ACCE-ACT model below the 3 % band, so none was selected there)
    "paper-cpu": Config(
        test_samples=300,
        smoothing=SmoothingConfig(sigmas=(0.25, 0.5)),
        certify=CertifyConfig(n0=100, n=10_000, alpha=0.001, batch_size=1000, noise_stream="per_input"),
        calibration=CalibrationConfig(radii=(0.0, 0.25, 0.5, 0.75, 1.0), bound="cdf", n_bins=15, n_boot=500),
        acce=ACCEConfig(steps=1000, grid=False),
        ace=ACEConfig(steps=50),
        # Brier-ACT left out to stay within 16 CPU-hours: each ACT model costs about half an hour, mostly certifying
        # 500 images with 10,000 draws (issue 35's ACCE-ACT effect needs SmoothAdv and ACCE-ACT only)
        act=ACTConfig(methods=("none", "smoothadv", "acce_act"), sigma=0.5, eps=0.5,
                      start="smoothadv", start_epochs=10, epochs=10, train_samples=5000, test_samples=500,
                      batch_size=256, num_noise=2, attack_steps=2, warmup_epochs=3, optimizer="sgd", momentum=0.9,
                      lr=1e-2, lr_grid=(1e-3, 1e-2), step_factor_grid=(1.0, 5.0), paired=True)),
    # the audit (``robustsuite audit``): the calibration-under-attack check alone on the user's model, 100 points,
    # the four β-ACE configurations with PGD-20; ε and norm from ace.norms[0] and ace.eps_linf / ace.eps_l2
    "audit": Config(ace=ACEConfig(norms=("linf",), steps=20), audit=AuditConfig(enabled=True, only=True)),
}


def preset(name: str) -> Config:
    """The named preset (``ValueError`` listing the names)."""
    return choose_preset(PRESETS, name)


def paper_values() -> dict[str, Any]:
    """The paper's reference values (Tables 1, 2, 7 and settings), ``paper.json`` beside the experiment."""
    return contract.paper_values("certcal.experiment")
