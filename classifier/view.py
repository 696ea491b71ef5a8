"""The bounded slices of a request that the classifier reads: :func:`view` → :class:`RequestView`.

Only fixed windows of text are read: the head and tail of the last user turn's ask (it
decides), its pasted material apart, and as weaker context the head of the system prompt, the
tail of the turn next to the last user turn (tool result or assistant reply) and the tail of
the previous user turn. ``len()`` of a Python string is O(1), so a 1 MB request costs about
what a 4 KB one does. Message lists, content parts and tool lists are scanned only up to
fixed counts. Every accessor checks types: anything unexpected contributes no text, and
:func:`view` never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from classifier.ask import (
    CONVERSATION_RESET,
    NO_ASK,
    Ask,
    find_ask,
    is_tool_result,
    is_wrapper,
    strip_wrappers,
    user_words,
)
from classifier.lexicon import word_set

# Windows (characters). The last user turn decides; context only nudges.
# 1 KB of the last user turn: every turn in the training corpus (max 747 chars) and holdout
# (max 505) fits whole, so the window only trims pasted code/logs, and tokenising costs half
# of what the former 768 + 1,280 window did.
USER_HEAD = 384
USER_TAIL = 640
SYSTEM_HEAD = 256
PREV_TAIL = 256
ASK_SCAN = 1280  # of each end of a user turn, searched for the ask (wrappers can be long)
PAYLOAD_HEAD = 192  # of the pasted material: a weaker signal than the ask
PAYLOAD_TAIL = 192
_SYSTEM_ROLES = ("system", "developer")
_TOOL_ROLES = ("tool", "function")
MAX_MESSAGES_SCANNED = 48
MAX_PARTS = 16
MAX_TOOLS = 16
FEW_TOOLS = 6  # more tools than this: an agent's standing list rather than a task's tools


@dataclass(slots=True, kw_only=True)
class RequestView:
    """The bounded slices of a request that the features read. Built by keyword only."""

    user: str  # windowed ask of the last user turn (wrappers and pasted material removed)
    user_len: int  # full length of the last user turn (cheap: len of the raw string/parts)
    system: str = ""
    prev: str = ""  # tail of the turn next to the last user turn (tool result or assistant reply)
    prev_user: str = ""  # tail of the user turn before the last one ("fix it" needs it)
    has_tools: bool = False
    tool_words: frozenset[str] = frozenset()  # words of the offered tools' names/descriptions (bounded)
    n_messages: int = 0
    last_role: str = ""
    is_completion: bool = False
    payload: str = ""  # windowed pasted material of the last user turn (code, text, items)
    whole: str = ""  # the windowed last user turn as sent (ask and payload): its shape features
    kind: str = ""  # how the ask was found: "", "edit", "fim", "rag", "tool_result" (ask.find_ask)
    n_tools: int = 0  # how many tools the request offers
    workbench: bool = False  # a tool runs commands or edits files (a shell, an editor, a patch)

    @property
    def standing_tools(self) -> bool:
        """The tools are a coding agent's standing list, offered whatever is asked, rather than
        the few tools of a task (get_weather, book_room): a shell, an editor or a patch tool
        among them (f18: Codex and OpenHands offer five or six), or more than FEW_TOOLS."""
        return self.workbench or self.n_tools > FEW_TOOLS


# --------------------------------------------------------------------------- text access


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text", None):
        text = part.get("text")
        if isinstance(text, str):
            return text
    return ""


def window(text: str, head: int, tail: int) -> str:
    """``text`` if it fits in ``head + tail`` characters, else its head and tail."""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


def _bounded_parts(content: list[Any]) -> list[Any]:
    return content if len(content) <= 2 * MAX_PARTS else content[:MAX_PARTS] + content[-MAX_PARTS:]


def content_text(content: Any, budget: int) -> str:
    """Text of a message content (string or list of parts), at most ~``budget`` chars kept
    from each end. Unknown part types (images, audio, files) and agents' wrapper parts
    (``ask.is_wrapper``: reminders, environment blocks) contribute nothing."""
    if isinstance(content, str):
        return window(content, budget, budget)
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    total = 0
    for part in _bounded_parts(content):
        text = _part_text(part)
        if text and not is_wrapper(text):
            text = window(text, budget, budget)
            pieces.append(text)
            total += len(text)
            if total >= 4 * budget:
                break
    return "\n".join(pieces)


# --------------------------------------------------------------------------- offered tools

_NO_WORDS: frozenset[str] = frozenset()
_TOKEN = re.compile(r"\w+|[^\w\s]")  # tool descriptions only (cached per tool)
# Words any tool description is full of: English function words and what every tool does (get,
# list, use, file, data, ...). An ask uses them whatever it asks; since f14 they no longer make
# ``toolmatch`` fire on maths and reasoning asks inside agents.
_TOOL_STOP = word_set(
    """the and for from with that this into string integer number object array boolean type function
    about after all also any are can does each get has have how its may more must not only other should
    some such than their them then there these they use used uses using what when where which while who
    will you your given specified provided current new one two data value values info information result
    results return returns output input content contents file files user users tool tools list set run
    read write"""
)
# Words of a tool's name that say it runs commands or edits files: Claude Code's Bash and Edit,
# Codex's exec_command and apply_patch, Cline's execute_command and replace_in_file, OpenHands'
# execute_bash and str_replace_editor, Continue's run_terminal_command, Roo's apply_diff.
_WORKBENCH = word_set("bash shell command terminal patch edit editor exec diff ipython")


class _Tools(NamedTuple):
    present: bool
    words: frozenset[str]
    n: int
    workbench: bool


_NO_TOOLS = _Tools(False, _NO_WORDS, 0, False)
_TOOL_CACHE: dict[tuple[int, tuple[tuple[str, str], ...]], _Tools] = {}
_TOOL_CACHE_MAX = 1024


def _one_tool(name: str, description: str) -> tuple[frozenset[str], bool]:
    """The words naming what one tool does, and whether it is a workbench tool (its name says it
    runs commands or edits files)."""
    named = name.lower().replace("_", " ")
    words = frozenset(
        w for w in _TOKEN.findall(named + " " + description.lower().replace("_", " ")) if len(w) > 2
    )
    return words - _TOOL_STOP, not _WORKBENCH.isdisjoint(_TOKEN.findall(named))


def _tool_key(tool: Any) -> tuple[str, str]:
    """What of one offered tool the classifier reads: its name and the start of its description
    (a chat ``function`` wrapper or a flat Responses/Messages tool)."""
    if not isinstance(tool, dict):
        return ("", "")
    fn = tool.get("function")
    if not isinstance(fn, dict):
        fn = tool
    name, desc = fn.get("name"), fn.get("description")
    return (name[:100] if isinstance(name, str) else "", desc[:200] if isinstance(desc, str) else "")


def _offered_tools(request: dict[str, Any]) -> _Tools:
    """What the offered tools do (a tool-use turn asks for one of these things), bounded to
    MAX_TOOLS of them."""
    offered = request.get("tools") or request.get("functions")
    if not isinstance(offered, list) or not offered:
        return _NO_TOOLS
    # An agent sends the same tool list with every request: the words of each distinct list
    # (by the part of each tool read here) are gathered once. Keying on the whole list, not on
    # each tool, skips the set unions too, which were most of this function's time.
    read = tuple(map(_tool_key, offered[:MAX_TOOLS]))
    key = (len(offered), read)
    found = _TOOL_CACHE.get(key)
    if found is None:
        words: set[str] = set()
        workbench = False
        for name, desc in read:
            more, bench = _one_tool(name, desc)
            words |= more
            workbench = workbench or bench
        found = _Tools(True, frozenset(words), len(offered), workbench)
        if len(_TOOL_CACHE) >= _TOOL_CACHE_MAX:
            _TOOL_CACHE.clear()
        _TOOL_CACHE[key] = found
    return found


# --------------------------------------------------------------------------- the ask


def _user_ask(content: Any) -> tuple[Ask, int]:
    """The ask of one user message (``ask.find_ask`` on its windowed, unwrapped text) and the
    message's raw length."""
    if isinstance(content, list):
        return _parts_ask(_bounded_parts(content))
    if isinstance(content, str):
        return find_ask(window(content, ASK_SCAN, ASK_SCAN)), len(content)
    return NO_ASK, 0


