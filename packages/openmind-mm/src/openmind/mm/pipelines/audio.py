"""Audio tasks: speech recognition, audio classification, text to speech (transformers' models)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.core.pipelines.errors import I_BAD_PARAM
from openmind.mm.pipelines.base import MediaWrapper


@dataclass(frozen=True)
class SpeechRecognitionParams:
    return_timestamps: bool | str | None = None
    chunk_length_s: float | None = None

    def check(self) -> None:
        if self.chunk_length_s is not None and self.chunk_length_s <= 0:
            raise I_BAD_PARAM.error(f"chunk_length_s={self.chunk_length_s!r}: must be > 0", location="chunk_length_s")


class AudioWrapper(MediaWrapper):
    input_kind = "audio"

    def __call__(self, inputs: Any, *, sampling_rate: int | None = None, **params: Any) -> Any:
        self._sampling_rate = sampling_rate
        return super().__call__(inputs, **params)


class SpeechRecognitionPipeline(AudioWrapper):
    """Audio in, ``{"text"}`` out (CTC models such as wav2vec2, or Whisper-style seq2seq).

    Example::

        asr = pipeline("automatic-speech-recognition", model="./wav2vec2")
        asr("speech.wav")["text"]
        asr(samples, sampling_rate=16000)
    """

    task = "automatic-speech-recognition"
    params_cls = SpeechRecognitionParams


@dataclass(frozen=True)
class AudioClassificationParams:
    top_k: int | None = 5

    def check(self) -> None:
        if self.top_k is not None and self.top_k < 1:
            raise I_BAD_PARAM.error(f"top_k={self.top_k!r}: must be >= 1", location="top_k")


class AudioClassificationPipeline(AudioWrapper):
    """Audio in, ``[{"label", "score"}]`` out.

    Example::

        classify = pipeline("audio-classification", model="./ast")
        classify("dog.wav", top_k=3)
    """

    task = "audio-classification"
    params_cls = AudioClassificationParams


@dataclass(frozen=True)
class TextToSpeechParams:
    #: seeds the framework's random generator before each text (VITS / MMS-TTS sample noise), so a
    #: text's audio does not depend on what else is in the batch
    seed: int | None = None

    def check(self) -> None:
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0):
            raise I_BAD_PARAM.error(f"seed={self.seed!r}: must be an integer >= 0", location="seed")


class TextToSpeechPipeline(MediaWrapper):
    """Text in, ``{"audio", "sampling_rate"}`` out (``openmind run --output-dir`` writes a .wav).

    Example::

        speak = pipeline("text-to-speech", model="./mms-tts-eng")
        out = speak("Hello", seed=0)   # out["audio"]: float samples, out["sampling_rate"]
    """

    task = "text-to-speech"
    input_kind = "text"
    writes_media = True
    params_cls = TextToSpeechParams
