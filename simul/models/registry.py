"""Model names → directories, and what a model directory says about itself.

The one place that knows where shipped models live (``data/models/<name>/``) and how a name
given by a user becomes a directory (:func:`resolve`: a shipped name, a directory, or a
Hugging Face Hub repo id fetched once into the Hub's cache, :mod:`simul.models.hub`), which
adapter family reads it (:func:`family`), and the one reader of a model's ``simul.json``
(:func:`info`). Every module that turns a model name into a path or reads a model's metadata
calls this one; it imports nothing from the rest of simul but the corpus' builder version
and the Hub's leaf module, so any module may import it.

A shipped model directory holds ``config.yaml`` and a ``.pth`` (an ESPnet2 model) or
``cascade.json`` (a cascade naming its ASR and MT models), ``simul.json`` (pair, ESPnet
task, how it was made), ``metrics.json`` and ``card.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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


class UnknownModel(ValueError):
    """A name that is neither a shipped model, a model directory nor a Hub repo simul can
    read (:class:`simul.models.hub.HubError` says why for a repo id)."""


def shipped() -> list[str]:
    """Shipped models and cascades (``data/models/NAME`` with config.yaml or cascade.json)."""
    return sorted({p.parent.name for pattern in ("*/config.yaml", f"*/{CASCADE_FILE}")
                   for p in MODELS_DIR.glob(pattern)})


def resolve(name_or_dir: str | Path) -> Path:
    """The directory of a model: a shipped model's name first (``data/models/NAME``), else a
    directory (``~`` expanded), else a Hugging Face Hub repo id (``owner/name``: its snapshot
    in the Hub's cache, fetched once, :func:`simul.models.hub.fetch`). Raises
    :class:`UnknownModel` naming the closest shipped names (a typo's fix) and where to list
    them all, or for a repo id what kept it from being read."""
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


def label(name_or_dir: str | Path) -> str:
    """A model's name in records and sweep folders: a shipped name as it is, a Hub repo id
    with ``--`` for its ``/`` (the Hub cache's own spelling), a directory by its name."""
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


def cascade_parts(name_or_dir: str | Path) -> tuple[Path, Path]:
    """The ASR and MT model directories a cascade names: each a shipped name, a directory
    beside ``cascade.json`` or a path. Raises ``ValueError`` naming the field."""
    directory = resolve(name_or_dir)
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


def info(name_or_dir: str | Path) -> dict:
    """A model's ``simul.json`` as a dict; empty for a model directory without one. Raises
    ``ValueError`` naming the file when it is not a JSON object."""
    path = resolve(name_or_dir) / INFO_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from e
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def pair(name_or_dir: str | Path) -> str | None:
    """The language pair a model translates: the ``pair`` of its simul.json (every shipped
    or packed model has one; a model fine-tuned from a parent has its own), a cascade's MT
    model's (its cascade.json names the models, its directory holds no simul.json), a
    published model's card listing two languages (``language: [en, de]`` gives ``en-de``);
    None for a model directory that records none of these."""
    directory = resolve(name_or_dir)
    if is_cascade(directory):
        return pair(cascade_parts(directory)[1])
    found = info(directory).get("pair")
    if found is not None and not isinstance(found, str):
        raise ValueError(f"{directory / INFO_FILE}: field 'pair': expected e.g. "
                         f"'en-es', got {found!r}")
    if found is None:
        languages = hub.card_languages(directory)
        if len(languages) == 2 and all(re.fullmatch(r"[a-z]{2,3}", x) for x in languages):
            return "-".join(languages)
    return found


def pair_source(name_or_dir: str | Path) -> str:
    """Where :func:`pair` found a model's pair, in words (for messages)."""
    directory = resolve(name_or_dir)
    if is_cascade(directory):
        return f"its MT model {cascade_parts(directory)[1].name}'s {INFO_FILE}"
    return f"its {INFO_FILE}"


def pair_for(name_or_dir: str | Path, asked: str | None = None, *,
             option: str = "--pair") -> str:
    """The pair to read a corpus in for a model: the model's own (:func:`pair`). ``asked``
    (``option``, e.g. ``--pair`` or a sweep spec's field) must agree with it: references of
    another language would score the translation against text it never meant to write. A
    model that does not record its pair needs ``asked``. Raises ``ValueError`` in one line
    naming the option."""
    own = pair(name_or_dir)
    if own is not None and asked and asked != own:
        raise ValueError(f"{option} {asked}: {name_or_dir} translates {own} "
                         f"({pair_source(name_or_dir)}); leave {option} out to read the "
                         f"{own} split")
    if own is None and not asked:
        raise ValueError(f"{name_or_dir}: its language pair is not known (no 'pair' in "
                         f"{resolve(name_or_dir) / INFO_FILE}): give {option} SRC-TGT")
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


def config(name_or_dir: str | Path) -> dict:
    """A model's ESPnet ``config.yaml``: the one ``meta.yaml`` names in ESPnet's packed
    layout, else the shallowest one in its directory."""
    directory = resolve(name_or_dir)
    packed = hub.packed_files(directory) or {}
    configs = [f for k, f in packed.items()
               if k.endswith("_train_config") and k != "lm_train_config"]
    configs = configs or sorted(directory.rglob("config.yaml"), key=lambda c: (len(c.parts), c))
    if not configs:
        raise ValueError(f"{name_or_dir}: no config.yaml in {directory}")
    return read_yaml(configs[0])


def task(name_or_dir: str | Path) -> str:
    """The task of a packed model: the ``task`` of its simul.json, or, for a model packed
    before simul.json recorded it (every one of them ST), what its config says."""
    found = info(name_or_dir).get("task")
    if found is None and family(resolve(name_or_dir)) == "transformers":
        return "asr" if hub.not_decodable(resolve(name_or_dir)) else "st"
    if found is None:
        return config_task(config(name_or_dir))
    if found not in TASKS:
        raise ValueError(f"{resolve(name_or_dir) / INFO_FILE}: field 'task': {found!r} is not "
                         f"a task simul evaluates (one of {', '.join(TASKS)})")
    return found


def shipped_translators() -> list[str]:
    """The shipped end-to-end speech-translation models: :func:`shipped` less the cascades
    and their halves (ASR and text MT models), which the speech-translation policies cannot
    run on."""
    return [name for name in shipped()
            if not is_cascade(MODELS_DIR / name) and task(name) == "st"]


def shipped_cascades() -> list[str]:
    """The shipped cascades (``data/models/NAME/cascade.json``)."""
    return [name for name in shipped() if is_cascade(MODELS_DIR / name)]


def corpus_version(name_or_dir: str | Path) -> int | None:
    """Builder version of the mini corpus a model was trained on (simul.json); a cascade's
    when both its models were trained on the same one, else None."""
    directory = resolve(name_or_dir)
    if is_cascade(directory):
        versions = {corpus_version(part) for part in cascade_parts(directory)}
        return versions.pop() if len(versions) == 1 else None
    return info(directory).get("corpus_builder_version")


def stale(name_or_dir: str | Path) -> bool:
    """Whether a model was trained on older files of its pair than the mini corpus simul builds
    now (a cascade: either of its models): its numbers on today's corpus say how much harder
    the corpus became, not what the papers' policies do with a model that knows its data.
    Staleness is per pair (:data:`simul.corpus.built.PAIR_VERSIONS`): adding a pair
    leaves the models of the others current."""
    from simul.corpus.built import pair_version  # the corpus package imports numpy

    directory = resolve(name_or_dir)
    if is_cascade(directory):
        return any(stale(part) for part in cascade_parts(directory))
    return corpus_version(directory) != pair_version(pair(directory) or "en-es")


def metrics(name_or_dir: str | Path) -> dict:
    """A model's measured offline quality (``metrics.json``); empty before evaluation."""
    path = resolve(name_or_dir) / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}
