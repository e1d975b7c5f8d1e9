"""Helpers of the tutorial notebook (``notebooks/tutorial.ipynb``): one simulated utterance
made visible, then a small sweep.

- :func:`simul.analysis.plots.timeline` — the READ/WRITE path of a policy (Nguyen et al. 2021,
  Fig. 1): source time read on x, output units written on y, the output words written next
  to the path and, when the segment has an alignment (the mini corpus), the source words on
  top;
- :func:`partial_outputs` — the committed text after every WRITE;
- :func:`word_latency` and :func:`metrics_table` — delays against elapsed times
  (computation-aware) per word, and every metric of ``simul score`` for one record;
- :func:`live_replay` — the translation appearing word by word as the audio plays: a
  static figure (waveform, each word at its delay: the source read when the word was
  complete) and, in a notebook opened by a person, an audio player that reveals the words
  as it plays. A word is complete when the unit after it is written (characters: the
  space; BPE: the next word-initial piece) or at the end, so a word can show there a
  write or more after its last unit, where :func:`simul.analysis.plots.timeline` labels it;
- :func:`reordered_segment` and :func:`alignment_table` — an en-de segment whose German
  order departs from English's, and, word by word, where a policy wrote each output word
  against when the source words it translates (gold links) had been heard: anticipated
  or waited;
- :func:`spec` — the small wait-k sweep at the end.
"""

from __future__ import annotations

import base64
import html
import io
import math
import uuid

import numpy as np
import pandas as pd

from simul.analysis import plots
from simul.analysis.claims import Claim, Finding, declare, monotone_within, weakest_step
from simul.metrics.latency import MEASURED_IN, SIMULEVAL_METRICS
from simul.metrics.score import score_records
from simul.metrics.units import text
from simul.papers import notebook
from simul.records import Record

SWEEP_KS = [100, 200]
"""The small sweep's k (frames of 10 ms read before the first write)."""
SWEEP_STRIDES = [10, 20]
"""The small sweep's stride s (frames read between two writes)."""

KNOWN_GAPS: dict[str, str] = {}
"""The claims that do not hold on the full run, with why (none)."""


def partial_outputs(record: Record) -> pd.DataFrame:
    """One row per WRITE: the source read (ms), how many READs led to it, the units it
    wrote and the committed text so far."""
    rows, done, reads = [], 0, 0
    for read_ms, n in record.trace:
        if not n:
            reads += 1
            continue
        new = record.units[done:done + n]
        done += n
        rows.append({"read_ms": read_ms, "READs before": reads, "new units": list(new),
                     "units so far": done,
                     "text so far": text(record.units[:done], record.unit_type)})
        reads = 0
    return pd.DataFrame(rows, columns=["read_ms", "READs before", "new units", "units so far",
                                       "text so far"])


def word_latency(record: Record) -> pd.DataFrame:
    """Per output word: its delay (ms of source read when the word was complete), its
    elapsed time (the delay plus all computation spent on the utterance so far) and the
    difference, the computation."""
    words = record.prediction.split()
    elapsed = record.elapsed if len(record.elapsed) == len(words) else [math.nan] * len(words)
    return pd.DataFrame({"word": words, "delay_ms": record.delays, "elapsed_ms": elapsed,
                         "compute_ms": [e - d for e, d in zip(elapsed, record.delays,
                                                              strict=True)]})


def metrics_table(record: Record) -> pd.DataFrame:
    """``simul score`` for one record: quality, then each SimulEval latency metric on
    delays (non-computation-aware) and on elapsed times (computation-aware)."""
    scores = score_records([record])
    rows = [{"metric": m, "on delays": scores[m], "on elapsed (computation-aware)": math.nan,
             "unit": ""} for m in ("BLEU", "chrF")]
    rows += [{"metric": m, "on delays": scores[m],
              "on elapsed (computation-aware)": scores.get(f"{m}_CA", math.nan),
              "unit": MEASURED_IN[m]} for m in SIMULEVAL_METRICS]
    return pd.DataFrame(rows)


