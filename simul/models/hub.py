"""Published models on the Hugging Face Hub: a repo id → a local snapshot, fetched once.

``--model`` takes a Hub repo id (``espnet/<repo>``, ``facebook/s2t-small-mustc-en-de-st``)
wherever it takes a shipped name or a directory (:func:`simul.models.registry.resolve` calls
:func:`fetch`). The repo is downloaded once by ``huggingface_hub.snapshot_download`` into
the Hub's own cache (``HF_HUB_CACHE``, by default ``~/.cache/huggingface/hub``) and read from
there afterwards without a network request; with ``HF_HUB_OFFLINE=1`` the cache alone is
read. Two published layouts are decoded:

- **ESPnet2's packed layout** (what ``espnet2.bin.pack`` archives and ESPnet uploads to the
  Hub): ``meta.yaml`` names the training config and the model file
  (``yaml_files: {st_train_config: exp/<run>/config.yaml}``,
  ``files: {st_model_file: exp/<run>/valid.acc.ave_10best.pth}``), paths relative to the
  repo root, as are the config's own (statistics, BPE models) — :func:`packed_files`.
- **transformers' Speech2Text** (fairseq S2T converted, ``Speech2TextForConditionalGeneration``):
  ``config.json`` (``model_type: speech_to_text``), ``preprocessor_config.json``, the weights,
  ``sentencepiece.bpe.model`` and ``vocab.json`` (:mod:`simul.models.adapters.hf_s2t`).

A repo simul cannot decode (speech recognition, speech synthesis, another architecture) is
refused in one line that says what it is (:func:`check`), from ``meta.yaml``, ``config.json``
and the tags of the model card's front matter (``README.md``).

This module imports nothing from simul, and ``huggingface_hub`` only when a repo id is
fetched.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""What a Hub model repo id looks like: ``owner/name``."""

META_FILE = "meta.yaml"
"""The file of ESPnet2's packed layout that names the config and the model file."""

HF_CONFIG = "config.json"
"""A transformers model's configuration (its ``model_type`` says the architecture)."""

S2T_MODEL_TYPE = "speech_to_text"
"""transformers' ``model_type`` of fairseq's S2T models (Speech2Text)."""

_TRUE = ("1", "on", "yes", "true")

# what the ESPnet task key of meta.yaml (…_train_config) or a card's tag says a model does
_ESPNET_TASKS = {"st": "speech translation (ST)", "asr": "speech recognition (ASR)",
                 "s2t": "multitask speech-to-text (S2T, OWSM-style)",
                 "s2st": "speech-to-speech translation (S2ST)", "lm": "a language model (LM)",
                 "mt": "text translation (MT)", "enh_s2t": "enhancement + ASR"}
_CARD_TASKS = {"text-to-speech": "speech synthesis (TTS)",
               "automatic-speech-recognition": "speech recognition (ASR)",
               "speech-translation": "speech translation (ST)",
               "audio-to-audio": "audio to audio (enhancement, separation)",
               "speaker-recognition": "speaker recognition",
               "audio-classification": "audio classification"}


class HubError(ValueError):
    """A repo id that cannot be read: not cached and not downloadable, or of a task simul
    does not decode. The message is one line naming the repo."""


def is_repo_id(name: str) -> bool:
    """Whether ``name`` has the form of a Hub model repo id (``owner/name``)."""
    return bool(REPO_ID.match(str(name))) and ".." not in str(name)


