"""The notebooks' kernels (:func:`simul.commands.reproduce.kernel_manager_class`): how they start,
talk and stop."""

from __future__ import annotations

import asyncio
import glob
import os
import signal
import tempfile

from simul.commands import reproduce


def test_a_finished_notebooks_kernel_is_shut_down_without_an_interrupt(monkeypatch):
    """papermill shuts the kernel down as soon as the reply to its last request comes, and
    jupyter_client's shutdown began with a SIGINT that landed in the kernel's handler of
    that request: "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on a notebook
    that passed. The shutdown sends none; other interrupts still go out."""
    km = reproduce.kernel_manager_class()(kernel_name="python3")
    sent = []

    async def signal_kernel(signum):
        sent.append(signum)

    monkeypatch.setattr(km, "_async_signal_kernel", signal_kernel)
    monkeypatch.setattr(type(km), "has_kernel", property(lambda self: True))
    km.shutting_down = True
    asyncio.run(km._async_interrupt_kernel())
    assert sent == []
    km.shutting_down = False  # e.g. nbclient's interrupt of a cell that timed out
    asyncio.run(km._async_interrupt_kernel())
    assert sent == [signal.SIGINT]


def test_kernels_started_at_once_each_get_their_own_sockets():
    """Notebooks started at once once drew the same TCP port ("Address already in use": the
    kernel died before it replied). Each kernel now listens on Unix sockets of its own, by
    an absolute path (the kernel runs in another folder than the client), removed after it."""

    async def start_and_ask(km):
        await km.start_kernel(cwd=str(reproduce.NOTEBOOKS_DIR))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
        return km.get_connection_info()

    async def main():
        kms = [reproduce.kernel_manager_class()(kernel_name="python3") for _ in range(3)]
        return await asyncio.gather(*(start_and_ask(km) for km in kms))

    infos = asyncio.run(main())
    assert {info["transport"] for info in infos} == {"ipc"}
    assert all(os.path.isabs(info["ip"]) for info in infos)
    assert len({info["ip"] for info in infos}) == 3
    assert not [f for info in infos for f in glob.glob(info["ip"] + "-*")]


def test_kernels_keep_tcp_where_a_socket_path_would_be_too_long(monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", "/" + "t" * 80)
    km = reproduce.kernel_manager_class()(kernel_name="python3")
    assert km.transport == "tcp"
    assert km.ip == "127.0.0.1"