def _parts_ask(parts: list[Any]) -> tuple[Ask, int]:
    """The ask of a user message sent as content parts. Cline's tool results and Continue's
    context items (a fenced file as its own part) are payload, not ask. Cline sends a result as
    a header part ("[read_file for 'x'] Result:") followed by the tool's output in parts of its
    own: every part after a header is output, unless it carries the user's own words
    (``<feedback>``, ``<user_message>``)."""
    texts: list[str] = []
    payload: list[str] = []
    saw_result = False
    raw = 0  # the length of what the user sent, wrapper parts left out
    for part in parts:
        text = _part_text(part)
        if not text or is_wrapper(text):
            continue
        raw += len(text)
        text = window(text, ASK_SCAN, ASK_SCAN)
        if is_tool_result(text) or (saw_result and user_words(text) is None):
            saw_result = True
            payload.append(text)
        elif text.startswith(("```", "<document")) and len(parts) > 1:
            payload.append(text)
        else:
            texts.append(text)
    found = find_ask("\n\n".join(texts)) if texts else NO_ASK
    if payload:
        joined = "\n".join(payload)
        found = Ask(
            found.ask,
            found.payload + "\n" + joined if found.payload else joined,
            found.kind or ("tool_result" if saw_result and not found.ask else ""),
        )
    return found, raw