def spec(model: str, pair: str, split: str, output: str, *, n: int, ks=SWEEP_KS,
         strides=SWEEP_STRIDES, corpus=None, max_utterances=None) -> dict:
    """A sweep spec: wait-k (``wait_k_frames``) over ``ks`` × ``strides``, ``n`` units per
    write."""
    policies = [{"policy": "wait_k_frames", "grid": {"k": list(ks), "s": list(strides)},
                 "fixed": {"n": n}}]
    return notebook.spec([model], pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


FINDINGS = declare(
    Finding("T-k", "simul", "tutorial", "simul's question, on any model: does a longer wait "
            "k add lag (N21 Fig. 1's k)?", "AL from one k to the next at each stride s (the "
            "weakest step, ms)", "the tutorial's wait_k_frames sweep: k × s, N = 2",
            "superiority", own=True),
)
"""What the tutorial checks on any model (simul's own question). "AL_CA ≥ AL" is no claim:
a record whose elapsed time is below its delay is refused (:mod:`simul.records`), so it holds
by construction (a test)."""


def claims(grid: pd.DataFrame) -> list[Claim]:
    """A longer wait k adds lag: the sweep's wait_k_frames rows, at each stride s, the
    weakest AL step as k grows, with its 95 % interval over the sweep's segments (it needs
    the full run)."""
    g = grid[grid.policy == "wait_k_frames"]
    failures, seen = monotone_within(g, by="param_s", along="param_k",
                                     label=lambda s: f"s={s:g}")
    return [FINDINGS["T-k"].measure(g, weakest_step(by="param_s", along="param_k"),
                                    detail="; ".join(failures) or
                                    f"{seen} strides, all monotone")]


# ---------------------------------------------------------------------------- live replay

def timed_words(words) -> list[tuple[str, float]]:
    """(word, delay ms) pairs from a :class:`~simul.records.Record`, from words with
    ``text`` and ``delay_ms`` (:class:`simul.decoding.session.Word`,
    :class:`simul.decoding.live.Shown`) or from
    (text, delay ms) pairs."""
    if isinstance(words, Record):
        texts = words.prediction.split()
        if len(texts) != len(words.delays):
            raise ValueError(f"record {words.segment_id or words.index}: "
                             f"{len(texts)} words but {len(words.delays)} delays")
        return list(zip(texts, map(float, words.delays), strict=True))
    out = []
    for w in words:
        if hasattr(w, "text") and hasattr(w, "delay_ms"):
            out.append((str(w.text), float(w.delay_ms)))
        else:
            text_, delay = w
            out.append((str(text_), float(delay)))
    return out


def interactive_frontend() -> bool:
    """Whether this runs in a Jupyter kernel driven by a person's frontend (JupyterLab,
    Notebook, VS Code), where HTML and its scripts are shown. Batch runs (papermill,
    ``jupyter nbconvert --execute``) execute cells without stdin (``allow_stdin`` false)
    and no script of theirs ever runs; outside a kernel there is no frontend at all."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    return bool(getattr(kernel, "_allow_stdin", False))


REPLAY_XLABEL = "source time (s): each word at its delay, the source read when it was complete"
"""The replay's x axis: a word's delay (not when its last unit was written, see
:func:`simul.analysis.plots.timeline`)."""


def _groups(words: list[tuple[str, float]]) -> list[tuple[float, str]]:
    """Consecutive words complete at the same source time, joined: (delay ms, text)."""
    out: list[tuple[float, list[str]]] = []
    for text_, delay in words:
        if out and out[-1][0] == delay:
            out[-1][1].append(text_)
        else:
            out.append((delay, [text_]))
    return [(d, " ".join(ws)) for d, ws in out]


def replay_figure(audio: np.ndarray, words, *, rate: int = 16000, alignment=None,
                  title: str = ""):
    """The static replay: the waveform (time in s) and, below it, one row per delay in
    time order, with the words complete then (their delay: the source read when the word
    was complete) placed at that source time (a dotted line marks it on the waveform).
    With an oracle ``alignment`` the source words are named on the top axis. Returns the
    figure."""
    import matplotlib.pyplot as plt

    pairs = timed_words(words)
    groups = _groups(pairs)
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    seconds = audio.size / rate
    end = max([seconds, *(d / 1000 for d, _ in groups)]) or 1.0
    rows = max(len(groups), 1)
    fig, (wave, out) = plt.subplots(
        2, 1, sharex=True, figsize=(9.0, min(2.4 + 0.28 * rows, 12.0)),
        gridspec_kw={"height_ratios": [1.0, max(1.0, 0.28 * rows)]})
    if audio.size:  # min/max envelope per 10 ms: the shape of the speech, cheap to draw
        hop = max(1, rate // 100)
        n = audio.size // hop
        if n:
            frames = audio[: n * hop].reshape(n, hop)
            t = (np.arange(n) + 0.5) * hop / rate
            wave.fill_between(t, frames.min(axis=1), frames.max(axis=1), color="tab:blue",
                              lw=0, alpha=0.8)
    if alignment is not None and alignment.words:
        plots.source_words_axis(wave, alignment.words, unit_ms=1000.0)
    wave.set_ylabel("audio")
    wave.set_yticks([])
    for i, (delay, text_) in enumerate(groups):
        x = delay / 1000
        wave.axvline(x, color="tab:orange", ls=":", lw=1)
        out.plot([x], [i], marker="v", color="tab:orange", ms=6)
        right = x > 0.7 * end  # late words end at their time, so that they stay in view
        out.annotate(text_, (x, i), textcoords="offset points", xytext=(-6 if right else 6, 0),
                     ha="right" if right else "left", va="center", fontsize=9)
    out.set_ylim(rows - 0.5, -0.5)
    out.set_yticks([])
    out.set_ylabel("words complete")
    out.set_xlim(0, end * 1.02)
    out.set_xlabel(REPLAY_XLABEL)
    wave.set_title(title or f"{len(pairs)} words, each at its delay", fontsize=10)
    return fig


def replay_html(audio: np.ndarray, words, *, rate: int = 16000) -> str:
    """An audio player and the translation below it; a small script reveals each word
    when the audio reaches its delay (the source read when the word was complete). Without
    scripts (a static viewer) the whole translation shows."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1, 1), rate,
             format="WAV", subtype="PCM_16")
    src = "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    uid = f"simul-replay-{uuid.uuid4().hex[:12]}"
    spans = " ".join(
        f'<span data-t="{delay / 1000:.3f}" title="complete at {delay / 1000:.2f} s of source" '
        f'style="transition: opacity .15s">{html.escape(text_)}</span>'
        for text_, delay in timed_words(words))
    return f"""<div id="{uid}" style="max-width: 52em">
<audio controls preload="auto" src="{src}"></audio>
<div style="margin-top: .4em; font-size: 1.15em; line-height: 1.7">{spans}</div>
</div>
<script>
(function () {{
  var root = document.getElementById("{uid}");
  if (!root) return;
  var audio = root.querySelector("audio"), words = root.querySelectorAll("span[data-t]");
  function show() {{
    var t = audio.ended ? Infinity : audio.currentTime;
    words.forEach(function (w) {{ w.style.opacity = parseFloat(w.dataset.t) <= t ? 1 : 0.1; }});
  }}
  function loop() {{ show(); if (!audio.paused && !audio.ended) requestAnimationFrame(loop); }}
  ["play", "seeked", "timeupdate", "ended"].forEach(function (e) {{
    audio.addEventListener(e, e === "play" ? loop : show);
  }});
  show();
}})();
</script>"""


