#!/usr/bin/env python3
"""Self-test of the runtime server: starts server.py as a subprocess for each case and checks one
behaviour or switch with a websockets client, or with a raw socket where that client would refuse.

Run with the server's environment: `.venv/bin/python -m unittest test_server` in this folder, or
`Samples/runtime-server/.venv/bin/python Samples/runtime-server/test_server.py` (run ./setup first).
"""

from __future__ import annotations

import array
import base64
import hashlib
import json
import math
import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import connect

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

GREETING = ('{"type":"info.message","markdown":"Hello from the **embedded runtime** (session `s-1`).\\n'
            'Speak or type: each turn is answered with its audio statistics and played back at 24 kHz."}')

# MARK: - Running the server


class Server:
    """server.py in a subprocess: its URL from the first line, then its events as they come."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8")
        first = self.process.stdout.readline()
        if not first:
            raise RuntimeError(f"the server did not start: {self.process.stderr.read()}")
        self.first = json.loads(first)
        self.url = self.first["url"]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.events: list[dict] = []
        self.arrived = threading.Condition()
        self.stderr = ""
        self.readers = [threading.Thread(target=self._read_events, daemon=True),
                        threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_events(self) -> None:
        for line in self.process.stdout:
            with self.arrived:
                self.events.append(json.loads(line))
                self.arrived.notify_all()

    def _read_stderr(self) -> None:
        self.stderr = self.process.stderr.read()

    def wait_event(self, event: str, timeout: float = 5, **match) -> dict:
        """The first event of that kind whose fields include `match`, waiting for it to come."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for item in self.events:
                    if item["event"] == event and all(item.get(key) == value for key, value in match.items()):
                        return item
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {event} event {match} in {self.events}")
                self.arrived.wait(remaining)

    def of_kind(self, event: str) -> list[dict]:
        with self.arrived:
            return [item for item in self.events if item["event"] == event]

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 8) -> int:
        """Signals the server and returns its exit status once its output is read to the end."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        status = self.process.wait(timeout)
        for reader in self.readers:
            reader.join(timeout)
        self.process.stdout.close()
        self.process.stderr.close()
        return status


class ServerTestCase(unittest.TestCase):
    def server(self, *args: str) -> Server:
        """Starts a server that must stop with status 0 and nothing on standard error when the test ends."""
        server = Server(*args)
        self.addCleanup(self._stop, server)
        return server

    def _stop(self, server: Server) -> None:
        status = server.stop()
        self.assertEqual(status, 0, server.stderr)
        self.assertEqual(server.stderr, "")


# MARK: - Messages and audio


def start(session_id: str = "s-1", **fields) -> str:
    return json.dumps({"type": "session.start", "sessionId": session_id, "context": {}, **fields},
                      separators=(",", ":"), ensure_ascii=False)


def message(kind: str, **fields) -> str:
    return json.dumps({"type": kind, **fields}, separators=(",", ":"), ensure_ascii=False)


def chunk(samples, rate: int = 16_000) -> str:
    data = base64.b64encode(array.array("h", samples).tobytes()).decode("ascii")
    return message("audio.chunk", data=data, sampleRate=rate)


def tone_burst(lead: float = 0.5, tone: float = 2.4, tail: float = 1.0, dbfs: float = -6,
               frequency: float = 1_000, rate: int = 16_000) -> list[int]:
    """Silence, a tone at `dbfs`, silence: the Swift tests' RuntimeFixtures.toneBurst."""
    amplitude = 10 ** (dbfs / 20)
    tone_samples = [round(amplitude * math.sin(2 * math.pi * frequency * n / rate) * 32768)
                    for n in range(round(tone * rate))]
    return [0] * round(lead * rate) + tone_samples + [0] * round(tail * rate)


def chunks_of(samples: list[int], size: int = 512) -> list[list[int]]:
    return [samples[i:i + size] for i in range(0, len(samples), size)]


def without_duration(text: str) -> str:
    """A tool.result with its clock-dependent durationMs set to 0, as the Swift tests expect."""
    return re.sub(r'"durationMs":[-0-9.e+]+', '"durationMs":0', text)


def voice_turn(speech: str, peak: str, duration: str, audio: str, peak_json: str, rms_json: str, rms: str,
               samples: int, turn: int = 1, rate: int = 16_000) -> list[str]:
    """The messages of a voice turn before its audio (RuntimeFixtures.voiceTurnMessages)."""
    return [
        f'{{"type":"transcript","role":"user","text":"{speech} of speech, peak {peak}","final":true}}',
        '{"type":"classification","label":"speech","confidence":1}',
        f'{{"type":"tool.call","id":"audio_stats-{turn}","name":"audio_stats","input":{{"durationSeconds":{duration},"sampleRate":{rate}}}}}',
        f'{{"type":"tool.result","id":"audio_stats-{turn}","name":"audio_stats","output":{{"peakDBFS":{peak_json},"rmsDBFS":{rms_json},"samples":{samples}}},"durationMs":0}}',
        f'{{"type":"info.message","markdown":"| turn | audio | speech | peak | RMS |\\n|---:|---:|---:|---:|---:|\\n| {turn} | {audio} | {speech} | {peak} | {rms} |"}}',
        f'{{"type":"transcript","role":"assistant","text":"Here is what I heard: {speech} of your speech, played back at 24 kHz.","final":true}}',
    ]


