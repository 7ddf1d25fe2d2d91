#!/usr/bin/env python3
"""A voice runtime on a real WebSocket, for testing VoicePipe's transport and your own clients.

It speaks the wire protocol of PROTOCOL.md from the runtime's side and behaves like VoicePipe's
embedded runtime (Sources/VoicePipeClient/Runtime): a greeting for `session.start`, a voice gate
on the client's `audio.chunk`s, and for each turn a transcript, a classification, an
`audio_stats` tool call and result, a statistics table, an assistant line and the turn's own
audio played back at 24 kHz. A `session.start` that continues a session on a new connection is
answered first with `session.resumed`: how much of the session it has read, so a client whose
connection dropped sends again what never arrived. Switches make it misbehave in one way at a time (drop, close,
refuse, stall, oversized or invalid frames, a wrong handshake key) and can require a SigV4
signature on the handshake. Every event is printed to standard output as one JSON line.

Run `./start --help` (or `python server.py --help`); README.md describes every switch and event.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import base64
import collections
import dataclasses
import datetime
import hashlib
import hmac
import http
import json
import logging
import math
import operator
import re
import signal
import socket
import ssl
import struct
import sys
import time
import unicodedata
import urllib.parse
import weakref
import zlib
from typing import Any, NamedTuple

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close
from websockets.http11 import Request, Response

# MARK: - Constants

MS = 1_000_000
"""Nanoseconds in a millisecond: every time below is integer nanoseconds, as the Swift core's."""
SECOND = 1_000 * MS

CAPTURE_RATE = 16_000
REPLY_RATE = 24_000
REPLY_CHUNK_FRAMES = 480
"""Samples per reply chunk: 20 ms at 24 kHz (the last chunk of a reply may be shorter)."""
REPLY_CHUNK_NS = 20 * MS
END_OF_AUDIO_NS = 500 * MS
"""An open turn ends when no audio came for this long (clock time): the gate's hang-over."""
ESCALATION_DELAY_NS = 1 * SECOND
MAX_TURN_AUDIO_NS = 300 * SECOND
RESAMPLABLE_RATES = range(1_000, 768_001)

GATE_OPEN_DBFS = -40.0
GATE_CLOSE_DBFS = -46.0
GATE_HANG_OVER_NS = 500 * MS

MAX_PAYLOAD_BYTES = 1 << 20
MAX_DEPTH = 128
TOOL_NAME = "audio_stats"
SESSION_ENDED_REASON = "the client ended the session"
ESCALATION_REQUESTED = "requested"
ESCALATION_JOINING = "an agent will join shortly"
CLOSE_TIMEOUT_SECONDS = 3
SIGV4_SKEW_SECONDS = 15 * 60


def now_ns() -> int:
    """The monotonic clock in nanoseconds: the instants the runtime is given."""
    return time.monotonic_ns()


# MARK: - Events on standard output


def emit(event: str, **fields: Any) -> None:
    """Prints one event as a JSON line on standard output and flushes it."""
    line = json.dumps({"event": event, **fields}, separators=(",", ":"))
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass  # nobody reads the events any more; the server still serves


# MARK: - Reading client messages


class WireError(ValueError):
    """A client message the protocol refuses; its text is the sentence saying why."""


FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    # type: ((field, JSON kind, required), ...) in the order the protocol writes them
    "session.start": (("sessionId", "string", True), ("context", "object", False),
                      ("continuesSessionId", "string", False)),
    "audio.chunk": (("data", "string", True), ("sampleRate", "integer", True)),
    "text.input": (("text", "string", True),),
    "escalation.request": (("reason", "string", True),),
    "session.end": (),
    "transcript": (("role", "string", True), ("text", "string", True), ("final", "boolean", False)),
    "tool.call": (("id", "string", True), ("name", "string", True), ("input", "any", False)),
    "tool.result": (("id", "string", True), ("name", "string", True), ("output", "any", False),
                    ("durationMs", "number", False)),
    "classification": (("label", "string", True), ("confidence", "number", True)),
    "escalation": (("status", "string", True),),
    "interruption": (),
    "info.message": (("markdown", "string", True),),
    "session.ended": (("reason", "string", False),),
    "error": (("message", "string", True), ("code", "string or integer", False)),
    "debug": (("message", "string", True),),
    "session.resumed": (("audioChunks", "integer", True), ("texts", "integer", True)),
}
CLIENT_TYPES = {"session.start", "audio.chunk", "text.input", "escalation.request", "session.end"}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BASE64_CHARACTER = re.compile(r"[A-Za-z0-9+/]")


class ClientMessage(NamedTuple):
    """A message the protocol accepts: its fields, and for `audio.chunk` its decoded samples."""
    fields: dict
    samples: array.array | None = None

    @property
    def type(self) -> str:
        return self.fields["type"]


def read_client_message(text: str) -> ClientMessage:
    """Parses one message strictly, as PROTOCOL.md reads it; raises WireError when it is refused."""
    value = _parse_json(text)
    if not isinstance(value, dict):
        raise WireError(f"a message must be a JSON object, not {_json_kind(value)}")
    kind = value.get("type")
    if kind is None:
        raise WireError('the message has no "type" field')
    if not isinstance(kind, str):
        raise WireError(f'"type" must be a string, not {_json_kind(kind)}')
    _check_fields(value)
    samples = _audio_samples(value) if kind == "audio.chunk" else None
    return ClientMessage(value, samples)


def _parse_json(text: str) -> Any:
    """RFC 8259 JSON without repeated keys, non-finite numbers, lone surrogates or deep nesting."""
    try:
        value = json.loads(text, object_pairs_hook=_object_without_repeats,
                           parse_constant=_refuse_constant, parse_float=_finite_float)
    except WireError:
        raise
    except json.JSONDecodeError as error:
        offset = len(text[:error.pos].encode("utf-8", "surrogatepass"))
        raise WireError(f"not JSON: {error.msg.lower()} at byte {offset}") from None
    except (RecursionError, ValueError) as error:
        raise WireError(f"not JSON: {error}") from None
    _check_nesting_and_strings(value, 1)
    return value


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict:
    """Builds an object, refusing a key that appears twice."""
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise WireError(f"not JSON: the object repeats the key {_quoted(key)}")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    """NaN and Infinity are not JSON."""
    raise WireError(f"not JSON: {name} is not a JSON value")


def _finite_float(text: str) -> float:
    """A JSON number that fits a double (1e999 does not)."""
    number = float(text)
    if math.isinf(number):
        raise WireError(f"not JSON: the number {text} is out of range")
    return number