def live_replay(audio: np.ndarray, words, *, rate: int = 16000, alignment=None,
                title: str = "", player: bool | None = None):
    """Replay a simultaneous translation: the static figure (:func:`replay_figure`, always
    drawn and returned) and, with ``player`` (default: when :func:`interactive_frontend`),
    the audio player of :func:`replay_html` shown above it, revealing each word when the
    audio reaches its delay: the source read when the word was complete (it can be a
    write or more after its last unit, where :func:`simul.analysis.plots.timeline` labels it).

    ``words``: a :class:`~simul.records.Record`, words of a stream (``text``,
    ``delay_ms``) or (text, delay ms) pairs; ``audio``: the source they were written on."""
    pairs = timed_words(words)
    if interactive_frontend() if player is None else player:
        from IPython.display import HTML, display

        display(HTML(replay_html(audio, pairs, rate=rate)))
    return replay_figure(audio, pairs, rate=rate, alignment=alignment, title=title)


# --- word order: the gold alignment against a policy's writes ------------------------------

def ahead_of_order(segment) -> float:
    """How far ahead of the source a target word must come, as a share of the segment: the
    largest, over target words, of (place of its last linked source word) / (source words)
    − (its place) / (target words), places counted from 1. Near 0 on a monotone pair; a
    German time phrase fronted before a place ("vor zwei Tagen am Flughafen" for "at the
    airport two days ago") makes it large: a policy that keeps pace with the speaker must
    write that phrase before it is spoken."""
    n_src, n_tgt = len(segment.source.split()), len(segment.target.split())
    sources: dict[int, int] = {}
    for i, j in segment.links:
        sources[j] = max(sources.get(j, -1), i)
    return max(((i + 1) / n_src - (j + 1) / n_tgt for j, i in sources.items()),
               default=0.0)


