"""Which conversation a request belongs to, and where that conversation last ran.

An agent resends its whole history every turn, so what a turn costs depends on where
the turns before it ran: the box that served them holds the history in its prefix
cache. One identity serves everything that follows a conversation across turns (the
endpoint it sticks to, the switch-cost rule, a weighted split's arm, the usage row's
``session_id``). It is what the clients really send, in this order:

* a session header: Claude Code's ``x-claude-code-session-id``, Codex's ``session-id``
  (older builds ``session_id`` or ``conversation_id``);
* Codex's ``prompt_cache_key`` (the conversation id, in the body);
* Claude Code's ``metadata.user_id``: a JSON object whose ``session_id`` is the session
  (other shapes are hashed: the string may name an account);
* a ``previous_response_id`` chain: the session of the response it continues;
* else the stable prefix: the API, the tool names, the head of the system prompt and
  the first user turn, hashed (``prefix:<hex>``). Nothing in it changes from turn to turn.
  A request with no user turn (embeddings, a plain completion) has no session.

Ids are the client's own strings when they are short and printable, else a digest, so
a row never holds more than 64 characters of them. The digests are blake2b, not
Python's salted ``hash()``: every replica and every restart computes the same one.

:class:`Sessions` remembers where each session's last answered turn ran (a
:class:`Seen`), bounded and in process, and through a :class:`SessionStore` for
the other replicas when ``state:`` is set. Like response ids, a session belongs to
the client key that uses it: the same id from another key is another session.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import orjson

# Session headers, by client: Claude Code's, then Codex's (hyphen since 0.1xx, underscore before).
HEADERS = ("x-claude-code-session-id", "session-id", "session_id", "conversation_id")
MAX_ID = 64  # the usage row's session_id column
_HEAD = 2000  # characters of a prompt part that identify it
_BLOCKS = 4  # text blocks of the first user turn that identify it (Claude Code's first is a reminder)


def _digest(*parts: str) -> str:
    joined = "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(joined, digest_size=8).hexdigest()


def _own_id(value: str) -> str:
    """A client's id as it is when short and printable, else a digest of it."""
    if len(value) <= MAX_ID and value.isprintable() and value.isascii():
        return value
    return "id:" + _digest(value)


def _from_user_id(user_id: str) -> str:
    """Claude Code's ``metadata.user_id`` is ``{"device_id", "account_uuid", "session_id"}``
    as a JSON string: its session. Any other value is hashed (it may name a person)."""
    if user_id.startswith("{"):
        try:
            parsed = orjson.loads(user_id)
        except orjson.JSONDecodeError:
            parsed = None
        session = parsed.get("session_id") if isinstance(parsed, dict) else None
        if isinstance(session, str) and session:
            return _own_id(session)
    return "user:" + _digest(user_id)


def session_of(
    api: str, body: dict[str, Any], headers: Mapping[str, str] | None, chained: str | None = None
) -> str | None:
    """The session of one request (module docstring); ``chained`` is the session of the
    response its ``previous_response_id`` names, when that is known. None for a request
    that names none and has no conversation (embeddings, a plain completion): such
    requests are spread over the endpoints, not kept together."""
    if headers is not None:
        for name in HEADERS:
            value = headers.get(name)
            if value:
                return _own_id(value)
    cache_key = body.get("prompt_cache_key")
    if isinstance(cache_key, str) and cache_key:
        return _own_id(cache_key)
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(user_id, str) and user_id:
        return _from_user_id(user_id)
    if chained:
        return chained
    head, first = prompt_parts(api, body)
    if first is None:
        return None
    return "prefix:" + _digest(api, *tool_names(body.get("tools")), head, text_head(first, _BLOCKS))


# ------------------------------------------------------------ the stable prefix

# Claude Code's first system block: `x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;
# cch=…;`, the cch part new on every request in the versions that send it. Anthropic reads it;
# to vLLM it is text at the very front of the prompt, so every turn would miss the prefix
# cache from its first block on (a 60K-token turn: ~85 s of prefill instead of ~1 s).
_BILLING_HEADER = "x-anthropic-billing-header:"


def without_billing_header(system: Any) -> Any:
    """``system`` (a list of blocks, or a string) without Claude Code's billing header block
    (or first line); the same object when it has none."""
    if isinstance(system, list):
        kept = [
            b
            for b in system
            if not (isinstance(b, dict) and str(b.get("text", "")).lstrip().startswith(_BILLING_HEADER))
        ]
        return kept if len(kept) != len(system) else system
    if isinstance(system, str) and system.lstrip().startswith(_BILLING_HEADER):
        return system.lstrip().partition("\n")[2]
    return system


