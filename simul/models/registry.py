"""Model names → directories, and what a model directory says about itself.

The one place that knows where shipped models live (``data/models/<name>/``) and how a name
given by a user becomes a directory (:func:`resolve`: a shipped name, a directory, or a
Hugging Face Hub repo id fetched once into the Hub's cache, :mod:`simul.models.hub`), which
adapter family reads it (:func:`family`), and the one reader of a model's ``simul.json``
(:func:`info`). Every module that turns a model name into a path or reads a model's metadata
calls this one; it imports nothing from the rest of simul but the corpus' builder version and
file checksum and the Hub's leaf module, so any module may import it.

:func:`model` resolves a name once into a :class:`Model`, the record that commands, sweeps,
papers and cards pass on instead of the name: its directory, family, task, pair, config,
parent, training schedule and checksum, each read from the model's files once. The functions
below that take a name take a :class:`Model` too.

A shipped model directory holds ``config.yaml`` and a ``.pth`` (an ESPnet2 model) or
``cascade.json`` (a cascade naming its ASR and MT models), ``simul.json`` (pair, ESPnet
task, how it was made), ``metrics.json`` and ``card.md``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

import yaml

from simul.models import hub

MODELS_DIR = Path(__file__).resolve().parents[2] / "data" / "models"
"""Where shipped models live: ``data/models/<name>/`` in the source tree."""

CASCADE_FILE = "cascade.json"
"""The file that makes a model directory a cascade: ``{"asr": NAME_OR_DIR, "mt": …}``."""

INFO_FILE = "simul.json"
"""A packed model's metadata: pair, task, corpus builder version, how it was made."""

TASKS = ("st", "asr", "mt")
"""ESPnet tasks simul packs and evaluates: speech translation, and a cascade's halves."""

FAMILIES = ("espnet", "transformers", "cascade")
"""Adapter families (:func:`family`): an ESPnet2 model (:mod:`simul.models.adapters.espnet_st`), a
transformers Speech2Text model (:mod:`simul.models.adapters.hf_s2t`), a cascade of two ESPnet2
models
(:mod:`simul.models.adapters.cascade`)."""


ASSEMBLED_ENV = "SIMUL_ASSEMBLED"
"""The environment variable that moves the cache of child models' complete files."""

ASSEMBLED_CACHE = Path("~/.cache/simul/assembled")
"""Where the complete model files of child models are cached (:mod:`simul.models.parent`)."""

S2T_FILES = ("config.json", "preprocessor_config.json", "sentencepiece.bpe.model", "vocab.json")
"""The files that make a transformers Speech2Text model, besides its weights."""

S2T_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
"""A transformers Speech2Text model's weights, the first one present read."""


class UnknownModel(ValueError):
    """A name that is neither a shipped model, a model directory nor a Hub repo simul can
    read (:class:`simul.models.hub.HubError` says why for a repo id)."""


class NotAssembled(ValueError):
    """A child model (:mod:`simul.models.parent`) whose complete model file is not in the
    cache yet: loading it (or :func:`simul.models.loader.assemble`) writes it."""