class _UserTurn(NamedTuple):
    ask: Ask
    length: int  # raw length of the turn
    position: int  # in the scanned tail of the messages; -1 for none
    tool_only: bool  # a later user turn carried only a tool's result (Cline): mid tool loop


def _last_user_turn(tail: list[Any]) -> _UserTurn:
    """The last user message with an ask once wrappers are removed (``ask.find_ask``): a Codex
    ``<environment_context>`` turn or a Cline tool-result turn is skipped for the user message
    before it; with none, the last tool-result turn; with no user turn at all, the last message
    with text stands in for it."""
    fallback: _UserTurn | None = None
    for i in range(len(tail) - 1, -1, -1):
        msg = tail[i]
        if isinstance(msg, dict) and msg.get("role") == "user":
            ask, raw = _user_ask(msg.get("content"))
            if ask.ask or (ask.payload and ask.kind != "tool_result"):
                return _UserTurn(ask, raw, i, fallback is not None)
            if fallback is None and ask.payload:
                fallback = _UserTurn(ask, raw, i, True)
    if fallback is not None:
        return fallback
    if tail and isinstance(tail[-1], dict):
        found = find_ask(content_text(tail[-1].get("content"), ASK_SCAN))
        return _UserTurn(found, len(found.ask), len(tail) - 1, False)
    return _UserTurn(NO_ASK, 0, -1, False)


# --------------------------------------------------------------------------- context


def _context_turn(tail: list[Any], user_idx: int) -> str:
    """Mid tool loop the last message (the tool result) is the freshest context; otherwise the
    turn right after the last user turn, or the one right before it. System turns (Claude
    Code's mid-conversation one, aider's trailing reminder) are wrapper, not context."""
    last = len(tail) - 1
    for j in (last if last > user_idx else -1, user_idx + 1, user_idx - 1):
        if 0 <= j < len(tail) and isinstance(tail[j], dict) and tail[j].get("role") not in _SYSTEM_ROLES:
            prev = content_text(tail[j].get("content"), PREV_TAIL)[-PREV_TAIL:]
            if prev:
                return prev
    return ""


