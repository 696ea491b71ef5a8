"""The requests ``offload demo`` sends: an agent's coding session, a tool loop, maths, brand
writing, and a coding task while the local box is stopped."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson


@dataclass(frozen=True)
class DemoRequest:
    label: str
    body: dict[str, Any]
    alias: str  # the model alias to use when there is no classifier
    reply_tokens: int  # how long the simulated answer is (what the completion bills)
    local_stopped: bool = False


_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run_shell",
            "description": "Run a shell command in the repository.",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
        },
    }
]
_AGENT_SYSTEM = (
    "You are a coding agent working in the user's repository. Read files before changing "
    "them, run the tests after every change, keep diffs small and explain what you changed."
)


def _read_earlier(files: list[str]) -> list[dict[str, Any]]:
    """The turns in which the agent read ``files`` (real modules of this package: an agent's
    prompt is mostly the code it has read, and these give the demo's prompts real sizes)."""
    turns: list[dict[str, Any]] = []
    for name in files:
        call_id = "chatcmpl-tool-" + uuid.uuid4().hex[:24]
        call = {"name": "run_shell", "arguments": orjson.dumps({"cmd": f"cat router/{name}"}).decode()}
        turns.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": call}],
            }
        )
        source = resources.files("router").joinpath(name).read_text(encoding="utf-8")
        turns.append({"role": "tool", "tool_call_id": call_id, "content": source})
    return turns


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _agent_turns() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An agent's session after reading two modules, and that session in a tool loop."""
    user = _user
    session = [
        {"role": "system", "content": _AGENT_SYSTEM},
        *user("Get to know the request intake and the rate limits first."),
        *_read_earlier(["edge/intake.py", "edge/limits.py"]),
        {"role": "assistant", "content": "I have read both modules."},
    ]
    call_id = "chatcmpl-tool-" + uuid.uuid4().hex[:24]  # a call the local box made earlier
    tool_loop = [
        *session,
        {"role": "user", "content": "Run the parser tests and fix whatever fails."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "run_shell", "arguments": '{"cmd": "pytest -q"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": call_id,
            "content": "FAILED tests/test_parser.py::test_empty - IndexError",
        },
    ]
    return session, tool_loop


def demo_requests() -> list[DemoRequest]:
    user = _user
    session, tool_loop = _agent_turns()
    coding = (
        "Fix the bug in this Python function and add a unit test for it:\n"
        "def last(xs):\n    return xs[len(xs)]"
    )
    return [
        DemoRequest(
            "coding task (streamed)", {"messages": [*session, *user(coding)], "stream": True}, "local", 420
        ),
        DemoRequest("tool call (tool result turn)", {"messages": tool_loop, "tools": _TOOLS}, "auto", 260),
        DemoRequest(
            "hard integral",
            {
                "messages": user(
                    "Evaluate the definite integral of x^4 * exp(-x^2) * cos(2x) from minus infinity to "
                    "infinity in closed form, and prove that your answer is correct."
                )
            },
            "cloud",
            1400,  # a worked proof
        ),
        DemoRequest(
            "launch blog post",
            {
                "messages": user(
                    "Write a 1200-word launch blog post for our new product in our brand voice: warm, "
                    "confident, no jargon, with a headline, three sections and a call to action."
                )
            },
            "cloud",
            1600,  # 1200 words
        ),
        DemoRequest(
            "coding task, local box stopped",
            {
                "messages": user(
                    "Refactor this loop into a list comprehension:\nout = []\nfor x in xs:\n    out.append(x * 2)"
                )
            },
            "local",
            120,
            local_stopped=True,
        ),
    ]
