"""Latency metrics of simultaneous speech translation, one implementation each, by name.

Every metric takes plain lists, never model objects:

- ``delays``: ms of source audio read when each output *word* was emitted (non-decreasing),
- ``source_length``: |X|, the duration of the source in ms,
- ``reference_length``: |Y*|, words of the reference, ``len(reference.split(" "))``
  (SimulEval's count: it splits on single spaces, so an empty reference counts as 1).

The metrics registered in :data:`SIMULEVAL_METRICS` follow SimulEval 1.1's latency scorers
(``simuleval/evaluator/scorers/latency_scorer.py``) for text output with ``--eval-latency-unit
word`` and its default ``use_ref_len``: the same numbers, written independently. Their
computation-aware (CA) form (Ma et al. 2020) is the same function applied to ``elapsed``
(ms: delay + compute time spent on the utterance until the word was emitted) instead of
``delays``, except ATD, which takes both (see :func:`average_token_delay`).

The papers' own definitions are separate names (:data:`PAPER_METRICS`): ``AL_N21``,
``AL_N21_orig`` (Nguyen et al. 2021, eq. 6), ``AL_M20`` (Ma et al. 2020, eq. 1) and
``AL_K22`` (Polák et al. 2022, eq. 4 with eq. 6, which is LAAL). Every AL variant (AL, LAAL
and the papers') is one computation, :func:`_average_lagging`, with its own ideal rate γ,
lagging times and weights. Both lists, and each metric's CA form and unit, come from the
registry (:func:`register`).

A corpus score is the mean of the sentence scores (:func:`corpus_latency`). Like SimulEval,
an utterance without any output word has no latency and is left out of that mean.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

LATENCY: dict[str, Callable[..., float]] = {}
"""Sentence-level latency metrics by name: ``fn(delays, source_length, reference_length)``."""

COMPUTATION_AWARE: dict[str, str] = {}
"""How each metric's CA form is computed: ``"elapsed"`` (the metric applied to ``elapsed``
instead of ``delays``) or ``"delays+elapsed"`` (the metric takes ``elapsed=`` besides
``delays``). Metrics without a CA form are absent."""

DEFINED_BY: dict[str, str] = {}
"""Whose definition each metric follows: ``"simuleval"`` (SimulEval 1.1's scorer) or
``"paper"`` (a paper's own variant). :data:`SIMULEVAL_METRICS` and :data:`PAPER_METRICS`,
at the end of this module, list them in registration order."""

MEASURED_IN: dict[str, str] = {}
"""Each metric's unit: ``"ms"``, or ``"ratio"`` (unitless: AP, RTF)."""

ATD_SOURCE_TOKEN_MS = 300.0
"""ATD cuts speech into pseudo source tokens of 300 ms ("300ms per word" in SimulEval)."""


def register(name: str, *, computation_aware: str | None = "elapsed",
             defined_by: str = "simuleval", measured_in: str = "ms"):
    """Register a sentence-level latency metric under ``name`` (once)."""
    if computation_aware not in ("elapsed", "delays+elapsed", None):
        raise ValueError(f"{name}: unknown computation_aware mode {computation_aware!r}")
    if defined_by not in ("simuleval", "paper"):
        raise ValueError(f"{name}: defined_by must be 'simuleval' or 'paper', not "
                         f"{defined_by!r}")
    if measured_in not in ("ms", "ratio"):
        raise ValueError(f"{name}: measured_in must be 'ms' or 'ratio', not {measured_in!r}")

    def decorate(fn: Callable[..., float]) -> Callable[..., float]:
        if name in LATENCY:
            raise ValueError(f"latency metric {name!r} is registered twice")
        LATENCY[name] = fn
        DEFINED_BY[name] = defined_by
        MEASURED_IN[name] = measured_in
        if computation_aware is not None:
            COMPUTATION_AWARE[name] = computation_aware
        return fn

    return decorate


# ---------------------------------------------------------------------------------------
# The AL core


def _average_lagging(delays: Sequence[float], source_length: float, words_per_ms: float, *,
                     times: Sequence[float] | None = None,
                     weights: Sequence[int] | None = None) -> float:
    """Every AL variant: 1/τ · Σ_{i=1..τ} w_i · [t_i − (i−1)/γ], ms.

    ``delays`` d_i give the cut-off τ = min{i : d_i ≥ |X|} (all of them if none reaches
    |X|); ``times`` t_i (default: the delays) are what lags behind the ideal (i−1)/γ,
    γ = ``words_per_ms``; ``weights`` w_i (default 1) weight each term, but τ still counts
    terms, not weights. The variants differ only in γ, times and weights: AL (γ = |Y*|/|X|),
    LAAL (γ = max(|Y|, |Y*|)/|X|), AL_M20 CA (times = elapsed, τ from the delays), AL_N21
    (terms are decoding steps, weighted by the words each wrote).
    """
    total = 0.0
    tau = 0
    for i_minus_1, d in enumerate(delays):
        t = d if times is None else times[i_minus_1]
        w = 1 if weights is None else weights[i_minus_1]
        total += (t - i_minus_1 / words_per_ms) * w
        tau = i_minus_1 + 1
        if d >= source_length:
            break
    return total / tau


# ---------------------------------------------------------------------------------------
# SimulEval 1.1 metrics


@register("AL")
def average_lagging(delays: Sequence[float], source_length: float,
                    reference_length: int) -> float:
    """Average Lagging, ms (Ma et al. 2019, STACL; adaptive γ of Ma et al. 2020 / SimulEval).

    AL = 1/τ · Σ_{i=1..τ} [d_i − (i−1)/γ],  γ = |Y*| / |X|  (reference words per ms),
    τ = min{i : d_i ≥ |X|} (all words if no delay reaches |X|).

    SimulEval returns d_1 when d_1 > |X|; that is what the formula gives anyway (τ = 1 and
    the first ideal delay is 0). With a hypothesis much longer than the reference the
    ideal delays (i−1)/γ outrun d_i and AL goes negative (Polák et al. 2022, §5.4).
    """
    return _average_lagging(delays, source_length, reference_length / source_length)


@register("LAAL")
def length_adaptive_average_lagging(delays: Sequence[float], source_length: float,
                                    reference_length: int) -> float:
    """Length-Adaptive Average Lagging, ms (Polák et al. 2022; named by Papi et al. 2022).

    AL with γ = max(|Y|, |Y*|) / |X|, |Y| = hypothesis words = len(delays):
    LAAL = 1/τ · Σ_{i=1..τ} [d_i − (i−1)·|X|/max(|Y|, |Y*|)],  τ = min{i : d_i ≥ |X|}.
    The ideal delays stay below |X| however long the hypothesis is, so LAAL is not driven
    negative by over-generation as AL is; it is still negative for a system that writes
    ahead of the ideal pace (e.g. every word before reading anything).
    """
    longest = max(len(delays), reference_length)
    return _average_lagging(delays, source_length, longest / source_length)


@register("DAL")
def differentiable_average_lagging(delays: Sequence[float], source_length: float,
                                   reference_length: int) -> float:
    """Differentiable Average Lagging, ms (Arivazhagan et al. 2019, MILk; SimulEval).

    γ = |Y| / |X| with |Y| the *hypothesis* length (SimulEval ignores the reference here),
    d'_1 = d_1,  d'_i = max(d_i, d'_{i−1} + 1/γ),
    DAL = 1/|Y| · Σ_{i=1..|Y|} [d'_i − (i−1)/γ]   (no cut-off τ).
    ``reference_length`` is accepted for the common signature and not used.
    """
    words_per_ms = len(delays) / source_length
    total = 0.0
    previous = 0.0
    for i_minus_1, d in enumerate(delays):
        current = d if i_minus_1 == 0 else max(d, previous + 1 / words_per_ms)
        total += current - i_minus_1 / words_per_ms
        previous = current
    return total / len(delays)


@register("AP", measured_in="ratio")
def average_proportion(delays: Sequence[float], source_length: float,
                       reference_length: int) -> float:
    """Average Proportion, unitless (Cho and Esipova 2016, as SimulEval 1.1 computes it).

    AP = Σ_i d_i / (|X| · |Y*|), with |Y*| the *reference* length (SimulEval uses the
    reference when there is one; the original divides by the hypothesis length |Y|).
    So AP is not bounded by 1: a hypothesis longer than the reference can exceed it.
    """
    return sum(delays) / (source_length * reference_length)


@register("ATD", computation_aware="delays+elapsed")
def average_token_delay(delays: Sequence[float], source_length: float,
                        reference_length: int, *,
                        elapsed: Sequence[float] | None = None,
                        text_input: bool = False) -> float:
    """Average Token Delay, ms (Kano et al. 2023, arXiv:2211.13173): speech in 300 ms source
    tokens, text one token a source word.

    As SimulEval 1.1 computes it for text output: words written at the same delay form a
    target chunk; target chunk j follows source chunk j, the audio between the previous
    distinct delay and this one (from 0 for the first), cut into 300 ms pseudo tokens plus
    one shorter token for the remainder. Target words have no duration: word t ends at
    T_t = max(d_t, T_{t−1}) + c_t (T_0 = 0), with c_t its compute time (0 without
    ``elapsed``). Word t of chunk j is paired with source token
    s(t) = min(t − max(0, Y_{<j} − X_{<j}), X_{≤j}), where X and Y count source and target
    tokens of the chunks before j (<j) or up to j (≤j), and
    ATD = mean_t [T_t − end(s(t))]  (end(0) = 0).

    CA (``elapsed`` given): c_t is the compute time added since the previous word,
    (e_t − d_t) − (e_{t−1} − d_{t−1}); compute overlaps with listening (T_t restarts from
    d_t when the source is later than the previous word), so ATD_CA ≠ ATD on ``elapsed``.
    All-zero ``elapsed`` (SimulEval's untimed text input) means no compute time.
    ``source_length`` (audio after the last write is never paired) and
    ``reference_length`` are accepted for the common signature and not used.

    ``text_input``: delays count source words (SimulEval's text-to-text evaluation); each
    source word is one source token of length 1 and each target word lasts 1 ("virtual
    time 1"), so T_t = max(d_t, T_{t−1}) + 1.
    """
    n = len(delays)
    if elapsed is not None and len(elapsed) != n:
        raise ValueError(f"ATD: {len(elapsed)} elapsed for {n} delays")
    if elapsed is None or all(e == 0 for e in elapsed):
        # all-zero elapsed (SimulEval's text input, not timed) counts as no compute time
        compute = [0.0] * n
    else:
        overhead = [e - d for e, d in zip(elapsed, delays, strict=True)]
        compute = [o - p for o, p in zip(overhead, [0.0, *overhead[:-1]], strict=True)]

    source_token, word_length = (1.0, 1.0) if text_input else (ATD_SOURCE_TOKEN_MS, 0.0)
    reads, chunk_words = steps_from_delays(delays)
    source_end = [0.0]  # source_end[k]: end time (ms) of source token k; token 0 = start
    source_tokens_through = [0]  # [j]: source tokens in chunks 1..j
    previous_read = 0.0
    for read in reads:
        full, rest = divmod(read - previous_read, source_token)
        for piece in [source_token] * int(full) + ([rest] if rest != 0 else []):
            source_end.append(source_end[-1] + piece)
        source_tokens_through.append(len(source_end) - 1)
        previous_read = read

    token_delays = []
    t = 0  # 1-based index of the target word
    target_end = 0.0
    written_before = 0  # target words in the chunks before this one
    for j, size in enumerate(chunk_words):
        source_before, source_now = source_tokens_through[j], source_tokens_through[j + 1]
        for _ in range(size):
            t += 1
            target_end = max(delays[t - 1], target_end) + word_length + compute[t - 1]
            paired = min(t - max(0, written_before - source_before), source_now)
            token_delays.append(target_end - source_end[paired])
        written_before += size
    return float(statistics.mean(token_delays))


@register("StartOffset")
def start_offset(delays: Sequence[float], source_length: float,
                 reference_length: int) -> float:
    """Start offset, ms (SimulEval): d_1, the source read before the first word."""
    return delays[0]


@register("EndOffset")
def end_offset(delays: Sequence[float], source_length: float,
               reference_length: int) -> float:
    """End offset, ms (SimulEval): d_|Y| − |X|, how long after the source's end the last
    word came (0 when the last word waited for the whole source; CA: > 0 by the compute)."""
    return delays[-1] - source_length


@register("RTF", measured_in="ratio")
def real_time_factor(delays: Sequence[float], source_length: float,
                     reference_length: int) -> float:
    """Real-time factor, unitless, as SimulEval 1.1 defines it for text output: d_|Y| / |X|.

    SimulEval needs nothing but the last delay and the source length. On ``delays`` (NCA)
    it is only the share of the source read before the last word (1.0 when the last word
    waited for the whole source, = 1 + EndOffset/|X|); it becomes a real-time factor in
    the usual sense on ``elapsed`` (RTF_CA): time until the last word, compute included,
    over the source duration — > 1 means the system finished after the speaker did.
    """
    return delays[-1] / source_length


# ---------------------------------------------------------------------------------------
# The papers' own variants


def steps_from_delays(delays: Sequence[float]) -> tuple[list[float], list[int]]:
    """Decoding steps that wrote words: (read position of each step in ms, words written).

    Consecutive words with equal delays were written at one step (SimulEval logs a
    multi-word write as repeated delays).
    """
    reads: list[float] = []
    words: list[int] = []
    for d in delays:
        if reads and d == reads[-1]:
            words[-1] += 1
        else:
            reads.append(d)
            words.append(1)
    return reads, words


def al_n21_steps(step_reads: Sequence[float], step_words: Sequence[int],
                 source_length: float, target_length: int) -> float:
    """Nguyen et al. 2021, eq. (6), literally: AL over decoding steps with multi-token writes.

    AL = 1/τ · Σ_{t=1..τ} [g(t) − (t−1)/γ] · w_t,   τ = min{t : g(t) = |X|}
    (≥ here; all steps if none reaches |X|), with g(t) the source read at step t (ms),
    w_t the words written at step t and γ = target_length / |X|. Note what the equation
    says: the sum is weighted by w_t but divided by the number of *steps* τ, and the ideal
    delay (t−1)/γ advances once per *step*, not per word. With one word per step it is AL;
    writing N words at every step multiplies the lag by about N. (The paper's numbers were
    computed with SimulEval's word-level AL, footnote 3, which is ``AL``.)
    """
    if len(step_reads) != len(step_words):
        raise ValueError(f"AL_N21: {len(step_reads)} steps read, {len(step_words)} write")
    return _average_lagging(step_reads, source_length, target_length / source_length,
                            weights=step_words)


@register("AL_N21", computation_aware=None, defined_by="paper")
def al_nguyen2021(delays: Sequence[float], source_length: float,
                  reference_length: int) -> float:
    """AL of Nguyen et al. 2021 eq. (6), adaptive γ = |Y*|/|X| (reference words), ms.

    The steps are rebuilt from the word delays (:func:`steps_from_delays`): a step is a run
    of words with equal delay, so steps that completed no word are not counted in τ, and
    steps at the same read position (after the whole input was read) merge into one.
    See :func:`al_n21_steps` for the formula.
    """
    reads, words = steps_from_delays(delays)
    return al_n21_steps(reads, words, source_length, reference_length)


@register("AL_N21_orig", computation_aware=None, defined_by="paper")
def al_nguyen2021_original(delays: Sequence[float], source_length: float,
                           reference_length: int) -> float:
    """AL of Nguyen et al. 2021 eq. (6) with the original γ = |Y|/|X| (hypothesis words),
    as in their Fig. 3, ms. Same steps as ``AL_N21``; ``reference_length`` is not used."""
    reads, words = steps_from_delays(delays)
    return al_n21_steps(reads, words, source_length, len(delays))


@register("AL_orig", computation_aware=None, defined_by="paper")
def al_original(delays: Sequence[float], source_length: float,
                reference_length: int) -> float:
    """AL as Ma et al. 2019 (STACL) first defined it, γ = |Y|/|X| with the hypothesis length,
    one term per word, ms: the "original AL metric" of Nguyen et al. 2021's Fig. 3, in which
    the IWSLT 2020 cascade was measured (SimulEval's AL given no reference).
    ``reference_length`` is not used. ``AL_N21_orig`` is eq. (6)'s step form of it, which
    weights a step by its words and so multiplies the lag of a many-word write."""
    return _average_lagging(delays, source_length, len(delays) / source_length)


@register("AL_M20", computation_aware="delays+elapsed", defined_by="paper")
def al_ma2020(delays: Sequence[float], source_length: float, reference_length: int, *,
              elapsed: Sequence[float] | None = None) -> float:
    """Time-based AL of Ma et al. 2020 (SimulMT to SimulST), eq. (1), ms.

    AL = 1/τ(|X|) · Σ_{i=1..τ(|X|)} [d(y_i) − (|X|/|Y*|)·T_s·(i−1)]

    with |X|·T_s the source duration in ms (here ``source_length``), |Y*| the reference
    length and τ(|X|) "the index of the first target token generated when the model read
    the full input": the first i with d_NCA(y_i) ≥ |X| (all words if none).

    NCA: equal to ``AL``. CA (``elapsed`` given): d(y_i) are the elapsed times but τ still
    comes from what had been *read* (``delays``), whereas SimulEval's AL_CA cuts at the
    first *elapsed* time ≥ |X|, which can be earlier.
    """
    if elapsed is not None and len(elapsed) != len(delays):
        raise ValueError(f"AL_M20: {len(elapsed)} elapsed for {len(delays)} delays")
    return _average_lagging(delays, source_length, reference_length / source_length,
                            times=elapsed)


@register("AL_K22", computation_aware=None, defined_by="paper")
def al_polak2022(delays: Sequence[float], source_length: float,
                 reference_length: int) -> float:
    """Max-length AL of Polák et al. 2022 (CUNI-KIT, IWSLT), eq. (4) with eq. (6), ms.

    AL = 1/τ' · Σ_{i=1..τ'} [d_i − d*_i],  d*_i = (i−1) · Σ_j T_j / max(|Y|, |Y*|),
    τ' = min{i : d_i = Σ_j T_j} (≥ here; all words if none), Σ_j T_j = |X| in ms.

    d*_i is LAAL's ideal delay (i−1)/γ with γ = max(|Y|, |Y*|)/|X|, and the cut-off is the
    same: eq. (6) written in time *is* LAAL (:func:`length_adaptive_average_lagging`), which
    computes it. It keeps the paper's name for the paper's tables, without a CA form (the
    paper defines none; ``LAAL_CA`` is SimulEval's).
    """
    return length_adaptive_average_lagging(delays, source_length, reference_length)


# ---------------------------------------------------------------------------------------
# Entry points


def sentence_latency(name: str, delays: Sequence[float], source_length: float,
                     reference_length: int, elapsed: Sequence[float] | None = None, *,
                     text_input: bool = False) -> float:
    """Metric ``name`` of one utterance; its CA form when ``elapsed`` is given.
    ``text_input``: delays and ``source_length`` count source words (text-to-text, as
    SimulEval scores it: the same formulas, ATD with word tokens, no CA form)."""
    if name not in LATENCY:
        raise ValueError(f"unknown latency metric {name!r} (known: {', '.join(LATENCY)})")
    if not delays:
        raise ValueError(f"{name}: no output word, latency is undefined")
    if not source_length > 0:
        raise ValueError(f"{name}: source_length must be > 0 {'words' if text_input else 'ms'}"
                         f", not {source_length}")
    if reference_length < 1:
        raise ValueError(f"{name}: reference_length must be ≥ 1 word, not {reference_length}")
    fn = LATENCY[name]
    if text_input:
        if elapsed is not None:
            raise ValueError(f"{name}: no computation-aware latency on text input "
                             "(SimulEval has none)")
        if fn is average_token_delay:
            return fn(delays, source_length, reference_length, text_input=True)
    if elapsed is None:
        return fn(delays, source_length, reference_length)
    mode = COMPUTATION_AWARE.get(name)
    if mode is None:
        raise ValueError(f"{name} has no computation-aware form")
    if len(elapsed) != len(delays):
        raise ValueError(f"{name}: {len(elapsed)} elapsed for {len(delays)} delays")
    if mode == "elapsed":
        return fn(elapsed, source_length, reference_length)
    return fn(delays, source_length, reference_length, elapsed=elapsed)


def corpus_latency(name: str, delays: Sequence[Sequence[float]],
                   source_lengths: Sequence[float], reference_lengths: Sequence[int],
                   elapsed: Sequence[Sequence[float]] | None = None, *,
                   warn_skipped: bool = True, text_input: bool = False) -> float:
    """Mean of the sentence scores of metric ``name`` (CA when ``elapsed`` is given).

    Utterances without output words are left out of the mean, as SimulEval does (it logs
    a warning; so do we unless ``warn_skipped`` is False, for callers that warn once for
    all metrics). NaN when no utterance has an output word.
    """
    n = len(delays)
    if len(source_lengths) != n or len(reference_lengths) != n:
        raise ValueError(f"{name}: {n} delays, {len(source_lengths)} source lengths, "
                         f"{len(reference_lengths)} reference lengths")
    if elapsed is not None and len(elapsed) != n:
        raise ValueError(f"{name}: {len(elapsed)} elapsed lists for {n} delays lists")
    scores = []
    skipped = []
    for k in range(n):
        if not delays[k]:
            skipped.append(k)
            continue
        scores.append(sentence_latency(name, delays[k], source_lengths[k],
                                       reference_lengths[k],
                                       None if elapsed is None else elapsed[k],
                                       text_input=text_input))
    if skipped and warn_skipped:
        log.warning("%s: %d of %d utterances have no output word and are left out: %s",
                    name, len(skipped), n, skipped[:10])
    return float(statistics.mean(scores)) if scores else math.nan


SIMULEVAL_METRICS = tuple(n for n, by in DEFINED_BY.items() if by == "simuleval")
"""SimulEval 1.1's metrics, in registration order: AL, LAAL, DAL, AP, ATD, StartOffset,
EndOffset, RTF."""
PAPER_METRICS = tuple(n for n, by in DEFINED_BY.items() if by == "paper")
"""The papers' own variants, in registration order: AL_N21, AL_N21_orig, AL_orig, AL_M20,
AL_K22."""