@dataclass(frozen=True)
class Model:
    """A model resolved once (:func:`model`): what commands, sweeps, papers and cards pass on
    instead of its name.

    ``name`` is the name it was given by (records of ``simul decode`` and messages quote it),
    ``label`` the one records of sweeps and summaries use (:func:`label`), ``directory``
    where its files are and ``family`` which adapter reads them (:data:`FAMILIES`). What the
    files say (``info``, ``pair``, ``task``, ``config``, ``parent``, ``training_schedule``,
    ``checksum``) is read on first use and kept: building a record reads no YAML and imports
    no torch. Two records of one directory under one label are equal; a record pickles
    with what it has read (sweeps send it to their workers)."""

    name: str = field(compare=False)
    label: str
    directory: Path
    family: str

    def __str__(self) -> str:
        return self.name

    @cached_property
    def _info(self) -> dict:
        return _read_info(self.directory)

    @property
    def info(self) -> Mapping:
        """Its ``simul.json`` (read-only; empty without one); ``ValueError`` naming the file
        when it is not a JSON object."""
        return MappingProxyType(self._info)

    @cached_property
    def parts(self) -> tuple[Model, Model] | None:
        """A cascade's ASR and MT models (:func:`cascade_parts`); None for another model."""
        if self.family != "cascade":
            return None
        return tuple(Model(str(part), label(part), part, family(part))  # found: no resolving
                     for part in _cascade_dirs(self.directory))

    @cached_property
    def pair(self) -> str | None:
        """The language pair it translates (:func:`pair`)."""
        if self.parts is not None:
            return self.parts[1].pair
        found = self._info.get("pair")
        if found is not None and not isinstance(found, str):
            raise ValueError(f"{self.directory / INFO_FILE}: field 'pair': expected e.g. "
                             f"'en-es', got {found!r}")
        if found is None:
            languages = hub.card_languages(self.directory)
            if len(languages) == 2 and all(re.fullmatch(r"[a-z]{2,3}", x) for x in languages):
                return "-".join(languages)
        return found

    @cached_property
    def task(self) -> str:
        """Its task (:data:`TASKS`, :func:`task`); a cascade's is ``st``: it translates
        speech."""
        if self.family == "cascade":
            return "st"
        found = self._info.get("task")
        if found is None and self.family == "transformers":
            return "asr" if hub.not_decodable(self.directory) else "st"
        if found is None:
            return config_task(self._config)
        if found not in TASKS:
            raise ValueError(f"{self.directory / INFO_FILE}: field 'task': {found!r} is not "
                             f"a task simul evaluates (one of {', '.join(TASKS)})")
        return found

    @cached_property
    def _config(self) -> dict:
        return _read_config(self.directory, self.name)

    @property
    def config(self) -> Mapping:
        """Its ESPnet ``config.yaml`` (read-only, :func:`config`), parsed once."""
        return MappingProxyType(self._config)

    @property
    def parent(self) -> str | None:
        """The model it ships only its changes against (``parent.model`` of its simul.json,
        :mod:`simul.models.parent`); None for a whole model."""
        entry = self._info.get("parent")
        return str(entry.get("model")) if isinstance(entry, dict) else None

    @property
    def training_schedule(self) -> Mapping:
        """How it was trained in simultaneous mode (``simultaneous_training`` of its
        simul.json: k_train, word_ms, detection, …); empty for an offline-trained model."""
        return MappingProxyType(self._info.get("simultaneous_training") or {})

    def files(self) -> list[Path]:
        """What its results depend on, the inputs of :attr:`checksum`: an ESPnet2 model's
        config.yaml and complete model file (a child model's assembled copy), a cascade's
        cascade.json and both models' files, a Speech2Text model's :data:`S2T_FILES` and
        weights. ``ValueError`` naming what is missing; :class:`NotAssembled` for a child
        model not loaded yet."""
        if self.parts is not None:
            out = [self.directory / CASCADE_FILE]
            for part in self.parts:
                out += _espnet_files(part.directory)
            return out
        if self.family == "transformers":
            return s2t_files(self.directory)
        return _espnet_files(self.directory)

    @cached_property
    def checksum(self) -> str:
        """SHA-256 of :meth:`files` (each file's SHA-256, in order): what sweeps key records
        and the record store by."""
        return files_checksum(self.files())


def model(name_or_dir: str | Path | Model) -> Model:
    """The :class:`Model` of a shipped name, a directory or a Hub repo id (:func:`resolve`,
    which raises :class:`UnknownModel`); a :class:`Model` as it is."""
    if isinstance(name_or_dir, Model):
        return name_or_dir
    directory = resolve(name_or_dir)
    return Model(str(name_or_dir), label(name_or_dir), directory, family(directory))