def reordered_segment(segments, *, max_words: int = 12):
    """The segment of ``segments`` (with gold links: the mini corpus' en-de) whose target
    departs most from the source's word order the way German does: among those with at
    most ``max_words`` source words and a clause that ends in its verb (a participle, an
    infinitive, a verb-final subordinate clause; :func:`simul.corpus.stats.verb_final_clause`),
    the one with the largest :func:`ahead_of_order` (the first of equals)."""
    from simul.corpus.stats import verb_final_clause

    found = [s for s in segments if s.links and len(s.source.split()) <= max_words
             and verb_final_clause(s.target)]
    if not found:
        raise ValueError("no segment with gold links whose target ends a clause in its verb "
                         "(the mini corpus' en-de has them)")
    return max(found, key=ahead_of_order)  # max keeps the first of equals


def alignment_table(record: Record, segment) -> pd.DataFrame:
    """One row per reference word with gold links, in reference order: the source words
    it translates and when the last of them ended (ms), then what the policy did with it —
    the output word matched to it (as the anticipation rate matches them,
    :func:`simul.metrics.anticipation.linked_word_times`), written at its delay (source
    read, ms): "anticipated" (before its source ended: the policy guessed it), "waited"
    (after, by ``wait (ms)``), or "not written" (no output word matched it: guessed wrong,
    or dropped)."""
    from simul.metrics.anticipation import linked_sources, linked_word_times

    words = segment.alignment.words
    reference = record.reference.split()
    written = {w.reference: w for w in linked_word_times(record, segment)}
    sources = linked_sources(reference, segment.links)
    rows = []
    for j in sorted(sources):
        heard = max(words[i].end_ms for i in sources[j])
        w = written.get(j)
        rows.append({"#": j + 1, "reference word": reference[j],
                     "translates": " ".join(words[i].text for i in sources[j]),
                     "heard at (ms)": heard,
                     "written at (ms)": w.delay if w else math.nan,
                     "verdict": ("not written" if w is None else
                                 "anticipated" if w.anticipates else "waited"),
                     "wait (ms)": w.delay - heard if w else math.nan})
    return pd.DataFrame(rows, columns=["#", "reference word", "translates", "heard at (ms)",
                                       "written at (ms)", "verdict", "wait (ms)"])
