"""Relay an upstream SSE stream byte for byte, noting usage and the end.

Events pass through unchanged, in the upstream's framing (``data: …\\n\\n``),
as soon as each one is complete. Only two things are ever altered, both so
that the client sees what it would have seen had it asked the upstream itself:

* the usage chunk (``"choices":[]`` plus ``usage``) that the proxy asked for
  on the client's behalf is dropped when the client did not ask for it;
* OpenAI's ``"usage":null`` on every chunk, present only because of that
  same request, is removed again.

With a :class:`~router.transcript.Transcript` (``database.store_text`` on), every event is
parsed to collect the answer's text; without one, only events that mention usage are.
"""

from __future__ import annotations

import orjson

from router.errors import sse_error_event
from router.transcript import Transcript

_DONE = b"data: [DONE]"
_ERROR = b'data: {"error"'


class SSERelay:
    def __init__(
        self, *, strip_usage_chunk: bool, strip_null_usage: bool = False, transcript: Transcript | None = None
    ) -> None:
        self.strip_usage_chunk = strip_usage_chunk
        self.strip_null_usage = strip_null_usage
        self.transcript = transcript
        self.usage: dict | None = None
        self.done = False  # saw data: [DONE]
        self.errored = False  # an error event went to the client
        self.events = 0  # data events relayed (≈ completion tokens if usage is lost)
        self._pending = b""

    def feed(self, data: bytes) -> bytes:
        """Bytes to send on now: every complete event so far, minus what is dropped."""
        buf = self._pending + data if self._pending else data
        last = buf.rfind(b"\n\n")
        if last < 0:
            self._pending = buf
            return b""
        complete, self._pending = buf[: last + 2], buf[last + 2 :]
        # Fast path: nothing in these events needs a closer look.
        if (
            self.transcript is None
            and b'"usage"' not in complete
            and _DONE not in complete
            and _ERROR not in complete
        ):
            self.events += complete.count(b"\n\n")
            return complete
        return b"".join(self._inspect(event) for event in _events(complete))

    def finish(self) -> bytes:
        """The upstream closed. A stream without ``[DONE]`` was cut short: say so."""
        tail, self._pending = self._pending, b""
        if self.done:
            return tail
        return tail + self.abort("upstream closed the stream before it was complete")

    def abort(self, message: str) -> bytes:
        """End the stream with an OpenAI-style error event and ``[DONE]``."""
        if self.done:
            return b""
        self.done = self.errored = True
        return sse_error_event(message, "server_error", "upstream_stream_error")

    def _inspect(self, event: bytes) -> bytes:
        if event.startswith(_DONE):
            self.done = True
            return event
        if event.startswith(b":"):
            return event  # keep-alive comment
        if event.startswith(_ERROR):
            self.errored = True
            return event
        self.events += 1
        if self.transcript is not None or b'"usage":' in event:
            event = self._parse(event)
        return event

    def _parse(self, event: bytes) -> bytes:
        if self.strip_null_usage:
            event = event.replace(b',"usage":null', b"")
            if b'"usage":' not in event and self.transcript is None:
                return event
        try:
            chunk = orjson.loads(event[5:])
        except orjson.JSONDecodeError:
            return event
        if self.transcript is not None:
            self.transcript.add_chunk(chunk)
        usage = chunk.get("usage") if isinstance(chunk, dict) else None
        if isinstance(usage, dict):
            self.usage = usage
            if self.strip_usage_chunk and chunk.get("choices") == []:
                self.events -= 1
                return b""
        return event


def _events(complete: bytes) -> list[bytes]:
    parts = complete.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]]