def _check_nesting_and_strings(value: Any, depth: int) -> None:
    """Refuses nesting deeper than 128 and strings with lone surrogates (escaped as \\udXXX)."""
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value):
            raise WireError("not JSON: a string holds a lone surrogate")
    elif isinstance(value, (dict, list)):
        if depth > MAX_DEPTH:
            raise WireError(f"not JSON: objects and arrays nest deeper than {MAX_DEPTH}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                _check_nesting_and_strings(key, depth)
            _check_nesting_and_strings(item, depth + 1)


def _json_kind(value: Any) -> str:
    """The JSON type name of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _has_kind(value: Any, kind: str) -> bool:
    """True when a parsed value is of the protocol's kind for a field."""
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    return {
        "string": isinstance(value, str),
        "object": isinstance(value, dict),
        "boolean": isinstance(value, bool),
        "integer": is_integer,
        "number": is_integer or isinstance(value, float),
        "string or integer": isinstance(value, str) or is_integer,
        "any": True,
    }[kind]


def _check_fields(message: dict) -> None:
    """The required fields of a known type are there, and every known field has its JSON type."""
    kind = message["type"]
    for name, expected, required in FIELDS.get(kind, ()):
        value = message.get(name)
        if value is None:
            if required:
                raise WireError(f'{kind} needs a "{name}" field')
            continue
        if not _has_kind(value, expected):
            article = "an" if expected[0] in "aeiou" else "a"
            actual = _json_kind(value)
            raise WireError(f'{kind} field "{name}" must be {article} {expected}, not '
                            f'{"an" if actual[0] in "aeiou" else "a"} {actual}')
    if kind == "transcript" and message["role"] not in ("user", "assistant"):
        raise WireError(f'transcript field "role" must be "user" or "assistant", not {_quoted(message["role"])}')


def _audio_samples(message: dict) -> array.array:
    """The Int16 samples of an `audio.chunk`, after the protocol's checks in its order."""
    rate, data = message["sampleRate"], message["data"]
    if rate <= 0:
        raise WireError(f'the audio.chunk "sampleRate" is {rate}; it must be a positive whole number of hertz')
    if len(data) % 4 or "=" in data.rstrip("=") or len(data) - len(data.rstrip("=")) > 2:
        raise WireError(f"the audio.chunk data is not valid base64: its length ({len(data)}) or padding is wrong")
    size = len(data) // 4 * 3 - (len(data) - len(data.rstrip("=")))
    if size > MAX_PAYLOAD_BYTES:
        raise WireError(f"the audio.chunk data decodes to {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit")
    if size % 2:
        raise WireError(f"the audio.chunk data decodes to {size} bytes; 16-bit audio needs an even number")
    for offset, character in enumerate(data.rstrip("=")):
        if not _BASE64_CHARACTER.fullmatch(character):
            raise WireError(f"the audio.chunk data is not valid base64: {character!r} at offset {offset} "
                            "is not a base64 character (A–Z, a–z, 0–9, +, /)")
    payload = base64.b64decode(data)
    if base64.b64encode(payload).decode("ascii") != data:
        raise WireError("the audio.chunk data is not valid base64: the bits after the last byte are not zero")
    return pcm_from_bytes(payload)


def extra_fields(message: dict) -> list[str]:
    """The fields of a known type that the protocol does not define, in the order they came."""
    known = {"type", *(name for name, _, _ in FIELDS[message["type"]])}
    return [name for name in message if name not in known]


# MARK: - Writing runtime messages


def encode_message(message: dict) -> str:
    """Compact JSON as the protocol writes it: fields in order, whole numbers without a fraction."""
    return json.dumps(_plain_numbers(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _plain_numbers(value: Any) -> Any:
    """`12.0` becomes `12` (below 2**53), a non-finite number null; everything else is kept."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value == math.floor(value) and abs(value) < 2 ** 53 else value
    if isinstance(value, dict):
        return {key: _plain_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(item) for item in value]
    return value


def _quoted(text: str, limit: int = 40) -> str:
    """A JSON string of the first `limit` characters, with "…" after it when cut."""
    return json.dumps(text[:limit], ensure_ascii=False) + ("…" if len(text) > limit else "")


def transcript(role: str, text: str) -> dict:
    return {"type": "transcript", "role": role, "text": text, "final": True}


def info_message(markdown: str) -> dict:
    return {"type": "info.message", "markdown": markdown}


def debug_message(text: str) -> dict:
    return {"type": "debug", "message": text}


def audio_chunk(samples: array.array) -> dict:
    return {"type": "audio.chunk", "data": base64.b64encode(pcm_to_bytes(samples)).decode("ascii"),
            "sampleRate": REPLY_RATE}


# MARK: - Audio


def pcm_from_bytes(data: bytes) -> array.array:
    """Int16 little-endian bytes as samples."""
    samples = array.array("h")
    samples.frombytes(data)
    if sys.byteorder == "big":
        samples.byteswap()
    return samples


def pcm_to_bytes(samples: array.array) -> bytes:
    """Samples as Int16 little-endian bytes."""
    if sys.byteorder == "big":
        samples = array.array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def peak_of(samples: array.array) -> int:
    """The largest |sample|, 0 … 32768."""
    return max(max(samples), -min(samples)) if samples else 0


def samples_ns(count: int, rate: int) -> int:
    """The duration of `count` samples at `rate`, in nanoseconds, truncated as the Swift code does."""
    whole, rest = divmod(count, rate)
    return whole * SECOND + rest * SECOND // rate


def decibels(ratio: float) -> float:
    """An amplitude ratio in dB; −inf for zero."""
    return 20 * math.log10(ratio) if ratio > 0 else -math.inf


class LinearResampler:
    """One stretch of audio at one rate to 24 kHz by linear interpolation, streamed.

    In all it gives exactly round(n × 24000 / rate) samples for n in, as the embedded runtime's.
    """

    def __init__(self, rate: int):
        self.rate = rate
        self.source = array.array("h")
        self.produced = 0

    def push(self, samples: array.array) -> array.array:
        """Takes more input; returns the output samples that input makes certain."""
        self.source.extend(samples)
        return self._produce(None)

    def flush(self) -> array.array:
        """Ends the stretch; returns the output samples still owed."""
        total = (2 * len(self.source) * REPLY_RATE + self.rate) // (2 * self.rate)
        return self._produce(total)

    def _produce(self, total: int | None) -> array.array:
        out = array.array("h")
        source, last = self.source, len(self.source) - 1
        index = self.produced
        while total is None or index < total:
            whole, remainder = divmod(index * self.rate, REPLY_RATE)
            if total is None and whole + 1 > last:
                break
            a = source[min(whole, last)]
            b = source[min(whole + 1, last)]
            out.append(a + (2 * (b - a) * remainder + REPLY_RATE) // (2 * REPLY_RATE))
            index += 1
        self.produced = index
        return out


def typed_turn_tone() -> array.array:
    """The reply to a typed turn: 440, 554 and 659 Hz, 150 ms each at −12 dBFS, 5 ms ramps, 24 kHz."""
    tone_frames, ramp_frames = 3_600, 120
    amplitude = 10 ** (-12 / 20)
    out = array.array("h")
    for frequency in (440, 554, 659):
        omega = 2 * math.pi * frequency / REPLY_RATE
        for n in range(tone_frames):
            edge = min(n, tone_frames - 1 - n)
            gain = 0.5 - 0.5 * math.cos(math.pi * edge / ramp_frames) if edge < ramp_frames else 1.0
            as_float32 = struct.unpack("f", struct.pack("f", amplitude * gain * math.sin(omega * n)))[0]
            out.append(max(-32768, min(32767, round(as_float32 * 32768))))
    return out


TYPED_TURN_TONE = typed_turn_tone()


# MARK: - Wording (the embedded runtime's, RuntimeWording.swift)


def round_half_away(value: float) -> float:
    """Rounds to a whole number, halves away from zero (Swift's `rounded()`)."""
    magnitude = abs(value)
    whole = math.floor(magnitude)
    if magnitude - whole >= 0.5:
        whole += 1
    return math.copysign(whole, value)


def rounded(value: float, decimals: int) -> float:
    """`value` rounded to `decimals` places, as a JSON number."""
    scale = 10 ** decimals
    return round_half_away(value * scale) / scale


def fixed(value: float, decimals: int) -> str:
    """A number with a fixed count of decimals and a real minus sign; "−∞"/"∞" when not finite."""
    if not math.isfinite(value):
        return "−∞" if value < 0 else ("∞" if value > 0 else "—")
    scale = 10 ** decimals
    scaled = round_half_away(value * scale)
    units = int(abs(scaled))
    whole = ("−" if scaled < 0 else "") + str(units // scale)
    return whole if decimals == 0 else f"{whole}.{units % scale:0{decimals}d}"


def seconds_text(duration_ns: int, decimals: int) -> str:
    """ "1.0 s". """
    return fixed(duration_ns / SECOND, decimals) + " s"


def dbfs_text(db: float) -> str:
    """ "−8.1 dBFS". """
    return fixed(db, 1) + " dBFS"


_NEWLINES = re.compile("\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]")
_MARKDOWN_SPECIAL = set("\\`*_[]<>|~&#!")


def markdown_escaped(text: str) -> str:
    """Text shown as written inside Markdown: markup characters escaped, line breaks as spaces."""
    flat = _NEWLINES.sub(" ", text)
    return "".join("\\" + character if character in _MARKDOWN_SPECIAL else character for character in flat)


def markdown_code(text: str) -> str:
    """`text` as a Markdown code span, fenced by one more backtick than its longest run."""
    flat = _NEWLINES.sub(" ", text)
    longest = max((len(run) for run in re.findall("`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    return fence + padded + fence


def _is_foundation_space(character: str) -> bool:
    """Foundation's whitespacesAndNewlines: Unicode spaces and separators, tab to carriage return, NEL."""
    return character in "\t\n\x0b\x0c\r\x85" or unicodedata.category(character) in ("Zs", "Zl", "Zp")


def context_string(context: dict, key: str) -> str | None:
    """A string value of the session context, trimmed; None when absent, empty or not a string."""
    value = context.get(key)
    if not isinstance(value, str):
        return None
    start, end = 0, len(value)
    while start < end and _is_foundation_space(value[start]):
        start += 1
    while end > start and _is_foundation_space(value[end - 1]):
        end -= 1
    return value[start:end] or None


def greeting(session_id: str, context: dict) -> str:
    """The `info.message` that answers `session.start`."""
    first = "Hello from the **embedded runtime** (" + (
        f"session {markdown_code(session_id)})" if session_id else "a session without an id)")
    persona, vehicle = context_string(context, "persona"), context_string(context, "vehicle")
    if persona:
        first += f", speaking as **{markdown_escaped(persona)}**"
    if vehicle:
        first += (" about" if persona else ", about") + f" your **{markdown_escaped(vehicle)}**"
    return first + ".\nSpeak or type: each turn is answered with its audio statistics and played back at 24 kHz."


def speech_transcript(speech_ns: int, peak_dbfs: float) -> str:
    """The user's line of a voice turn: "2.4 s of speech, peak −8.1 dBFS"."""
    return f"{seconds_text(speech_ns, 1)} of speech, peak {dbfs_text(peak_dbfs)}"


def voice_reply(speech_ns: int, unplayable_rate: int | None) -> str:
    """The assistant's line of a voice turn."""
    if unplayable_rate is None:
        return f"Here is what I heard: {seconds_text(speech_ns, 1)} of your speech, played back at 24 kHz."
    return (f"Here is what I heard: {seconds_text(speech_ns, 1)} of your speech. "
            f"Audio at {unplayable_rate} Hz cannot be resampled, so there is no reply audio.")


def typed_reply(text: str) -> str:
    """The assistant's line of a typed turn."""
    return f"You typed “{text}”. Here is a short tone for it."


def unplayable_rate_note(rate: int) -> str:
    """The `debug` message for a rate that cannot be resampled."""
    return (f"audio at {rate} Hz cannot be resampled to 24 kHz (the resampler takes 1000 to 768000 Hz): "
            "this turn's reply has no audio")


def statistics_table(turn: int, audio_ns: int, speech: str, peak_dbfs: float | None, rms_dbfs: float | None) -> str:
    """The `info.message` table of one turn's statistics: a header and one row."""
    peak = dbfs_text(peak_dbfs) if peak_dbfs is not None else "—"
    rms = dbfs_text(rms_dbfs) if rms_dbfs is not None else "—"
    return ("| turn | audio | speech | peak | RMS |\n|---:|---:|---:|---:|---:|\n"
            f"| {turn} | {seconds_text(audio_ns, 3)} | {speech} | {peak} | {rms} |")


def statistics(peak_dbfs: float | None, rms_dbfs: float | None, samples: int) -> dict:
    """The `audio_stats` tool's output: levels rounded to 0.1 dB, null for digital silence."""
    return {"peakDBFS": None if peak_dbfs is None else rounded(peak_dbfs, 1),
            "rmsDBFS": None if rms_dbfs is None else rounded(rms_dbfs, 1),
            "samples": samples}


# MARK: - The voice gate and the turn's audio


class VoiceGate:
    """Decides from each chunk's peak whether someone is speaking, in audio time (VoiceGate.swift)."""

    def __init__(self) -> None:
        self.is_open = False
        self.audio_ns = 0
        self.speech_start_ns = 0
        self.speech_end_ns = 0
        self.turn_peak_dbfs = -math.inf

    def process(self, peak: int, duration_ns: int) -> str | None:
        """Takes one chunk's peak and duration; returns "opened", "closed" or None."""
        start = self.audio_ns
        self.audio_ns += duration_ns
        db = decibels(peak / 32768)
        if not self.is_open:
            if peak == 0 or db < GATE_OPEN_DBFS:
                return None
            self.is_open = True
            self.speech_start_ns, self.speech_end_ns, self.turn_peak_dbfs = start, self.audio_ns, db
            return "opened"
        if peak != 0 and db >= GATE_CLOSE_DBFS:
            self.speech_end_ns = self.audio_ns
            self.turn_peak_dbfs = max(self.turn_peak_dbfs, db)
            return None
        if self.audio_ns - self.speech_end_ns < GATE_HANG_OVER_NS:
            return None
        self.is_open = False
        return "closed"

    def close(self) -> bool:
        """Ends an open turn at once; True when it was open."""
        was_open, self.is_open = self.is_open, False
        return was_open

    @property
    def speech_ns(self) -> int:
        """How long the current (or last) turn's voice lasted."""
        return self.speech_end_ns - self.speech_start_ns


@dataclasses.dataclass
class RecordedTurn:
    """One turn's audio once it ended: statistics and the reply audio at 24 kHz."""
    sample_count: int
    duration_ns: int
    sample_rate: int
    peak: int
    rms: float
    reply: array.array
    unplayable_rate: int | None


class TurnRecorder:
    """The audio of the turn in progress: counted, measured and resampled as it arrives."""

    def __init__(self) -> None:
        self.discard()

    def discard(self) -> None:
        """Drops what the turn held."""
        self.sample_count = 0
        self.earlier_ns = 0
        self.rate_samples = 0
        self.rate: int | None = None
        self.last_rate: int | None = None
        self.peak = 0
        self.sum_of_squares = 0
        self.reply = array.array("h")
        self.unplayable_rate: int | None = None
        self.resampler: LinearResampler | None = None

    @property
    def duration_ns(self) -> int:
        return self.earlier_ns + (samples_ns(self.rate_samples, self.rate) if self.rate else 0)

    def append(self, samples: array.array, rate: int) -> int:
        """Adds one chunk to the turn; returns its peak."""
        if rate != self.rate:
            self._end_stretch()
            self.rate = rate
            if rate in RESAMPLABLE_RATES:
                self.resampler = LinearResampler(rate)
            elif self.unplayable_rate is None:
                self.unplayable_rate = rate
        self.last_rate = rate
        chunk_peak = peak_of(samples)
        self.peak = max(self.peak, chunk_peak)
        self.sum_of_squares += sum(map(operator.mul, samples, samples))
        self.sample_count += len(samples)
        self.rate_samples += len(samples)
        if self.resampler is not None:
            self.reply.extend(self.resampler.push(samples))
        return chunk_peak

    def finish(self) -> RecordedTurn:
        """Ends the turn and returns what it held; the recorder is then empty."""
        self._end_stretch()
        rms = math.sqrt(self.sum_of_squares / self.sample_count) / 32768 if self.sample_count else 0.0
        turn = RecordedTurn(self.sample_count, self.earlier_ns, self.last_rate or CAPTURE_RATE, self.peak, rms,
                            self.reply if self.unplayable_rate is None else array.array("h"), self.unplayable_rate)
        self.discard()
        return turn

    def _end_stretch(self) -> None:
        """Closes the stretch at the current rate: its duration counted, its resampler flushed."""
        if self.rate is None:
            return
        self.earlier_ns += samples_ns(self.rate_samples, self.rate)
        self.rate_samples, self.rate = 0, None
        if self.resampler is not None:
            self.reply.extend(self.resampler.flush())
            self.resampler = None


class UnknownContentNotes:
    """Says once per connection what the client's messages carry that this runtime does not know."""

    def __init__(self) -> None:
        self.types: set[str] = set()
        self.fields: dict[str, set[str]] = collections.defaultdict(set)

    def note(self, message: dict) -> str | None:
        """The note about `message`, or None when there is nothing new to say."""
        kind = message["type"]
        if kind not in FIELDS:
            if kind in self.types:
                return None
            self.types.add(kind)
            return f"message type {_quoted(kind)} is not known to this version (kept, ignored)"
        new = [name for name in extra_fields(message) if name not in self.fields[kind]]
        self.fields[kind].update(new)
        if not new:
            return None
        if len(new) == 1:
            return f"{kind} carries a field {_quoted(new[0])} this version does not know (kept, ignored)"
        listed = ", ".join(_quoted(name) for name in new[:8])
        rest = f" … and {len(new) - 8} more" if len(new) > 8 else ""
        return f"{kind} carries {len(new)} fields this version does not know (kept, ignored): {listed}{rest}"


# MARK: - The runtime (EmbeddedRuntimeCore.swift, without a transport)


class SessionReads:
    """What the runtime read of each session, over all its connections: the `audio.chunk` and
    `text.input` messages, counted as they are read (a message a misbehaviour switch fires on was
    read too). A `session.start` that continues a session is answered from these counts."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}

    def start(self, fields: dict) -> dict | None:
        """A `session.start`: the `session.resumed` that answers it when it continues a session
        (None for a new one, whose counts start at zero)."""
        session_id = fields["sessionId"]
        if fields.get("continuesSessionId") is None:
            self.counts[session_id] = [0, 0]
            return None
        audio_chunks, texts = self.counts.setdefault(session_id, [0, 0])
        return {"type": "session.resumed", "audioChunks": audio_chunks, "texts": texts}

    def read(self, session_id: str, kind: str) -> None:
        """One message of the session read."""
        counts = self.counts.setdefault(session_id, [0, 0])
        if kind == "audio.chunk":
            counts[0] += 1
        elif kind == "text.input":
            counts[1] += 1


class Action(NamedTuple):
    """What the connection does next: send a message (`tag` names the greeting) or close."""
    kind: str
    message: dict | None = None
    tag: str | None = None


class Answer:
    """One answered turn waiting to go out: its messages in order, then its reply audio."""

    def __init__(self, items: list[tuple], audio: array.array):
        self.items = items
        self.next_item = 0
        self.audio = audio
        self.next_sample = 0
        self.chunks_sent = 0
        self.reply_start: int | None = None
        self.tool_called_at: int | None = None

    @property
    def complete(self) -> bool:
        return self.next_item == len(self.items) and self.next_sample >= len(self.audio)

    @property
    def started(self) -> bool:
        return self.next_item > 0

    @property
    def audio_remains(self) -> bool:
        return self.next_sample < len(self.audio)


class VoiceRuntime:
    """The embedded runtime's rules for one connection: messages and instants in, actions out.

    Messages that answer at once (greeting, debug, escalation, interruption) go ahead of queued
    turns; turns go out in the order they ended, each with its messages and then its reply audio.
    """

    def __init__(self, paced: bool):
        self.paced = paced
        self.phase = "running"  # running → ending (session.end) → closing → finished
        self.gate = VoiceGate()
        self.recorder = TurnRecorder()
        self.urgent: collections.deque[Action] = collections.deque()
        self.answers: list[Answer] = []
        self.stream_free_at = 0
        self.last_audio_at: int | None = None
        self.escalation_follow_ups: list[int] = []
        self.latest = 0
        self.started = False
        self.noted_early_message = False
        self.turn_count = 0
        self.audio_rate: int | None = None
        self.notes = UnknownContentNotes()
        self.ignored_after_end: set[str] = set()

    @property
    def finished(self) -> bool:
        return self.phase == "finished"

    # Events in

    def receive(self, message: ClientMessage | WireError, now: int) -> None:
        """Takes one text message from the client (or the reason it was refused)."""
        self._advance(now)
        if self.phase not in ("running", "ending"):
            return
        if isinstance(message, WireError):
            self._debug(f"could not read the client's message: {message}")
            return
        if self.phase == "ending":
            if message.type not in self.ignored_after_end:
                self.ignored_after_end.add(message.type)
                self._debug(f"{message.type} after session.end was ignored")
            return
        note = self.notes.note(message.fields)
        if note:
            self._debug(note)
        if not self.started and message.type != "session.start" and not self.noted_early_message:
            self.noted_early_message = True
            self._debug(f"{message.type} arrived before session.start; the runtime answers anyway")
        self._handle(message, now)

    def receive_binary(self, size: int, now: int) -> None:
        """A binary message: the protocol has none, so it is noted and ignored."""
        self._advance(now)
        if self.phase == "running":
            self._debug(f"a binary message of {size} bytes was ignored: the protocol's messages are text")

    def closed(self) -> None:
        """The connection closed: nothing more goes out."""
        self.phase = "finished"
        self.urgent.clear()
        self.answers.clear()
        self.escalation_follow_ups.clear()
        self.last_audio_at = None
        self.recorder.discard()

    # Actions out

    def next_action(self, now: int) -> Action | None:
        """The next action due at `now`, or None when nothing is due before `next_deadline`."""
        self._advance(now)
        if self.phase == "finished":
            return None
        while self.answers and self.answers[0].complete:
            self.answers.pop(0)
        if not self.urgent and not self.answers and self.phase == "ending":
            self.phase = "closing"
            self.urgent += [Action("send", {"type": "session.ended", "reason": SESSION_ENDED_REASON}),
                            Action("close")]
        if self.urgent:
            action = self.urgent.popleft()
            if action.kind == "close":
                self.phase = "finished"
            return action
        return self._next_answer_action(now) if self.answers else None

    @property
    def next_deadline(self) -> int | None:
        """When `next_action` will next have something without a new message; None: only a message can."""
        if self.phase == "finished":
            return None
        candidates = []
        answer = next((answer for answer in self.answers if not answer.complete), None)
        if self.urgent:
            candidates.append(self.latest)
        elif answer is not None:
            if answer.next_item < len(answer.items) or not self.paced:
                candidates.append(self.latest)
            else:
                start = answer.reply_start if answer.reply_start is not None else max(self.latest, self.stream_free_at)
                candidates.append(start + REPLY_CHUNK_NS * answer.chunks_sent)
        elif self.phase == "ending":
            candidates.append(self.latest)
        if self.phase == "running":
            if self.gate.is_open and self.last_audio_at is not None:
                candidates.append(self.last_audio_at + END_OF_AUDIO_NS)
            candidates += self.escalation_follow_ups[:1]
        return min(candidates, default=None)

    # Messages

    def _handle(self, message: ClientMessage, now: int) -> None:
        """Answers one accepted message by its type."""
        fields, kind = message.fields, message.type
        if kind == "session.start":
            if self.started:
                self._debug(f"a second session.start (session {_quoted(fields['sessionId'])}) was ignored")
                return
            self.started = True
            self.urgent.append(Action("send", info_message(greeting(fields["sessionId"], fields.get("context") or {})),
                                      "greeting"))
        elif kind == "audio.chunk":
            self._audio(message.samples, fields["sampleRate"], now)
        elif kind == "text.input":
            self._typed_turn(fields["text"])
        elif kind == "escalation.request":
            self.urgent.append(Action("send", {"type": "escalation", "status": ESCALATION_REQUESTED}))
            self.escalation_follow_ups.append(now + ESCALATION_DELAY_NS)
        elif kind == "session.end":
            self._end_session()
        elif kind in FIELDS:
            self._debug(f"{kind} is a message a runtime sends, not one it takes (ignored)")

    def _audio(self, samples: array.array, rate: int, now: int) -> None:
        """One chunk of the client's audio: into the turn, its peak through the gate."""
        if not samples:
            return
        if self.audio_rate is not None and self.audio_rate != rate:
            self._debug(f"the audio sample rate changed from {self.audio_rate} Hz to {rate} Hz")
        self.audio_rate = rate
        peak = self.recorder.append(samples, rate)
        self.last_audio_at = now
        change = self.gate.process(peak, samples_ns(len(samples), rate))
        if change == "opened":
            self._interrupt_reply(now)
        elif change == "closed":
            self._end_voice_turn()
        if self.phase != "running" or self.recorder.duration_ns <= MAX_TURN_AUDIO_NS:
            return
        limit = seconds_text(MAX_TURN_AUDIO_NS, 1)
        if self.gate.close():
            self._debug(f"the turn reached {limit}, the most one turn holds: it ends here")
            self._end_voice_turn()
        else:
            self._debug(f"dropped {seconds_text(self.recorder.duration_ns, 1)} of audio without speech: "
                        f"a turn holds at most {limit}")
            self.recorder.discard()

    def _interrupt_reply(self, now: int) -> None:
        """The gate opened while a reply is still going out: the rest of it is dropped, once."""
        answer = next((answer for answer in self.answers if not answer.complete), None)
        if answer is None or not answer.started or not answer.audio_remains:
            return
        del answer.audio[answer.next_sample:]
        self.urgent.append(Action("send", {"type": "interruption"}))
        self.stream_free_at = now

    def _end_voice_turn(self) -> None:
        """A voice turn ended (the gate closed): its answer is queued."""
        speech_ns, loudest = self.gate.speech_ns, self.gate.turn_peak_dbfs
        audio = self.recorder.finish()
        self.last_audio_at = None
        self.turn_count += 1
        silent = audio.peak == 0
        peak_dbfs = None if silent else decibels(audio.peak / 32768)
        rms_dbfs = None if silent else decibels(audio.rms)
        call_id = f"{TOOL_NAME}-{self.turn_count}"
        items: list[tuple] = [
            ("message", transcript("user", speech_transcript(speech_ns, loudest))),
            ("message", {"type": "classification", "label": "speech", "confidence": 1}),
            ("tool.call", call_id, {"durationSeconds": rounded(audio.duration_ns / SECOND, 3),
                                    "sampleRate": audio.sample_rate}),
            ("tool.result", call_id, statistics(peak_dbfs, rms_dbfs, audio.sample_count)),
            ("message", info_message(statistics_table(self.turn_count, audio.duration_ns,
                                                      seconds_text(speech_ns, 1), peak_dbfs, rms_dbfs))),
        ]
        if audio.unplayable_rate is not None:
            items.append(("message", debug_message(unplayable_rate_note(audio.unplayable_rate))))
        items.append(("message", transcript("assistant", voice_reply(speech_ns, audio.unplayable_rate))))
        self.answers.append(Answer(items, audio.reply))

    def _typed_turn(self, text: str) -> None:
        """A typed turn: answered after any queued turn, with a short tone as its audio."""
        self.turn_count += 1
        call_id = f"{TOOL_NAME}-{self.turn_count}"
        items: list[tuple] = [
            ("message", transcript("user", text)),
            ("message", {"type": "classification", "label": "text", "confidence": 1}),
            ("tool.call", call_id, {"durationSeconds": 0, "sampleRate": CAPTURE_RATE, "source": "text"}),
            ("tool.result", call_id, statistics(None, None, 0)),
            ("message", info_message(statistics_table(self.turn_count, 0, "typed", None, None))),
            ("message", transcript("assistant", typed_reply(text))),
        ]
        self.answers.append(Answer(items, array.array("h", TYPED_TURN_TONE)))

    def _end_session(self) -> None:
        """`session.end`: the open turn is answered, what is queued goes out, then `session.ended`."""
        if self.gate.close():
            self._end_voice_turn()
        else:
            self.recorder.discard()
        self.last_audio_at = None
        self.escalation_follow_ups.clear()
        if self.phase == "running":
            self.phase = "ending"

    def _debug(self, text: str) -> None:
        self.urgent.append(Action("send", debug_message(text)))

    # Time

    def _advance(self, now: int) -> None:
        """Runs the timers due by `now`, earliest first: the end-of-audio wait and escalation follow-ups."""
        self.latest = max(self.latest, now)
        while self.phase == "running":
            timeout = None
            if self.gate.is_open and self.last_audio_at is not None:
                timeout = self.last_audio_at + END_OF_AUDIO_NS
            follow_up = self.escalation_follow_ups[0] if self.escalation_follow_ups else None
            if timeout is not None and timeout <= now and (follow_up is None or timeout <= follow_up):
                if self.gate.close():
                    self._end_voice_turn()
                self.last_audio_at = None
            elif follow_up is not None and follow_up <= now:
                self.escalation_follow_ups.pop(0)
                self.urgent.append(Action("send", {"type": "escalation", "status": ESCALATION_JOINING}))
            else:
                return

    def _next_answer_action(self, now: int) -> Action | None:
        """The front answer's next message, or its next reply chunk when it is due."""
        answer = self.answers[0]
        if answer.next_item < len(answer.items):
            item = answer.items[answer.next_item]
            answer.next_item += 1
            if item[0] == "tool.call":
                answer.tool_called_at = now
                return Action("send", {"type": "tool.call", "id": item[1], "name": TOOL_NAME, "input": item[2]})
            if item[0] == "tool.result":
                elapsed = now - (answer.tool_called_at if answer.tool_called_at is not None else now)
                return Action("send", {"type": "tool.result", "id": item[1], "name": TOOL_NAME, "output": item[2],
                                       "durationMs": rounded(elapsed / MS, 3)})
            return Action("send", item[1])
        start, count = answer.next_sample, len(answer.audio)
        if start >= count:
            return None
        if self.paced:
            if answer.reply_start is None:
                answer.reply_start = max(now, self.stream_free_at)
            if now < answer.reply_start + REPLY_CHUNK_NS * answer.chunks_sent:
                return None
            if start + REPLY_CHUNK_FRAMES >= count:
                self.stream_free_at = answer.reply_start + samples_ns(count, REPLY_RATE)
        else:
            self.stream_free_at = now
        end = min(start + REPLY_CHUNK_FRAMES, count)
        answer.next_sample = end
        answer.chunks_sent += 1
        return Action("send", audio_chunk(answer.audio[start:end]))


# MARK: - Settings


@dataclasses.dataclass
class SigV4Settings:
    """What `--require-sigv4` checks the handshake against."""
    mode: str
    access_key_id: str
    secret_access_key: str
    session_token: str | None
    region: str
    service: str


@dataclasses.dataclass
class Settings:
    """The command line, parsed."""
    port: int
    tls_cert: str | None
    tls_key: str | None
    subprotocols: list[str]
    paced: bool
    record: str | None
    ping_interval: float | None
    fragment: int | None
    max_size: int
    compression: bool
    drop_after: int | None
    close_after: int | None
    close_code: int
    close_reason: str
    refuse_status: int | None
    refuse_body: str | None
    stall_after: int | None
    oversized: int | None
    invalid_utf8: bool
    wrong_accept: bool
    cut_mid_message: str | None
    oversized_ping: int | None
    reset_after: int | None
    sigv4: SigV4Settings | None
    receive_buffer: int | None = None
    summary: bool = False
    quiet: bool = False
    misbehave_on: int | None = None
    reply_bursts: float | None = None

    def for_connection(self, number: int) -> "Settings":
        """The settings connection `number` (from 1) is served with: past `--misbehave-on` the
        misbehaviour switches are off, so a client that reconnects finds a runtime that behaves."""
        if self.misbehave_on is None or number <= self.misbehave_on:
            return self
        return dataclasses.replace(self, drop_after=None, close_after=None, refuse_status=None, stall_after=None,
                                   oversized=None, invalid_utf8=False, wrong_accept=False, cut_mid_message=None,
                                   oversized_ping=None, reset_after=None, reply_bursts=None)


# MARK: - SigV4 on the handshake


@dataclasses.dataclass
class SigV4Outcome:
    """Whether the handshake's signature verified, and if not why."""
    mode: str
    accepted: bool
    reason: str | None = None
    access_key_id: str | None = None
    canonical_request: str | None = None

    def event_fields(self) -> dict:
        fields: dict[str, Any] = {"mode": self.mode, "accepted": self.accepted}
        if self.access_key_id is not None:
            fields["accessKeyId"] = self.access_key_id
        if self.reason is not None:
            fields["reason"] = self.reason
        if self.canonical_request is not None:
            fields["canonicalRequest"] = self.canonical_request
        return fields


class SigV4Refusal(Exception):
    """The handshake's signature does not verify; the text says why."""

    def __init__(self, reason: str, canonical_request: str | None = None):
        super().__init__(reason)
        self.canonical_request = canonical_request


def verify_sigv4(request: Request, settings: SigV4Settings, now: float) -> SigV4Outcome:
    """Checks the handshake request's SigV4 signature, presigned in the query or in headers."""
    path, _, query = request.path.partition("?")
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    presigned = "X-Amz-Signature" in params
    has_header = "Authorization" in request.headers
    mode = settings.mode
    if mode == "any":
        mode = "presign" if presigned else "header" if has_header else "any"
    try:
        if mode == "presign":
            access_key = _verify_presigned(request, path, query, params, settings, now)
        elif mode == "header":
            access_key = _verify_header_signature(request, path, query, settings, now)
        else:
            raise SigV4Refusal("no SigV4 signature: neither X-Amz-Signature in the query nor an Authorization header")
    except SigV4Refusal as refusal:
        return SigV4Outcome(mode, False, str(refusal), canonical_request=refusal.canonical_request)
    return SigV4Outcome(mode, True, access_key_id=access_key)


def _verify_presigned(request: Request, path: str, query: str, params: dict, settings: SigV4Settings,
                      now: float) -> str:
    """A presigned URL: the X-Amz-* query parameters, its expiry, then the signature."""
    for name in ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                 "X-Amz-SignedHeaders", "X-Amz-Signature"):
        if name not in params:
            raise SigV4Refusal(f"the presigned URL has no {name}")
    if params["X-Amz-Algorithm"] != "AWS4-HMAC-SHA256":
        raise SigV4Refusal(f"X-Amz-Algorithm is {params['X-Amz-Algorithm']!r}, not 'AWS4-HMAC-SHA256'")
    stamp = params["X-Amz-Date"]
    access_key = _check_credential(params["X-Amz-Credential"], stamp, settings)
    _check_token(params.get("X-Amz-Security-Token"), settings)
    signed_at = _parse_amz_date(stamp)
    try:
        expires = int(params["X-Amz-Expires"])
    except ValueError:
        raise SigV4Refusal(f"X-Amz-Expires is {params['X-Amz-Expires']!r}, not a number of seconds") from None
    if not 1 <= expires <= 604_800:
        raise SigV4Refusal(f"X-Amz-Expires is {expires}, outside 1 to 604800 seconds")
    if now > signed_at + expires:
        raise SigV4Refusal(f"the presigned URL expired {now - signed_at - expires:.0f} s ago "
                           f"(signed at {stamp}, valid {expires} s)")
    if signed_at > now + SIGV4_SKEW_SECONDS:
        raise SigV4Refusal(f"the presigned URL is signed at {stamp}, more than 15 minutes ahead of the server's clock")
    unsigned_query = "&".join(pair for pair in query.split("&") if pair.partition("=")[0] != "X-Amz-Signature")
    _check_signature(request, path, unsigned_query, params["X-Amz-SignedHeaders"], stamp,
                     params["X-Amz-Signature"], settings)
    return access_key


def _verify_header_signature(request: Request, path: str, query: str, settings: SigV4Settings, now: float) -> str:
    """An `Authorization: AWS4-HMAC-SHA256 …` header with `X-Amz-Date`: its parts, its time, then the signature."""
    authorization = request.headers.get("Authorization")
    if authorization is None:
        raise SigV4Refusal("the request has no Authorization header")
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        raise SigV4Refusal(f"the Authorization header's algorithm is {algorithm!r}, not 'AWS4-HMAC-SHA256'")
    parts = dict(part.strip().partition("=")[::2] for part in rest.split(","))
    for name in ("Credential", "SignedHeaders", "Signature"):
        if not parts.get(name):
            raise SigV4Refusal(f"the Authorization header has no {name}")
    stamp = request.headers.get("X-Amz-Date")
    if stamp is None:
        raise SigV4Refusal("the request has no X-Amz-Date header")
    access_key = _check_credential(parts["Credential"], stamp, settings)
    _check_token(request.headers.get("X-Amz-Security-Token"), settings)
    skew = now - _parse_amz_date(stamp)
    if abs(skew) > SIGV4_SKEW_SECONDS:
        raise SigV4Refusal(f"X-Amz-Date {stamp} is {abs(skew):.0f} s {'behind' if skew > 0 else 'ahead of'} "
                           "the server's clock, more than 15 minutes")
    _check_signature(request, path, query, parts["SignedHeaders"], stamp, parts["Signature"], settings)
    return access_key


def _check_credential(credential: str, stamp: str, settings: SigV4Settings) -> str:
    """`AKID/20250101/us-east-1/service/aws4_request` names the expected key, date and scope."""
    pieces = credential.split("/")
    if len(pieces) != 5 or pieces[4] != "aws4_request":
        raise SigV4Refusal(f"the credential {credential!r} is not access-key/date/region/service/aws4_request")
    access_key, date, region, service, _ = pieces
    if access_key != settings.access_key_id:
        raise SigV4Refusal(f"the access key {access_key!r} is not the one the server expects")
    if date != stamp[:8]:
        raise SigV4Refusal(f"the credential's date {date} is not the date of X-Amz-Date {stamp}")
    if region != settings.region:
        raise SigV4Refusal(f"the credential's region is {region!r}, not {settings.region!r}")
    if service != settings.service:
        raise SigV4Refusal(f"the credential's service is {service!r}, not {settings.service!r}")
    return access_key


def _check_token(token: str | None, settings: SigV4Settings) -> None:
    """The session token is the configured one, or absent when none is configured."""
    if token == settings.session_token:
        return
    if settings.session_token is None:
        raise SigV4Refusal("the request carries a session token, but the server expects none")
    raise SigV4Refusal("the session token is missing" if token is None else "the session token is not the expected one")


def _parse_amz_date(stamp: str) -> float:
    """`20250101T120000Z` as Unix seconds."""
    try:
        moment = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise SigV4Refusal(f"X-Amz-Date {stamp!r} is not of the form 20250101T120000Z") from None
    return moment.timestamp()


def _check_signature(request: Request, path: str, query: str, signed_header_list: str, stamp: str,
                     signature: str, settings: SigV4Settings) -> None:
    """Recomputes the signature with botocore over the signed headers and compares it."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.compat import HTTPHeaders
    from botocore.credentials import Credentials

    names = signed_header_list.split(";")
    if "host" not in names:
        raise SigV4Refusal(f"the signed headers {signed_header_list!r} do not include host")
    headers = HTTPHeaders()
    for name in names:
        values = request.headers.get_all(name)
        if not values:
            raise SigV4Refusal(f"the signed header {name!r} is not in the request")
        for value in values:
            headers[name] = value

    class SignedHeadersAuth(SigV4Auth):
        """botocore's SigV4 over exactly the headers the client signed."""

        def headers_to_sign(self, _request: Any) -> HTTPHeaders:
            return headers

    host = request.headers.get("Host")
    if host is None:
        raise SigV4Refusal("the request has no Host header")
    # Signed as botocore signs it: https, the Host header verbatim (with its port), no body.
    url = f"https://{host}{path}" + (f"?{query}" if query else "")
    aws_request = AWSRequest(method="GET", url=url, headers={name: headers[name] for name in names})
    aws_request.context["timestamp"] = stamp
    signer = SignedHeadersAuth(Credentials(settings.access_key_id, settings.secret_access_key,
                                           settings.session_token), settings.service, settings.region)
    canonical = signer.canonical_request(aws_request)
    expected = signer.signature(signer.string_to_sign(aws_request, canonical), aws_request)
    if not hmac.compare_digest(expected, signature):
        raise SigV4Refusal("the signature does not match (wrong secret key, or the request changed after signing)",
                           canonical)


# MARK: - One connection


@dataclasses.dataclass
class ConnectionInfo:
    """What the handshake learned about a connection, for its events and the handler."""
    id: int
    sigv4: SigV4Outcome | None = None
    misbehaviour: dict | None = None
    aborted: bool = False


class AudioTally:
    """Audio counted as it passes: chunks, samples, and a CRC-32 (zlib's, the IEEE polynomial) over
    the samples as Int16 little-endian bytes, in order, so a lost, repeated or reordered sample shows."""

    def __init__(self) -> None:
        self.chunks = 0
        self.samples = 0
        self.crc32 = 0

    def add(self, pcm: bytes) -> None:
        self.chunks += 1
        self.samples += len(pcm) // 2
        self.crc32 = zlib.crc32(pcm, self.crc32)

    def fields(self) -> dict:
        return {"chunks": self.chunks, "samples": self.samples, "crc32": self.crc32}


class RuntimeConnection:
    """Serves one accepted WebSocket: reads the client, runs a VoiceRuntime, carries out its actions
    and the misbehaviour switches, and prints the events."""

    def __init__(self, connection: ServerConnection, info: ConnectionInfo, settings: Settings, record: Any,
                 reads: SessionReads):
        self.connection = connection
        self.reads = reads
        # The session this connection's session.start named; nil before it.
        self.session_id: str | None = None
        self.info = info
        self.settings = settings.for_connection(info.id)
        self.record = record
        self.runtime = VoiceRuntime(settings.paced)
        self.wake = asyncio.Event()
        self.received = 0
        self.sent = 0
        self.stalled = False
        # With --reply-bursts: a burst is going out (every chunk already due goes with it).
        self.in_burst = False
        self.audio_received = AudioTally()
        self.audio_sent = AudioTally()
        self.interruptions_sent = 0

    async def serve(self) -> None:
        """Reads, answers and pings until the connection closes (a stalled one: until the server stops).

        A task that fails takes the connection down with it (websockets then logs the traceback).
        """
        closed = asyncio.create_task(self.connection.wait_closed())
        running = {closed, asyncio.create_task(self._read()), asyncio.create_task(self._answer())}
        if self.settings.ping_interval:
            running.add(asyncio.create_task(self._ping()))
        try:
            while not closed.done():
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
        finally:
            for task in running:
                task.cancel()
            self._print_closed()

    # Reading

    async def _read(self) -> None:
        """Takes every message the client sends until the connection closes or a switch fires."""
        while True:
            try:
                data = await self.connection.recv()
            except ConnectionClosed:
                break
            self.received += 1
            self._take(data)
            stop = await self._misbehave_after_receiving()
            self.wake.set()
            if stop:
                return
            # recv() returns without suspending while messages are buffered: without this, a
            # client sending as fast as it can starves the answering task, and no reply goes out.
            await asyncio.sleep(0)
        self.runtime.closed()
        self.wake.set()

    def _take(self, data: str | bytes) -> None:
        """Records and prints one received message and hands it to the runtime."""
        if isinstance(data, bytes):
            if not self.settings.quiet:
                emit("received", id=self.info.id, type=None, bytes=len(data), binary=True)
            if not self._switch_due():
                self.runtime.receive_binary(len(data), now_ns())
            return
        if self.record is not None:
            self.record.write(data.encode("utf-8") + b"\n")
            self.record.flush()
        try:
            message: ClientMessage | WireError = read_client_message(data)
        except WireError as error:
            message = error
        kind = message.type if isinstance(message, ClientMessage) else _type_of_unreadable(data)
        if not self.settings.quiet:
            emit("received", id=self.info.id, type=kind, bytes=len(data.encode("utf-8")))
        if isinstance(message, ClientMessage) and message.samples is not None:
            self.audio_received.add(pcm_to_bytes(message.samples))
        if isinstance(message, ClientMessage) and kind == "session.start":
            emit("session", id=self.info.id, sessionId=message.fields["sessionId"],
                 continuesSessionId=message.fields.get("continuesSessionId"))
        self._count_read(message)
        if not self._switch_due():
            self.runtime.receive(message, now_ns())

    def _count_read(self, message: ClientMessage | WireError) -> None:
        """Counts a message of the session as read; answers a continuing session.start (ahead of
        the greeting) with what was read of the session before."""
        if not isinstance(message, ClientMessage):
            return
        if message.type == "session.start" and self.session_id is None:
            self.session_id = message.fields["sessionId"]
            resumed = self.reads.start(message.fields)
            if resumed is not None:
                self.runtime.urgent.append(Action("send", resumed))
        elif self.session_id is not None:
            self.reads.read(self.session_id, message.type)

    def _switch_due(self) -> bool:
        """True when a switch fires on this message, which the runtime then never sees."""
        settings = self.settings
        return self.received in (settings.drop_after, settings.close_after, settings.stall_after, settings.reset_after)

    # Misbehaviour

    async def _misbehave_after_receiving(self) -> bool:
        """Fires the switch due after this many messages; True when reading stops."""
        settings, count = self.settings, self.received
        if count == settings.drop_after:
            emit("misbehaved", id=self.info.id, switch="drop-after", after=count)
            self.info.aborted = True
            self.runtime.closed()
            self.connection.transport.abort()
            return True
        if count == settings.close_after:
            emit("misbehaved", id=self.info.id, switch="close-after", after=count,
                 code=settings.close_code, reason=settings.close_reason)
            self.runtime.closed()
            self.wake.set()
            await self.connection.close(settings.close_code, settings.close_reason)
            return True
        if count == settings.stall_after:
            emit("misbehaved", id=self.info.id, switch="stall-after", after=count)
            self.stall()
            return True
        if count == settings.reset_after:
            emit("misbehaved", id=self.info.id, switch="reset-after", after=count)
            self.runtime.closed()
            self.reset()
            return True
        return False

    def stall(self) -> None:
        """Stops reading the socket and sending anything; the connection stays open."""
        self.stalled = True
        self.connection.transport.pause_reading()
        self.wake.set()

    def reset(self) -> None:
        """Resets the TCP connection: SO_LINGER with a zero timeout, then close, sends a RST."""
        self.info.aborted = True
        sock = self.connection.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.transport.abort()

    def abort(self) -> None:
        """Drops the TCP connection without a close frame (a stalled connection when the server stops)."""
        self.info.aborted = True
        self.connection.transport.abort()

    async def _after_greeting(self) -> None:
        """The switches that fire right after `session.start` is answered."""
        if self.settings.oversized is not None:
            text = oversized_debug_message(self.settings.oversized)
            emit("misbehaved", id=self.info.id, switch="oversized", bytes=len(text.encode("utf-8")))
            await self._send_text(text, "debug")
        if self.settings.invalid_utf8:
            emit("misbehaved", id=self.info.id, switch="invalid-utf8", bytes=len(INVALID_UTF8_PAYLOAD))
            self.connection.transport.write(raw_text_frame(INVALID_UTF8_PAYLOAD))
        if self.settings.oversized_ping is not None:
            emit("misbehaved", id=self.info.id, switch="oversized-ping", bytes=self.settings.oversized_ping)
            self.connection.transport.write(raw_frame(0x89, b"p" * self.settings.oversized_ping))
        if self.settings.cut_mid_message is not None:
            await self._cut_mid_message(self.settings.cut_mid_message)

    async def _cut_mid_message(self, how: str) -> None:
        """Sends the first half of a fragmented message (a non-final text frame), then drops the
        connection (`drop`) or sends a close frame 1000 (`close`) without ever finishing the message."""
        payload = CUT_MESSAGE[:len(CUT_MESSAGE) // 2]
        emit("misbehaved", id=self.info.id, switch="cut-mid-message", how=how, bytes=len(payload))
        self.runtime.closed()
        self.stalled = True  # nothing more goes out: the message is never finished
        self.connection.transport.write(raw_frame(0x01, payload))
        if how == "drop":
            self.abort()
        else:
            await self.connection.close(1000, "cut mid-message")

    # Answering

    async def _answer(self) -> None:
        """Carries out the runtime's actions as they fall due, until it finishes or the connection stalls."""
        while not self.runtime.finished and not self.stalled:
            action = self.runtime.next_action(now_ns())
            if action is None:
                self.in_burst = False
                await self._sleep_until(self.runtime.next_deadline)
                continue
            try:
                if action.kind == "close":
                    await self.connection.close(1000)
                    return
                if self.settings.reply_bursts and action.message["type"] == "audio.chunk":
                    await self._hold_for_burst()
                await self._send_text(encode_message(action.message), action.message["type"])
                self._count_sent(action.message)
                if action.tag == "greeting":
                    await self._after_greeting()
            except ConnectionClosed:
                self.runtime.closed()
            await asyncio.sleep(0)  # lets the client's messages in between the chunks of a burst

    async def _hold_for_burst(self) -> None:
        """Waits for the next burst boundary (a multiple of --reply-bursts on the monotonic clock):
        chunks falling due in between go out together when it comes, with every chunk due by the
        time the burst has gone out (however long sending takes), so the pace stays real time."""
        if self.in_burst:
            return
        now = now_ns()
        period = int(self.settings.reply_bursts * 1_000_000)
        await asyncio.sleep((-now % period) / SECOND)
        self.in_burst = True

    async def _sleep_until(self, deadline: int | None) -> None:
        """Waits for the next message, or for `deadline` (monotonic nanoseconds)."""
        self.wake.clear()
        timeout = None if deadline is None else max(0.0, (deadline - now_ns()) / SECOND)
        try:
            await asyncio.wait_for(self.wake.wait(), timeout)
        except TimeoutError:
            pass

    async def _send_text(self, text: str, kind: str) -> None:
        """Sends one text message, fragmented with `--fragment`, and prints it."""
        if self.stalled:
            return
        data = text.encode("utf-8")
        size = self.settings.fragment
        if size is None:
            await self.connection.send(data, text=True)
        else:
            await self.connection.send((data[i:i + size] for i in range(0, max(len(data), 1), size)), text=True)
        self.sent += 1
        if not self.settings.quiet:
            emit("sent", id=self.info.id, type=kind, bytes=len(data))

    def _count_sent(self, message: dict) -> None:
        """Counts the reply audio and interruptions that went out, for `--summary`."""
        if message["type"] == "audio.chunk":
            self.audio_sent.add(base64.b64decode(message["data"]))
        elif message["type"] == "interruption":
            self.interruptions_sent += 1

    # Keep-alive

    async def _ping(self) -> None:
        """Pings the client every `--ping-interval` seconds and prints each round trip."""
        interval = self.settings.ping_interval
        try:
            while True:
                await asyncio.sleep(interval)
                if self.stalled:
                    return
                pong = await self.connection.ping()
                latency = await pong
                if not self.settings.quiet:
                    emit("pong", id=self.info.id, ms=round(latency * 1000, 3))
        except ConnectionClosed:
            return

    def _print_closed(self) -> None:
        """The `closed` event: the close code and reason, and who closed first."""
        protocol = self.connection.protocol
        received, sent = protocol.close_rcvd, protocol.close_sent
        if self.info.aborted:
            by, frame = "server", None
        elif received is not None and (sent is None or protocol.close_rcvd_then_sent):
            by, frame = "client", received
        elif sent is not None:
            by, frame = "server", sent
        else:
            by, frame = "network", None
        emit("closed", id=self.info.id, code=frame.code if frame else 1006, reason=frame.reason if frame else "",
             by=by, clean=received is not None and sent is not None, received=self.received, sent=self.sent)
        if self.settings.summary:
            emit("summary", id=self.info.id, audioReceived=self.audio_received.fields(),
                 audioSent=self.audio_sent.fields(), interruptionsSent=self.interruptions_sent,
                 turns=self.runtime.turn_count)


def _type_of_unreadable(text: str) -> str | None:
    """The `type` of a message the protocol refused, when it still has a string one."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def oversized_debug_message(size: int) -> str:
    """A valid `debug` message of exactly `size` bytes (at least its 29 bytes without padding)."""
    empty = encode_message(debug_message(""))
    return encode_message(debug_message("x" * max(0, size - len(empty))))


INVALID_UTF8_PAYLOAD = b'{"type":"debug","message":"\xff\xfe"}'


CUT_MESSAGE = encode_message(debug_message("this message is cut in the middle and never finished")).encode("utf-8")


def raw_text_frame(payload: bytes) -> bytes:
    """One unmasked, final text frame, written as the server would but without websockets' checks."""
    return raw_frame(0x81, payload)


def raw_frame(first_byte: int, payload: bytes) -> bytes:
    """One unmasked frame with this first byte (FIN and opcode), without websockets' checks (a
    control frame may be longer than 125 bytes, a data frame need not be final)."""
    if len(payload) < 126:
        header = struct.pack("!BB", first_byte, len(payload))
    elif len(payload) < 1 << 16:
        header = struct.pack("!BBH", first_byte, 126, len(payload))
    else:
        header = struct.pack("!BBQ", first_byte, 127, len(payload))
    return header + payload


# MARK: - The server


class RuntimeServer:
    """The listening side: handshake hooks, one RuntimeConnection per client, a clean stop."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.infos: weakref.WeakKeyDictionary[ServerConnection, ConnectionInfo] = weakref.WeakKeyDictionary()
        self.served: set[RuntimeConnection] = set()
        self.next_id = 1
        self.record = open(settings.record, "ab") if settings.record else None
        self.reads = SessionReads()

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """Numbers the connection; refuses it for `--refuse-status` or a signature that does not verify."""
        info = ConnectionInfo(self.next_id)
        self.next_id += 1
        self.infos[connection] = info
        settings = self.settings.for_connection(info.id)
        if settings.refuse_status is not None:
            info.misbehaviour = {"switch": "refuse-status", "status": settings.refuse_status}
            body = settings.refuse_body
            if body is None:
                body = http.HTTPStatus(settings.refuse_status).phrase + "\n"
            return connection.respond(settings.refuse_status, body)
        if settings.sigv4 is not None:
            info.sigv4 = verify_sigv4(request, settings.sigv4, time.time())
            if not info.sigv4.accepted:
                return connection.respond(http.HTTPStatus.FORBIDDEN, f"SigV4: {info.sigv4.reason}\n")
        return None

    def process_response(self, connection: ServerConnection, request: Request, response: Response) -> None:
        """Prints the connection (and its signature check); spoils the accept key for `--wrong-accept`."""
        info = self.infos.get(connection)
        if info is None:
            return
        if self.settings.for_connection(info.id).wrong_accept and response.status_code == 101:
            right = response.headers["Sec-WebSocket-Accept"]
            wrong = base64.b64encode(hashlib.sha1(right.encode("ascii")).digest()).decode("ascii")
            del response.headers["Sec-WebSocket-Accept"]
            response.headers["Sec-WebSocket-Accept"] = wrong
            info.misbehaviour = {"switch": "wrong-accept", "sent": wrong, "expected": right}
        path, separator, query = request.path.partition("?")
        emit("connection", id=info.id, path=path, query=query if separator else None,
             headers=[[name, value] for name, value in request.headers.raw_items()],
             subprotocol=response.headers.get("Sec-WebSocket-Protocol"), status=response.status_code)
        if info.sigv4 is not None:
            emit("sigv4", id=info.id, **info.sigv4.event_fields())
        if info.misbehaviour is not None:
            emit("misbehaved", id=info.id, **info.misbehaviour)

    async def handle(self, connection: ServerConnection) -> None:
        """Serves one accepted connection."""
        served = RuntimeConnection(connection, self.infos[connection], self.settings, self.record, self.reads)
        self.served.add(served)
        try:
            await served.serve()
        finally:
            self.served.discard(served)

    def abort_stalled(self) -> None:
        """Drops the stalled connections, which would never answer a close frame."""
        for served in list(self.served):
            if served.stalled:
                served.abort()

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for `--tls-cert` and `--tls-key`, or None for plain ws://."""
        if self.settings.tls_cert is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.settings.tls_cert, self.settings.tls_key)
        return context

    async def run(self) -> None:
        """Listens on 127.0.0.1 until SIGTERM or SIGINT, then closes every connection and returns."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        # A parent that starts the server from a thread with signals blocked (test runners do)
        # passes the mask on; unblock them, or SIGTERM would never reach the handlers.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        context = self.ssl_context()
        async with serve(self.handle, "127.0.0.1", self.settings.port, ssl=context,
                         subprotocols=self.settings.subprotocols or None,
                         process_request=self.process_request, process_response=self.process_response,
                         max_size=self.settings.max_size, compression="deflate" if self.settings.compression else None,
                         ping_interval=None, ping_timeout=None, close_timeout=CLOSE_TIMEOUT_SECONDS) as server:
            if self.settings.receive_buffer is not None:
                # Accepted connections inherit the listening socket's buffer (and lose autotuning).
                for listening in server.sockets:
                    listening.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.settings.receive_buffer)
            port = server.sockets[0].getsockname()[1]
            emit("listening", url=f"{'wss' if context else 'ws'}://127.0.0.1:{port}")
            await stop.wait()
            self.abort_stalled()
        if self.record is not None:
            self.record.close()


# MARK: - Command line


def parse_settings(argv: list[str]) -> Settings:
    """Reads the command line; exits with a usage message (status 2) when it is wrong."""
    parser = argparse.ArgumentParser(
        description="A VoicePipe voice runtime on WebSocket (127.0.0.1 only); events as JSON Lines on stdout.")
    add = parser.add_argument
    add("--port", type=int, default=8765, help="port to listen on (default 8765; 0 picks a free one)")
    add("--tls-cert", metavar="PEM", help="certificate chain: serve wss:// (with --tls-key)")
    add("--tls-key", metavar="PEM", help="private key for --tls-cert")
    add("--subprotocol", metavar="NAME", action="append", default=[],
        help="a subprotocol the server accepts (repeatable; a client must then offer one of them)")
    add("--pace", choices=("real-time", "fast"), default="real-time",
        help="reply audio in real time (default) or as fast as the client takes it")
    add("--record", metavar="FILE", help="append every received text message to FILE, one a line")
    add("--ping-interval", type=float, metavar="SECONDS", help="ping the client this often and print each pong")
    add("--fragment", type=int, metavar="BYTES", help="send every message in frames of at most BYTES")
    add("--max-size", type=int, default=16 << 20, metavar="BYTES",
        help="largest message accepted from the client (default 16 MiB); larger closes with 1009")
    add("--no-compression", action="store_true", help="do not accept permessage-deflate")
    add("--summary", action="store_true",
        help="when a connection closes, print a summary: audio received and sent (chunks, samples, CRC-32)")
    add("--quiet", action="store_true", help="do not print the received, sent and pong events")
    add("--drop-after", type=int, metavar="N", help="after the N-th message received, drop the TCP connection")
    add("--close-after", type=int, metavar="N", help="after the N-th message received, close with --close-code")
    add("--close-code", type=int, default=1000, metavar="C", help="close code for --close-after (default 1000)")
    add("--close-reason", default="", metavar="TEXT", help="close reason for --close-after")
    add("--refuse-status", type=int, metavar="CODE", help="refuse every handshake with this HTTP status")
    add("--refuse-body", metavar="TEXT", help="body of the refusal (default the status phrase)")
    add("--stall-after", type=int, metavar="N", help="after the N-th message received, stop reading and sending")
    add("--receive-buffer", type=int, metavar="BYTES",
        help="the kernel receive buffer of each connection (SO_RCVBUF; default the kernel's, autotuned "
             "up to tens of MB): a small one fills at once when the server stops reading")
    add("--oversized", type=int, metavar="BYTES", help="after the greeting, send a debug message of BYTES bytes")
    add("--invalid-utf8", action="store_true", help="after the greeting, send a text frame that is not UTF-8")
    add("--wrong-accept", action="store_true", help="answer the handshake with a wrong Sec-WebSocket-Accept")
    add("--cut-mid-message", choices=("drop", "close"),
        help="after the greeting, send half of a fragmented message, then drop the connection or close with 1000")
    add("--oversized-ping", type=int, metavar="BYTES",
        help="after the greeting, send a ping frame of BYTES payload bytes (over 125 breaks RFC 6455)")
    add("--reset-after", type=int, metavar="N",
        help="after the N-th message received, reset the TCP connection (RST)")
    add("--reply-bursts", type=float, metavar="MS",
        help="hold reply audio back and send it in bursts every MS milliseconds (up to MS late, real-time pace on "
             "average), as a poor mobile network delivers it")
    add("--misbehave-on", type=int, metavar="N",
        help="the misbehaviour switches apply to the first N connections only; later ones behave")
    add("--require-sigv4", choices=("presign", "header", "any"),
        help="refuse handshakes without a valid SigV4 signature (in the query, in headers, or either)")
    add("--aws-access-key-id", metavar="ID")
    add("--aws-secret-access-key", metavar="SECRET")
    add("--aws-session-token", metavar="TOKEN")
    add("--aws-region", default="us-east-1")
    add("--aws-service", default="bedrock-agentcore")
    args = parser.parse_args(argv)
    _check_arguments(parser, args)
    sigv4 = None
    if args.require_sigv4:
        sigv4 = SigV4Settings(args.require_sigv4, args.aws_access_key_id, args.aws_secret_access_key,
                              args.aws_session_token, args.aws_region, args.aws_service)
    return Settings(
        port=args.port, tls_cert=args.tls_cert, tls_key=args.tls_key, subprotocols=args.subprotocol,
        paced=args.pace == "real-time", record=args.record, ping_interval=args.ping_interval,
        fragment=args.fragment, max_size=args.max_size, compression=not args.no_compression,
        drop_after=args.drop_after, close_after=args.close_after, close_code=args.close_code,
        close_reason=args.close_reason, refuse_status=args.refuse_status, refuse_body=args.refuse_body,
        stall_after=args.stall_after, oversized=args.oversized, invalid_utf8=args.invalid_utf8,
        wrong_accept=args.wrong_accept, cut_mid_message=args.cut_mid_message,
        oversized_ping=args.oversized_ping, reset_after=args.reset_after, sigv4=sigv4,
        summary=args.summary, quiet=args.quiet, receive_buffer=args.receive_buffer, misbehave_on=args.misbehave_on,
        reply_bursts=args.reply_bursts)


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuses values the switches cannot work with, before anything listens."""
    if not 0 <= args.port <= 65535:
        parser.error("--port must be 0 to 65535")
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    for name in ("drop_after", "close_after", "stall_after", "reset_after", "fragment", "max_size", "receive_buffer", "misbehave_on"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.oversized is not None and args.oversized < 0:
        parser.error("--oversized must not be negative")
    if args.oversized_ping is not None and not 0 <= args.oversized_ping < 1 << 16:
        parser.error("--oversized-ping must be 0 to 65535")
    if args.ping_interval is not None and args.ping_interval <= 0:
        parser.error("--ping-interval must be positive")
    if args.reply_bursts is not None and not 1 <= args.reply_bursts <= 10_000:
        parser.error("--reply-bursts must be 1 to 10000 ms")
    try:
        Close(args.close_code, args.close_reason).serialize()
    except Exception as error:
        parser.error(f"--close-code {args.close_code} cannot be sent in a close frame: {error}")
    if len(args.close_reason.encode("utf-8")) > 123:
        parser.error("--close-reason must be at most 123 bytes in UTF-8 (a close frame holds 125)")
    if args.refuse_status is not None and (not 200 <= args.refuse_status <= 599 or args.refuse_status == 101):
        parser.error("--refuse-status must be an HTTP status from 200 to 599")
    if args.refuse_status is not None:
        try:
            http.HTTPStatus(args.refuse_status)
        except ValueError:
            parser.error(f"--refuse-status {args.refuse_status} is not a status Python's http module knows")
    if args.require_sigv4 and not (args.aws_access_key_id and args.aws_secret_access_key):
        parser.error("--require-sigv4 needs --aws-access-key-id and --aws-secret-access-key")


def main(argv: list[str]) -> int:
    """Parses the command line and serves until SIGTERM or SIGINT: exit status 0; 1 when it cannot
    start (the port is taken, the record file or the TLS files cannot be read); 2 for a usage error."""
    settings = parse_settings(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        asyncio.run(RuntimeServer(settings).run())
    except OSError as error:  # ssl.SSLError included
        print(f"server.py: cannot start: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
