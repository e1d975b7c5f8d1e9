"""The seam between policies and models (simul.models.adapter): every adapter class offers
each member of its Protocol with a signature a caller of the Protocol can use, tiny models of
each kind pass the runtime check, wrappers forward the seam and nothing else, and the seam's
names stay importable where they were defined before it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Protocol

import pytest

import simul
from simul import corpus
from simul.decoding.session import check_fit
from simul.models import adapter as seam
from simul.models.adapter import (
    Adapter,
    CascadeAdapter,
    Delegate,
    MonotonicAdapter,
    TextMTAdapter,
    length_cap,
)
from simul.models.adapters import cascade, espnet_st, hf_s2t, mma_st
from simul.models.adapters.cascade import Cascade, SpeechASR, TextMT
from simul.models.adapters.espnet_st import ESPnetST
from simul.models.adapters.hf_s2t import HFSpeech2Text
from simul.models.adapters.mma_st import ESPnetMMA
from simul.policies import make
from simul.sweep.calls import SharedCalls
from simul.sweep.lockstep import _LaneModel
from tests.conftest import make_tiny_model
from tests.test_mma_policy import mma_copy

EVERY_CAPABILITY = (TextMTAdapter, CascadeAdapter, MonotonicAdapter)

ADAPTERS = [
    (ESPnetST, Adapter),
    (SpeechASR, Adapter),
    (TextMT, TextMTAdapter),
    (ESPnetMMA, MonotonicAdapter),
    (Cascade, CascadeAdapter),
    (HFSpeech2Text, Adapter),
    # the wrappers hand every member on: they stand in for any kind of model
    *[(cls, p) for cls in (Delegate, SharedCalls, _LaneModel) for p in EVERY_CAPABILITY],
]


# --------------------------------------------------------------------------- the checker
def _members(protocol: type) -> tuple[list[str], list[str]]:
    """(methods, data members) that ``protocol`` and the Protocols it extends declare."""
    methods, data = [], []
    for klass in reversed(protocol.__mro__):
        if not getattr(klass, "_is_protocol", False) or klass is Protocol:
            continue
        methods += [n for n, v in vars(klass).items()
                    if inspect.isfunction(v) and not n.startswith("_")]
        data += list(vars(klass).get("__annotations__", {}))
    return methods, data


def _parameters(cls: type, name: str) -> list[inspect.Parameter] | None:
    """The parameters a call on an instance of ``cls`` passes to member ``name`` (self left
    out), or None when the member is not a method."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, staticmethod):
        return list(inspect.signature(raw.__func__).parameters.values())
    if isinstance(raw, classmethod):
        return list(inspect.signature(raw.__func__).parameters.values())[1:]
    if inspect.isfunction(raw):
        return list(inspect.signature(raw).parameters.values())[1:]
    return None