def read_turn(ws, chunks_expected: int | None = None, timeout: float = 5) -> tuple[list[str], list[list[int]]]:
    """Reads a turn's messages up to its assistant line, then its reply chunks (all, or until silence)."""
    texts: list[str] = []
    while True:
        text = ws.recv(timeout=timeout)
        texts.append(text)
        if '"role":"assistant"' in text:
            break
    replies: list[list[int]] = []
    while chunks_expected is None or len(replies) < chunks_expected:
        try:
            text = ws.recv(timeout=timeout if chunks_expected else 0.3)
        except TimeoutError:
            break
        item = json.loads(text)
        if item["type"] != "audio.chunk":
            texts.append(text)
            break
        replies.append(list(array.array("h", base64.b64decode(item["data"]))))
        assert item["sampleRate"] == 24_000
    return texts, replies


def drain_until_closed(ws, timeout: float = 5) -> tuple[list[dict], ConnectionClosed]:
    """Every message until the connection closes, and how it closed."""
    received = []
    try:
        while True:
            received.append(json.loads(ws.recv(timeout=timeout)))
    except ConnectionClosed as closed:
        return received, closed


# MARK: - A raw WebSocket client, for what the websockets client refuses to do or see


class RawClient:
    """A WebSocket client on a plain socket: handshake, masked text frames out, frames in."""

    def __init__(self, port: int, path: str = "/"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.key = base64.b64encode(os.urandom(16)).decode("ascii")
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {self.key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode("ascii"))
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        lines = head.split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {name.strip().lower(): value.strip()
                        for name, _, value in (line.partition(":") for line in lines[1:] if line)}

    @property
    def expected_accept(self) -> str:
        return base64.b64encode(hashlib.sha1((self.key + GUID).encode("ascii")).digest()).decode("ascii")

    def _read_exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("the server closed the connection")
            self.buffer += data
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        return out

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("the server closed the connection")
            self.buffer += data
        out, _, self.buffer = self.buffer.partition(marker)
        return out

    def send_frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        length = len(payload)
        header = bytes([0x80 | opcode]) + (bytes([0x80 | length]) if length < 126
                                           else bytes([0x80 | 126]) + struct.pack("!H", length))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send_text(self, text: str) -> None:
        self.send_frame(0x1, text.encode("utf-8"))

    def read_frame(self) -> tuple[bool, int, bytes]:
        """(fin, opcode, payload) of the next frame."""
        first, second = self._read_exactly(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read_exactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exactly(8))[0]
        assert not second & 0x80, "a server's frames are not masked"
        return bool(first & 0x80), first & 0x0F, self._read_exactly(length)

    def close(self) -> None:
        self.sock.close()


# MARK: - The protocol


class ProtocolTests(ServerTestCase):
    def test_first_line_is_listening_and_session_start_is_greeted_then_ended(self):
        server = self.server("--pace", "fast")
        self.assertEqual(server.first, {"event": "listening", "url": f"ws://127.0.0.1:{server.port}"})
        with connect(server.url + "/runtimes/x/ws?qualifier=DEFAULT&a=%20b") as ws:
            ws.send(start(context={"persona": " Dana\n", "vehicle": "2022 Model*Y"}))
            self.assertEqual(ws.recv(timeout=5), GREETING.replace(
                "(session `s-1`).", "(session `s-1`), speaking as **Dana** about your **2022 Model\\\\*Y**."))
            ws.send(message("session.end"))
            received, closed = drain_until_closed(ws)
        self.assertEqual(received, [{"type": "session.ended", "reason": "the client ended the session"}])
        self.assertEqual((closed.rcvd.code, closed.rcvd.reason), (1000, ""))
        connection = server.wait_event("connection", id=1)
        self.assertEqual((connection["path"], connection["query"], connection["status"], connection["subprotocol"]),
                         ("/runtimes/x/ws", "qualifier=DEFAULT&a=%20b", 101, None))
        self.assertIn(["Host", f"127.0.0.1:{server.port}"], connection["headers"])
        server.wait_event("received", id=1, type="session.start", bytes=len(start(context={"persona": " Dana\n", "vehicle": "2022 Model*Y"}).encode()))
        server.wait_event("session", id=1, sessionId="s-1", continuesSessionId=None)
        server.wait_event("sent", id=1, type="session.ended")
        closed_event = server.wait_event("closed", id=1)
        self.assertEqual((closed_event["code"], closed_event["by"], closed_event["clean"]), (1000, "server", True))

    def test_a_session_continued_on_a_new_connection_is_told_what_was_read_of_it_then_greeted(self):
        server = self.server("--drop-after", "6", "--misbehave-on", "1")
        silence = [0] * 512
        with connect(server.url) as ws:
            ws.send(start("s-1"))
            self.assertEqual(ws.recv(timeout=5), GREETING)
            for text in (chunk(silence), chunk(silence), message("text.input", text="hi"), chunk(silence), chunk(silence)):
                ws.send(text)
            drain_until_closed(ws)
        server.wait_event("misbehaved", id=1, switch="drop-after", after=6)
        # The sixth message (the fourth chunk) was read before the drop: it counts.
        with connect(server.url) as ws:
            ws.send(start("s-1", continuesSessionId="s-1"))
            self.assertEqual(json.loads(ws.recv(timeout=5)), {"type": "session.resumed", "audioChunks": 4, "texts": 1})
            self.assertEqual(ws.recv(timeout=5), GREETING)
            ws.send(chunk(silence))
            server.wait_event("received", id=2, type="audio.chunk")
        with connect(server.url) as ws:
            ws.send(start("s-1", continuesSessionId="s-1"))
            self.assertEqual(json.loads(ws.recv(timeout=5)), {"type": "session.resumed", "audioChunks": 5, "texts": 1})
            # A session of the same id started afresh (no continuesSessionId) counts from zero.
        with connect(server.url) as ws:
            ws.send(start("s-1"))
            self.assertEqual(ws.recv(timeout=5), GREETING)
        with connect(server.url) as ws:
            ws.send(start("s-1", continuesSessionId="s-1"))
            self.assertEqual(json.loads(ws.recv(timeout=5)), {"type": "session.resumed", "audioChunks": 0, "texts": 0})
            self.assertEqual(ws.recv(timeout=5), GREETING)
            with self.assertRaises(TimeoutError):  # no note about an unknown field
                ws.recv(timeout=0.3)
        server.wait_event("session", id=2, sessionId="s-1", continuesSessionId="s-1")

    def test_a_voice_turn_is_answered_exactly_as_the_embedded_runtime_answers_it(self):
        server = self.server("--pace", "fast")
        burst = tone_burst()
        with connect(server.url) as ws:
            ws.send(start())
            self.assertEqual(ws.recv(timeout=5), GREETING)
            for samples in chunks_of(burst):
                ws.send(chunk(samples))
            texts, replies = read_turn(ws, chunks_expected=172)
            # RuntimeFixtures.burstTurnMessages of the Swift tests.
            self.assertEqual([without_duration(text) for text in texts], voice_turn(
                "2.4 s", "−6.0 dBFS", "3.424", "3.424 s", "-6", "-10.6", "−10.6 dBFS", 54_784))
            self.assertGreaterEqual(json.loads(texts[3])["durationMs"], 0)
            self.assertEqual([len(reply) for reply in replies], [480] * 171 + [96])
            reply = [sample for piece in replies for sample in piece]
            self.assertEqual(len(reply), 82_176)  # round(54 784 × 24 000 / 16 000)
            self.assertTrue(all(sample == 0 for sample in reply[:int(0.45 * 24_000)]))
            self.assertTrue(0.45 < max(map(abs, reply)) / 32768 < 0.51)
            ws.send(message("session.end"))
            received, closed = drain_until_closed(ws)
        self.assertEqual(received, [{"type": "session.ended", "reason": "the client ended the session"}])
        self.assertEqual(closed.rcvd.code, 1000)

    def test_an_open_turn_ends_500_ms_after_the_last_audio(self):
        server = self.server("--pace", "fast")
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            sent = chunks_of(tone_burst())[:60]
            for samples in sent[:-1]:
                ws.send(chunk(samples))
            # Stamped before the last chunk goes out, so the server takes it after this instant and
            # the turn cannot end sooner than 500 ms after it, however late this process runs.
            last_sent = time.monotonic()
            ws.send(chunk(sent[-1]))
            first = ws.recv(timeout=5)  # the turn's first message: it ended
            waited = time.monotonic() - last_sent
            texts, replies = read_turn(ws, chunks_expected=96)  # 30 720 × 1.5 = 46 080 samples
            texts.insert(0, first)
        # The upper bound is loose (a busy machine can hold either process back): it only catches a
        # turn that did not end on the timeout.
        self.assertTrue(0.5 <= waited < 5, waited)
        self.assertEqual([without_duration(text) for text in texts], voice_turn(
            "1.4 s", "−6.0 dBFS", "1.92", "1.920 s", "-6", "-10.3", "−10.3 dBFS", 30_720))
        self.assertEqual(sum(map(len, replies)), 46_080)

    def test_a_typed_turn_is_answered_with_its_text_and_three_tones_in_real_time(self):
        server = self.server()
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            text_sent = time.monotonic()
            ws.send(message("text.input", text='Where is my "order"?'))
            texts, replies = [], []
            while len(replies) < 23:
                item = json.loads(text := ws.recv(timeout=5))
                if item["type"] == "audio.chunk":
                    replies.append((time.monotonic(), len(base64.b64decode(item["data"])) // 2))
                else:
                    texts.append(text)
        self.assertEqual([without_duration(text) for text in texts], [
            '{"type":"transcript","role":"user","text":"Where is my \\"order\\"?","final":true}',
            '{"type":"classification","label":"text","confidence":1}',
            '{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":0,"sampleRate":16000,"source":"text"}}',
            '{"type":"tool.result","id":"audio_stats-1","name":"audio_stats","output":{"peakDBFS":null,"rmsDBFS":null,"samples":0},"durationMs":0}',
            '{"type":"info.message","markdown":"| turn | audio | speech | peak | RMS |\\n|---:|---:|---:|---:|---:|\\n| 1 | 0.000 s | typed | — | — |"}',
            '{"type":"transcript","role":"assistant","text":"You typed “Where is my \\"order\\"?”. Here is a short tone for it.","final":true}',
        ])
        self.assertEqual([count for _, count in replies], [480] * 22 + [240])
        # In real time, chunk k goes out 20 ms × k after the reply starts, which is no earlier than
        # the server read the text: the last of 23 arrives at least 440 ms after the text was sent
        # (stamped before sending it, so a reader that runs late can only make it longer). A reply
        # sent unpaced comes at once; the upper bound only catches one that never finishes.
        took = replies[-1][0] - text_sent
        self.assertTrue(22 * 0.020 <= took < 5, f"the last of 23 chunks of 20 ms arrived {took:.3f} s after the text")

    def test_reply_bursts_hold_chunks_back_and_send_them_together_on_the_boundaries(self):
        server = self.server("--reply-bursts", "200")
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            ws.send(message("text.input", text="hi"))
            arrivals = []
            while len(arrivals) < 23:
                if json.loads(ws.recv(timeout=5))["type"] == "audio.chunk":
                    arrivals.append(time.monotonic())
        # 23 chunks of 20 ms (0.46 s) come in bursts 200 ms apart: within a burst a few
        # milliseconds apart, between bursts at least 100 ms; and at real-time pace on average,
        # so at most four bursts (a slow send must not push chunks to a later burst).
        gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:])]
        long = [gap for gap in gaps if gap > 0.1]
        self.assertTrue(1 <= len(long) <= 3, f"gaps between chunks: {[round(g, 3) for g in gaps]}")
        self.assertTrue(all(gap < 0.05 or 0.1 < gap < 0.3 for gap in gaps), f"gaps: {[round(g, 3) for g in gaps]}")

    def test_voice_over_a_reply_interrupts_it(self):
        server = self.server()
        loud = tone_burst(lead=0, tone=0.032, tail=0)
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            ws.send(message("text.input", text="hi"))
            while json.loads(ws.recv(timeout=5))["type"] != "audio.chunk":
                pass
            ws.send(chunk(loud))
            types = []
            while "interruption" not in types:
                types.append(json.loads(ws.recv(timeout=5))["type"])
            ws.send(message("session.end"))
            received, _ = drain_until_closed(ws)
        tone_chunks = types.count("audio.chunk") + 1
        self.assertLess(tone_chunks, 23)
        # The rest of the tone is dropped; the voice that interrupted is a turn, answered at session.end.
        after = [item["type"] for item in received]
        self.assertEqual(after[0], "transcript")
        self.assertEqual(after[-1], "session.ended")
        self.assertEqual(after.count("audio.chunk"), 2)  # 512 samples → 768 at 24 kHz

    def test_a_client_sending_without_pause_still_gets_its_reply_while_it_sends(self):
        # recv() does not suspend while messages are buffered: reading must still let the replies out.
        server = self.server("--pace", "fast")
        quiet = chunk([3, -3] * 256)
        with connect(server.url, max_queue=None) as ws:
            ws.send(start())
            for samples in chunks_of(tone_burst(lead=0, tone=0.5, tail=0.6)):
                ws.send(chunk(samples))
            for _ in range(3_000):
                ws.send(quiet)
            ws.send(message("session.end"))
            # The server answers session.end only after it has worked through the 3 000 chunks
            # queued before it, sending nothing meanwhile: 6 s on a quiet machine, 17 s with four
            # busy loops on its two cores. The wait only catches a server that stopped.
            drain_until_closed(ws, timeout=120)
        server.wait_event("closed")
        kinds = [(item["event"], item.get("type")) for item in server.events]
        first_reply = kinds.index(("sent", "audio.chunk"))
        last_received = len(kinds) - 1 - kinds[::-1].index(("received", "audio.chunk"))
        self.assertLess(first_reply, last_received, "the reply waited until the client stopped sending")

    def test_other_rates_are_timed_by_their_own_rate_and_an_unresamplable_one_gets_no_audio(self):
        server = self.server("--pace", "fast")
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            for samples in chunks_of(tone_burst(tone=1.0, tail=0.7, rate=48_000), 960):
                ws.send(chunk(samples, rate=48_000))
            ws.send(message("session.end"))
            received, _ = drain_until_closed(ws)
        texts = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in received
                 if item["type"] != "audio.chunk"]
        self.assertEqual(texts[0], '{"type":"transcript","role":"user","text":"1.0 s of speech, peak −6.0 dBFS","final":true}')
        self.assertEqual(texts[2], '{"type":"tool.call","id":"audio_stats-1","name":"audio_stats","input":{"durationSeconds":2,"sampleRate":48000}}')
        self.assertEqual(sum(len(base64.b64decode(item["data"])) // 2 for item in received if item["type"] == "audio.chunk"), 48_000)
        self.assertEqual(texts[-1], '{"type":"session.ended","reason":"the client ended the session"}')
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            for samples in chunks_of(tone_burst(lead=0, tone=1.0, tail=0.6, frequency=50, rate=500), 10):
                ws.send(chunk(samples, rate=500))
            texts, replies = read_turn(ws)
        self.assertEqual(replies, [])
        self.assertIn('{"type":"debug","message":"audio at 500 Hz cannot be resampled to 24 kHz (the resampler takes 1000 to 768000 Hz): this turn\'s reply has no audio"}', texts)
        self.assertEqual(texts[-1], '{"type":"transcript","role":"assistant","text":"Here is what I heard: 1.0 s of your speech. Audio at 500 Hz cannot be resampled, so there is no reply audio.","final":true}')

    def test_escalation_malformed_early_unknown_and_binary_messages_are_answered_like_the_embedded_runtime(self):
        server = self.server()
        with connect(server.url) as ws:
            # Stamped before the request goes out: the server reads it after this instant and says
            # an agent will join 1 s after reading it, so no sooner than 1 s after this.
            requested_at = time.monotonic()
            ws.send(message("escalation.request", reason="human please"))
            self.assertEqual(json.loads(ws.recv(timeout=5)),
                             {"type": "debug", "message": "escalation.request arrived before session.start; the runtime answers anyway"})
            self.assertEqual(ws.recv(timeout=5), '{"type":"escalation","status":"requested"}')
            ws.send("{not json")
            ws.send('{"type":"debug","message":"x","message":"y"}')
            ws.send(message("avatar.pose", yaw=0.5))
            ws.send(message("transcript", role="user", text="hi", turnId=7))
            ws.send(b"\x00\x01")
            expected = [
                "could not read the client's message: not JSON: expecting property name enclosed in double quotes at byte 1",
                'could not read the client\'s message: not JSON: the object repeats the key "message"',
                'message type "avatar.pose" is not known to this version (kept, ignored)',
                'transcript carries a field "turnId" this version does not know (kept, ignored)',
                "transcript is a message a runtime sends, not one it takes (ignored)",
                "a binary message of 2 bytes was ignored: the protocol's messages are text",
            ]
            self.assertEqual([json.loads(ws.recv(timeout=5))["message"] for _ in expected], expected)
            self.assertEqual(ws.recv(timeout=5), '{"type":"escalation","status":"an agent will join shortly"}')
            # The upper bound is loose (a busy machine can hold either process back).
            waited = time.monotonic() - requested_at
            self.assertTrue(1.0 <= waited < 5, waited)
        server.wait_event("received", type=None, binary=True, bytes=2)
        server.wait_event("closed", by="client", code=1000)

    def test_sigint_stops_the_server_cleanly_with_open_connections(self):
        server = Server()
        with connect(server.url) as ws:
            ws.send(start())
            ws.recv(timeout=5)
            self.assertEqual(server.stop(signal.SIGINT), 0)
            with self.assertRaises(ConnectionClosed) as closed:
                ws.recv(timeout=5)
        self.assertEqual(closed.exception.rcvd.code, 1001)
        self.assertEqual(server.stderr, "")


# MARK: - Switches


class SwitchTests(ServerTestCase):
    def test_record_keeps_every_received_text_message_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "received.jsonl"
            server = self.server("--record", str(path), "--pace", "fast")
            sent = [
                '{ "type" : "session.start", "sessionId" : "é-1" }',
                '{"type":"text.input","text":"a\u2028b \\u00e9 \\/"}',
                "not JSON at all",
                chunk([1, -1, 32767, -32768]),
            ]
            # Unread replies must not stop the client from reading the server's close frame.
            with connect(server.url, max_queue=None) as ws:
                for text in sent:
                    ws.send(text)
                ws.send(b"binary is not recorded")
                server.wait_event("received", binary=True)
            server.wait_event("closed")
            self.assertEqual(path.read_bytes(), b"".join(text.encode("utf-8") + b"\n" for text in sent))

    def test_summary_counts_and_checksums_the_audio_both_ways_and_quiet_prints_no_message_events(self):
        server = self.server("--summary", "--quiet", "--pace", "fast")
        loud = tone_burst(lead=0, tone=0.5, tail=0.6)
        sent_chunks = chunks_of(loud)
        with connect(server.url) as ws:
            ws.send(start())
            for samples in sent_chunks:
                ws.send(chunk(samples))
            ws.send(message("text.input", text="hi"))   # its three tones come while the voice turn's reply goes
            ws.send(chunk(tone_burst(lead=0, tone=0.032, tail=0)))
            ws.send(message("session.end"))
            received, _ = drain_until_closed(ws)
        summary = server.wait_event("summary")
        sent_pcm = b"".join(array.array("h", samples).tobytes() for samples in sent_chunks) + \
            array.array("h", tone_burst(lead=0, tone=0.032, tail=0)).tobytes()
        self.assertEqual(summary["audioReceived"], {"chunks": len(sent_chunks) + 1, "samples": len(sent_pcm) // 2,
                                                    "crc32": zlib.crc32(sent_pcm)})
        replies = [base64.b64decode(item["data"]) for item in received if item["type"] == "audio.chunk"]
        reply_pcm = b"".join(replies)
        self.assertGreater(len(replies), 0)
        self.assertEqual(summary["audioSent"], {"chunks": len(replies), "samples": len(reply_pcm) // 2,
                                                "crc32": zlib.crc32(reply_pcm)})
        self.assertEqual(summary["interruptionsSent"], [item["type"] for item in received].count("interruption"))
        self.assertEqual(summary["turns"], 3)
        self.assertEqual(server.of_kind("received") + server.of_kind("sent"), [])
        self.assertEqual(server.wait_event("closed")["received"], len(sent_chunks) + 4)

    def test_start_runs_the_server_on_the_port_given(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen([str(HERE / "start"), "--port", str(port)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, encoding="utf-8")
        try:
            self.assertEqual(json.loads(process.stdout.readline()), {"event": "listening", "url": f"ws://127.0.0.1:{port}"})
            with connect(f"ws://127.0.0.1:{port}") as ws:
                ws.send(start())
                self.assertEqual(ws.recv(timeout=5), GREETING)
        finally:
            process.terminate()
            _, errors = process.communicate(timeout=8)
        self.assertEqual((process.returncode, errors), (0, ""))

    def test_compression_is_accepted_unless_switched_off(self):
        server = self.server()
        with connect(server.url) as ws:
            self.assertIn("permessage-deflate", ws.response.headers.get("Sec-WebSocket-Extensions", ""))
        plain = self.server("--no-compression")
        with connect(plain.url) as ws:
            self.assertIsNone(ws.response.headers.get("Sec-WebSocket-Extensions"))
            ws.send(start())
            self.assertEqual(ws.recv(timeout=5), GREETING)

    def test_subprotocol_the_first_the_server_lists_that_the_client_offers(self):
        server = self.server("--subprotocol", "voicepipe.v1", "--subprotocol", "other")
        with connect(server.url, subprotocols=["x", "other", "voicepipe.v1"]) as ws:
            self.assertEqual(ws.subprotocol, "voicepipe.v1")
        with connect(server.url, subprotocols=["other"]) as ws:
            self.assertEqual(ws.subprotocol, "other")
        with self.assertRaises(InvalidStatus) as refused:
            connect(server.url)
        self.assertEqual(refused.exception.response.status_code, 400)
        self.assertEqual(server.wait_event("connection", id=1)["subprotocol"], "voicepipe.v1")
        self.assertEqual(server.wait_event("connection", id=3)["status"], 400)

    def test_ping_interval_pings_and_prints_the_round_trip(self):
        server = self.server("--ping-interval", "0.1")
        with connect(server.url) as ws:
            pong = server.wait_event("pong", id=1)
            self.assertGreaterEqual(pong["ms"], 0)
            ws.send(start())

    def test_fragment_sends_every_message_in_frames_of_at_most_that_many_bytes(self):
        server = self.server("--fragment", "16")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        client.send_text(start())
        frames = [client.read_frame()]
        while not frames[-1][0]:
            frames.append(client.read_frame())
        self.assertEqual(frames[0][1], 0x1)
        self.assertTrue(all(opcode == 0x0 for _, opcode, _ in frames[1:]))
        self.assertTrue(all(len(payload) <= 16 for _, _, payload in frames))
        self.assertEqual(b"".join(payload for _, _, payload in frames), GREETING.encode("utf-8"))
        self.assertGreater(len(frames), len(GREETING.encode("utf-8")) // 16)

    def test_max_size_closes_with_1009_on_a_larger_message(self):
        server = self.server("--max-size", "2000")
        with connect(server.url) as ws:
            ws.send(message("text.input", text="x" * 3000))
            _, closed = drain_until_closed(ws)
        self.assertEqual(closed.rcvd.code, 1009)
        self.assertEqual(server.wait_event("closed", id=1)["code"], 1009)

    def test_drop_after_drops_the_tcp_connection_without_a_close_frame(self):
        for after in (1, 2):
            with self.subTest(after=after):
                server = self.server("--drop-after", str(after))
                with connect(server.url) as ws:
                    ws.send(start())
                    if after == 2:
                        self.assertEqual(ws.recv(timeout=5), GREETING)
                        ws.send(message("text.input", text="hi"))
                    # After one message the drop may already have happened: a second send would
                    # race it (and fail with "no close frame" when the drop wins).
                    received, closed = drain_until_closed(ws)
                self.assertIsNone(closed.rcvd)
                self.assertEqual(received, [])  # the message the switch fires on is not answered
                server.wait_event("misbehaved", id=1, switch="drop-after", after=after)
                event = server.wait_event("closed", id=1)
                self.assertEqual((event["code"], event["by"], event["clean"]), (1006, "server", False))

    def test_close_after_closes_with_the_code_and_reason(self):
        server = self.server("--close-after", "1", "--close-code", "4000", "--close-reason", "going now")
        with connect(server.url) as ws:
            ws.send(start())
            received, closed = drain_until_closed(ws)
        self.assertEqual(received, [])  # the message the switch fires on is not answered
        self.assertEqual((closed.rcvd.code, closed.rcvd.reason), (4000, "going now"))
        server.wait_event("misbehaved", switch="close-after", code=4000, reason="going now")
        event = server.wait_event("closed", id=1)
        self.assertEqual((event["code"], event["reason"], event["by"], event["clean"]), (4000, "going now", "server", True))

    def test_refuse_status_refuses_the_handshake(self):
        server = self.server("--refuse-status", "503", "--refuse-body", "busy, try later")
        with self.assertRaises(InvalidStatus) as refused:
            connect(server.url)
        self.assertEqual(refused.exception.response.status_code, 503)
        self.assertEqual(refused.exception.response.body, b"busy, try later")
        self.assertEqual(server.wait_event("connection", id=1)["status"], 503)
        server.wait_event("misbehaved", id=1, switch="refuse-status", status=503)

    def test_stall_after_stops_reading_and_sending_but_keeps_the_connection(self):
        server = self.server("--stall-after", "1")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        client.send_text(start())
        server.wait_event("misbehaved", id=1, switch="stall-after")
        client.send_frame(0x9, b"are you there")
        client.sock.settimeout(0.7)
        with self.assertRaises(socket.timeout):  # no greeting, no pong, no close: nothing
            client.read_frame()
        self.assertEqual(server.of_kind("sent"), [])
        began = time.monotonic()
        self.assertEqual(server.stop(), 0)
        # Stopping drops the stalled connection (no close frame: it would never be answered, and the
        # close handshake would wait out its 3 s timeout); the bound only catches a stop that hangs.
        self.assertLess(time.monotonic() - began, 5)
        event = server.wait_event("closed", id=1)
        self.assertEqual((event["code"], event["by"], event["clean"]), (1006, "server", False))

    def test_oversized_sends_one_valid_message_of_that_size_after_the_greeting(self):
        server = self.server("--oversized", "100000")
        with connect(server.url, max_size=None) as ws:
            ws.send(start())
            self.assertEqual(ws.recv(timeout=5), GREETING)
            big = ws.recv(timeout=5)
        self.assertEqual(len(big.encode("utf-8")), 100_000)
        self.assertEqual(json.loads(big)["type"], "debug")
        server.wait_event("misbehaved", switch="oversized", bytes=100_000)

    def test_invalid_utf8_sends_a_text_frame_that_is_not_utf8_after_the_greeting(self):
        server = self.server("--invalid-utf8")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        client.send_text(start())
        self.assertEqual(client.read_frame(), (True, 0x1, GREETING.encode("utf-8")))
        fin, opcode, payload = client.read_frame()
        self.assertEqual((fin, opcode), (True, 0x1))
        self.assertEqual(payload, b'{"type":"debug","message":"\xff\xfe"}')
        with self.assertRaises(UnicodeDecodeError):
            payload.decode("utf-8")
        server.wait_event("misbehaved", switch="invalid-utf8")

    def test_wrong_accept_answers_101_with_a_wrong_key(self):
        server = self.server("--wrong-accept")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        self.assertEqual(client.status, 101)
        self.assertNotEqual(client.headers["sec-websocket-accept"], client.expected_accept)
        event = server.wait_event("misbehaved", switch="wrong-accept")
        self.assertEqual(event["expected"], client.expected_accept)
        self.assertEqual(event["sent"], client.headers["sec-websocket-accept"])
        with self.assertRaises(InvalidHandshake):
            connect(server.url)

    def test_cut_mid_message_sends_half_a_fragmented_message_then_drops_or_closes(self):
        for how in ("drop", "close"):
            with self.subTest(how=how):
                server = self.server("--cut-mid-message", how)
                client = RawClient(server.port)
                self.addCleanup(client.close)
                client.send_text(start())
                self.assertEqual(client.read_frame(), (True, 0x1, GREETING.encode("utf-8")))
                fin, opcode, payload = client.read_frame()
                self.assertEqual((fin, opcode), (False, 0x1))  # a first fragment, never continued
                self.assertTrue(b'{"type":"debug"'.startswith(payload[:15]))
                event = server.wait_event("misbehaved", switch="cut-mid-message", how=how)
                self.assertEqual(event["bytes"], len(payload))
                if how == "drop":
                    with self.assertRaises((EOFError, ConnectionResetError)):
                        client.read_frame()
                    self.assertEqual(server.wait_event("closed", id=1)["code"], 1006)
                else:
                    fin, opcode, payload = client.read_frame()
                    self.assertEqual((fin, opcode), (True, 0x8))
                    self.assertEqual(struct.unpack("!H", payload[:2])[0], 1000)
                    client.send_frame(0x8, payload[:2])
                    closed = server.wait_event("closed", id=1)
                    self.assertEqual((closed["code"], closed["by"]), (1000, "server"))

    def test_oversized_ping_sends_a_control_frame_longer_than_125_bytes(self):
        server = self.server("--oversized-ping", "200")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        client.send_text(start())
        self.assertEqual(client.read_frame(), (True, 0x1, GREETING.encode("utf-8")))
        self.assertEqual(client.read_frame(), (True, 0x9, b"p" * 200))
        server.wait_event("misbehaved", switch="oversized-ping", bytes=200)

    def test_reset_after_resets_the_tcp_connection(self):
        server = self.server("--reset-after", "1")
        client = RawClient(server.port)
        self.addCleanup(client.close)
        client.send_text(start())
        server.wait_event("misbehaved", id=1, switch="reset-after", after=1)
        with self.assertRaises(ConnectionResetError):  # a RST, not the FIN of an orderly end
            client.read_frame()
        event = server.wait_event("closed", id=1)
        self.assertEqual((event["code"], event["by"], event["clean"], event["received"]), (1006, "server", False, 1))

    def test_tls_serves_wss(self):
        with tempfile.TemporaryDirectory() as folder:
            cert, key = Path(folder) / "cert.pem", Path(folder) / "key.pem"
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
            server = self.server("--tls-cert", str(cert), "--tls-key", str(key))
            self.assertEqual(server.url, f"wss://127.0.0.1:{server.port}")
            with connect(server.url, ssl=ssl.create_default_context(cafile=str(cert))) as ws:
                ws.send(start())
                self.assertEqual(ws.recv(timeout=5), GREETING)


# MARK: - SigV4


AGENT_PATH = ("/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2F"
              "my_agent-abc123/ws")
ACCESS_KEY = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def presigned(port: int, secret: str = SECRET, token: str | None = None, expires: int = 300,
              at: datetime | None = None) -> str:
    """A ws:// URL presigned by botocore itself, as a client would get one."""
    request = AWSRequest(method="GET", url=f"https://127.0.0.1:{port}{AGENT_PATH}?qualifier=DEFAULT")
    signer = SigV4QueryAuth(Credentials(ACCESS_KEY, secret, token), "bedrock-agentcore", "us-west-2", expires=expires)
    if at is None:
        signer.add_auth(request)
    else:
        with mock.patch("botocore.auth.get_current_datetime", return_value=at):
            signer.add_auth(request)
    parts = urllib.parse.urlsplit(request.url)
    return f"ws://127.0.0.1:{port}{parts.path}?{parts.query}"


def signed_headers(port: int, secret: str = SECRET, token: str | None = None) -> list[tuple[str, str]]:
    """The headers botocore's SigV4Auth adds to the handshake request."""
    request = AWSRequest(method="GET", url=f"https://127.0.0.1:{port}{AGENT_PATH}?qualifier=DEFAULT")
    SigV4Auth(Credentials(ACCESS_KEY, secret, token), "bedrock-agentcore", "us-west-2").add_auth(request)
    names = ["X-Amz-Date", "Authorization"] + (["X-Amz-Security-Token"] if token else [])
    return [(name, request.headers[name]) for name in names]


class SigV4Tests(ServerTestCase):
    def sigv4_server(self, mode: str, *extra: str) -> Server:
        return self.server("--require-sigv4", mode, "--aws-access-key-id", ACCESS_KEY,
                           "--aws-secret-access-key", SECRET, "--aws-region", "us-west-2", *extra)

    def assert_refused(self, server: Server, url: str, reason: str, **options) -> None:
        with self.assertRaises(InvalidStatus) as refused:
            connect(url, **options)
        self.assertEqual(refused.exception.response.status_code, 403)
        self.assertIn(reason, refused.exception.response.body.decode())
        event = server.wait_event("sigv4", accepted=False, reason=re.sub("^SigV4: ", "", refused.exception.response.body.decode().strip()))
        self.assertIn(reason, event["reason"])

    def test_a_url_presigned_by_botocore_is_accepted_and_a_wrong_one_refused(self):
        server = self.sigv4_server("presign")
        with connect(presigned(server.port)) as ws:
            ws.send(start())
            self.assertEqual(ws.recv(timeout=5), GREETING)
        event = server.wait_event("sigv4", id=1)
        self.assertEqual((event["mode"], event["accepted"], event["accessKeyId"]), ("presign", True, ACCESS_KEY))
        self.assert_refused(server, presigned(server.port, secret="not-the-secret"), "the signature does not match")
        self.assertIn("%253Aaws%253Abedrock-agentcore", server.wait_event("sigv4", id=2)["canonicalRequest"])
        expired = presigned(server.port, expires=300, at=datetime.now(timezone.utc) - timedelta(hours=1))
        self.assert_refused(server, expired, "the presigned URL expired")
        self.assert_refused(server, server.url + AGENT_PATH, "the presigned URL has no X-Amz-Algorithm")
        self.assert_refused(server, presigned(server.port).replace(ACCESS_KEY, "AKIDOTHER"), "the access key 'AKIDOTHER'")
        tampered = presigned(server.port).replace("qualifier=DEFAULT", "qualifier=OTHER")
        self.assert_refused(server, tampered, "the signature does not match")

    def test_a_session_token_must_be_the_configured_one(self):
        server = self.sigv4_server("any", "--aws-session-token", "TOKEN/1+=")
        with connect(presigned(server.port, token="TOKEN/1+=")):
            pass
        url = f"{server.url}{AGENT_PATH}?qualifier=DEFAULT"
        with connect(url, additional_headers=signed_headers(server.port, token="TOKEN/1+=")):
            pass
        server.wait_event("sigv4", id=2, mode="header", accepted=True)
        self.assert_refused(server, presigned(server.port, token="OTHER"), "the session token is not the expected one")
        self.assert_refused(server, presigned(server.port), "the session token is missing")
        self.assert_refused(server, url, "the session token is missing", additional_headers=signed_headers(server.port))

    def test_headers_signed_by_botocore_are_accepted_and_a_wrong_signature_refused(self):
        server = self.sigv4_server("header")
        url = f"{server.url}{AGENT_PATH}?qualifier=DEFAULT"
        with connect(url, additional_headers=signed_headers(server.port)) as ws:
            ws.send(start())
            self.assertEqual(ws.recv(timeout=5), GREETING)
        server.wait_event("sigv4", id=1, mode="header", accepted=True)
        self.assert_refused(server, url, "the signature does not match",
                            additional_headers=signed_headers(server.port, secret="not-the-secret"))
        self.assert_refused(server, url, "the request has no Authorization header")
        self.assert_refused(server, presigned(server.port), "the request has no Authorization header")

    def test_any_takes_either_form(self):
        server = self.sigv4_server("any")
        with connect(presigned(server.port)):
            pass
        with connect(f"{server.url}{AGENT_PATH}?qualifier=DEFAULT", additional_headers=signed_headers(server.port)):
            pass
        server.wait_event("sigv4", id=1, mode="presign", accepted=True)
        server.wait_event("sigv4", id=2, mode="header", accepted=True)
        self.assert_refused(server, server.url + AGENT_PATH, "no SigV4 signature")


if __name__ == "__main__":
    unittest.main()