def text_head(value: Any, blocks: int = 1) -> str:
    """The start of a prompt part as text: a string, or the first ``blocks`` text blocks of
    a list (each cut to its head), or a message's content."""
    if isinstance(value, str):
        return value[:_HEAD]
    if isinstance(value, list):
        heads = []
        for item in value[:blocks]:
            if isinstance(item, dict):
                inner = item.get("text", item.get("content"))
                heads.append(text_head(inner) if inner is not None else str(sorted(item))[:_HEAD])
            else:
                heads.append(text_head(item))
        return "\x00".join(heads)
    if isinstance(value, dict):
        return text_head(value.get("content", value.get("text")), blocks)
    return ""


def tool_names(tools: Any) -> tuple[str, ...]:
    """The names of the tools offered (the first 64), in order."""
    if not isinstance(tools, list):
        return ()
    names = []
    for tool in tools[:64]:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            names.append(str(name))
    return tuple(names)


def prompt_parts(api: str, body: dict[str, Any]) -> tuple[str, Any]:
    """The head of the fixed prompt (system, instructions) and the first user turn (None
    when the request has none), read from the body as its API shapes it."""
    if api == "chat":
        turns = body.get("messages")
        turns = turns if isinstance(turns, list) else []
        roles = [m.get("role") if isinstance(m, dict) else None for m in turns]
        head = text_head(turns[0]) if roles and roles[0] in ("system", "developer") else ""
        return head, turns[roles.index("user")] if "user" in roles else None
    if api == "responses":
        items = body.get("input")
        first: Any = None
        if isinstance(items, str):
            first = items
        elif isinstance(items, list):
            first = next((i for i in items if isinstance(i, dict) and i.get("role") == "user"), None)
        return text_head(body.get("instructions")), first
    if api == "messages":
        turns = body.get("messages")
        # Without Claude Code's billing header: its cch= is new on every request.
        system = without_billing_header(body.get("system"))
        return text_head(system), turns[0] if isinstance(turns, list) and turns else None
    return "", None


# ------------------------------------------------------------ where a session last ran


class Seen(NamedTuple):
    """Where a session's last answered turn ran, and what it left in that box's cache."""

    route: str  # "local" | "cloud"
    backend: str
    tokens: int  # that turn's prompt and completion: the prefix its endpoint now holds
    # The local endpoint of the session's last local turn: its box, which still holds the
    # session's history after a turn that ran in the cloud (affinity sends it back there).
    box: str | None = None


class SessionStore(Protocol):
    """Where the other replicas' sessions are (Redis when ``state:`` is set)."""

    def put(self, key: str, seen: Seen) -> None:
        """Record a session's last turn. Never waits."""
        ...

    async def get(self, key: str) -> Seen | None:
        """What another replica recorded, or None."""
        ...


class NoSessionStore:
    """One process: nothing beyond :class:`Sessions`' own map."""

    def put(self, key: str, seen: Seen) -> None:
        return None

    async def get(self, key: str) -> Seen | None:
        return None


def session_key(client: str | None, session: str) -> str:
    """A session's key in the map and the store: per client key, bounded in length."""
    return _digest(client or "", session)


class Sessions:
    """A bounded map ``session → Seen``; the least recently used go first."""

    def __init__(self, capacity: int = 100_000, store: SessionStore | None = None) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[str, Seen] = OrderedDict()
        self._store = store or NoSessionStore()

    def last(self, client: str | None, session: str) -> Seen | None:
        """Where the session's last answered turn ran, as far as this replica knows."""
        return self._seen.get(session_key(client, session))

    async def fetch(self, client: str | None, session: str) -> Seen | None:
        """:meth:`last`, asking the other replicas first when they share their sessions: a
        turn of one session may reach any replica. (Without ``state:`` no I/O at all.)"""
        key = session_key(client, session)
        seen = await self._store.get(key)
        if seen is not None:
            self._keep(key, seen)
            return seen
        return self._seen.get(key)

    def remember(self, client: str | None, session: str, seen: Seen) -> None:
        key = session_key(client, session)
        self._keep(key, seen)
        self._store.put(key, seen)

    def _keep(self, key: str, seen: Seen) -> None:
        self._seen[key] = seen
        self._seen.move_to_end(key)
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def __len__(self) -> int:
        return len(self._seen)
