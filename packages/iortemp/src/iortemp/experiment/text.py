"""The text part: the served systems under every attack and adversary temperature (Tables 1-3, 11, 13),
DDi-AT with Table 4's transfer and Table 5's ablation, and the Fig. 1 sweep."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import JSON, TORCH, Split, cached

from .._numerics import scaled_log_softmax64
from ..ablation import ddi_normalization_ablation
from ..attacks import text_attack
from ..hf import CachedTextClassifier, HFTextClassifier
from ..illusion import illusion_table
from ..ior import temperature_sweep
from ..metrics import calibration_error
from ..protocol import evaluate_attack
from ..temperature import logits64, served_systems
from ..training import TrainingConfig, train_classifier
from ._store import Evaluations, fingerprint, key
from .config import Config, DDiATConfig

__all__ = ["TextOutcome", "run_text"]


@dataclass
class TextOutcome:
    """Everything the text tables, metrics and records are made of (JSON-able rows and dicts)."""

    systems: dict[str, float | None]  # system -> design temperature (None: base, ddi_at)
    attacks: list[str]
    opt_attack: str
    sweep_attack: str | None
    rows: list[dict]
    confidence: dict[str, dict]  # system -> accuracy, mean confidence, ECE, MCE, per-text correctness / confidence
    seeds: list[int]
    n_test: int
    n_val: int
    transfer: dict | None = None
    ddi_info: dict | None = None
    ablation: dict | None = None
    sweep: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _training_config(d: DDiATConfig, max_length: int, normalization: str | None = None) -> TrainingConfig:
    return TrainingConfig(lr=d.lr, epochs=d.epochs, batch_size=d.batch_size, max_length=int(max_length), ddi_m=d.m,
                          ddi_k=d.k, ddi_normalization=normalization or d.normalization, adv_scale=d.adv_scale)


def _max_length(base: Any) -> int:
    return int(getattr(base, "max_length", 128))


def _ddi_at(base, train: Split, cfg: Config, fp: str, store, progress: bool):
    """The ddi-at system: ``base``'s transformers model fine-tuned with DDi-AT (checkpointed weights)."""
    n = min(cfg.ddi_at.train_size, len(train))
    tcfg = _training_config(cfg.ddi_at, _max_length(base))
    k = key("ddi_at", fp, cfg.ddi_at, n, cfg.seed)
    model = copy.deepcopy(base.model)
    trained: dict = {}

    def fine_tune() -> dict:
        res = train_classifier(model, base.tokenizer, list(train.x[:n]), _labels(train)[:n], method="ddi-at",
                               config=tcfg, seed=cfg.seed, progress=progress)
        trained.update(res.to_dict())
        return {name: v.detach().cpu() for name, v in model.state_dict().items()}

    model.load_state_dict(cached(store, k + "-weights", fine_tune, TORCH))
    model.eval()
    info = cached(store, k + "-info", lambda: trained or {"note": "weights from an earlier run"}, JSON)
    return HFTextClassifier(model, base.tokenizer, max_length=_max_length(base)), info, n


def _labels(split: Split) -> np.ndarray:
    y = split.y
    return np.asarray(y.detach().cpu() if hasattr(y, "detach") else y, dtype=np.int64)


def _attack_identity(name: str, cfg: Config) -> str:
    a = cfg.text.attacks
    extra = {"wordswap": a.wordswap_neighbours, "pwws": a.wordnet, "textfooler": a.embedding, "bae": a.masked_lm}
    return f"{name}:{extra.get(name)}"


