"""Decoding policies: one module per paper, each a page of decision logic.

:func:`registry` finds every :class:`~simul.policies.base.Policy` subclass with a ``name``
in this package; :func:`make` builds one from ``key=value`` strings (the command line).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

from simul.policies.base import Policy, Read, View, Write

__all__ = ["Policy", "Read", "View", "Write", "describe", "registry", "make", "parse_settings"]


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def registry() -> dict[str, type[Policy]]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return {c.name: c for c in _subclasses(Policy) if c.name and c.__module__.startswith(__name__)}


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
    """A policy by name, with settings given as strings (converted to the field types)."""
    known = registry()
    if name not in known:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(known))}")
    cls = known[name]
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


def describe() -> str:
    """``simul policies``: every policy with its paper and its settings' defaults."""
    lines = []
    for name, cls in sorted(registry().items()):
        params = ", ".join(f"{f.name}={f.default!r}" for f in dataclasses.fields(cls))
        lines.append(f"{name:16s} {cls.paper}\n{'':16s} {params}")
    return "\n".join(lines)
