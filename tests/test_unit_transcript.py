"""The stored text of an answer (``database.store_text``): router/forward/transcript.py for chat and
completions, and the Responses and Messages dialects' own, whole and streamed alike."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from router.dialects import CHAT, MESSAGES, RESPONSES
from router.forward.transcript import Transcript


def whole_message(content: str | None, calls: list[tuple[str, str]], index: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    return {"index": index, "message": message, "finish_reason": "stop"}


def streamed(
    content: str | None, calls: list[tuple[str, str]], index: int = 0, piece: int = 3
) -> list[dict[str, Any]]:
    """The chunks a server streams for the same message: text and arguments in pieces."""
    chunks: list[dict[str, Any]] = [{"choices": [{"index": index, "delta": {"role": "assistant"}}]}]
    text = content or ""
    for at in range(0, len(text), piece):
        chunks.append({"choices": [{"index": index, "delta": {"content": text[at : at + piece]}}]})
    for i, (name, arguments) in enumerate(calls):
        head = {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        chunks.append({"choices": [{"index": index, "delta": {"tool_calls": [head]}}]})
        for at in range(0, len(arguments), piece):
            part = {"index": i, "function": {"arguments": arguments[at : at + piece]}}
            chunks.append({"choices": [{"index": index, "delta": {"tool_calls": [part]}}]})
    return chunks


def text_of_chunks(chunks: list[dict[str, Any]]) -> str:
    transcript = Transcript()
    for c in chunks:
        transcript.add_chunk(c)
    return transcript.text()


def text_of_whole(choices: list[dict[str, Any]]) -> str:
    transcript = Transcript()
    transcript.add_response({"choices": choices})
    return transcript.text()


def test_text_then_each_tool_call_on_its_own_line() -> None:
    calls = [("read_file", '{"path": "a.py"}'), ("run", '{"cmd": "pytest -q"}')]
    expected = 'Let me look.\ntool_call: read_file({"path": "a.py"})\ntool_call: run({"cmd": "pytest -q"})'
    assert text_of_whole([whole_message("Let me look.", calls)]) == expected
    assert text_of_chunks(streamed("Let me look.", calls)) == expected


def test_several_choices_in_index_order_whatever_the_arrival_order() -> None:
    a, b = streamed("first", [], index=0), streamed("second", [], index=1)
    interleaved = [c for pair in zip(b, a, strict=False) for c in pair]  # choice 1's chunks first
    assert text_of_chunks(interleaved) == "first\n\nsecond"
    assert text_of_whole([whole_message("second", [], 1), whole_message("first", [], 0)]) == "first\n\nsecond"


def test_reasoning_is_not_the_answer() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"reasoning": "think think"}}]},
        {"choices": [{"index": 0, "delta": {"reasoning_content": "more"}}]},
        {"choices": [{"index": 0, "delta": {"content": "42"}}]},
    ]
    assert text_of_chunks(chunks) == "42"


def test_completions_text_and_junk_chunks() -> None:
    transcript = Transcript()
    for junk in (None, [], {"choices": None}, {"choices": ["x", 3]}, {"choices": [{"delta": "nope"}]}):
        transcript.add_chunk(junk)
    transcript.add_chunk({"choices": [{"index": 0, "text": "def f():"}]})
    transcript.add_chunk({"choices": [{"index": 0, "text": " pass"}]})
    assert transcript.text() == "def f(): pass"


_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)
_CALLS = st.lists(st.tuples(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), _TEXT), max_size=3)


@given(content=_TEXT, calls=_CALLS, piece=st.integers(1, 7))
def test_streamed_and_whole_answers_are_stored_alike(
    content: str, calls: list[tuple[str, str]], piece: int
) -> None:
    assert text_of_chunks(streamed(content, calls, piece=piece)) == text_of_whole(
        [whole_message(content, calls)]
    )


def test_chat_dialect_whole_answer_text_and_multibyte() -> None:
    body = {
        "choices": [whole_message("naïve 日本語 🙂", [])],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    whole = CHAT.whole(orjson.dumps(body), want_text=True)
    assert whole.text == "naïve 日本語 🙂" and whole.usage is not None and whole.usage.completion == 4
    assert CHAT.whole(orjson.dumps(body), want_text=False).text is None
    broken = CHAT.whole(b'{"choices": [', want_text=True)
    assert broken.usage is None and not broken.readable  # never relayed as a success


def test_responses_whole_answer_text() -> None:
    doc = {
        "id": "resp_1",
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hidden"}]},
            {
                "type": "message",
                "content": [{"type": "output_text", "text": "Done: "}, {"type": "refusal", "refusal": "x"}],
            },
            {"type": "function_call", "name": "shell", "arguments": '{"cmd":"ls"}'},
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch"},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }
    whole = RESPONSES.whole(orjson.dumps(doc), want_text=True)
    assert whole.text == 'Done: \ntool_call: shell({"cmd":"ls"})\ntool_call: apply_patch(*** Begin Patch)'
    assert whole.response_id == "resp_1"


def test_messages_whole_answer_text() -> None:
    doc = {
        "content": [
            {"type": "thinking", "thinking": "hidden", "signature": "s"},
            {"type": "text", "text": "Running it."},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
        ],
        "usage": {"input_tokens": 2, "cache_read_input_tokens": 3, "output_tokens": 4},
    }
    whole = MESSAGES.whole(orjson.dumps(doc), want_text=True)
    assert whole.text == 'Running it.\ntool_call: bash({"command":"ls"})'
    assert whole.usage is not None and (whole.usage.prompt, whole.usage.cached) == (5, 3)
