"""Target text for the mini corpus: rule-based translation with apertium.

Spanish is ``apertium eng-spa``; Portuguese is ``apertium eng-spa | apertium es-pt``.
Apertium translates a whole batch in one process, which is fast, but in plain-text mode
it may join or split lines. So each sentence travels inside its own numbered paragraph
(``<p id="s17">…</p>``, format ``html-noent``): tags are "superblanks" that apertium
copies unchanged and never translates across, and the number of every paragraph that
comes back is checked, so target i provably belongs to source i.

Apertium's part-of-speech tagger carries its state along the whole stream (superblanks do
not reset it), so an ambiguous word deep in a long batch is now and then tagged otherwise
than in a short one ("near": adjective or adverb). The batches are fixed by the seed, so
the corpus is still deterministic; the targets are apertium's, context effects included.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

PIPELINES: dict[str, tuple[str, ...]] = {
    "es": ("eng-spa",),
    "pt": ("eng-spa", "es-pt"),
}
_PARA = re.compile(r'<p id="s(\d+)">(.*?)</p>', re.S)
_MARKS = re.compile(r"(?<!\w)[*#@~]")  # unknown-word / generation-error marks
_BATCH = 2000


class TranslationError(RuntimeError):
    pass


def apertium_version() -> str:
    out = subprocess.run(["apertium", "-V"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or out.stderr.strip()


def clean(text: str) -> str:
    """Drop apertium's marks, unescape entities, and normalise spaces around punctuation."""
    text = _MARKS.sub("", html.unescape(text))
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,?!])", r"\1", text)
    return text


def _run(direction: str, data: str) -> str:
    proc = subprocess.run(
        ["apertium", "-u", "-f", "html-noent", direction],
        input=data, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise TranslationError(f"apertium {direction} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def _parse(data: str, first: int, n: int, what: str) -> list[str]:
    found = _PARA.findall(data)
    ids = [int(i) for i, _ in found]
    expected = list(range(first, first + n))
    if ids != expected:
        missing = sorted(set(expected) - set(ids))[:5]
        raise TranslationError(
            f"apertium {what} returned {len(ids)} paragraphs for {n} sentences "
            f"(first missing ids: {missing})"
        )
    return [clean(text) for _, text in found]


def _translate_batch(
    sentences: Sequence[str], first: int, langs: Sequence[str]
) -> dict[str, list[str]]:
    """Translate one batch into every language of ``langs``, sharing common pipeline stages."""
    source = "\n".join(
        f'<p id="s{first + i}">{html.escape(s, quote=False)}</p>' for i, s in enumerate(sentences)
    )
    stages: dict[tuple[str, ...], str] = {(): source}
    out = {}
    for lang in langs:
        pipeline = PIPELINES[lang]
        for k in range(1, len(pipeline) + 1):
            if pipeline[:k] not in stages:
                stages[pipeline[:k]] = _run(pipeline[k - 1], stages[pipeline[: k - 1]])
        out[lang] = _parse(stages[pipeline], first, len(sentences), " | ".join(pipeline))
    return out


def translate(
    sentences: Sequence[str], langs: Sequence[str] = ("es", "pt"), *, workers: int = 2
) -> dict[str, list[str]]:
    """Translate English ``sentences`` into each of ``langs`` ('es', 'pt'), line for line."""
    for lang in langs:
        if lang not in PIPELINES:
            raise ValueError(f"no apertium pipeline for target language {lang!r}")
    if shutil.which("apertium") is None:
        raise TranslationError("apertium not found: install it with `make setup`")
    starts = range(0, len(sentences), _BATCH)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(
            lambda s: _translate_batch(sentences[s : s + _BATCH], s, langs), starts
        ))
    return {lang: [t for part in parts for t in part[lang]] for lang in langs}
