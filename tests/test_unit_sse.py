"""The stream relays (router/dialects/*.py), byte for byte and without a server.

An upstream's TCP chunks fall anywhere: inside a ``data:`` line, between the two
newlines that end an event, inside a multibyte character. Whatever the cut, the
client must get the same bytes, and the proxy the same usage, text and end.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from router.dialects.base import StreamRelay, events_of
from router.dialects.chat import ChatRelay
from router.dialects.messages import MessagesRelay
from router.dialects.responses import ResponsesRelay

TEXT = "Voilà: naïve café, 日本語, emoji 🙂🚀 and ∑x²"


def chunk(delta: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        **extra,
    }


def data(obj: object) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def chat_stream(*, null_usage: bool = False) -> bytes:
    """A chat stream as OpenAI sends it with include_usage: text in pieces, a tool call in
    fragments, the usage chunk (``choices: []``), ``[DONE]``."""
    extra = {"usage": None} if null_usage else {}
    pieces = [TEXT[:7], TEXT[7:20], TEXT[20:]]
    events = [data(chunk({"role": "assistant", "content": ""}, **extra))]
    events += [data(chunk({"content": p}, **extra)) for p in pieces]
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "run", "arguments": ""}}
    events.append(data(chunk({"tool_calls": [call]}, **extra)))
    for part in ('{"cmd": ', '"ls"}'):
        events.append(data(chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}, **extra)))
    usage = {
        "prompt_tokens": 31,
        "completion_tokens": 12,
        "total_tokens": 43,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    events.append(
        data({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage})
    )
    events.append(b"data: [DONE]\n\n")
    return b"".join(events)


EXPECTED_TEXT = TEXT + '\ntool_call: run({"cmd": "ls"})'


def relay_all(relay: StreamRelay, pieces: Iterable[bytes]) -> bytes:
    """What the client receives: feed until done, then finish() if the upstream closed first."""
    out = []
    for piece in pieces:
        if relay.done:
            break
        out.append(relay.feed(piece))
    if not relay.done:
        out.append(relay.finish())
    return b"".join(out)


def cut(stream: bytes, at: Iterable[int]) -> list[bytes]:
    points = sorted({0, len(stream), *at})
    return [stream[a:b] for a, b in zip(points, points[1:], strict=False)]


def byte_by_byte(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


def crlf(stream: bytes) -> bytes:
    return stream.replace(b"\n", b"\r\n")


def chat_relay(*, want_text: bool = True, client_wants_usage: bool = False, cloud: bool = False) -> ChatRelay:
    return ChatRelay(
        want_text,
        strip_usage_chunk=not client_wants_usage,
        strip_null_usage=cloud and not client_wants_usage,
    )


# ------------------------------------------------------------------ chat


def test_chat_whole_stream_in_one_chunk() -> None:
    stream = chat_stream()
    relay = chat_relay()
    out = relay_all(relay, [stream])
    assert relay.done and not relay.errored
    assert (relay.usage.prompt, relay.usage.completion, relay.usage.cached) == (31, 12, 8)  # type: ignore[union-attr]
    assert relay.text() == EXPECTED_TEXT
    # The client did not ask for usage: the usage chunk is gone, everything else is as sent.
    assert b'"usage"' not in out
    assert out == b"".join(e for e in events_of(stream) if b'"usage"' not in e)
    assert relay.events == 7  # content events, not the usage chunk nor [DONE]


def test_chat_byte_by_byte_is_the_same_as_one_chunk() -> None:
    stream = chat_stream()
    whole, split = chat_relay(), chat_relay()
    assert relay_all(split, byte_by_byte(stream)) == relay_all(whole, [stream])
    assert split.usage == whole.usage and split.text() == EXPECTED_TEXT and split.done
    assert split.events == whole.events


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    at=st.lists(st.integers(0, len(chat_stream())), max_size=40),
    want_text=st.booleans(),
    client_wants_usage=st.booleans(),
)
def test_chat_any_chunking_gives_the_same_bytes_usage_and_text(
    at: list[int], want_text: bool, client_wants_usage: bool
) -> None:
    stream = chat_stream()
    reference = chat_relay(want_text=want_text, client_wants_usage=client_wants_usage)
    expected = relay_all(reference, [stream])
    relay = chat_relay(want_text=want_text, client_wants_usage=client_wants_usage)
    assert relay_all(relay, cut(stream, at)) == expected
    assert relay.usage == reference.usage and relay.usage is not None and relay.usage.prompt == 31
    assert relay.done and not relay.errored
    assert relay.text() == (EXPECTED_TEXT if want_text else None)
    # The estimate used when usage is lost must not depend on whether text is stored.
    assert relay.events == 7


def test_chat_client_that_asked_for_usage_gets_the_usage_chunk() -> None:
    stream = chat_stream()
    relay = chat_relay(client_wants_usage=True)
    assert relay_all(relay, byte_by_byte(stream)) == stream
    assert relay.usage is not None and relay.usage.completion == 12


def test_chat_cloud_null_usage_removed_only_when_the_proxy_asked_for_it() -> None:
    stream = chat_stream(null_usage=True)
    relay = chat_relay(cloud=True)
    out = relay_all(relay, cut(stream, range(0, len(stream), 13)))
    assert b'"usage"' not in out  # neither the nulls nor the usage chunk
    assert relay.usage is not None and relay.usage.prompt == 31
    assert relay.text() == EXPECTED_TEXT
    # A client that asked for usage sees OpenAI's nulls, as OpenAI sent them.
    asked = chat_relay(cloud=True, client_wants_usage=True)
    assert relay_all(asked, [stream]) == stream


def test_chat_crlf_stream_is_relayed_whole() -> None:
    """SSE allows CRLF line ends (sse-starlette's default): events must still be found."""
    stream = crlf(chat_stream())
    for pieces in ([stream], byte_by_byte(stream), cut(stream, range(1, len(stream), 7))):
        relay = chat_relay()
        out = relay_all(relay, pieces)
        assert relay.done and not relay.errored, out[-200:]
        assert relay.usage is not None and relay.usage.prompt == 31
        assert relay.text() == EXPECTED_TEXT
        assert b"upstream closed" not in out and out.endswith(b"data: [DONE]\n\n")
        assert b'"usage"' not in out  # the usage chunk is still recognised and dropped
        assert relay.events == 7


def test_chat_keep_alive_comments_pass_through_and_are_not_tokens() -> None:
    events = events_of(chat_stream())
    with_pings = b"".join(e + b": keep-alive\n\n" for e in events[:-1]) + events[-1]
    for want_text in (False, True):
        relay = chat_relay(want_text=want_text, client_wants_usage=True)
        out = relay_all(relay, byte_by_byte(with_pings))
        assert out == with_pings and relay.done
        assert relay.events == 7, want_text


def test_chat_malformed_event_passes_through_and_the_stream_goes_on() -> None:
    events = events_of(chat_stream())
    bad = b'data: {"choices": [{"delta": {"content": "x"\n\n'  # cut JSON
    garbage = b"data: \xff\xfe not json\n\n"
    stream = events[0] + bad + garbage + b"".join(events[1:])
    relay = chat_relay()
    out = relay_all(relay, byte_by_byte(stream))
    assert bad in out and garbage in out
    assert relay.done and not relay.errored and relay.text() == EXPECTED_TEXT
    assert relay.usage is not None and relay.usage.prompt == 31


def test_chat_stream_cut_short_ends_with_an_error_and_done() -> None:
    stream = chat_stream()
    half = stream[: len(stream) // 2]
    relay = chat_relay()
    out = relay_all(relay, byte_by_byte(half))
    assert relay.done and relay.errored
    complete = half[: half.rfind(b"\n\n") + 2]
    assert out.startswith(complete)
    error = events_of(out[len(complete) :])
    assert len(error) == 2 and b'"error"' in error[0] and error[1] == b"data: [DONE]\n\n"
    assert orjson.loads(error[0][6:])["error"]["code"] == "upstream_stream_error"


def test_chat_upstream_error_event_marks_the_stream_errored() -> None:
    err = b'data: {"error": {"message": "boom", "type": "server_error"}}\n\n'
    stream = events_of(chat_stream())[0] + err + b"data: [DONE]\n\n"
    relay = chat_relay(want_text=False)
    assert relay_all(relay, byte_by_byte(stream)) == stream
    assert relay.errored and relay.done


def test_chat_done_without_space_after_the_colon() -> None:
    """``data:[DONE]`` is the same SSE field as ``data: [DONE]``."""
    stream = chat_stream().replace(b"data: ", b"data:")
    relay = chat_relay()
    out = relay_all(relay, [stream])
    assert relay.done and not relay.errored, out[-120:]
    assert relay.usage is not None and relay.usage.prompt == 31
    assert relay.text() == EXPECTED_TEXT


# ------------------------------------------------------------------ responses


def responses_stream() -> bytes:
    def ev(name: str, seq: int, **body: object) -> bytes:
        return (
            b"event: "
            + name.encode()
            + b"\ndata: "
            + orjson.dumps({"type": name, "sequence_number": seq, **body})
            + b"\n\n"
        )

    response = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": TEXT}]}
    usage = {
        "input_tokens": 40,
        "output_tokens": 9,
        "input_tokens_details": {"cached_tokens": 16},
        "output_tokens_details": {"reasoning_tokens": 3},
    }
    deltas = [TEXT[:5], TEXT[5:]]
    return b"".join(
        [
            ev("response.created", 0, response=response),
            *(ev("response.output_text.delta", 1 + i, delta=d) for i, d in enumerate(deltas)),
            ev("response.output_item.done", 3, item=item),
            ev(
                "response.completed",
                4,
                response={**response, "status": "completed", "output": [item], "usage": usage},
            ),
        ]
    )


@settings(max_examples=150)
@given(
    at=st.lists(st.integers(0, len(responses_stream())), max_size=30),
    line_end=st.sampled_from(["lf", "crlf"]),
)
def test_responses_any_chunking(at: list[int], line_end: str) -> None:
    stream = responses_stream()
    if line_end == "crlf":
        stream = crlf(stream)
    relay = ResponsesRelay(want_text=True)
    out = relay_all(relay, cut(stream, [min(a, len(stream)) for a in at]))
    assert relay.done and not relay.errored
    assert relay.response_id == "resp_1" and relay.sequence == 4
    assert relay.usage is not None and (relay.usage.prompt, relay.usage.cached, relay.usage.reasoning) == (
        40,
        16,
        3,
    )
    assert relay.text() == TEXT
    assert out.replace(b"\r\n", b"\n") == responses_stream()


def test_responses_cut_short_fails_the_same_response_with_later_sequence_numbers() -> None:
    stream = responses_stream()
    head = stream[: stream.index(b"event: response.output_item.done")]
    relay = ResponsesRelay(want_text=False)
    out = relay_all(relay, byte_by_byte(head))
    assert relay.done and relay.errored
    tail = events_of(out[len(head) :])
    assert [e.split(b"\n", 1)[0] for e in tail] == [b"event: error", b"event: response.failed"]
    error, failed = (orjson.loads(e.split(b"data: ", 1)[1]) for e in tail)
    assert (error["sequence_number"], failed["sequence_number"]) == (3, 4)
    assert failed["response"]["id"] == "resp_1" and failed["response"]["status"] == "failed"


def test_responses_keep_alive_comment_is_not_counted() -> None:
    events = events_of(responses_stream())
    stream = events[0] + b": ping\n\n" + b"".join(events[1:])
    relay = ResponsesRelay(want_text=False)
    assert relay_all(relay, byte_by_byte(stream)) == stream
    assert relay.done and relay.events == len(events)


# ------------------------------------------------------------------ messages


def messages_stream() -> bytes:
    def ev(name: str, **body: object) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **body}) + b"\n\n"

    start_usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 20,
        "cache_creation_input_tokens": 5,
        "output_tokens": 1,
    }
    return b"".join(
        [
            ev(
                "message_start",
                message={"id": "msg_1", "role": "assistant", "content": [], "usage": start_usage},
            ),
            ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            ev("ping"),
            ev("content_block_delta", index=0, delta={"type": "text_delta", "text": TEXT[:9]}),
            ev("content_block_delta", index=0, delta={"type": "text_delta", "text": TEXT[9:]}),
            ev("content_block_stop", index=0),
            ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 14}),
            ev("message_stop"),
        ]
    )