def cache_dir() -> Path:
    """The Hub cache that is read and filled, as ``huggingface_hub`` finds it, read from the
    environment at each call: ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``~/.cache/huggingface/hub``."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path(
        os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    return Path(home).expanduser() / "hub"


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` forbids the Hub (the cache alone is read)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


_fetched: dict[tuple[str, str], Path] = {}


def fetch(repo_id: str) -> Path:
    """The local snapshot of ``repo_id``: from the Hub cache when it holds one (no network
    request), else downloaded once into it. Raises :class:`HubError` (one line naming the
    repo, the cache and ``HF_HUB_OFFLINE``) when it is neither cached nor downloadable, or
    when it is a model simul cannot decode (:func:`check`)."""
    cache = cache_dir()
    key = (repo_id, str(cache))
    if key in _fetched and _fetched[key].is_dir():
        return _fetched[key]
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError:
        raise HubError(f"{repo_id}: a Hugging Face Hub repo id, and huggingface_hub is not "
                       "installed (pip install huggingface_hub)") from None
    try:
        path = Path(huggingface_hub.snapshot_download(repo_id, cache_dir=cache,
                                                      local_files_only=True))
    except errors.LocalEntryNotFoundError:
        path = None
    if path is None:
        if offline():
            raise HubError(f"{repo_id}: not in the Hugging Face cache {cache}, and "
                           "HF_HUB_OFFLINE is set: fetch it once with a network (without "
                           "HF_HUB_OFFLINE), or set HF_HUB_CACHE to a cache that holds it")
        try:
            path = Path(huggingface_hub.snapshot_download(repo_id, cache_dir=cache))
        except (errors.RepositoryNotFoundError, errors.GatedRepoError) as e:
            raise HubError(f"{repo_id}: no model repository the Hugging Face Hub lets us "
                           f"read ({type(e).__name__}; a private or gated repo needs `hf auth "
                           "login`)") from None
        except (errors.LocalEntryNotFoundError, errors.HfHubHTTPError, OSError) as e:
            reason = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise HubError(f"{repo_id}: not in the Hugging Face cache {cache}, and the Hub "
                           f"cannot be reached ({reason}); fetch it once with a network, then "
                           "HF_HUB_OFFLINE=1 reads it from the cache") from None
    check(path, repo_id)
    _fetched[key] = path
    return path


# ------------------------------------------------------------------ what a directory holds
def card(directory: str | Path) -> dict:
    """The YAML front matter of a model card (``README.md``): tags, language, pipeline_tag;
    empty without one."""
    path = Path(directory) / "README.md"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    try:
        data = yaml.safe_load(text[3:end]) if end > 0 else None
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _as_list(value) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def card_languages(directory: str | Path) -> list[str]:
    """The languages a model card lists (``language:``), in its order."""
    return _as_list(card(directory).get("language"))


def packed_files(directory: str | Path) -> dict[str, Path] | None:
    """ESPnet2's packed layout: the files ``meta.yaml`` names (``st_train_config``,
    ``st_model_file``, …) as paths under ``directory``; None without a ``meta.yaml``.
    Raises :class:`HubError` naming the file and field when it is malformed or names a
    file that is missing."""
    directory = Path(directory)
    path = directory / META_FILE
    if not path.is_file():
        return None
    try:
        meta = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise HubError(f"{path}: not YAML ({str(e).splitlines()[0]})") from None
    out = {}
    for field in ("yaml_files", "files"):
        entries = meta.get(field) if isinstance(meta, dict) else None
        if not isinstance(entries, dict):
            raise HubError(f"{path}: field {field!r}: expected a mapping of names to paths "
                           "(ESPnet's packed layout)")
        for name, rel in entries.items():
            if rel is None:  # e.g. an ASR pack without its LM
                continue
            file = directory / str(rel)
            if not file.is_file():
                raise HubError(f"{path}: field {field}.{name}: no file {file}")
            out[str(name)] = file
    return out


def espnet_task(directory: str | Path) -> str | None:
    """The ESPnet task of a packed directory, from the key of its training config in
    ``meta.yaml`` (``st_train_config`` → ``st``; ``train_config`` → None: TTS, enhancement
    and others share it); None without a ``meta.yaml``."""
    files = packed_files(directory)
    if files is None:
        return None
    tasks = [k[: -len("_train_config")] for k in files if k.endswith("_train_config")]
    tasks = [t for t in tasks if t != "lm"] or tasks
    return tasks[0] if tasks else None


def hf_config(directory: str | Path) -> dict | None:
    """A transformers ``config.json`` as a dict; None without one (or without a
    ``model_type``: not a transformers model's config)."""
    path = Path(directory) / HF_CONFIG
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise HubError(f"{path}: not JSON ({e})") from None
    return data if isinstance(data, dict) and "model_type" in data else None


def is_transformers_s2t(directory: str | Path) -> bool:
    """Whether ``directory`` holds a transformers Speech2Text model (``config.json`` with
    ``model_type: speech_to_text``)."""
    conf = hf_config(directory)
    return conf is not None and conf.get("model_type") == S2T_MODEL_TYPE


def _card_task(directory: Path) -> str | None:
    """What a model card's tags and pipeline tag say the model does, ST first."""
    front = card(directory)
    tags = _as_list(front.get("tags")) + _as_list(front.get("pipeline_tag"))
    for tag in ("speech-translation", *_CARD_TASKS):
        if tag in tags:
            return tag
    return None


def not_decodable(directory: str | Path) -> str | None:
    """Why simul cannot decode the model in ``directory`` (what it is, in a few words), or
    None when it is a speech-translation model of a layout simul reads."""
    directory = Path(directory)
    conf = hf_config(directory)
    card_task = _card_task(directory)
    if conf is not None:
        kind = conf.get("model_type")
        archs = ", ".join(_as_list(conf.get("architectures"))) or kind
        if kind != S2T_MODEL_TYPE:
            what = _CARD_TASKS.get(card_task or "", "")
            return f"a transformers {kind} model ({archs}{'; ' + what if what else ''})"
        tokenizer = directory / "tokenizer_config.json"
        if tokenizer.is_file() and json.loads(tokenizer.read_text()).get("lang_codes"):
            return ("a multilingual Speech2Text model (tokenizer_config.json: lang_codes; "
                    "its target language is a forced first token simul does not set yet)")
        if card_task not in (None, "speech-translation"):
            return f"a Speech2Text model of {_CARD_TASKS[card_task]} (README.md tags)"
        if card_task is None and len(card_languages(directory)) == 1:
            return (f"a Speech2Text model in one language ({card_languages(directory)[0]}, "
                    "README.md: no speech-translation tag): speech recognition (ASR)")
        return None
    task = espnet_task(directory)
    if task is not None and task != "st":
        return (f"an ESPnet2 model of {_ESPNET_TASKS.get(task, task)} "
                f"(meta.yaml: {task}_train_config)")
    if task is None and packed_files(directory) is not None:
        what = _CARD_TASKS.get(card_task or "", "a task other than speech translation")
        if card_task != "speech-translation":
            return f"an ESPnet2 model of {what} (meta.yaml: train_config)"
    if task is None and not list(directory.rglob("config.yaml")):
        return "neither an ESPnet2 model (no meta.yaml, no config.yaml) nor a transformers one"
    return None


def check(directory: str | Path, repo_id: str) -> None:
    """Refuse, in one line naming ``repo_id``, a snapshot simul cannot decode."""
    why = not_decodable(directory)
    if why:
        raise HubError(f"{repo_id}: {why}; simul decodes speech translation: ESPnet2 ST "
                       "models and transformers' Speech2Text (fairseq S2T)")
