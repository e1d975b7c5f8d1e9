"""A policy of a user's own, outside simul: one unit per chunk (the README's example).

Loaded by the tests as ``tests.plugin_policy:EveryChunkOneUnit``, as a file path, and
through an entry point (tests/test_policy_plugins.py)."""

from dataclasses import dataclass

from simul.policies.base import Policy, Read, Write


@dataclass
class EveryChunkOneUnit(Policy):
    name = "every_chunk_one_unit"
    paper = "an example"
    chunk_ms: float = 500.0  # ms of audio read between two writes

    def first_read_ms(self):
        return self.chunk_ms

    def decide(self, model, view):
        if view.source_finished:
            return self.finish(model, view)
        if view.memo.get("wrote_at") == view.read_ms:  # one write per chunk
            return Read(view.read_ms + self.chunk_ms)
        view.memo["wrote_at"] = view.read_ms
        return Write(tuple(model.greedy(view.encoded, view.units, max_new=1).tokens))


class NotAPolicy:
    name = "not_a_policy"


@dataclass
class Nameless(Policy):
    chunk_ms: float = 500.0