def _previous_user_turn(tail: list[Any], user_idx: int) -> str:
    """The tail of the user turn before the last one, wrappers removed (aider's examples, before
    its conversation reset, are not the user's)."""
    for j in range(user_idx - 1, -1, -1):
        msg = tail[j]
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str) and content.startswith(CONVERSATION_RESET):
                return ""  # aider: the turns before this are its examples
            earlier = content_text(content, PREV_TAIL)
            if earlier and not is_wrapper(earlier):
                prev_user = strip_wrappers(earlier)[-PREV_TAIL:]
                if prev_user:
                    return prev_user
    return ""


def _system_prompt(messages: list[Any]) -> str:
    for msg in messages[:4]:
        if isinstance(msg, dict) and msg.get("role") in _SYSTEM_ROLES:
            return content_text(msg.get("content"), SYSTEM_HEAD)[:SYSTEM_HEAD]
    return ""


def _role_of(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else ""


# --------------------------------------------------------------------------- views


def _simple_view(text: str, tools: _Tools, n_messages: int, last_role: str, completion: bool) -> RequestView:
    """A bare string or completions ``prompt``: the ask is found in it like in a user turn."""
    found = find_ask(window(text, ASK_SCAN, ASK_SCAN))
    return RequestView(
        user=window(found.ask, USER_HEAD, USER_TAIL),
        user_len=len(text),
        has_tools=tools.present,
        tool_words=tools.words,
        n_messages=n_messages,
        last_role=last_role,
        is_completion=completion,
        payload=window(found.payload, PAYLOAD_HEAD, PAYLOAD_TAIL),
        whole=window(text, USER_HEAD, USER_TAIL),
        kind=found.kind,
        n_tools=tools.n,
        workbench=tools.workbench,
    )


def _prompt_text(request: dict[str, Any]) -> str:
    """A completions body's ``prompt`` (a list of strings joined); a body with a ``suffix`` is
    fill-in-the-middle."""
    prompt = request.get("prompt")
    if isinstance(prompt, list):
        prompt = "\n".join(p for p in prompt[:MAX_PARTS] if isinstance(p, str))
    text = prompt if isinstance(prompt, str) else ""
    if isinstance(request.get("suffix"), str) and text:
        text = "<fim_prefix>" + text
    return text


def _messages_view(messages: list[Any], tools: _Tools) -> RequestView:
    tail = messages[-MAX_MESSAGES_SCANNED:]
    turn = _last_user_turn(tail)
    last_role = _role_of(tail[-1]) if tail else ""
    if turn.tool_only and last_role not in _TOOL_ROLES:
        last_role = "tool"
    user = window(turn.ask.ask, USER_HEAD, USER_TAIL)
    payload = window(turn.ask.payload, PAYLOAD_HEAD, PAYLOAD_TAIL)
    return RequestView(
        user=user,
        user_len=turn.length,
        system=_system_prompt(messages),
        prev=_context_turn(tail, turn.position),
        prev_user=_previous_user_turn(tail, turn.position),
        has_tools=tools.present,
        tool_words=tools.words,
        n_messages=len(messages),
        last_role=last_role,
        payload=payload,
        whole=user if not payload else user + "\n" + payload,
        kind=turn.ask.kind,
        n_tools=tools.n,
        workbench=tools.workbench,
    )


def view(request: Any) -> RequestView:
    """Extract the bounded text windows of a request (a chat body, a completions body, or a
    bare string). Never raises on malformed input."""
    if not isinstance(request, dict):
        return _simple_view(request if isinstance(request, str) else "", _NO_TOOLS, 0, "", False)
    tools = _offered_tools(request)
    messages = request.get("messages")
    if messages is None and "prompt" in request:
        return _simple_view(_prompt_text(request), tools, 0, "", True)
    if isinstance(messages, str):
        return _simple_view(messages, tools, 1, "user", False)
    if not isinstance(messages, list):
        return RequestView(user="", user_len=0, has_tools=tools.present, tool_words=tools.words)
    return _messages_view(messages, tools)
