"""Chat Completions, completions and embeddings: OpenAI's first API, as vLLM and OpenAI serve it.

Streams are ``data: <json>`` events ending in ``data: [DONE]``. The proxy always
asks for usage (``stream_options.include_usage``); only two things in a stream
are ever altered, both so that the client sees what it would have seen had it
asked the upstream itself:

* the usage chunk (``"choices":[]`` plus ``usage``) is dropped when the client
  did not ask for it;
* OpenAI's ``"usage":null`` on every chunk, present only because of that same
  request, is removed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from router.dialects.base import (
    MAX_EVENT_BYTES,
    UNREADABLE,
    Adapted,
    Dialect,
    StreamRelay,
    Usage,
    Whole,
    events_of,
    sane_usage,
)
from router.edge.intake import check_chat, check_completions, check_embeddings
from router.errors import sse_error_event
from router.forward.transcript import Transcript

if TYPE_CHECKING:
    from router.config import ServerConfig
    from router.forward.backends import Backend

# vLLM-only request fields: OpenAI answers 400 for each.
VLLM_ONLY_FIELDS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "use_beam_search", "length_penalty",
        "stop_token_ids", "include_stop_str_in_output", "ignore_eos", "min_tokens",
        "skip_special_tokens", "spaces_between_special_tokens", "truncate_prompt_tokens",
        "truncation_side", "prompt_logprobs", "logprob_token_ids", "allowed_token_ids",
        "bad_words", "watermarking", "repetition_detection", "thinking_token_budget",
        "include_reasoning", "chat_template_kwargs", "chat_template", "add_generation_prompt",
        "continue_final_message", "add_special_tokens", "documents", "echo",
        "mm_processor_kwargs", "media_io_kwargs", "structured_outputs", "priority",
        "request_id", "session_id", "cache_salt", "kv_transfer_params", "vllm_xargs",
        "return_token_ids", "return_prompt_text", "stream_interval", "enable_thinking",
        "guided_json", "guided_regex", "guided_choice", "guided_grammar",
        "guided_decoding_backend", "guided_whitespace_pattern",
    }
)  # fmt: skip
_REASONING_FIELDS = ("reasoning", "reasoning_content")


def chat_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    return sane_usage(
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None,
        completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else None,
    )


class Chat(Dialect):
    api = endpoint = "chat"
    path = "/chat/completions"
    reasoning_field = "reasoning_effort"

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_chat(body, limits)

    def for_backend(self, out: dict[str, Any], backend: Backend) -> bool:
        if backend.kind != "vllm":
            _strip_for_cloud(out, self.path)
        return _ask_for_usage(out)

    def client_effort(self, body: dict[str, Any]) -> str | None:
        """``reasoning_effort``, or vLLM's own switch when the client set it."""
        effort = body.get("reasoning_effort")
        if isinstance(effort, str):
            return effort
        kwargs = body.get("chat_template_kwargs")
        switch = kwargs.get("enable_thinking") if isinstance(kwargs, dict) else None
        return None if switch is None else ("on" if switch else "off")

    def whole(self, data: bytes, want_text: bool) -> Whole:
        doc = _loads(data)
        if not isinstance(doc, dict):
            return UNREADABLE
        text = None
        if want_text:
            transcript = Transcript()
            transcript.add_response(doc)
            text = transcript.text()
        return Whole(chat_usage(doc.get("usage")), None, text)

    def relay(self, backend: Backend, client_wants_usage: bool, want_text: bool) -> StreamRelay:
        return ChatRelay(
            want_text,
            max_event_bytes=backend.config.max_event_bytes,
            strip_usage_chunk=not client_wants_usage,
            strip_null_usage=backend.kind != "vllm" and not client_wants_usage,
        )


class Completions(Chat):
    api = endpoint = "completions"
    path = "/completions"

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_completions(body)


