"""Decoding policies: one module per paper, each a page of decision logic.

:func:`registry` finds every :class:`~simul.policies.base.Policy` subclass with a ``name``
in this package, and the policies other packages declare under the entry-point group
``simul.policies`` (:data:`ENTRY_POINT_GROUP`); :func:`make` builds one by name, or any
policy class named ``module:Class`` (``path/to/file.py:Class`` too), from ``key=value``
strings (the command line). So a policy of one's own runs in ``simul decode``, ``simul
stream``, sweeps and notebooks without editing simul::

    simul decode --model conformer_bpe_en-es --policy my_policies:EveryChunk --set chunk_ms=400

A module named ``module:Class`` is imported as Python imports it, and from the working
directory when it is not found otherwise (as ``python -m`` would); sweeps' worker processes
import it the same way, so it must be importable where they run.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import pkgutil
import re
import sys
import textwrap
from pathlib import Path

from simul.policies.base import Policy, Read, View, Write

__all__ = ["Policy", "Read", "View", "Write", "ENTRY_POINT_GROUP", "describe", "load_class",
           "lookup", "make", "parse_settings", "registry", "source_digest"]

ENTRY_POINT_GROUP = "simul.policies"
"""Entry-point group under which other packages declare policies, e.g. in pyproject.toml::

    [project.entry-points."simul.policies"]
    every_chunk = "my_package.policies:EveryChunk"
"""


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def _builtin() -> dict[str, type[Policy]]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return {c.name: c for c in _subclasses(Policy) if c.name and c.__module__.startswith(__name__)}


def _plugins() -> dict[str, type[Policy]]:
    """The policies of the :data:`ENTRY_POINT_GROUP` entry points, by entry-point name."""
    return _plugins_on(tuple(sys.path))


@functools.cache
def _plugins_on(path: tuple[str, ...]) -> dict[str, type[Policy]]:
    """:func:`_plugins` for one ``sys.path``: reading the installed distributions' entry
    points costs milliseconds, and :func:`make` runs once per setting and segment of a
    sweep; a changed ``sys.path`` (a package installed on a new path) is read again."""
    return {ep.name: load_class(ep.value, where=f"entry point {ep.name!r} of group "
                                                f"{ENTRY_POINT_GROUP!r}")
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def registry() -> dict[str, type[Policy]]:
    """Every policy by name: simul's own, then the entry points' (which cannot take a name
    of simul's)."""
    known = _builtin()
    for name, cls in _plugins().items():
        if name in known and known[name] is not cls:
            raise ValueError(f"entry point {name!r} of group {ENTRY_POINT_GROUP!r}: simul has "
                             f"a policy of that name ({known[name].__module__})")
        known[name] = cls
    return known


def _import(module: str) -> object:
    """``module`` imported as Python would, else from the working directory."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        cwd = Path.cwd()
        if e.name != top or not ((cwd / f"{top}.py").is_file() or (cwd / top).is_dir()):
            raise
        sys.path.insert(0, str(cwd))
        return importlib.import_module(module)


def load_class(spec: str, *, where: str = "policy") -> type[Policy]:
    """The policy class ``module:Class`` (or ``path/to/file.py:Class``) names."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{where}: {spec!r}: expected module:Class or path/to/file.py:Class")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name).expanduser().resolve()
            if not path.is_file():
                raise ValueError(f"{where}: {spec!r}: no file {path}")
            name = f"simul_user_policy_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
            module = sys.modules.get(name)
            if module is None:
                loader = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(loader)
                sys.modules[name] = module  # before running it: dataclasses look it up
                loader.loader.exec_module(module)
        else:
            module = _import(module_name)
    except ImportError as e:
        raise ValueError(f"{where}: {spec!r}: cannot import {module_name!r} ({e})") from e
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{where}: {spec!r}: {module_name} has no {attr!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, Policy) and dataclasses.is_dataclass(obj)):
        raise ValueError(f"{where}: {spec!r} is not a policy: a @dataclass subclass of "
                         "simul.policies.base.Policy")
    if not obj.name:
        raise ValueError(f"{where}: {spec!r} has no name: set the class attribute "
                         "name = '...' (records and tables show it)")
    return obj


def lookup(name: str) -> type[Policy]:
    """The policy class of a registered name, or of ``module:Class``."""
    if ":" in name:
        return load_class(name)
    known = registry()
    if name not in known:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(known))}; or "
                         "module:Class for a policy of your own")
    return known[name]


