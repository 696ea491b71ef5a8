"""The six traffic families (sources): system prompts, canned assistant turns, typos,
content parts, tool-loop turns. A source fixes the conversation style; the agent wrappers
(``wrappers.py``) are drawn independently of it."""

from __future__ import annotations

from typing import Any

from classifier.data.followups import NATIVE_FILLERS, NATIVE_REPLIES, NATIVE_REPLY_RATE
from classifier.data.pools import TOOLSETS
from classifier.data.rand import Rand

SYSTEM_PROMPTS = {
    "ide_agent": [
        "You are an expert software engineer working in the user's repository. Use the tools to read and edit files. Prefer minimal diffs. Run the tests after editing. Never invent file contents.",
        "You are a coding agent embedded in the editor. You can call read_file, edit_file and run_command. Explain briefly, then act. Follow the repo's style guide (ruff, black, 110 columns).",
    ],
    "chat_ui": [
        "You are a helpful assistant.",
        "You are ChatBot, a friendly and knowledgeable assistant. Answer clearly.",
        "",
    ],
    "biz_assistant": [
        "You are the support assistant for {company}. Be polite, concise and never promise refunds without checking the order. Escalate legal questions.",
        "You are {company}'s marketing assistant. You know our brand guidelines: voice is {voice}. Always use British spelling.",
        "You are an internal ops assistant at {company}. You have access to the calendar, email and the analytics warehouse.",
    ],
    "api_oneshot": [""],
    "ci_pipeline": [
        "You are an automated assistant in a CI/CD pipeline. Output must be machine-readable when a format is requested. No greetings.",
        "SYSTEM: batch job worker. Follow the instruction exactly. If the task is ambiguous, do your best and do not ask questions.",
    ],
    "agent_framework": [
        "You are an autonomous agent. Think step by step. You have access to the following tools; call them when they help. Answer in the format:\nThought: ...\nAction: ...\nObservation: ...\nFinal Answer: ...",
        "## Role\nYou are Atlas, a general-purpose agent for the Kite Analytics team.\n## Rules\n- Be accurate.\n- Cite sources when browsing.\n- Ask before sending external messages.",
    ],
}
SOURCES = tuple(SYSTEM_PROMPTS)

ASSISTANT_BY_INTENT = {
    "coding": [
        "Sure, here's the fix:\n```python\ndef apply_discount(order, code):\n    rate = DISCOUNTS.get(code, 0)\n    return order.total * (1 - rate)\n```",
        "I updated `src/billing/invoice.py` and the tests pass locally.",
        "The bug is the missing None check in the handler; patch below.",
    ],
    "tools": [
        "I found 3 matching results. Should I proceed?",
        "The order is in transit. Want me to email the customer?",
        "I can create that event. Confirm the time?",
    ],
    "instruction": [
        '{"name": "Jordan Blake", "company": "Fennel Foods"}',
        "positive\nnegative\nneutral",
        "- Budget approved\n- Office opens Q3\n- Hiring in May",
    ],
    "math": [
        "Using integration by parts twice we get 2 - 5/e.",
        "By inclusion-exclusion the count is 4320.",
        "The closed form is a_n = 2^n + 3n.",
    ],
    "reasoning": [
        "Case 1: suppose A is a knight. Then B must be a knave...",
        "Weighing the trade-offs: the monolith wins on team size, but...",
        "The flaw is the inference from correlation to causation.",
    ],
    "writing": [
        "Here is a first draft of the post:\n\n# Why small teams ship faster\n\nEvery great product starts...",
        "Draft press release:\n\nFOR IMMEDIATE RELEASE...",
        "Once upon a time, in a lighthouse at the edge of the world...",
    ],
}
ASSISTANT_FILLERS = [
    "Sure, here's what I changed:\n```python\ndef f(x):\n    return x\n```",
    "I looked at the file; the issue seems to be the None check.",
    "Here is a first draft. Let me know what to adjust.",
    "The answer is 42/17 ≈ 2.4706.",
    "Done. Anything else?",
    "Let's consider the cases one at a time. Case 1: A is a knight...",
    'Here\'s the JSON:\n{"name": "Jordan Blake"}',
    "I found 3 results for your search.",
    "Voilà le brouillon.",
    "Aquí tienes la primera versión.",
]

PREFIXES = [
    "hey, ",
    "quick one: ",
    "btw ",
    "ok next: ",
    "Hi! ",
    "pls ",
    "question: ",
    "side note, ",
    "Hallo, ",
    "Salut, ",
    "Hola, ",
]


def assistant_reply(r: Rand, intent: str | None, lang: str) -> str:
    """A canned assistant turn: for ``intent`` (else a generic filler), mostly in ``lang``."""
    native = lang in NATIVE_REPLIES and r.random() < NATIVE_REPLY_RATE
    if intent is not None and r.random() < 0.7:
        return r.p(NATIVE_REPLIES[lang][intent] if native else ASSISTANT_BY_INTENT[intent])
    return r.p(NATIVE_FILLERS[lang] if native else ASSISTANT_FILLERS)


def typo(r: Rand, text: str, rate: float) -> str:
    """Swap or drop letters in a few words: agents paste fast and typo a lot."""
    words = text.split(" ")
    for i, w in enumerate(words):
        if len(w) > 4 and w.isalpha() and r.random() < rate:
            j = r.randrange(len(w) - 1)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :] if r.random() < 0.7 else w[:j] + w[j + 1 :]
    return " ".join(words)


def as_parts(r: Rand, text: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if r.random() < 0.15:
        parts.append({"type": "image_url", "image_url": {"url": "https://example.com/screenshot.png"}})
    return parts


def tool_result_turns(r: Rand, toolset: str) -> list[dict[str, Any]]:
    """An assistant tool call and its result: the request is mid tool loop."""
    tool = TOOLSETS[toolset][0]["function"]["name"]
    result = r.p(
        [
            '{"status": "ok", "items": 3}',
            '{"temp_c": 11, "rain": true}',
            '{"order": "shipped", "eta": "2026-12-02"}',
            '{"rows": [[1204]]}',
            '{"error": "not found"}',
        ]
    )
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]