@settings(max_examples=150)
@given(
    at=st.lists(st.integers(0, len(messages_stream())), max_size=30), line_end=st.sampled_from(["lf", "crlf"])
)
def test_messages_any_chunking(at: list[int], line_end: str) -> None:
    stream = messages_stream()
    if line_end == "crlf":
        stream = crlf(stream)
    relay = MessagesRelay(want_text=True)
    out = relay_all(relay, cut(stream, [min(a, len(stream)) for a in at]))
    assert relay.done and not relay.errored
    # The cache counts in the prompt; output_tokens from message_delta replaces message_start's.
    assert relay.usage is not None and (relay.usage.prompt, relay.usage.completion, relay.usage.cached) == (
        35,
        14,
        20,
    )
    assert relay.text() == TEXT and relay.events == 2
    assert out.replace(b"\r\n", b"\n") == messages_stream()


def test_messages_cut_inside_a_block_closes_it_then_errors() -> None:
    stream = messages_stream()
    head = stream[: stream.index(b"event: content_block_stop")]
    relay = MessagesRelay(want_text=False)
    out = relay_all(relay, byte_by_byte(head))
    tail = events_of(out[len(head) :])
    assert [e.split(b"\n", 1)[0] for e in tail] == [b"event: content_block_stop", b"event: error"]
    assert b"message_stop" not in out  # a cut message never looks complete
    assert relay.done and relay.errored


