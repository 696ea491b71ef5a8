"""A request's session, from what the clients really send (the recorded bodies and headers
of Claude Code 2.1 and Codex 0.171 in tests/data/agent_requests), else its stable prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from router.sessions import MAX_ID, Seen, Sessions, session_of
from tests.harness import MemoryRecorder, ProxyServer, make_config, wait_until

RECORDED = Path(__file__).parent / "data" / "agent_requests"


def recorded(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    data = json.loads((RECORDED / f"{name}.json").read_text())
    return data["body"], data["headers"]


def test_claude_code_turns_share_the_session_it_names_in_its_header_and_its_user_id() -> None:
    task, headers = recorded("claude_task")
    result, result_headers = recorded("claude_tool_result")
    session = headers["x-claude-code-session-id"]
    assert session_of("messages", task, headers) == session == session_of("messages", result, result_headers)
    # Without the header, metadata.user_id's JSON names the same session.
    assert session_of("messages", task, {}) == session


def test_codex_turns_share_its_session_header_and_prompt_cache_key() -> None:
    task, headers = recorded("codex_task")
    result, result_headers = recorded("codex_tool_result")
    assert session_of("responses", task, headers) == headers["session-id"]
    assert session_of("responses", result, result_headers) == headers["session-id"]
    assert session_of("responses", task, {}) == task["prompt_cache_key"]  # the body alone says it too


def test_without_an_id_a_conversation_is_its_stable_prefix() -> None:
    first = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "fix the bug"}]}
    later = {
        "messages": [
            *first["messages"],
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "and?"},
        ]
    }
    other = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "write docs"}]}
    session = session_of("chat", first, {})
    assert session.startswith("prefix:") and session == session_of("chat", later, {})
    assert session != session_of("chat", other, {})
    # A previous_response_id chain continues the session of the response it names.
    assert (
        session_of("responses", {"input": "go on", "previous_response_id": "resp_1"}, {}, "codex-1")
        == "codex-1"
    )


def test_ids_are_bounded_and_an_unknown_user_id_is_never_stored_as_sent() -> None:
    long = "x" * 500
    assert session_of("chat", {"messages": []}, {"session_id": long}).startswith("id:")
    assert len(session_of("chat", {"messages": []}, {"session_id": long})) <= MAX_ID
    email = "jane.doe@example.com"
    session = session_of("messages", {"metadata": {"user_id": email}, "messages": []}, {})
    assert session.startswith("user:") and email not in session


def test_where_a_session_ran_is_kept_per_client_key_and_bounded() -> None:
    sessions = Sessions(capacity=2)
    seen = Seen("local", "local", 20_000, "http://spark-1:8888/v1")
    sessions.remember("agents", "s1", seen)
    assert sessions.last("agents", "s1") == seen and sessions.last("others", "s1") is None
    sessions.remember("agents", "s2", seen)
    sessions.remember("agents", "s3", seen)
    assert sessions.last("agents", "s1") is None and len(sessions) == 2  # the oldest went first


def test_the_usage_row_keeps_the_session_and_a_chain_continues_it(local_fake, cloud_fake) -> None:
    recorder = MemoryRecorder()
    proxy = ProxyServer(make_config(local_fake.url, cloud_fake.url), recorder=recorder)
    try:
        task, headers = recorded("claude_task")
        sent = {k: v for k, v in headers.items() if k in ("x-claude-code-session-id", "anthropic-version")}
        assert proxy.post("/v1/messages", json={**task, "model": "local"}, headers=sent).status_code == 200
        first = proxy.post("/v1/responses", json={"model": "local", "input": "fix the parser", "store": True})
        assert first.status_code == 200
        follow = {"model": "local", "input": "and its test", "previous_response_id": first.json()["id"]}
        assert proxy.post("/v1/responses", json=follow).status_code == 200
        assert wait_until(lambda: len(recorder.rows) == 3)
        sessions = [row.session_id for row in recorder.rows]
        assert sessions[0] == headers["x-claude-code-session-id"]
        assert sessions[1].startswith("prefix:") and sessions[2] == sessions[1]  # the chain's session
    finally:
        proxy.stop()
