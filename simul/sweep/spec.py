"""Sweep specs: what a sweep runs, read from YAML or a dict and checked before any work.

A :class:`Spec` names the models, the pair, the splits, the corpus, the output directory and
the policy settings (:func:`expand` turns a spec's ``policies`` list into :class:`Setting`
objects, each checked by building its policy). :func:`resolve_model` turns a model name or
directory into the :class:`ModelRef` that records, journals and workers use. Every fault of
a spec is a :class:`SweepError` naming the field. The spec format is described in
``docs/reference/sweeps.md``.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simul.corpus import DEFAULT_ROOT
from simul.models import device as devices
from simul.models import registry as models
from simul.policies import lookup, make

SPEC_FIELDS = ("name", "models", "pair", "splits", "corpus", "max_utterances",
               "skip_utterances", "output",
               "policies", "share", "workers", "scheduler", "store", "device", "lockstep")
POLICY_FIELDS = ("policy", "grid", "settings", "fixed")


class SweepError(ValueError):
    """A bad spec, or an output directory that holds another sweep."""


@dataclass(frozen=True)
class Setting:
    """One policy with the parameters the spec gave it (the rest keep their defaults)."""

    policy: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def slug(self) -> str:
        """A file name: ``k=100_s=10_n=1`` (``default`` without parameters)."""
        text = "_".join(f"{k}={v}" for k, v in self.params) or "default"
        return re.sub(r"[^A-Za-z0-9=._+-]", "-", text)

    def make(self):
        return make(self.policy, dict(self.params))


@dataclass
class Spec:
    models: list[str]
    pair: str
    splits: list[str]
    settings: list[Setting]
    output: Path
    corpus: Path = DEFAULT_ROOT
    max_utterances: int | None = None
    skip_utterances: int = 0  # segments of each split left out before the first decoded one
    share: bool = True
    workers: int | None = None
    scheduler: Any = None  # "tcp://host:port" or a distributed.Client
    name: str = ""
    store: bool = True  # reuse and fill the record store (simul.sweep.store)
    device: str = "cpu"  # where models decode: cpu, cuda, cuda:N (simul.models.device)
    lockstep: int = 1  # utterances per task, decoded in lockstep (simul.sweep.lockstep)

    @classmethod
    def load(cls, spec: Spec | dict | str | Path) -> Spec:
        """A spec from a YAML file, a dict (as in the file) or a Spec."""
        if isinstance(spec, Spec):
            return spec
        if isinstance(spec, dict):
            return cls.from_dict(spec, "spec")
        path = Path(spec)
        if not path.is_file():
            raise SweepError(f"{path}: no such spec file")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            raise SweepError(f"{path}: not valid YAML ({e})") from e
        return cls.from_dict(data, str(path), base=path.parent)

    @classmethod
    def from_dict(cls, data: Any, where: str = "spec", base: Path | None = None) -> Spec:
        if not isinstance(data, dict):
            raise SweepError(f"{where}: a spec is a mapping with fields {', '.join(SPEC_FIELDS)}")
        unknown = sorted(set(data) - set(SPEC_FIELDS))
        if unknown:
            raise SweepError(f"{where}: unknown field(s) {unknown}; known: {list(SPEC_FIELDS)}")
        for key in ("models", "output", "policies"):
            if key not in data:
                raise SweepError(f"{where}: field '{key}' is missing")

        def strings(key: str) -> list[str]:
            value = data.get(key)
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, str) and v for v in value):
                raise SweepError(f"{where}: field '{key}': a name or a non-empty list of names")
            return value

        models, splits = strings("models"), strings("splits") if "splits" in data else [
            "tst-COMMON"]
        pair = data.get("pair")
        if pair is not None and (not isinstance(pair, str)
                                 or not re.fullmatch(r"[a-z]+-[a-z]+", pair)):
            raise SweepError(f"{where}: field 'pair': expected e.g. 'en-es', got {pair!r}")
        pair = models_pair(models, pair, where)
        limit = data.get("max_utterances")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or limit < 1):
            raise SweepError(f"{where}: field 'max_utterances': a positive integer or null, "
                             f"got {limit!r}")
        skip = data.get("skip_utterances", 0)
        if not isinstance(skip, int) or isinstance(skip, bool) or skip < 0:
            raise SweepError(f"{where}: field 'skip_utterances': a whole number ≥ 0 (segments "
                             f"left out at the start of each split), got {skip!r}")
        workers = data.get("workers")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise SweepError(f"{where}: field 'workers': a positive integer, got {workers!r}")
        lockstep = data.get("lockstep", 1)
        if not isinstance(lockstep, int) or isinstance(lockstep, bool) or lockstep < 1:
            raise SweepError(f"{where}: field 'lockstep': a positive integer (utterances "
                             f"decoded together; 1: each alone), got {lockstep!r}")
        for key in ("share", "store"):
            if not isinstance(data.get(key, True), bool):
                raise SweepError(f"{where}: field '{key}': true or false")
        device = devices.CPU if data.get("device") is None else data["device"]
        if not isinstance(device, str):
            raise SweepError(f"{where}: field 'device': cpu, cuda or cuda:N, got {device!r}")
        try:  # whether torch reaches it is checked when the sweep runs (--device overrides)
            device = devices.parse(device, f"{where}: field 'device': {device}")
        except ValueError as e:
            raise SweepError(str(e)) from None

        def path(value: Any, key: str) -> Path:
            if not isinstance(value, str | Path):
                raise SweepError(f"{where}: field '{key}': a path, got {value!r}")
            p = Path(value).expanduser()
            return p if p.is_absolute() or base is None else base / p

        return cls(
            models=models, pair=pair, splits=splits,
            settings=expand(data["policies"], f"{where}: field 'policies'"),
            output=path(data["output"], "output"),
            corpus=path(data["corpus"], "corpus") if data.get("corpus") else DEFAULT_ROOT,
            max_utterances=limit, skip_utterances=skip, share=data.get("share", True),
            workers=workers,
            scheduler=data.get("scheduler"), name=str(data.get("name") or ""),
            store=data.get("store", True), device=device, lockstep=lockstep,
        )


def models_pair(names: list[str], pair: str | None, where: str) -> str:
    """The pair a sweep reads: the one its models translate (each one's own,
    :func:`simul.models.registry.pair`), which the spec's ``pair`` must agree with and which
    it must give when no model records one. A sweep scores every model against one pair's
    references: models of different pairs are refused. A name that is no model is left to
    :func:`resolve_model`."""
    found: dict[str, list[str]] = {}
    silent = []  # models that do not record their pair
    for name in names:
        try:
            own = models.pair(name)
        except models.UnknownModel as e:
            if pair is None:  # its pair cannot be known
                raise SweepError(f"{where}: field 'models': {e}") from None
            continue
        except ValueError as e:
            raise SweepError(f"{where}: field 'models': {e}") from None
        if own is None:
            silent.append(name)
        else:
            found.setdefault(own, []).append(name)
    if pair is not None:
        other = next((p for p in found if p != pair), None)
        if other is not None:
            name = found[other][0]
            raise SweepError(f"{where}: field 'pair': {pair}, but {name} translates {other} "
                             f"({models.pair_source(name)}): its references would be another "
                             f"language's; drop the model or give pair {other}")
        return pair
    if len(found) > 1:
        pairs = "; ".join(f"{p}: {', '.join(ms)}" for p, ms in sorted(found.items()))
        raise SweepError(f"{where}: field 'models': they translate different pairs ({pairs}); "
                         "a sweep reads one pair: run one sweep per pair")
    if silent:
        raise SweepError(f"{where}: field 'pair' is missing and {silent[0]} does not record "
                         "the pair it translates: give pair (e.g. en-es)")
    return next(iter(found))


def expand(policies: Any, where: str) -> list[Setting]:
    """The settings a ``policies`` list stands for, each checked by building the policy."""
    if not isinstance(policies, list) or not policies:
        raise SweepError(f"{where}: a non-empty list of {{policy: NAME, grid: ..., ...}}")
    out: list[Setting] = []
    seen: dict[tuple, str] = {}
    for n, entry in enumerate(policies):
        here = f"{where}[{n}]"
        if not isinstance(entry, dict) or "policy" not in entry:
            raise SweepError(f"{here}: a mapping with a 'policy' field")
        unknown = sorted(set(entry) - set(POLICY_FIELDS))
        if unknown:
            raise SweepError(f"{here}: unknown field(s) {unknown}; known: {list(POLICY_FIELDS)}")
        name = entry["policy"]
        try:
            lookup(name)
        except ValueError as e:
            raise SweepError(f"{here}.policy: {e}") from None
        grid, fixed = entry.get("grid") or {}, entry.get("fixed") or {}
        listed = entry.get("settings")
        if not isinstance(grid, dict) or not all(
                isinstance(v, list) and v for v in grid.values()):
            raise SweepError(f"{here}.grid: a mapping of parameter → non-empty list of values")
        if not isinstance(fixed, dict):
            raise SweepError(f"{here}.fixed: a mapping of parameter → value")
        if listed is not None and (not isinstance(listed, list) or not all(
                isinstance(s, dict) for s in listed)):
            raise SweepError(f"{here}.settings: a list of mappings of parameter → value")
        combos = [dict(zip(grid, values, strict=True))
                  for values in itertools.product(*grid.values())] if grid else []
        combos += listed or []
        for combo in combos or [{}]:
            params = {**fixed, **combo}
            setting = Setting(name, tuple(params.items()))
            try:
                policy = setting.make()
            except (ValueError, TypeError) as e:
                raise SweepError(f"{here}: {e}") from e
            full = (name, json.dumps(policy.settings(), sort_keys=True, default=str))
            if full in seen:
                raise SweepError(f"{here}: setting {setting.slug} repeats {seen[full]}")
            seen[full] = f"{here} {setting.slug}"
            out.append(setting)
    return out


ModelRef = models.Model
"""A model as workers find it (:class:`simul.models.registry.Model`): its label for
records, its directory, its checksum (SHA-256 of config.yaml and the model file; a cascade's
of cascade.json and both models' files)."""


def resolve_model(ref: str | models.Model) -> models.Model:
    """A shipped model's name, a model directory (an ESPnet2 or transformers model or a
    cascade) or a Hub repo id as the :class:`~simul.models.registry.Model` a sweep's records,
    journal and workers use: its directory absolute (workers may start elsewhere), a child
    model's complete file assembled and its checksum read, once. :class:`SweepError` when
    it is no model, or a cascade whose models are missing."""
    from dataclasses import replace

    from simul.models import loader

    try:
        model = models.model(ref)
    except models.UnknownModel as e:
        raise SweepError(str(e)) from None
    model = replace(model, directory=model.directory.resolve())
    try:
        loader.assemble(model)  # checks a child's parent, as its workers will load it
        model.checksum  # noqa: B018 (read once here: workers receive it with the record)
    except ValueError as e:
        if model.family != "cascade":
            raise
        raise SweepError(str(e)) from None
    return model
