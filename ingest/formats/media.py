"""Audio and video: decode to 16 kHz mono PCM (ffmpeg; WAV also without it), transcribe
(pocketsphinx offline by default, faster-whisper from a local model directory), and write the
transcript as Markdown with a section per minute."""

from __future__ import annotations

import io
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ingest.errors import ExtractionError, ToolMissingError
from ingest.formats.base import Extracted, ExtractRequest, MarkdownWriter, one_line

RATE = 16_000
_WINDOW_S = 20  # pocketsphinx decodes the audio in windows of this length


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str


class Transcriber(Protocol):
    name: str

    def transcribe(self, pcm: bytes) -> list[Segment]:
        """Transcribe 16 kHz mono signed 16-bit little-endian PCM."""
        ...


class PocketSphinx:
    name = "pocketsphinx"

    def transcribe(self, pcm: bytes) -> list[Segment]:
        from pocketsphinx import Decoder  # noqa: PLC0415

        decoder = Decoder(samprate=RATE, loglevel="FATAL")
        step = _WINDOW_S * RATE * 2
        segments = []
        for offset in range(0, len(pcm), step):
            decoder.start_utt()
            decoder.process_raw(pcm[offset : offset + step], full_utt=True)
            decoder.end_utt()
            hypothesis = decoder.hyp()
            text = one_line(hypothesis.hypstr) if hypothesis is not None else ""
            if text:
                start = offset / (RATE * 2)
                end = min(len(pcm), offset + step) / (RATE * 2)
                segments.append(Segment(start, end, text))
        return segments


class FasterWhisper:
    name = "faster-whisper"

    def __init__(self, model_dir: str) -> None:
        self.model_dir = model_dir

    def transcribe(self, pcm: bytes) -> list[Segment]:
        try:
            import numpy as np  # noqa: PLC0415
            from faster_whisper import WhisperModel  # noqa: PLC0415
        except ImportError as exc:
            raise ToolMissingError(
                "faster-whisper is not installed: pip install 'lore[whisper]'"
            ) from exc
        model = WhisperModel(self.model_dir, device="cpu", compute_type="int8")
        audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
        pieces, _ = model.transcribe(audio)
        return [Segment(p.start, p.end, one_line(p.text)) for p in pieces if p.text.strip()]


def transcriber_for(request: ExtractRequest) -> Transcriber:
    tools = request.tools
    if tools.transcriber == "pocketsphinx":
        return PocketSphinx()
    if tools.transcriber == "faster-whisper":
        if not tools.whisper_model_dir:
            raise ToolMissingError(
                "faster-whisper needs a local model directory: set "
                "LORE_MEDIA__WHISPER_MODEL_DIR (models are never downloaded)"
            )
        return FasterWhisper(tools.whisper_model_dir)
    raise ToolMissingError(
        f"{request.name} is {request.doc_type.upper()} media and no transcriber is enabled: set "
        "LORE_MEDIA__TRANSCRIBER=pocketsphinx (offline, bundled) or faster-whisper with "
        "LORE_MEDIA__WHISPER_MODEL_DIR"
    )


def _wav_pcm(data: bytes) -> bytes:
    """16 kHz mono 16-bit PCM from a PCM WAV file, without ffmpeg."""
    import numpy as np  # noqa: PLC0415

    with wave.open(io.BytesIO(data)) as reader:
        channels, width, rate = reader.getnchannels(), reader.getsampwidth(), reader.getframerate()
        frames = reader.readframes(reader.getnframes())
    dtype = {1: np.uint8, 2: np.int16, 4: np.int32}.get(width)
    if dtype is None:
        raise ExtractionError(f"{8 * width}-bit WAV needs ffmpeg to decode")
    samples = np.frombuffer(frames, dtype=dtype).astype(np.float64)
    if width == 1:
        samples = (samples - 128) * 256
    elif width == 4:
        samples = samples / 65536
    samples = samples.reshape(-1, channels).mean(axis=1)
    if rate != RATE and len(samples):
        positions = np.arange(0, len(samples), rate / RATE)
        samples = np.interp(positions, np.arange(len(samples)), samples)
    return bytes(np.clip(samples, -32768, 32767).astype("<i2").tobytes())


def decode_audio(request: ExtractRequest) -> bytes:
    ffmpeg = request.tools.ffmpeg
    if ffmpeg is None:
        if request.doc_type == "wav":
            try:
                return _wav_pcm(request.data)
            except (wave.Error, EOFError, ValueError) as exc:
                raise ExtractionError(f"{request.name} is not a readable WAV file: {exc}") from exc
        raise ToolMissingError(
            f"{request.doc_type.upper()} audio is decoded with ffmpeg, which is not installed: "
            "apt-get install -y ffmpeg (or set LORE_MEDIA__FFMPEG_PATH)"
        )
    with tempfile.TemporaryDirectory(prefix="lore-media-") as tmp:
        source = Path(tmp) / f"media.{request.doc_type}"  # never the user's filename
        source.write_bytes(request.data)
        command = [
            ffmpeg, "-nostdin", "-v", "error", "-i", str(source),
            "-t", str(request.limits.max_media_seconds),
            "-vn", "-ac", "1", "-ar", str(RATE), "-f", "s16le", "pipe:1",
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, timeout=600, check=False)
    if result.returncode != 0 or not result.stdout:
        detail = one_line(result.stderr.decode(errors="replace"))[:300]
        raise ExtractionError(f"{request.name} has no audio ffmpeg can decode: {detail}")
    return result.stdout


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def extract_media(request: ExtractRequest) -> Extracted:
    transcriber = transcriber_for(request)
    pcm = decode_audio(request)
    limit = request.limits.max_media_seconds * RATE * 2
    out = MarkdownWriter(request.limits)
    if len(pcm) > limit:
        out.warn(f"only the first {request.limits.max_media_seconds} s were transcribed")
        pcm = pcm[:limit]
    segments = transcriber.transcribe(pcm)
    if not segments:
        raise ExtractionError(f"no speech was recognised in {request.name}")
    minute = -1
    for segment in segments:
        if int(segment.start // 60) != minute:
            minute = int(segment.start // 60)
            if not out.heading(2, f"Transcript {_clock(minute * 60)}"):
                break
        if not out.paragraph(f"[{_clock(segment.start)}] {segment.text}"):
            break
    return out.result("", transcriber.name)