class Embeddings(Chat):
    api = endpoint = "embeddings"
    path = "/embeddings"
    decides = False

    def check(self, body: dict[str, Any], limits: ServerConfig) -> None:
        check_embeddings(body)

    def adapt(self, body: dict[str, Any], backend: Backend, client_model: str | None) -> Adapted:
        out = dict(body)
        out["model"] = backend.config.embeddings_model
        return Adapted(orjson.dumps(out), False, None, "default")


def _ask_for_usage(out: dict[str, Any]) -> bool:
    """Ask a stream for its usage chunk; return whether the client had asked itself."""
    if out.get("stream") is not True:
        return False
    options = out.get("stream_options")
    options = dict(options) if isinstance(options, dict) else {}
    wanted = options.get("include_usage") is True
    options["include_usage"] = True  # the proxy always needs the token counts
    out["stream_options"] = options
    return wanted


def _strip_for_cloud(out: dict[str, Any], path: str) -> None:
    for key in VLLM_ONLY_FIELDS.intersection(out):
        del out[key]
    messages = out.get("messages")
    if isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and any(f in m for f in _REASONING_FIELDS)
        for m in messages
    ):
        out["messages"] = [_without_reasoning(m) for m in messages]
    # gpt-5 and o-series reject max_tokens on chat; max_completion_tokens means the same.
    if path == "/chat/completions" and "max_tokens" in out and "max_completion_tokens" not in out:
        out["max_completion_tokens"] = out.pop("max_tokens")


def _without_reasoning(message: Any) -> Any:
    if isinstance(message, dict) and message.get("role") == "assistant":
        return {k: v for k, v in message.items() if k not in _REASONING_FIELDS}
    return message


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


# The optional space after "data:" is the SSE spec's: both spellings are the same event.
_DONE = b"[DONE]"
_DONE_EVENT = (b"data: [DONE]", b"data:[DONE]")
_ERROR = b'{"error"'
_ERROR_EVENT = (b'data: {"error"', b'data:{"error"')


class ChatRelay(StreamRelay):
    """A chat or completions stream. With ``want_text`` every event is parsed to collect the
    answer's text; without, only events that mention usage are."""

    def __init__(
        self,
        want_text: bool,
        *,
        strip_usage_chunk: bool,
        strip_null_usage: bool = False,
        max_event_bytes: int = MAX_EVENT_BYTES,
    ) -> None:
        super().__init__(want_text, max_event_bytes)
        self.strip_usage_chunk = strip_usage_chunk
        self.strip_null_usage = strip_null_usage
        self.transcript = Transcript() if want_text else None

    def text(self) -> str | None:
        return self.transcript.text() if self.transcript is not None else None

    def abort(self, message: str, code: str = "server_error") -> bytes:
        """End the stream with an OpenAI-style error event and ``[DONE]``."""
        if self.done:
            return b""
        self.done = self.errored = True
        return sse_error_event(message, "server_error", "upstream_stream_error")

    def _complete(self, complete: bytes) -> bytes:
        # Fast path: nothing in these events needs a closer look.
        if (
            self.transcript is None
            and b'"usage"' not in complete
            and _DONE not in complete
            and _ERROR not in complete
        ):
            # Events, less keep-alive comments (": ..." events): not tokens.
            self.events += complete.count(b"\n\n") - complete.count(b"\n\n:") - complete.startswith(b":")
            return complete
        return b"".join(self._inspect(event) for event in events_of(complete))

    def _inspect(self, event: bytes) -> bytes:
        if event.startswith(_DONE_EVENT):
            self.done = True
            return event
        if event.startswith(b":"):
            return event  # keep-alive comment
        if event.startswith(_ERROR_EVENT):
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
        chunk = _loads(event[5:])
        if chunk is None:
            return event
        if self.transcript is not None:
            self.transcript.add_chunk(chunk)
        usage = chunk.get("usage") if isinstance(chunk, dict) else None
        if isinstance(usage, dict):
            self.usage = chat_usage(usage)
            if chunk.get("choices") == []:
                self.events -= 1  # the usage chunk carries no token
                if self.strip_usage_chunk:
                    return b""
        return event
