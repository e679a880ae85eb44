"""The certified-calibration experiment of paper 004 (Emde et al., ICLR 2025) as one call.

    from certcal import experiment

    cfg = experiment.preset("demo")                       # or "paper", "paper-cpu"; a frozen, typed Config
    cfg = robustsuite_common.config.override(cfg, {"certify.n": 1000, "act.enabled": False})
    result = experiment.run(experiment.Models(base=model, noise={0.25: noise_model}),
                            experiment.Data(train=train_split, test=test_split), cfg, store=DirStore("ckpt"))
    result.tables["certified"], result.metrics["sigma_0p25_r_0p25_cce_exact"], result.records["ace"]

``Config`` groups (as the paper groups them): ``smoothing`` (σ), ``noise_training`` (Cohen et al.'s noise
fine-tuning for a σ without a model), ``certify`` (n0, n, α, batch, noise stream, shards), ``calibration``
(radii, certificate, bins, bootstrap), ``acce`` (the ADMM solver), ``ace`` (β-ACE attacks), ``act`` (adversarial
calibration training and its selection rule). ``run`` certifies the test inputs per σ, reports CA / CBS / CCE
across radii (and on one fixed input set), compares the Standard and CDF certificates, attacks the base model
with every β-ACE configuration, measures the base model's calibration (debiased ECE and a calibration test), and
runs the ACT comparison with the paper's selection rule, stating what the draw budget can decide. Each finished
piece (fine-tuned weights, certificates, attack outcomes, ACT models) is checkpointed in ``store`` under a key
carrying a hash of exactly what it depends on, so an interrupted run resumes; with ``store=None`` nothing is
written. ``shard_count`` / ``run_shard`` split the certification into independent tasks.
"""

from __future__ import annotations

from robustsuite_common.experiment import Split

from .config import (
    EXECUTION_FIELDS,
    PRESETS,
    ACCEConfig,
    ACEConfig,
    ACTConfig,
    AuditConfig,
    CalibrationConfig,
    CertifyConfig,
    Config,
    NoiseTrainingConfig,
    SmoothingConfig,
    paper_values,
    preset,
)
from .demo import digits
from .figures import figures
from .inputs import Data, Models
from .result import TITLE, Result
from .run import run, run_shard, shard_count

__all__ = ["ACCEConfig", "ACEConfig", "ACTConfig", "AuditConfig", "CalibrationConfig", "CertifyConfig", "Config", "Data",
           "EXECUTION_FIELDS", "Models", "digits", "NoiseTrainingConfig", "PRESETS", "Result", "SmoothingConfig", "Split",
           "TITLE", "figures", "paper_values", "preset", "run", "run_shard", "shard_count"]