def source_digest(name: str) -> str | None:
    """SHA-256 of the source file of a policy that is not simul's own (an entry point's, or
    ``module:Class``), so that records kept of it are kept with its code; None for simul's
    policies, whose source the record store already follows."""
    cls = lookup(name)
    if cls.__module__.startswith(f"{__name__}."):
        return None
    try:
        source = Path(inspect.getfile(cls)).read_bytes()
    except (OSError, TypeError):
        source = repr(cls).encode()
    return hashlib.sha256(source).hexdigest()


def _coerce(value: str, kind) -> object:
    kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
    if kind.startswith("bool"):
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"expected true/false, got {value!r}")
        return value.lower() in ("true", "1", "yes")
    if kind.startswith("int"):
        return int(value)
    if kind.startswith("float"):
        return float(value)
    return value


def parse_settings(pairs: list[str] | None) -> dict[str, str]:
    """``--set KEY=VALUE`` options (``["k=3", "detection=fixed"]``) as a dict of strings."""
    bad = [kv for kv in pairs or [] if "=" not in kv]
    if bad:
        raise ValueError(f"--set expects KEY=VALUE, got {bad[0]!r}")
    return dict(kv.split("=", 1) for kv in pairs or [])


def make(name: str, settings: dict[str, str] | None = None) -> Policy:
    """A policy by name (or ``module:Class``), with settings given as strings (converted
    to the field types) or values."""
    cls = lookup(name)
    fields = {f.name: f.type for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in (settings or {}).items():
        if key not in fields:
            raise ValueError(f"policy {name!r} has no setting {key!r}; it has {sorted(fields)}")
        try:
            kwargs[key] = _coerce(value, fields[key]) if isinstance(value, str) else value
        except ValueError as e:
            raise ValueError(f"policy {name!r}, setting {key!r}: {e}") from e
    return cls(**kwargs)


_FIELD_LINE = re.compile(r"^\s+(\w+)\s*:[^=#]+=[^#]*(?:#\s*(.+))?$")
_COMMENT_LINE = re.compile(r"^\s+#\s*(.+)$")


def setting_notes(cls: type[Policy]) -> dict[str, str]:
    """What each setting means and its unit: the comment on its line in the body of the class
    that declares it (``cls`` or a base class), or the comment lines right above it."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # a subclass's note wins over its base's
        if klass is object or not dataclasses.is_dataclass(klass):
            continue
        try:
            lines = inspect.getsource(klass).splitlines()
        except (OSError, TypeError):
            continue
        above: list[str] = []
        for line in lines:
            if comment := _COMMENT_LINE.match(line):
                above.append(comment.group(1).strip())
                continue
            if field := _FIELD_LINE.match(line):
                note = field.group(2) or " ".join(above)
                if note:
                    notes[field.group(1)] = note.strip()
            above = []
    return notes


def describe(name: str | None = None) -> str:
    """``simul policies``: every policy with its paper and its settings' defaults; with a
    name (or ``module:Class``), that policy: its documentation's summary and each setting
    with its default, meaning and unit."""
    if name is None:
        lines = []
        for key, cls in sorted(registry().items()):
            params = ", ".join(f"{f.name}={f.default!r}" for f in dataclasses.fields(cls))
            lines.append(f"{key:16s} {cls.paper}\n{'':16s} {params}")
        lines.append("\n`simul policies NAME` explains a policy's settings and their units.")
        return "\n".join(lines)
    cls = lookup(name)
    doc = inspect.getdoc(inspect.getmodule(cls)) or inspect.getdoc(cls) or ""
    summary = doc.split("\n\n")[0].replace("\n", " ")
    notes = setting_notes(cls)
    width = max((len(f.name) + len(repr(f.default)) for f in dataclasses.fields(cls)),
                default=0) + 3
    lines = [f"{cls.name} — {cls.paper}", "", summary, "", "settings (--set KEY=VALUE):"]
    for f in dataclasses.fields(cls):
        # a long note wraps under itself, whole: nothing cut off at the terminal's edge
        lines += textwrap.wrap(notes.get(f.name, ""), width=100,
                               initial_indent=f"  {f'{f.name}={f.default!r}':{width}s} ",
                               subsequent_indent=" " * (width + 3)) or [f"  {f.name}={f.default!r}"]
    return "\n".join(lines)
