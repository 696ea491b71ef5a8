"""What every API dialect provides, and the pieces they share.

A dialect knows one API's shapes, so that one forwarding path serves them all
(``router/forward/proxy.py`` never looks inside a body):

* ``check``: the few fields the proxy itself reads have the right types;
* ``view``: a chat-shaped view of the request for the policy and the
  classifier (system prompt, turns, tools, tool results as ``role: tool``);
* ``adapt``: the bytes to send one backend (model, extras, thinking, what that
  backend's kind rejects stripped);
* ``whole`` and ``relay``: usage (and, with ``database.store_text``, the
  answer's text) from a whole answer or from a stream relayed byte for byte,
  and how that API ends a stream that broke;
* ``shape``: the error shape its clients understand.

No dialect translates one API into another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from router.errors import OPENAI, Shape

if TYPE_CHECKING:
    from router.config import ServerConfig
    from router.forward.backends import Backend


class Usage(NamedTuple):
    """Tokens as the report counts them: ``prompt`` includes cached input and cache writes."""

    prompt: int
    completion: int
    cached: int = 0  # read from the prompt cache; 0 also when not reported (see cache_counted)
    reasoning: int = 0
    cache_write: int = 0  # written to the prompt cache (Anthropic bills them above input)
    # False when the upstream said nothing about its cache (vLLM without
    # --enable-prompt-tokens-details): the row stores NULL, not a made-up 0 hits.
    cache_counted: bool = True


class Adapted(NamedTuple):
    payload: bytes
    client_wants_usage: bool  # chat streams: the client asked for the usage chunk itself
    thinking: str | None  # "on" | "off" as sent; None: left to the model's default
    thinking_note: str  # the x-offload-thinking header value


class Whole(NamedTuple):
    """What the proxy reads from a whole (non-streamed) answer."""

    usage: Usage | None
    response_id: str | None = None
    text: str | None = None
    # False when a success status came with a body that is not a JSON object (truncated
    # JSON, an HTML page from a proxy in between): not an answer to relay as a success.
    readable: bool = True


UNREADABLE = Whole(None, readable=False)

# The most one stream event may hold while it arrives (backends.<name>.max_event_bytes).
# A whole Responses answer rides in one event (response.completed): 16 MiB is about four
# million tokens of it.
MAX_EVENT_BYTES = 16 * 1024 * 1024


class StreamRelay:
    """Relays one upstream stream byte for byte (line ends as LF), noting usage and its end.

    ``feed`` returns the bytes to send on now (every complete event so far);
    ``finish`` is called when the upstream closed; ``abort`` ends the stream
    the way this API ends a failure. After either, ``done`` is true.
    """

    usage: Usage | None = None
    response_id: str | None = None
    done = False
    errored = False  # an error reached the client (the upstream's or ours)
    failure: str | None = None  # why the proxy itself ended the stream (error_type of the row)
    events = 0  # events relayed: ≈ completion tokens when usage is lost

    def __init__(self, want_text: bool, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self.want_text = want_text
        self.max_event_bytes = max_event_bytes
        # The start of an event still arriving. A bytearray, searched only where new bytes
        # landed: one huge event costs time and memory linear in its size, bounded.
        self._pending = bytearray()

    def feed(self, data: bytes) -> bytes:
        pending = self._pending
        if pending and pending[-1:] == b"\r":
            del pending[-1:]  # the first half of a CRLF split between two chunks
            data = b"\r" + data
        if b"\r" in data:  # a memchr: LF streams (vLLM, OpenAI, Anthropic) pay nothing more
            data = lf_line_ends(data)
        if not pending:
            last = data.rfind(b"\n\n")
            if last < 0:
                pending += data
                return self._check_bound()
            if last == len(data) - 2:
                return self._complete(data)  # the usual chunk: whole events, no copy
            pending += memoryview(data)[last + 2 :]
            return self._complete(data[: last + 2])
        start = len(pending) - 1  # an event end may straddle the two chunks
        pending += data
        last = pending.rfind(b"\n\n", start)
        if last < 0:
            return self._check_bound()
        complete = bytes(pending[: last + 2])
        del pending[: last + 2]
        return self._complete(complete)

    def _check_bound(self) -> bytes:
        """Past ``max_event_bytes`` of one unfinished event, end the stream as this API ends
        a failure, rather than buffer an upstream's runaway event without limit."""
        if len(self._pending) <= self.max_event_bytes:
            return b""
        self._pending = bytearray()
        self.failure = "upstream_event_too_large"
        return self.abort(f"the upstream sent a stream event larger than {self.max_event_bytes} bytes")

    def finish(self) -> bytes:
        """The upstream closed. A stream without its API's normal end was cut short: say so."""
        tail, self._pending = bytes(self._pending), bytearray()
        if self.done:
            return tail
        return self.abort("upstream closed the stream before it was complete")

    def abort(self, message: str, code: str = "server_error") -> bytes:
        raise NotImplementedError

    def text(self) -> str | None:
        return None

    def _complete(self, complete: bytes) -> bytes:
        """Complete events (each ending in a blank line): what to send on."""
        raise NotImplementedError