def files_checksum(paths: Iterable[Path]) -> str:
    """One checksum of several files: the SHA-256 of their SHA-256s, in order
    (:func:`simul.corpus.manifest.sha256_files`, a corpus split's too)."""
    from simul.corpus.manifest import sha256_files  # the corpus package imports numpy

    return sha256_files(paths)


def model_files(directory: str | Path) -> tuple[Path, Path]:
    """(config.yaml, model .pth) of an ESPnet2 model directory as it is stored: the files
    ``meta.yaml`` names in ESPnet's packed layout, else the shallowest config.yaml and the
    model file beside it (an averaged one first; never ``checkpoint.pth``). A child model's
    .pth holds only its own modules (:func:`assembled_path`). ``ValueError`` naming what is
    missing."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"{directory}: not a directory")
    packed = hub.packed_files(directory) or {}
    config, model_file = packed.get("st_train_config"), packed.get("st_model_file")
    if config is not None and model_file is not None:
        return config, model_file
    configs = sorted(directory.rglob("config.yaml"), key=lambda c: (len(c.parts), c))
    if not configs:
        raise ValueError(f"{directory}: no config.yaml")
    config = configs[0]
    pths = sorted(config.parent.glob("*.pth")) or sorted(directory.rglob("*.pth"))
    pths = [p for p in pths if p.name != "checkpoint.pth"]
    if not pths:
        raise ValueError(f"{config.parent}: no model file (*.pth) beside config.yaml")
    ave = [p for p in pths if "ave" in p.name]
    return config, (ave or pths)[0]


def assembled_dir() -> Path:
    """The cache of child models' complete files (``$SIMUL_ASSEMBLED``, else
    :data:`ASSEMBLED_CACHE`)."""
    return Path(os.environ.get(ASSEMBLED_ENV) or ASSEMBLED_CACHE).expanduser()


def assembled_path(directory: str | Path, model_file: str | Path,
                   parent_sha256: str | None = None) -> Path | None:
    """Where the complete model file of a child model is cached:
    ``<cache>/<own>-<parent>/<model>/model.pth``, by the first 16 hex digits of the SHA-256
    of ``model_file`` and of the parent's (``parent_sha256``, else the one its simul.json
    pins; given, the model is taken to be a child); None for a whole model."""
    from simul.corpus.manifest import sha256

    found = parent_sha256
    if found is None:
        entry = _read_info(directory).get("parent")
        if entry is None:
            return None
        found = str(entry.get("sha256", ""))
    own = sha256(Path(model_file))
    # named like a shipped model's file, so that a run started from it names its source as
    # from any other (simul.json initialized_from)
    return assembled_dir() / f"{own[:16]}-{found[:16]}" / Path(directory).name / "model.pth"


def _espnet_files(directory: Path) -> list[Path]:
    """An ESPnet2 model's config.yaml and complete model file (a child's cached copy)."""
    config, model_file = model_files(directory)
    whole = assembled_path(directory, model_file)
    if whole is None:
        return [config, model_file]
    if not whole.is_file():
        raise NotAssembled(f"{directory}: its complete model file ({whole}) is assembled from "
                           "its parent's when it first loads")
    return [config, whole]


def s2t_files(directory: str | Path) -> list[Path]:
    """The files that make a transformers Speech2Text model: :data:`S2T_FILES`, then the
    first of its weights. ``ValueError`` naming what is missing."""
    directory = Path(directory)
    missing = [name for name in S2T_FILES if not (directory / name).is_file()]
    weights = [directory / w for w in S2T_WEIGHTS if (directory / w).is_file()]
    if not weights:
        missing.append(" or ".join(S2T_WEIGHTS))
    if missing:
        raise ValueError(f"{directory}: a transformers Speech2Text model without "
                         f"{', '.join(missing)}")
    return [directory / name for name in S2T_FILES] + weights[:1]


ROUND_ENV = "SIMUL_ROUND"


def start_dir(model: str) -> Path:
    """Where a recipe's start model named without a git revision is read (``simul train``'s
    ``simul.init``, ``tokens.from``, ``normalize_from``): ``$SIMUL_ROUND/MODEL`` when the
    environment variable :data:`ROUND_ENV` names a folder that holds it, else
    ``data/models/MODEL``. A retraining round packs its models into such a folder
    (``data/round``, ``tools/retrain.sh``) and trains each child from its retrained parent
    there, while ``data/models`` keeps serving the family it replaces."""
    root = os.environ.get(ROUND_ENV)
    if root and (Path(root) / model / "config.yaml").is_file():
        return Path(root) / model
    return MODELS_DIR / model


def retrained(directory: str | Path) -> bool:
    """Whether the model in ``directory`` comes from the retraining round (``tools/retrain.sh``,
    ``tools/train_grid.sh``): its ``simul.json`` records the augmentation it was trained with,
    or, for a model fine-tuned on a frozen retrained parent without augmenting (H20's
    meta-learning), its parent is retrained and is the file it was made from. A round's steps
    are done when this holds of the model in ``data/models``, where its family moves."""
    from simul.corpus.manifest import sha256  # the corpus package imports numpy

    directory = Path(directory)
    data = _read_info(directory)
    if "augmentation" in data:
        return True
    entry = data.get("parent")
    if not isinstance(entry, dict) or not entry.get("model"):
        return False
    parent_dir = directory.parent / str(entry["model"])
    return ((parent_dir / "model.pth").is_file() and retrained(parent_dir)
            and sha256(parent_dir / "model.pth") == entry.get("sha256"))


def shipped() -> list[str]:
    """Shipped models and cascades (``data/models/NAME`` with config.yaml or cascade.json)."""
    return sorted({p.parent.name for pattern in ("*/config.yaml", f"*/{CASCADE_FILE}")
                   for p in MODELS_DIR.glob(pattern)})


def resolve(name_or_dir: str | Path | Model) -> Path:
    """The directory of a model: a shipped model's name first (``data/models/NAME``), else a
    directory (``~`` expanded), else a Hugging Face Hub repo id (``owner/name``: its snapshot
    in the Hub's cache, fetched once, :func:`simul.models.hub.fetch`); a :class:`Model`'s
    own. Raises :class:`UnknownModel` naming the closest shipped names (a typo's fix) and
    where to list them all, or for a repo id what kept it from being read."""
    if isinstance(name_or_dir, Model):
        return name_or_dir.directory
    name = str(name_or_dir)
    if name in shipped():
        return MODELS_DIR / name
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    if _hub_id(name):
        try:
            return hub.fetch(name)
        except hub.HubError as e:
            raise UnknownModel(str(e)) from None
    raise UnknownModel(f"no model {name!r}: not a shipped model, a directory nor a Hugging "
                       f"Face Hub repo id (owner/name){_did_you_mean(name)} (`simul models` "
                       "lists the shipped models)")


def _did_you_mean(name: str) -> str:
    """'; did you mean A, B?' with the shipped names closest to ``name`` (difflib), or ''."""
    import difflib

    close = difflib.get_close_matches(name, shipped(), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _hub_id(name: str) -> bool:
    """Whether ``name`` is read as a Hub repo id: ``owner/name`` where ``owner`` is not a
    directory here (``runs/mine`` is a mistyped path, not a repo to look up)."""
    return hub.is_repo_id(name) and not Path(name.split("/")[0]).expanduser().is_dir()


def label(name_or_dir: str | Path | Model) -> str:
    """A model's name in records and sweep folders: a shipped name as it is, a Hub repo id
    with ``--`` for its ``/`` (the Hub cache's own spelling), a directory by its name."""
    if isinstance(name_or_dir, Model):
        return name_or_dir.label
    name = str(name_or_dir)
    if name in shipped():
        return name
    if not Path(name).expanduser().is_dir() and _hub_id(name):
        return name.replace("/", "--")
    return Path(name).expanduser().name


def family(directory: str | Path) -> str:
    """Which adapter reads a model directory (one of :data:`FAMILIES`): ``cascade`` with a
    ``cascade.json``, ``transformers`` with a Speech2Text ``config.json``, else ``espnet``."""
    if is_cascade(directory):
        return "cascade"
    if hub.is_transformers_s2t(directory):
        return "transformers"
    return "espnet"


def is_cascade(directory: str | Path) -> bool:
    """Whether a model directory is a cascade (it holds ``cascade.json``)."""
    return (Path(directory) / CASCADE_FILE).is_file()


def cascade_parts(name_or_dir: str | Path | Model) -> tuple[Path, Path]:
    """The ASR and MT model directories a cascade names: each a shipped name, a directory
    beside ``cascade.json`` or a path. Raises ``ValueError`` naming the field."""
    if isinstance(name_or_dir, Model) and name_or_dir.parts is not None:
        return name_or_dir.parts[0].directory, name_or_dir.parts[1].directory
    return _cascade_dirs(resolve(name_or_dir))


def _cascade_dirs(directory: Path) -> tuple[Path, Path]:
    """:func:`cascade_parts` of a cascade's directory."""
    path = directory / CASCADE_FILE
    try:
        spec = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not readable JSON ({e})") from e
    out = []
    for key in ("asr", "mt"):
        name = spec.get(key) if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"{path}: field {key!r}: a shipped model name or a directory")
        candidates = [MODELS_DIR / name, directory / name, Path(name).expanduser()]
        found = next((c for c in candidates if c.is_dir()), None)
        if found is None:
            raise ValueError(f"{path}: field {key!r}: no model {name!r} (neither shipped nor "
                             "a directory)")
        out.append(found)
    return out[0], out[1]


def info(name_or_dir: str | Path | Model) -> dict:
    """A model's ``simul.json`` as a dict; empty for a model directory without one. Raises
    ``ValueError`` naming the file when it is not a JSON object."""
    if isinstance(name_or_dir, Model):
        return dict(name_or_dir.info)
    return _read_info(resolve(name_or_dir))


def _read_info(directory: str | Path) -> dict:
    """The ``simul.json`` in ``directory`` (:func:`info`)."""
    path = Path(directory) / INFO_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from e
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def pair(name_or_dir: str | Path | Model) -> str | None:
    """The language pair a model translates: the ``pair`` of its simul.json (every shipped
    or packed model has one; a model fine-tuned from a parent has its own), a cascade's MT
    model's (its cascade.json names the models, its directory holds no simul.json), a
    published model's card listing two languages (``language: [en, de]`` gives ``en-de``);
    None for a model directory that records none of these."""
    return model(name_or_dir).pair


def pair_source(name_or_dir: str | Path | Model) -> str:
    """Where :func:`pair` found a model's pair, in words (for messages)."""
    found = model(name_or_dir)
    if found.parts is not None:
        return f"its MT model {found.parts[1].directory.name}'s {INFO_FILE}"
    return f"its {INFO_FILE}"


def pair_for(name_or_dir: str | Path | Model, asked: str | None = None, *,
             option: str = "--pair") -> str:
    """The pair to read a corpus in for a model: the model's own (:func:`pair`). ``asked``
    (``option``, e.g. ``--pair`` or a sweep spec's field) must agree with it: references of
    another language would score the translation against text it never meant to write. A
    model that does not record its pair needs ``asked``. Raises ``ValueError`` in one line
    naming the option."""
    found = model(name_or_dir)
    own = found.pair
    if own is not None and asked and asked != own:
        raise ValueError(f"{option} {asked}: {found.name} translates {own} "
                         f"({pair_source(found)}); leave {option} out to read the "
                         f"{own} split")
    if own is None and not asked:
        raise ValueError(f"{found.name}: its language pair is not known (no 'pair' in "
                         f"{found.directory / INFO_FILE}): give {option} SRC-TGT")
    return own or asked


def config_task(conf: dict) -> str:
    """The ESPnet task of a model config, from the fields each task's config has: an ASR
    config has no ``src_token_list``, an MT config embeds its source (``frontend: embed``)."""
    if "src_token_list" not in conf:
        return "asr"
    return "mt" if conf.get("frontend") == "embed" else "st"


def read_yaml(path: str | Path) -> dict:
    """A YAML mapping from ``path`` (a model's config.yaml); ``ValueError`` in one line naming
    the file, and for a syntax error the line and column YAML stopped at."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        def at(mark) -> str:
            return f"line {mark.line + 1}, column {mark.column + 1}"

        mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
        where = f"{at(mark)}: " if mark is not None else ""
        context, opened = getattr(e, "context", None), getattr(e, "context_mark", None)
        begun = f"; {context} from {at(opened)}" if context and opened is not None else ""
        raise ValueError(f"{path}: not valid YAML ({where}{problem or str(e).splitlines()[0]}"
                         f"{begun})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot be read ({e})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of field: value, got "
                         f"{type(data).__name__}")
    return data


def config(name_or_dir: str | Path | Model) -> dict:
    """A model's ESPnet ``config.yaml``: the one ``meta.yaml`` names in ESPnet's packed
    layout, else the shallowest one in its directory."""
    if isinstance(name_or_dir, Model):
        return dict(name_or_dir.config)
    return _read_config(resolve(name_or_dir), name_or_dir)


def _read_config(directory: Path, name_or_dir: str | Path) -> dict:
    """:func:`config` of the model ``name_or_dir`` in ``directory``."""
    packed = hub.packed_files(directory) or {}
    configs = [f for k, f in packed.items()
               if k.endswith("_train_config") and k != "lm_train_config"]
    configs = configs or sorted(directory.rglob("config.yaml"), key=lambda c: (len(c.parts), c))
    if not configs:
        raise ValueError(f"{name_or_dir}: no config.yaml in {directory}")
    return read_yaml(configs[0])


def task(name_or_dir: str | Path | Model) -> str:
    """The task of a packed model: the ``task`` of its simul.json, or, for a model packed
    before simul.json recorded it (every one of them ST), what its config says; a
    transformers model's from its card, a cascade's ``st``."""
    return model(name_or_dir).task


def shipped_translators() -> list[str]:
    """The shipped end-to-end speech-translation models: :func:`shipped` less the cascades
    and their halves (ASR and text MT models), which the speech-translation policies cannot
    run on."""
    return [name for name in shipped()
            if not is_cascade(MODELS_DIR / name) and task(name) == "st"]


def shipped_cascades() -> list[str]:
    """The shipped cascades (``data/models/NAME/cascade.json``)."""
    return [name for name in shipped() if is_cascade(MODELS_DIR / name)]


def corpus_version(name_or_dir: str | Path | Model) -> int | None:
    """Builder version of the mini corpus a model was trained on (simul.json); a cascade's
    when both its models were trained on the same one, else None."""
    found = model(name_or_dir)
    if found.parts is not None:
        versions = {corpus_version(part) for part in found.parts}
        return versions.pop() if len(versions) == 1 else None
    return found.info.get("corpus_builder_version")


def stale(name_or_dir: str | Path | Model) -> bool:
    """Whether a model was trained on older files of its pair than the mini corpus simul builds
    now (a cascade: either of its models): its numbers on today's corpus say how much harder
    the corpus became, not what the papers' policies do with a model that knows its data.
    Staleness is per pair (:data:`simul.corpus.built.PAIR_VERSIONS`): adding a pair
    leaves the models of the others current."""
    from simul.corpus.built import pair_version  # the corpus package imports numpy

    found = model(name_or_dir)
    if found.parts is not None:
        return any(stale(part) for part in found.parts)
    return corpus_version(found) != pair_version(found.pair or "en-es")


def metrics(name_or_dir: str | Path | Model) -> dict:
    """A model's measured offline quality (``metrics.json``); empty before evaluation."""
    path = resolve(name_or_dir) / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}
