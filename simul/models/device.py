"""Where models decode: ``cpu``, ``cuda`` or ``cuda:N``; checking it, naming it, timing on it.

- :func:`check` — the device as given, refused (``ValueError``, naming the option it came
  from) when it is not ``cpu``, ``cuda`` or ``cuda:N``, or when torch cannot reach it (a CPU
  build of torch, no GPU visible, no GPU ``N``). Every entry point (``simul decode``,
  ``simul sweep``, ``simul reproduce``, :func:`simul.papers.notebook.setup`) calls it before
  any work;
  with a Dask scheduler only :func:`parse` (the name), since the client may have no GPU.
- :func:`kind` — ``"cpu"`` or ``"cuda"``: what the record store keys records by
  (:func:`simul.sweep.store.key_fields`), since float results on a GPU may differ from the CPU's.
- :func:`label` — the device a record was decoded on, for records and summaries: ``cpu``, or
  ``cuda:0 (NVIDIA H100 80GB HBM3)``.
- :func:`timing_clock` — the clock that times decisions (computation-aware latency,
  :class:`simul.decoding.session.Session`, :class:`simul.sweep.calls.SharedCalls`):
  ``time.perf_counter``
  itself on the CPU; on a GPU a clock that first waits for the kernels already queued on
  the device (``torch.cuda.synchronize``), since CUDA runs them asynchronously and a
  decision's time would otherwise leave out the device work it launched.

The GPU paths were written and tested with torch's CUDA functions stubbed, on a machine
without a GPU: they have not been run on a GPU.

torch is imported only when a CUDA device is named, so that checking ``cpu`` stays light.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from functools import cache

CPU = "cpu"
_FORM = re.compile(r"cpu|cuda(:\d+)?")


def normalize(device: str | None) -> str:
    """``device`` stripped and lower-cased; ``cpu`` for None or empty (no syntax check)."""
    return str(device or CPU).strip().lower() or CPU


def parse(device: str | None, asked: str | None = None) -> str:
    """The normalized device, or ``ValueError`` when it is not ``cpu``, ``cuda`` or
    ``cuda:N`` (whether torch can reach it is :func:`check`'s question)."""
    name = normalize(device)
    if not _FORM.fullmatch(name):
        raise ValueError(f"{asked or f'--device {name}'}: expected cpu, cuda or cuda:N (N a "
                         "GPU's index)")
    return name


def check(device: str | None, asked: str | None = None) -> str:
    """The normalized device, or ``ValueError`` saying why torch cannot decode there.

    ``asked`` names where the device came from in the message (default ``--device
    DEVICE``), e.g. ``"--device cuda: torch has no CUDA here (CPU build); install a CUDA
    build of torch"``."""
    name = parse(device, asked)
    asked = asked or f"--device {name}"
    if name == CPU:
        return name
    import torch

    if torch.version.cuda is None:
        raise ValueError(f"{asked}: torch has no CUDA here (CPU build); install a CUDA build "
                         "of torch")
    if not torch.cuda.is_available():
        raise ValueError(f"{asked}: torch {torch.__version__} is built for CUDA "
                         f"{torch.version.cuda} but sees no GPU (driver? "
                         "CUDA_VISIBLE_DEVICES?)")
    count = torch.cuda.device_count()
    if ":" in name and int(name.split(":")[1]) >= count:
        raise ValueError(f"{asked}: torch sees {count} GPU(s), cuda:0 to cuda:{count - 1}")
    return name


def kind(device: str | None) -> str:
    """``"cpu"`` or ``"cuda"`` (``cuda:N`` is ``cuda``)."""
    return normalize(device).split(":")[0]


def is_cuda(device) -> bool:
    """Whether ``device`` (a string or a ``torch.device``) is a CUDA device."""
    return kind(str(device)) == "cuda"


def gpu_count() -> int:
    """GPUs torch sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def label(device) -> str:
    """``cpu``, or the GPU with its index and name: ``cuda:0 (NVIDIA H100 80GB HBM3)``
    (``cuda`` is the current GPU)."""
    name = normalize(str(device)) if device is not None else CPU
    if not is_cuda(name):
        return name
    import torch

    index = int(name.split(":")[1]) if ":" in name else torch.cuda.current_device()
    return f"cuda:{index} ({_gpu_name(index)})"


@cache
def _gpu_name(index: int) -> str:
    import torch

    return torch.cuda.get_device_name(index)


def timing_clock(device) -> Callable[[], float]:
    """The clock to time decisions on ``device``: ``time.perf_counter`` itself unless it is a
    CUDA device; there, a clock that calls ``torch.cuda.synchronize(device)`` (waits for
    the kernels queued on it) before reading ``time.perf_counter``. Not run on a GPU."""
    if device is None or not is_cuda(device):
        return time.perf_counter
    import torch

    target = torch.device(normalize(str(device)))

    def synchronized() -> float:
        torch.cuda.synchronize(target)
        return time.perf_counter()

    return synchronized


__all__ = ["parse", "check", "kind", "label", "timing_clock", "normalize", "is_cuda", "gpu_count"]