def lf_line_ends(buf: bytes) -> bytes:
    """CRLF and lone CR line ends as LF: the same SSE stream (the spec allows all three; an
    upstream built on sse-starlette sends CRLF) in the one form the relays split and parse,
    which every client reads. A CR at the very end stays CR: it may be the first half of a
    CRLF that the next chunk completes. (Raw CRs cannot occur inside JSON data.)"""
    held = buf.endswith(b"\r")
    buf = buf.replace(b"\r\n", b"\n")
    if held:
        buf = buf[:-1]
    buf = buf.replace(b"\r", b"\n")
    return buf + b"\r" if held else buf


def events_of(complete: bytes) -> list[bytes]:
    """Complete SSE events, each with its closing blank line."""
    parts = complete.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]]


def event_name(event: bytes) -> bytes:
    """The ``event:`` line's name (Responses and Messages upstreams send one), else b""."""
    if event.startswith(b"event:"):
        end = event.find(b"\n")
        return event[6:end].strip()
    return b""


def event_data(event: bytes) -> Any:
    """The parsed ``data:`` JSON of one event, or None."""
    start = event.find(b"data:")
    if start < 0:
        return None
    try:
        return orjson.loads(event[start + 5 :])
    except orjson.JSONDecodeError:
        return None


def sse_event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def type_of(item: dict[str, Any], default: str = "") -> str:
    """A content part's, block's or input item's ``type`` (``default`` when absent); "" when the
    client sent something other than a string there: the callers look it up in sets, and a
    list is not hashable."""
    kind = item.get("type", default)
    return kind if isinstance(kind, str) else ""


# More tokens than any request can hold (262,144-token windows, a few million at most
# anywhere): past it a count is an upstream's nonsense, not usage to bill.
MAX_SANE_TOKENS = 100_000_000


def sane_usage(prompt: Any, completion: Any, cached: Any = None, reasoning: Any = None) -> Usage | None:
    """Usage from an upstream's raw counts; an absent count (None) is 0 (an absent cached
    count is also ``cache_counted=False``). None when any
    count is present but not a sane non-negative integer (a string, a float, a bool, a
    negative number, 2**63): such usage is treated as absent, so that the request's row
    keeps the proxy's estimate and says so (``tokens_estimated``), instead of storing a
    made-up 0 or a clamped 2,147,483,647 as truth."""
    counts = []
    for value in (prompt, completion, cached, reasoning):
        if value is None:
            counts.append(0)
        elif type(value) is int and 0 <= value <= MAX_SANE_TOKENS:
            counts.append(value)
        else:
            return None
    if counts[2] > counts[0]:
        return None  # more cached than prompt tokens: not a usage the report can believe
    prompt_n, completion_n, cached_n, reasoning_n = counts
    return Usage(prompt_n, completion_n, cached_n, reasoning_n, cache_counted=cached is not None)


# --------------------------------------------------------------- thinking

_OFF_EFFORTS = frozenset({"none", "disabled", "off"})


def thinking_plan(
    mode: str, client_asked: str | None, backend_default: bool | None
) -> tuple[bool | None, str]:
    """Whether thinking goes upstream on (True), off (False) or unset (None), and the header.

    ``mode`` is the backend's ``thinking`` setting: ``client`` honours an
    explicit request from the client (``reasoning_effort``, ``reasoning.effort``,
    ``thinking``), else the backend's default (its ``extra_body``);
    ``on``/``off`` decide whatever the client asked, and the header says so.
    """
    asked = None if client_asked is None else client_asked not in _OFF_EFFORTS
    if mode == "client":
        if asked is not None:
            return asked, f"{'on' if asked else 'off'}; by=client"
        if backend_default is None:
            return None, "default"
        return backend_default, f"{'on' if backend_default else 'off'}; by=backend"
    wanted = mode == "on"
    note = f"{mode}; by=config"
    if asked is not None and asked != wanted:
        note += f"; client-asked={client_asked}"
    return wanted, note