# ------------------------------------------------------------------ one huge event


def _feed_one_event(size: int, chunk: int = 65536) -> float:
    relay = chat_relay(want_text=False)
    relay.max_event_bytes = size * 2
    head = b'data: {"choices": [{"index": 0, "delta": {"content": "'
    piece = b"x" * chunk
    started = time.perf_counter()
    relay.feed(head)
    for _ in range(size // chunk):
        assert relay.feed(piece) == b""
    out = relay.feed(b'"}}]}\n\n')
    elapsed = time.perf_counter() - started
    assert out.startswith(head) and len(out) > size
    return elapsed


def test_one_huge_event_costs_time_linear_in_its_size() -> None:
    """Each chunk is scanned once: 8x the bytes, about 8x the time (a rescan of the whole
    buffer per chunk would be about 64x). Best of three against noise."""
    small = min(_feed_one_event(2 << 20) for _ in range(3))
    large = min(_feed_one_event(16 << 20) for _ in range(3))
    assert large / small < 24, (small, large)


@pytest.mark.parametrize(
    "make", [chat_relay, lambda: ResponsesRelay(want_text=False), lambda: MessagesRelay(False)]
)
def test_an_event_past_the_bound_ends_the_stream_in_the_apis_own_way(make) -> None:
    relay = make()
    relay.max_event_bytes = 1000
    assert relay.feed(b'data: {"x": "' + b"y" * 600) == b""
    ended = relay.feed(b"y" * 600)
    assert relay.done and relay.errored and relay.failure == "upstream_event_too_large"
    assert b"larger than 1000 bytes" in ended
    assert relay.feed(b"more") == b""  # nothing after the end
