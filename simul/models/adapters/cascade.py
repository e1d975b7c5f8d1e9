"""A cascade: an English ASR model feeding a text MT model, behind one adapter.

Nguyen et al. 2021 (Figure 3) set their end-to-end model beside a cascade (an ASR system
feeding a wait-k Transformer MT). simul builds one from two ESPnet2 models trained by its
recipes (``asr_conformer_bpe_en``, ``mt_transformer_bpe_en-es``):

- :class:`SpeechASR` — an ESPnet2 ASR model (encoder, CTC, attention decoder): simul uses
  its encoder on the audio prefix read and the greedy transcript of its CTC;
- :class:`TextMT` — an ESPnet2 MT model: :meth:`TextMT.encode_words` encodes source words
  (the transcript), and the decoder calls of :class:`~simul.models.adapters.espnet_st.ESPnetST`
  (greedy continuation of a committed prefix, beam search) run over that encoding;
- :class:`Cascade` — both behind the interface a streaming session and the ``cascade``
  policy (:mod:`simul.policies.cascade`) use: ``encode`` (the ASR encoder on the audio),
  ``asr_words``, ``mt_encode`` and the MT's decoder calls, units and text.

Records, scores, sweeps and computation-aware latency treat a cascade like any other
model: every call either model makes is timed in the session's decisions.

A cascade is a directory holding ``cascade.json``: ``{"asr": MODEL, "mt": MODEL}``, each a
shipped model name or a model directory (relative paths from the cascade's directory).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from simul.metrics import units
from simul.models import registry
from simul.models.adapter import Delegate, Encoded, ModelError
from simul.models.adapters.espnet_st import ESPnetST, read_config, resolve_model_dir

CASCADE_FILE = registry.CASCADE_FILE


class SpeechASR(ESPnetST):
    """An ESPnet2 ASR model: the encoder and CTC of :class:`ESPnetST`, over its own units
    (its CTC's units are its token list)."""

    TASK = ("espnet2.tasks.asr", "ASRTask")
    # speech in, text out, as an ST model: the speech-translation policies decode it (offline
    # greedy and beam give its transcripts, simul models eval)
    kind = "st"

    @staticmethod
    def _check_config(conf: dict, config: Path) -> None:
        if "src_token_list" in conf:
            raise ModelError(f"{config}: has a src_token_list — a translation model, not ASR")

    def __init__(self, config, model_file, device: str = "cpu"):
        super().__init__(config, model_file, device)
        if getattr(self.model, "ctc", None) is None:
            raise ModelError(f"{config}: the ASR model has no CTC (ctc_weight 0)")
        self.src_token_list, self.src_unit = self.token_list, self.unit_type
        # ESPnet builds no attention decoder at ctc_weight 1.0: the model is read through its
        # CTC only (a cascade, simul models eval), never decoded by a policy
        self.ctc_only = self.model.decoder is None

    def _derive(self, enc: Encoded) -> Encoded:
        # a cascade reads the ASR's encoder output through its CTC only: its decoder's keys
        # and values are made at the first decoder step that needs them, not at every encode
        return enc


class TextMT(ESPnetST):
    """An ESPnet2 MT model: :meth:`encode_words` instead of audio; the decoder calls are
    :class:`ESPnetST`'s."""

    TASK = ("espnet2.tasks.mt", "MTTask")
    kind = "mt"  # text in: no policy reads audio into it (the cascade policy drives it)

    @staticmethod
    def _check_config(conf: dict, config: Path) -> None:
        if "src_token_list" not in conf or conf.get("frontend") not in (None, "embed"):
            raise ModelError(f"{config}: not an ESPnet2 text MT config (src_token_list and "
                             "an embedding frontend)")

    def __init__(self, config, model_file, device: str = "cpu"):
        conf = read_config(Path(config))
        if conf.get("encoder") == "transformer_unidirectional":  # wait-k text MT models
            from simul.models import extensions

            extensions.register()
        super().__init__(config, model_file, device)
        self._src_sp = None
        self._src_index = {u: i for i, u in enumerate(self.src_token_list or [])}
        if self.src_unit == "bpe":
            import sentencepiece as spm

            from simul.models.adapters.espnet_st import _find

            path = _find(Path(config).parent, conf.get("src_bpemodel"))
            if not path or not Path(path).is_file():
                raise ModelError(f"{config}: src_bpemodel {conf.get('src_bpemodel')!r} not found")
            self._src_sp = spm.SentencePieceProcessor(model_file=path)

    def source_ids(self, words: list[str]) -> list[int]:
        """Source words → the MT's source unit ids (<unk> for unknown pieces)."""
        text = " ".join(words)
        if self._src_sp is not None:
            pieces = self._src_sp.encode(text, out_type=str)
        else:
            pieces = [units.CHAR_SPACE if c == " " else c for c in text]
        unk = self._src_index.get("<unk>", 1)
        return [self._src_index.get(p, unk) for p in pieces]

    @torch.inference_mode()
    def encode_words(self, words: list[str]) -> Encoded:
        """Encoder states of the source words (``n_samples`` holds the number of words)."""
        ids = self.source_ids(list(words))
        if not ids:
            return Encoded(torch.zeros(0, self._enc_dim(), device=self.device), 0)
        x = torch.tensor([ids], device=self.device)
        enc, lens = self.model.encode(x, torch.tensor([len(ids)], device=self.device))
        return self._derive(Encoded(enc[0, : int(lens[0])], len(words)))

    def encode(self, audio) -> Encoded:
        raise ModelError(f"{self.config_path}: a text MT model encodes words "
                         "(encode_words), not audio")

    def translate(self, words: list[str], *, beam: int = 1,
                  maxlenratio: float = 2.0) -> list[int]:
        """Target units of the offline translation of ``words``: greedy (``beam`` 1) or
        ESPnet's beam search, to </s> or ``maxlenratio`` × source units (ESPnet's own
        cap, one unit per source unit, cuts off translations longer than their source)."""
        enc = self.encode_words(list(words))
        if beam == 1:
            return self.greedy(enc, maxlenratio=maxlenratio).tokens
        return self.beam_search(enc, beam=beam, nbest=1, maxlenratio=maxlenratio)[0].tokens


class Cascade(Delegate):
    """ASR → MT behind the adapter interface (:class:`simul.models.adapter.CascadeAdapter`,
    see the module doc): :meth:`encode` is the ASR's; the units, the decoder calls (over
    :meth:`mt_encode`'s output) and the text are the MT's, handed on by
    :class:`~simul.models.adapter.Delegate`, and so are the MT model's other attributes."""

    kind = "cascade"  # only the cascade policy runs on it (Policy.runs_on)

    def __init__(self, asr: SpeechASR, mt: TextMT, name: str = "cascade"):
        super().__init__(mt)
        self.asr, self.mt, self.name = asr, mt, name

    @property
    def device(self) -> str:
        return self.asr.device

    @property
    def config_path(self) -> Path:
        return self.mt.config_path

    def __getattr__(self, name: str):
        if name in ("asr", "mt", "inner"):  # not yet set (copy, pickle)
            raise AttributeError(name)
        return getattr(self.mt, name)

    def encode(self, audio: np.ndarray) -> Encoded:
        """The ASR encoder's states of the audio prefix."""
        return self.asr.encode(audio)

    def encode_batch(self, audios: list[np.ndarray]) -> list[Encoded]:
        return self.asr.encode_batch(audios)

    def asr_words(self, enc: Encoded) -> list[str]:
        """The words of the ASR's greedy CTC transcript of an encoded prefix."""
        return self.asr.ctc_words(enc)

    def mt_encode(self, words: list[str]) -> Encoded:
        return self.mt.encode_words(list(words))

    @classmethod
    def from_dir(cls, directory: str | Path, device: str = "cpu") -> Cascade:
        asr_dir, mt_dir = parts(directory)
        return cls(SpeechASR.from_dir(asr_dir, device), TextMT.from_dir(mt_dir, device),
                   Path(directory).name)


is_cascade = registry.is_cascade


def parts(directory: str | Path) -> tuple[Path, Path]:
    """The ASR and MT model directories a cascade directory names
    (:func:`simul.models.registry.cascade_parts`), or :class:`ModelError`."""
    try:
        return registry.cascade_parts(directory)
    except ValueError as e:
        raise ModelError(str(e)) from None


def files(directory: str | Path) -> list[Path]:
    """What a cascade's results depend on: cascade.json and both models' config and
    weights (for checksums)."""
    out = [Path(directory) / CASCADE_FILE]
    for part in parts(directory):
        out += list(resolve_model_dir(part))
    return out