def set_template_thinking(out: dict[str, Any], on: bool) -> None:
    """vLLM: ``chat_template_kwargs.enable_thinking`` wins over any effort the body carries."""
    kwargs = out.get("chat_template_kwargs")
    out["chat_template_kwargs"] = {**(kwargs if isinstance(kwargs, dict) else {}), "enable_thinking": on}


def template_default(extra_body: dict[str, Any]) -> bool | None:
    kwargs = extra_body.get("chat_template_kwargs")
    value = kwargs.get("enable_thinking") if isinstance(kwargs, dict) else None
    return value if isinstance(value, bool) else None


def merge_extra_body(out: dict[str, Any], extra: dict[str, Any]) -> None:
    """The backend's ``extra_body`` under the client's own fields (the client's settings win)."""
    for key, value in extra.items():
        mine = out.get(key)
        if isinstance(value, dict) and isinstance(mine, dict):
            out[key] = {**value, **mine}
        elif key not in out:
            out[key] = value


def upstream_model(backend: Backend, client_model: str | None) -> str:
    """The client's own model name where the backend keeps it (an unknown name, e.g. Claude
    Code's ``claude-*`` to an Anthropic backend), else the backend's model."""
    if client_model is not None and backend.config.keep_client_model:
        return client_model
    return backend.model


class Dialect:
    """One API. Subclasses fill in the shapes; see the module docstring."""

    api = ""
    path = ""  # under the backend's /v1 base
    endpoint = ""  # the usage row's ``endpoint``
    shape: Shape = OPENAI
    decides = True  # classified by the policy (embeddings are not)
    forwards_headers: tuple[str, ...] = ()  # client headers that travel upstream as they are
    reasoning_field = ""  # where a client asks for thinking: reasoning_effort, reasoning, thinking

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        """Refuse (ProxyError 400) a body whose routing fields have the wrong types."""
        raise NotImplementedError

    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def adapt(self, body: dict[str, Any], backend: Backend, client_model: str | None) -> Adapted:
        """A shallow copy (the client's dict stays as sent, for a fallback) with the backend's
        model, the thinking decision and ``extra_body``, then what that kind refuses stripped."""
        out = dict(body)
        out["model"] = upstream_model(backend, client_model)
        thinking, note = self._thinking(out, backend)
        merge_extra_body(out, backend.config.extra_body)
        wants_usage = self.for_backend(out, backend)
        return Adapted(orjson.dumps(out), wants_usage, thinking, note)

    def for_backend(self, out: dict[str, Any], backend: Backend) -> bool:
        """Make ``out`` acceptable to this kind of backend; return whether the client asked
        for the usage that the proxy adds (chat streams only)."""
        return False

    def client_effort(self, body: dict[str, Any]) -> str | None:
        """What the client explicitly asked of thinking, if anything."""
        return None

    def thinking_on_by_default(self, out: dict[str, Any]) -> None:
        """A cloud backend set to ``thinking: on`` that the client asked nothing of."""

    def _thinking(self, out: dict[str, Any], backend: Backend) -> tuple[str | None, str]:
        asked = self.client_effort(out)
        on, note = thinking_plan(
            backend.config.thinking,
            asked,
            template_default(backend.config.extra_body) if backend.kind == "vllm" else None,
        )
        if on is None:
            return None, note
        if backend.kind == "vllm":
            set_template_thinking(out, on)  # wins over any effort vLLM would read from the body
        if not on:
            out.pop(self.reasoning_field, None)
        elif asked is None and backend.kind != "vllm":
            self.thinking_on_by_default(out)
        return ("on" if on else "off"), note

    def whole(self, data: bytes, want_text: bool) -> Whole:
        raise NotImplementedError

    def relay(self, backend: Backend, client_wants_usage: bool, want_text: bool) -> StreamRelay:
        raise NotImplementedError

    def streams(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True