def _unlike(theirs: list[inspect.Parameter], ours: list[inspect.Parameter]) -> list[str]:
    """Where a call written against the Protocol's parameters (``theirs``) would fail or mean
    something else on an implementation's (``ours``)."""
    kinds = {p.kind for p in ours}
    if {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} <= kinds:
        return []  # takes any call (a member that refuses, with a message, whatever it is given)
    positional = [p for p in ours if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name: p for p in ours if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    out = []
    for i, want in enumerate(theirs):
        if want.kind is want.POSITIONAL_OR_KEYWORD:  # passed by position or by name
            have = positional[i] if i < len(positional) else None
            if have is None or have.name != want.name or have.kind is not want.kind:
                out.append(f"parameter {i + 1} is not {want.name!r}, by position and by name")
                continue
        elif want.kind is want.KEYWORD_ONLY:
            have = named.get(want.name)
            if have is None:
                if inspect.Parameter.VAR_KEYWORD not in kinds:
                    out.append(f"no keyword {want.name!r}")
                continue
        else:
            continue
        if want.default is not want.empty and have.default != want.default:
            out.append(f"{want.name!r} defaults to {have.default!r}, not {want.default!r}")
    names = {p.name for p in theirs}
    out += [f"{p.name!r} is required and the Protocol does not pass it" for p in ours
            if p.name not in names and p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return out


def mismatches(cls: type, protocol: type) -> list[str]:
    """What ``cls`` lacks of ``protocol``'s methods, or takes otherwise (the data members are
    instance attributes: :func:`lacking_data` checks them on an instance)."""
    methods, _ = _members(protocol)
    out = []
    for name in methods:
        if not hasattr(cls, name):
            out.append(f"{cls.__name__}.{name}: missing")
            continue
        ours = _parameters(cls, name)
        if ours is None:
            out.append(f"{cls.__name__}.{name}: not a method")
            continue
        theirs = _parameters(protocol, name)
        out += [f"{cls.__name__}.{name}: {why}" for why in _unlike(theirs, ours)]
    return out


def lacking_data(obj, protocol: type) -> list[str]:
    return [name for name in _members(protocol)[1] if not hasattr(obj, name)]


class _Tiny(Protocol):
    def step(self, enc, state=None, tokens=None): ...

    def greedy(self, enc, prefix=(), *, max_new=None): ...


class _Fits:
    def step(self, enc, state=None, tokens=None, extra=1): ...

    def greedy(self, enc, prefix=(), *, max_new=None, avoid_eos=False): ...


class _Refuses:
    def step(self, *args, **kwargs): ...

    @staticmethod
    def greedy(enc, prefix=(), **kwargs): ...


@pytest.mark.parametrize("changed, expected", [
    ({}, []),
    ({"greedy": None}, ["_Fits.greedy: not a method"]),
    ({"step": lambda self, enc, tokens=None, state=None: 0},
     ["_Fits.step: parameter 2 is not 'state', by position and by name",
      "_Fits.step: parameter 3 is not 'tokens', by position and by name"]),
    ({"step": lambda self, enc, state=0, tokens=None: 0},
     ["_Fits.step: 'state' defaults to 0, not None"]),
    ({"step": lambda self, enc, state=None, tokens=None, *, lang: 0},
     ["_Fits.step: 'lang' is required and the Protocol does not pass it"]),
    ({"greedy": lambda self, enc, prefix=(), max_new=None: 0}, []),
    ({"greedy": lambda self, enc, prefix=(): 0}, ["_Fits.greedy: no keyword 'max_new'"]),
    ({"greedy": lambda self, enc, *, prefix=(), max_new=None: 0},
     ["_Fits.greedy: parameter 2 is not 'prefix', by position and by name"]),
])
def test_the_checker_finds_each_kind_of_mismatch(changed, expected):
    cls = type("_Fits", (_Fits,), changed)
    assert mismatches(cls, _Tiny) == expected
    assert mismatches(_Refuses, _Tiny) == []
    lacking = type("_Fits", (), {"step": _Fits.step})
    assert mismatches(lacking, _Tiny) == ["_Fits.greedy: missing"]


# --------------------------------------------------------------------------- the adapters
@pytest.mark.parametrize("cls, protocol", ADAPTERS,
                         ids=[f"{c.__name__}-{p.__name__}" for c, p in ADAPTERS])
def test_every_adapter_class_offers_its_protocol(cls, protocol):
    assert mismatches(cls, protocol) == []


def _check(obj, protocol) -> None:
    assert lacking_data(obj, protocol) == []
    assert isinstance(obj, protocol)


def test_tiny_espnet_models_pass_the_runtime_check(tiny_model_dir):
    model = ESPnetST.from_dir(tiny_model_dir)
    _check(model, Adapter)
    assert not isinstance(model, CascadeAdapter | TextMTAdapter | MonotonicAdapter)
    for wrapper in (Delegate(model), SharedCalls(model)):
        _check(wrapper, Adapter)


def test_a_tiny_cascade_and_its_halves_pass_the_runtime_check(cascade_dir):
    model = Cascade.from_dir(cascade_dir)
    _check(model, CascadeAdapter)
    _check(model.asr, Adapter)
    _check(model.mt, TextMTAdapter)
    assert not isinstance(model.asr, TextMTAdapter)
    _check(SharedCalls(model), CascadeAdapter)


def test_a_tiny_mma_model_passes_the_runtime_check(tmp_path):
    offline = make_tiny_model(tmp_path / "offline", "transformer")
    model = ESPnetMMA.from_dir(mma_copy(offline, tmp_path / "mma"))
    _check(model, MonotonicAdapter)
    # a wrapper hands on what the model is: its decoder, the policies it serves
    shared = SharedCalls(model)
    _check(shared, MonotonicAdapter)
    with pytest.raises(ValueError, match="does not decode mma"):
        check_fit(shared, make("wait_k_frames"))
    assert check_fit(shared, make("mma")) == []
    assert not isinstance(SharedCalls(ESPnetST.from_dir(offline)), MonotonicAdapter)


def test_a_tiny_speech2text_model_passes_the_runtime_check(tmp_path):
    pytest.importorskip("transformers", reason="the hub extra: pip install 'simul[hub]'")
    from tests.hub_models import make_s2t_repo

    model = HFSpeech2Text(make_s2t_repo(tmp_path / "s2t"))
    _check(model, Adapter)
    assert model.prefix_memory(lambda: 0.0, lambda ms: None) is None


def test_a_wrapper_offers_the_seam_and_nothing_else(tiny_model_dir):
    model = ESPnetST.from_dir(tiny_model_dir)
    shared = SharedCalls(model)
    assert shared.token_list is model.token_list and shared.eos == model.eos
    assert model.hop_ms == 10.0
    with pytest.raises(AttributeError):
        shared.hop_ms  # noqa: B018 (not a member of the seam)
    # optional attributes keep the default of whoever reads them
    assert getattr(shared, "decoder_name", "") == ""
    assert check_fit(shared, make("wait_k_frames")) == []


# --------------------------------------------------------------------------- the seam's names
@pytest.mark.parametrize("module, names", [
    (espnet_st, ["SAMPLE_RATE", "ModelError", "Encoded", "DecoderState", "Hyp"]),
    (hf_s2t, ["SAMPLE_RATE", "ModelError", "Encoded", "DecoderState", "Hyp"]),
    (mma_st, ["SAMPLE_RATE", "ModelError", "MonotonicState", "MonotonicStep"]),
    (cascade, ["ModelError", "Encoded"]),
])
def test_the_seams_names_stay_where_they_were(module, names):
    for name in names:
        assert getattr(module, name) is getattr(seam, name), name
    assert seam.SAMPLE_RATE is corpus.SAMPLE_RATE == 16000


def test_the_sample_rate_is_defined_once():
    root = Path(simul.__file__).parent
    defined = [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))
               if re.search(r"^SAMPLE_RATE\s*(:[^=]*)?=", p.read_text(), re.MULTILINE)]
    assert defined == ["corpus/mustc.py"]


@pytest.mark.parametrize("frames, maxlenratio, cap", [
    (50, 0.0, 50),  # as many units as encoder frames
    (50, -7, 7),  # a fixed number of units
    (50, 0.5, 25),
    (5, 0.1, 1),  # at least one
    (0, 0.0, 0),
])
def test_length_cap_by_hand(frames, maxlenratio, cap):
    assert length_cap(frames, maxlenratio) == cap