def run_text(base, data, cfg: Config, store, progress: bool) -> TextOutcome:
    a = cfg.text.attacks
    n_te, n_va = min(cfg.text.n_test, len(data.test)), min(cfg.text.n_val, len(data.val))
    xte, yte = list(data.test.x[:n_te]), _labels(data.test)[:n_te]
    xva, yva = list(data.val.x[:n_va]), _labels(data.val)[:n_va]
    seeds = [cfg.seed + s for s in a.seeds]
    notes: list[str] = []
    # the model on these data: its logits (from the model itself, not the cache, whose fill order is part of
    # what the served systems compute) and the texts identify every checkpoint
    z_test = np.concatenate([logits64(base, [x]) for x in xte])  # each text alone, as the attacks first query it
    fp = fingerprint(np.concatenate([logits64(base, xva), z_test]), xva, yva, xte, yte)

    attacks: dict[str, Any] = {}
    for name in a.names:
        try:
            attacks[name] = text_attack(name, model=base, wordnet=a.wordnet, embedding=a.embedding,
                                        masked_lm=a.masked_lm, neighbours=a.wordswap_neighbours)
        except (FileNotFoundError, ImportError) as err:  # a resource missing offline: said, not fatal
            notes.append(f"{name} not run: {err}")
    if not attacks:
        raise ValueError(f"none of the attacks {list(a.names)} can run here: {'; '.join(notes)}")
    opt_attack = cfg.systems.search.attack if cfg.systems.search.attack in attacks else next(iter(attacks))
    if opt_attack != cfg.systems.search.attack:
        notes.append(f"the Brent search uses {opt_attack} ({cfg.systems.search.attack} could not run)")
    ids = {id(atk): _attack_identity(name, cfg) for name, atk in attacks.items()}
    evals = Evaluations(store, [fp, cfg.systems.calibration], ids)

    served = CachedTextClassifier(base) if a.cache_logits else base
    dt = cfg.systems.design_temperatures
    systems = served_systems(served, design_temperatures={"down_conf": dt.down_conf, "up_conf": dt.up_conf})
    temps: dict[str, float | None] = {"base": None, "down_conf": dt.down_conf, "up_conf": dt.up_conf}
    ddi_info = None
    ddi_key: Any = None
    if cfg.ddi_at.enabled:
        systems["ddi_at"], ddi_info, n_train = _ddi_at(base, data.train, cfg, fp, store, progress)
        temps["ddi_at"] = None
        ddi_key = [to_dict(cfg.ddi_at), n_train, cfg.seed]

    s = cfg.systems.search
    search = {"xatol": s.xatol, "flat_patience": s.flat_patience, "stall_patience": s.stall_patience,
              "log10_bounds": tuple(s.log10_bounds)}
    rows: list[dict] = []
    for name, model in systems.items():  # one checkpointed table per served system, as the paper's rows
        def table(name=name, model=model) -> list[dict]:
            return illusion_table({name: model}, attacks, xte, yte, val_inputs=xva, val_labels=yva,
                                  opt_attack=opt_attack, calibration=cfg.systems.calibration,
                                  modes=cfg.systems.modes, max_evaluations=s.max_evaluations, search=search,
                                  seeds=seeds, keep_samples=True, progress=progress,
                                  evaluate=evals.evaluator(name if name != "ddi_at" else f"ddi_at:{ddi_key}"),
                                  ).to_dict()["rows"]

        rows += cached(store, key("table", fp, name, temps.get(name), ddi_key, cfg.systems, list(attacks),
                                  [ids[id(v)] for v in attacks.values()], seeds), table, JSON)

    confidence = {}
    for name, model in systems.items():  # Tables 1 and 11 on the clean test texts, float64
        # from the model itself (the served systems' logits64 is base / T_d), not from the logits cache, whose
        # content depends on the order texts were first queried in (a resumed run queries fewer)
        z = logits64(model, xte) if temps.get(name) is None and name != "base" else z_test / (temps[name] or 1.0)
        ce = calibration_error(z, yte)
        conf = np.exp(scaled_log_softmax64(z).max(axis=1))
        confidence[name] = {"accuracy": ce.accuracy, "mean_confidence": ce.mean_confidence, "ece": ce.ece,
                            "mce": ce.mce, "correct": (z.argmax(1) == yte).tolist(), "confidence": conf.tolist()}

    out = TextOutcome(temps, list(attacks), opt_attack, None, rows, confidence, seeds, n_te, n_va,
                      ddi_info=ddi_info, notes=notes)
    if "ddi_at" in systems:  # Table 4: adversarial examples found on base, scored on ddi-at
        def transfer() -> dict:
            return {n: evaluate_attack(systems["ddi_at"], xte, yte, atk, source_model=base, seed=cfg.seed,
                                       progress=progress).to_dict() for n, atk in attacks.items()}

        out.transfer = cached(store, key("transfer", fp, ddi_key, list(ids.values())), transfer, JSON)
    if cfg.ablation.enabled:
        n = min(cfg.ddi_at.train_size, len(data.train))
        abl_seeds = [cfg.seed + v for v in cfg.ablation.seeds]
        tcfg = _training_config(cfg.ddi_at, _max_length(base))
        out.ablation = cached(store, key("ablation", fp, cfg.ddi_at, cfg.ablation, n, abl_seeds), lambda: (
            ddi_normalization_ablation(base.model, base.tokenizer, list(data.train.x[:n]), _labels(data.train)[:n],
                                       xte, yte, settings=cfg.ablation.settings, seeds=abl_seeds, config=tcfg,
                                       max_length=_max_length(base), progress=progress).to_dict()), JSON)
    if cfg.sweep.enabled:
        name = cfg.sweep.attack if cfg.sweep.attack in attacks else opt_attack
        out.sweep_attack = name
        ev = evals.evaluator("base")
        out.sweep = cached(store, key("sweep", fp, ids[id(attacks[name])], cfg.sweep.temperatures, cfg.seed), lambda: [
            p.to_dict() for p in temperature_sweep(served, xte, yte, attacks[name], cfg.sweep.temperatures,
                                                   seed=cfg.seed, evaluate=ev)], JSON)
    return out
