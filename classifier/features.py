"""Feature extraction for the intent classifier.

One function, :func:`extract`, turns an OpenAI request body (chat or completions) into a
:class:`Features` value. Training (scikit-learn) and serving (no scikit-learn) both go through it,
so the two can never disagree about what a request "looks like".

Design constraints, and why:

* **Bounded work.** Only fixed windows of text are read: the head and tail of the last user
  turn (it decides), and as weaker context the head of the system prompt, the tail of the
  turn next to the last user turn (tool result or assistant reply) and the tail of the
  previous user turn. ``len()`` of a Python string is O(1), so a 1 MB request costs about
  what a 4 KB one does. Message lists, content parts and tool lists are scanned only up to
  fixed counts.
* **Never raise.** Every accessor checks types; anything unexpected contributes no text.
* **Cheap features.** Word unigrams and word-boundary character n-grams (prefix and
  suffix 4-grams of long words, which absorb typos and German/French/Spanish inflection)
  are sets of plain strings, looked up directly in dicts at serving time: no hashing
  in Python, no per-character Python loops. Chinese, Japanese and Korean runs (no spaces
  between words) add their character bigrams, built by ``map`` in C, from a shorter window. Structural signals use set lookups, ``in`` and
  ``bytes.translate``, and run the few regexes only when a cheap check says they can match.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import chain
from operator import add, itemgetter
from typing import Any

from classifier.ask import (
    CONVERSATION_RESET,
    NO_ASK,
    REDIRECTS,
    Ask,
    find_ask,
    is_tool_result,
    is_wrapper,
    redirections,
    strip_wrappers,
    user_words,
)
from classifier.lexicon import LEXICONS, word_set

# Bump when anything below changes the feature space; weights record it and the loader checks it.
FEATURE_VERSION = "f17"

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
PAYLOAD_CJK = 48  # of each end of the payload window, for CJK character bigrams
_SYSTEM_ROLES = ("system", "developer")
MAX_MESSAGES_SCANNED = 48
MAX_PARTS = 16
CJK_HEAD = 192  # of the user window, for character bigrams
CJK_TAIL = 320
MIN_SUBWORD_LEN = 6  # prefix/suffix 4-grams only for words at least this long
_HEAD4 = itemgetter(slice(None, 4))
_TAIL4 = itemgetter(slice(-4, None))

# Namespaces of the exported feature keys. Context features get a smaller value so that,
# under L2 regularisation, the model has to see stronger evidence before trusting them.
NS_USER = "u:"
NS_PREFIX = "p:"
NS_SUFFIX = "x:"
NS_CONTEXT = "c:"
NS_STRUCT = "s:"
NS_PAYLOAD = "q:"  # pasted material of the last user turn (f13): weaker than the ask
NAMESPACE_SCALE: dict[str, float] = {
    NS_USER: 1.0,
    NS_PREFIX: 0.5,
    NS_SUFFIX: 0.5,
    NS_CONTEXT: 0.5,
    NS_STRUCT: 1.0,
    NS_PAYLOAD: 0.5,
}

_TOKEN = re.compile(r"\w+|[^\w\s]")  # tool descriptions only (cached per tool)
# Tokenising = lower-case, ASCII punctuation (except "_") to spaces, every digit to "0",
# then str.split(). Done as bytes.translate on UTF-8 (a 256-entry table in C): a regex
# tokenizer cost ~100 us per 2 KB here, this costs ~5 us, ASCII or not. Mapping digits to
# "0" folds numbers into shapes ("2000" -> "0000") and lets digit density be one count().
_PUNCT = "".join(c for c in string.punctuation if c != "_")
_BYTE_TABLE = bytes.maketrans((_PUNCT + "123456789").encode(), (" " * len(_PUNCT) + "000000000").encode())
# Punctuation that says "code" or "maths" once tokens no longer carry it.
_MARK_CHARS = "{};=$\\()[]<>#|^_`*"
# No word bigrams (f11): they cost ~14 us per request (building ~100 tuples and looking them up)
# and did not generalise. Without them leave-one-source-out route accuracy went from 0.960 to
# 0.970 and the holdout stayed at 0.967; they mostly memorised the generator's templates.
_REQ_WORDS = re.compile(
    r"(\d[\d,.]{1,6})\s*[-–]?\s*(?:words?|wörter|wörtern|wort|mots|palabras|pages?|seiten|páginas)\b"
)
_JAVA_FRAME = re.compile(r"\n\s+at [\w.$<>]+\(")
_INLINE_MATH = re.compile(r"\$[^$\n]{1,80}\$")
# A line that starts with a code keyword. Written as "start of text, or a newline" rather than
# "(?m)^" because a pattern that begins with a literal "\n" lets the regex engine jump from
# newline to newline instead of trying every position (1 KB of prose: ~5.5 us -> ~0.7 us).
_CODE_LINE_START = r"\s*(?:def |class |import |from \w+ import|function |const |let |fn |func |public |#include|SELECT |select )"
_CODE_LINE_FIRST = re.compile(_CODE_LINE_START)
_CODE_LINE_NEXT = re.compile("\n" + _CODE_LINE_START)


_LANG_STOPWORDS: dict[str, frozenset[str]] = {
    "de": word_set("der die das und ist nicht ich mit für ein eine bitte auf wie sie wir den dem zu"),
    "fr": word_set("le la les et est pas je avec pour un une des du vous nous sur qui que dans"),
    "es": word_set("el la los las y es no con para un una por que del en mi los por favor cómo"),
}


@dataclass(slots=True)
class Features:
    """Sets of feature keys per namespace (binary features)."""

    user: set[str]
    prefixes: set[str]
    suffixes: set[str]
    context: AbstractSet[str]  # may be a cached frozenset: never mutate
    struct: list[str]
    payload: set[str] = field(default_factory=set)  # tokens of the pasted material (f13)


# --------------------------------------------------------------------------- text access


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text", None):
        text = part.get("text")
        if isinstance(text, str):
            return text
    return ""


def content_text(content: Any, budget: int) -> str:
    """Text of a message content (string or list of parts), at most ~``budget`` chars kept
    from each end. Unknown part types (images, audio, files) and agents' wrapper parts
    (``ask.is_wrapper``: reminders, environment blocks) contribute nothing."""
    if isinstance(content, str):
        return _window(content, budget, budget)
    if not isinstance(content, list):
        return ""
    parts = content if len(content) <= 2 * MAX_PARTS else content[:MAX_PARTS] + content[-MAX_PARTS:]
    pieces: list[str] = []
    total = 0
    for part in parts:
        text = _part_text(part)
        if text and not is_wrapper(text):
            text = _window(text, budget, budget)
            pieces.append(text)
            total += len(text)
            if total >= 4 * budget:
                break
    return "\n".join(pieces)


def _window(text: str, head: int, tail: int) -> str:
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


@dataclass(slots=True)
class RequestView:
    """The bounded slices of a request that the features read."""

    user: str  # windowed ask of the last user turn (wrappers and pasted material removed)
    user_len: int  # full length of the last user turn (cheap: len of the raw string/parts)
    system: str
    prev: str  # tail of the turn next to the last user turn (tool result or assistant reply)
    prev_user: str  # tail of the user turn before the last one ("fix it" needs it)
    has_tools: bool
    tool_words: frozenset[str]  # words of the offered tools' names/descriptions (bounded)
    n_messages: int
    last_role: str
    is_completion: bool
    payload: str = ""  # windowed pasted material of the last user turn (code, text, items)
    whole: str = ""  # the windowed last user turn as sent (ask and payload): its shape features
    kind: str = ""  # how the ask was found: "", "edit", "fim", "rag", "tool_result" (ask.find_ask)
    n_tools: int = 0  # how many tools the request offers


_NO_WORDS: frozenset[str] = frozenset()
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
MAX_TOOLS = 16


_TOOL_CACHE: dict[tuple[str, str], frozenset[str]] = {}
_TOOL_CACHE_MAX = 4096


def _one_tool_words(name: str, description: str) -> frozenset[str]:
    # Agents send the same tool list with every request: cache per (name, description).
    key = (name[:100], description[:200])
    words = _TOOL_CACHE.get(key)
    if words is None:
        text = (key[0] + " " + key[1]).lower().replace("_", " ")
        words = frozenset(w for w in _TOKEN.findall(text) if len(w) > 2) - _TOOL_STOP
        if len(_TOOL_CACHE) >= _TOOL_CACHE_MAX:
            _TOOL_CACHE.clear()
        _TOOL_CACHE[key] = words
    return words


def _tool_words(tools: list[Any]) -> frozenset[str]:
    """Words naming what the offered tools do: a tool-use turn asks for one of these things."""
    words: set[str] = set()
    for tool in tools[:MAX_TOOLS]:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        if not isinstance(fn, dict):
            fn = tool
        name, desc = fn.get("name"), fn.get("description")
        words |= _one_tool_words(name if isinstance(name, str) else "", desc if isinstance(desc, str) else "")
    return frozenset(words)


def _user_ask(content: Any) -> tuple[Ask, int]:
    """The ask of one user message (``ask.find_ask`` on its windowed, unwrapped text) and the
    message's raw length. Cline's tool results and Continue's context items (a fenced file as
    its own part) are payload, not ask. Cline sends a result as a header part ("[read_file for
    'x'] Result:") followed by the tool's output in parts of its own: every part after a header
    is output, unless it carries the user's own words (``<feedback>``, ``<user_message>``)."""
    if isinstance(content, list):
        texts: list[str] = []
        payload: list[str] = []
        saw_result = False
        raw = 0  # the length of what the user sent, wrapper parts left out
        parts = content if len(content) <= 2 * MAX_PARTS else content[:MAX_PARTS] + content[-MAX_PARTS:]
        for part in parts:
            text = _part_text(part)
            if not text or is_wrapper(text):
                continue
            raw += len(text)
            text = _window(text, ASK_SCAN, ASK_SCAN)
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
    if isinstance(content, str):
        return find_ask(_window(content, ASK_SCAN, ASK_SCAN)), len(content)
    return NO_ASK, 0


def _simple_view(
    text: str, tools: Any, has_tools: bool, tool_words: frozenset[str], n: int, role: str, completion: bool
) -> RequestView:
    """A bare string or completions ``prompt``: the ask is found in it like in a user turn."""
    found = find_ask(_window(text, ASK_SCAN, ASK_SCAN))
    whole = _window(text, USER_HEAD, USER_TAIL)
    return RequestView(
        _window(found.ask, USER_HEAD, USER_TAIL),
        len(text),
        "",
        "",
        "",
        has_tools,
        tool_words,
        n,
        role,
        completion,
        _window(found.payload, PAYLOAD_HEAD, PAYLOAD_TAIL),
        whole,
        found.kind,
        len(tools) if has_tools else 0,
    )


def view(request: Any) -> RequestView:
    """Extract the bounded text windows of a request. Never raises on malformed input.

    The last user turn is the last user message with an ask once wrappers are removed
    (``ask.find_ask``): a Codex ``<environment_context>`` turn or a Cline tool-result turn is
    skipped for the user message before it."""
    if not isinstance(request, dict):
        return _simple_view(request if isinstance(request, str) else "", None, False, _NO_WORDS, 0, "", False)
    offered = request.get("tools") or request.get("functions")
    tools: list[Any] = offered if isinstance(offered, list) else []
    has_tools = len(tools) > 0
    tool_words = _tool_words(tools) if has_tools else _NO_WORDS
    messages = request.get("messages")
    if messages is None and "prompt" in request:
        prompt = request.get("prompt")
        if isinstance(prompt, list):
            prompt = "\n".join(p for p in prompt[:MAX_PARTS] if isinstance(p, str))
        text = prompt if isinstance(prompt, str) else ""
        if isinstance(request.get("suffix"), str) and text:
            text = "<fim_prefix>" + text  # a completions body with a suffix is fill-in-the-middle
        return _simple_view(text, tools, has_tools, tool_words, 0, "", True)
    if isinstance(messages, str):
        return _simple_view(messages, tools, has_tools, tool_words, 1, "user", False)
    if not isinstance(messages, list):
        return RequestView("", 0, "", "", "", has_tools, tool_words, 0, "", False)
    n = len(messages)
    tail = messages[-MAX_MESSAGES_SCANNED:]
    last_role = ""
    if tail and isinstance(tail[-1], dict):
        role = tail[-1].get("role")
        last_role = role if isinstance(role, str) else ""
    found, user_len, user_idx = NO_ASK, 0, -1
    fallback: tuple[Ask, int, int] | None = None
    for i in range(len(tail) - 1, -1, -1):
        msg = tail[i]
        if isinstance(msg, dict) and msg.get("role") == "user":
            ask, raw = _user_ask(msg.get("content"))
            if ask.ask or (ask.payload and ask.kind != "tool_result"):
                found, user_len, user_idx = ask, raw, i
                break
            if fallback is None and ask.payload:
                fallback = (ask, raw, i)
                last_role = last_role if last_role in ("tool", "function") else "tool"
    if user_idx < 0 and fallback is not None:
        found, user_len, user_idx = fallback
    if user_idx < 0 and tail:  # no user turn: the last message with text stands in for it
        msg = tail[-1]
        if isinstance(msg, dict):
            found = find_ask(content_text(msg.get("content"), ASK_SCAN))
            user_len = len(found.ask)
            user_idx = len(tail) - 1
    user = _window(found.ask, USER_HEAD, USER_TAIL)
    payload = _window(found.payload, PAYLOAD_HEAD, PAYLOAD_TAIL)
    whole = user if not payload else user + "\n" + payload
    # Mid tool loop the last message (the tool result) is the freshest context; otherwise the
    # turn right after the last user turn, or the one right before it. System turns (Claude
    # Code's mid-conversation one, aider's trailing reminder) are wrapper, not context.
    prev = ""
    last = len(tail) - 1
    for j in (last if last > user_idx else -1, user_idx + 1, user_idx - 1):
        if 0 <= j < len(tail) and isinstance(tail[j], dict) and tail[j].get("role") not in _SYSTEM_ROLES:
            prev = content_text(tail[j].get("content"), PREV_TAIL)[-PREV_TAIL:]
            if prev:
                break
    prev_user = ""
    for j in range(user_idx - 1, -1, -1):
        msg = tail[j]
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str) and content.startswith(CONVERSATION_RESET):
                break  # aider: the turns before this are its examples
            earlier = content_text(content, PREV_TAIL)
            if earlier and not is_wrapper(earlier):
                prev_user = strip_wrappers(earlier)[-PREV_TAIL:]
                if prev_user:
                    break
    system = ""
    for msg in messages[:4]:
        if isinstance(msg, dict) and msg.get("role") in _SYSTEM_ROLES:
            system = content_text(msg.get("content"), SYSTEM_HEAD)[:SYSTEM_HEAD]
            break
    return RequestView(
        user,
        user_len,
        system,
        prev,
        prev_user,
        has_tools,
        tool_words,
        n,
        last_role,
        False,
        payload,
        whole,
        found.kind,
        len(tools) if has_tools else 0,
    )


# --------------------------------------------------------------------------- features


def _bin_names(prefix: str, edges: tuple[float, ...]) -> tuple[str, ...]:
    """Feature names of a binned value, indexed by ``bisect_right(edges, value)``: bin i is the
    first edge the value is below; values past the last edge get bin -1."""
    return (*(f"{prefix}:{i}" for i in range(len(edges))), f"{prefix}:-1")


_NMSG_EDGES = (2, 3, 5, 9)
_ULEN_EDGES = (40, 120, 400, 1500, 5000)
_DIGITS_EDGES = (0.001, 0.02, 0.06, 0.15)
_REQLEN_EDGES = (60, 200, 600)
_NMSG_NAMES = _bin_names("nmsg", _NMSG_EDGES)
_ULEN_NAMES = _bin_names("ulen", _ULEN_EDGES)
_DIGITS_NAMES = _bin_names("digits", _DIGITS_EDGES)
_REQLEN_NAMES = _bin_names("reqlen", _REQLEN_EDGES)


_MARK_TABLE_DELETE = bytes(b for b in range(256) if chr(b) not in _MARK_CHARS)
_EXT_TOKENS = word_set("py js ts tsx jsx rs kt cpp hpp rb php sql sh yaml yml toml json cfg ini")
# Feature names built once: f-strings on the hot path add up at ~25 features per request.
_MARK_NAMES = {ord(c): (f"mark:{c}:1", f"mark:{c}:2") for c in _MARK_CHARS}
_LEX_NAMES = {name: [f"lex:{name}:{k}" for k in range(1, 5)] for name in LEXICONS}
_REDIRECT_NAMES = {flag: f"redirect:{flag}" for flag in REDIRECTS}
_PAYLOAD_NAMES = ("pay:1", "pay:2", "pay:3")
_PAYLOAD_EDGES = (120, 400)
_CTX_LEX_NAMES = {
    name: ([f"clex:{name}:{k}" for k in range(1, 4)], [f"short_clex:{name}:{k}" for k in range(1, 4)])
    for name in LEXICONS
}
# Lexicon hits in one pass: every lexicon word maps to the lexicons it belongs to, so counting
# the hits of all lexicons (and of the stop-word lists) is one dict lookup per unique token,
# instead of one set intersection per lexicon (9 probes of big sets per token).
_LANG_KEYS = {lang: f"lang:{lang}" for lang in _LANG_STOPWORDS}


def _word_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for name, lex in LEXICONS.items():
        for w in lex:
            index.setdefault(w, []).append(name)
    for lang, words in _LANG_STOPWORDS.items():
        for w in words:
            index.setdefault(w, []).append(_LANG_KEYS[lang])
    return {w: tuple(names) for w, names in index.items()}


_WORD_INDEX = _word_index()


def _lexicon_hits(words: AbstractSet[str]) -> dict[str, int]:
    """Number of distinct words of ``words`` in each lexicon (and stop-word list), by name."""
    names = list(chain.from_iterable(filter(None, map(_WORD_INDEX.get, words))))
    # A few dozen names at most: list.count per distinct name beats building a Counter
    # (Counter's constructor alone costs several microseconds).
    return {name: names.count(name) for name in set(names)}


_TOOLMATCH_NAMES = ["toolmatch:1", "toolmatch:2", "toolmatch:3", "toolmatch:0"]
_TOOLMATCH_MANY = ["toolmatch_many:1", "toolmatch_many:2", "toolmatch_many:3", "toolmatch_many:0"]
_TOOLS_MANY = "tools:many"
FEW_TOOLS = 6  # more tools than this: an agent's standing list rather than a task's tools
_CODE_KEYWORDS = word_set("def class import function const let fn func public include select return elif")
_REQ_WORD_TOKENS = word_set("word words wörter wörtern wort mots palabras page pages seiten páginas")


def _mark_counts(encoded: bytes) -> dict[int, int]:
    """Counts of code/maths punctuation by byte value in UTF-8 text: delete every other byte in
    one C pass, then count each distinct remaining byte (at most len(_MARK_CHARS) of them)."""
    marked = encoded.translate(None, _MARK_TABLE_DELETE)
    return {ch: marked.count(ch) for ch in set(marked)}


def _structural(v: RequestView, lower: str, encoded: bytes, norm: str, uni: set[str]) -> list[str]:
    """Shape features of the last user turn as sent (``v.whole``: ask and payload); ``lower``,
    ``encoded``, ``norm`` and ``uni`` are of that whole turn. Each check is gated on a token or
    punctuation already known to be present, so the common case costs set lookups rather than
    scans of the window."""
    user = v.whole
    s: list[str] = []
    if v.has_tools:
        # How many tools, and whether the ask names what they do, told apart by the size of
        # the list (f14): a client that offers a few specific tools (get_weather, book_room)
        # says what it is for, and an ask that names them is asking for one; a coding agent
        # offers the same long list whatever is asked, and its generic words (read, write,
        # search, list, task) match maths and writing asks as often as tool asks.
        many = v.n_tools > FEW_TOOLS
        s.append(_TOOLS_MANY if many else "tools")
        hits = len(uni & v.tool_words)
        names = _TOOLMATCH_MANY if many else _TOOLMATCH_NAMES
        if hits:
            s.extend(names[: min(hits, 3)])
        else:
            s.append(names[3])
    if v.last_role == "tool" or v.last_role == "function":
        s.append("last_tool")
    if v.is_completion:
        s.append("completion")
    if v.system:
        s.append("system")
    s.append(_NMSG_NAMES[bisect_right(_NMSG_EDGES, v.n_messages)])
    s.append(_ULEN_NAMES[bisect_right(_ULEN_EDGES, v.user_len)])
    # Counts of code/maths punctuation, read off the lower-cased bytes that tokenising encoded
    # anyway (lower-casing never makes or removes ASCII punctuation).
    marks = _mark_counts(encoded)
    for ch, k in marks.items():
        s.append(_MARK_NAMES[ch][k >= 5])
    if marks.get(96, 0) >= 3 and "```" in user:  # 96 = "`"
        s.append("fence")
    if ("diff" in uni and "git" in uni) or (
        marks.get(64, 0) >= 2 and "@@" in user and ("\n+" in user or "\n-" in user)  # 64 = "@"
    ):
        s.append("diff")
    if (
        ("traceback" in uni and "Traceback (most recent call last)" in user)
        or "panicked" in uni
        or (
            "at" in uni and marks.get(40) and _JAVA_FRAME.search(user)  # 40 = "("
        )
    ):
        s.append("trace")
    if ("error" in uni and ("error[E" in user or "error TS" in user or ": error:" in user)) or (
        "failed" in uni and "FAILED" in user
    ):
        s.append("compiler_or_test_error")
    if uni & _EXT_TOKENS:  # "app.py" tokenises to "app", "py"; the extensions are rare as words
        s.append("path")
    if uni & _CODE_KEYWORDS and (_CODE_LINE_FIRST.match(user) or _CODE_LINE_NEXT.search(user)):
        s.append("code_line")
    if marks.get(92) and ("frac" in uni or "int" in uni or "sum" in uni or "sqrt" in uni):  # 92 = backslash
        s.append("latex")
    if marks.get(36, 0) >= 2 and ("$$" in user or _INLINE_MATH.search(user)):  # 36 = "$"
        s.append("latex_dollar")
    digits = norm.count("0")
    s.append(_DIGITS_NAMES[bisect_right(_DIGITS_EDGES, digits / (len(user) + 1))])
    m = _REQ_WORDS.search(lower) if uni & _REQ_WORD_TOKENS else None
    if m:
        try:
            n = float(m.group(1).replace(",", "").rstrip("."))
        except ValueError:
            n = 0.0
        s.append(_REQLEN_NAMES[bisect_right(_REQLEN_EDGES, n)])
    if user.count("\n") > 8:
        s.append("multiline")
    if marks.get(123) and '":' in user:  # 123 = "{"
        s.append("json")
    return s


# The ask's head (f17): its first word that is not a greeting, a politeness or a pronoun, which
# in an imperative ask is its verb ("implement", "derive", "write", "list"), and that word
# joined with each domain lexicon the ask hits. A linear model adds its words' weights
# whatever they do in the sentence; the joined feature lets it learn that "implement" with
# maths words is still code, and "derive" with code words is still maths.
_HEAD_SKIP = word_set(
    """please pls plz can could would will you u hey hi hello ok okay now also so and then hmm right
    great thanks thank good cool nice i we i'd we'd i'm let lets us need want just quick question
    actually wait yes yeah sure alright next one more again the a an"""
)
_HEAD_JOIN = {
    name: "&" + name for name in ("math", "reasoning", "writing", "instruction", "coding", "tools", "fileops")
}


def _ask_head(norm: str, hits: dict[str, int], struct: list[str]) -> None:
    """``head:<word>`` and ``head:<word>&<lexicon>`` of the normalised ask ``norm``, given its
    lexicon ``hits``; nothing for an ask of skipped words only."""
    for word in norm[:96].split()[:8]:
        if word not in _HEAD_SKIP:
            head = "head:" + word
            struct.append(head)
            struct.extend([head + _HEAD_JOIN[name] for name in hits if name in _HEAD_JOIN])
            return


def _ask_lexicons(words: AbstractSet[str], struct: list[str]) -> dict[str, int]:
    """Domain-lexicon hits of the ask (returned), and the language its stop words say."""
    hits_by_name = _lexicon_hits(words)
    for name, hits in hits_by_name.items():
        lex_names = _LEX_NAMES.get(name)
        if lex_names is not None:
            # Cumulative levels (>=1, >=2, ...) so evidence adds up monotonically.
            struct.extend(lex_names[: min(hits, 4)])
        elif hits >= 2:  # a language's stop words
            struct.append(name)
    return hits_by_name


# Chinese, Japanese and Korean are written without spaces, so a whitespace "token" of them is a
# whole clause that never repeats. Their character bigrams stand in for words (f12). Only text
# that is not pure ASCII pays for this: str.isascii() is O(1) in CPython.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")


def cjk_bigrams(text: str) -> list[str]:
    """Character bigrams of the CJK runs in ``text`` (a lone character stands for itself).
    Built with ``map(operator.add, run, run[1:])``, so the loop over characters runs in C."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(map(add, run, run[1:]))
    return out


def _normalized(text: str) -> tuple[str, bytes, str]:
    """``(lower, encoded, norm)``: the lower-cased text, its UTF-8 bytes, and those bytes with
    punctuation to spaces and digits to 0 (see _BYTE_TABLE), decoded. :func:`extract` reads all
    three; :func:`normalize` only the last."""
    lower = text.lower()
    encoded = lower.encode("utf-8", "surrogatepass")
    return lower, encoded, encoded.translate(_BYTE_TABLE).decode("utf-8", "replace")


def normalize(text: str) -> str:
    """Lower-case, punctuation to spaces, digits to 0 (see _BYTE_TABLE)."""
    return _normalized(text)[2]


def tokens(text: str) -> list[str]:
    norm = normalize(text)
    return norm.split() if norm.isascii() else norm.split() + cjk_bigrams(norm)


_SYSTEM_CACHE: dict[str, frozenset[str]] = {}
_SYSTEM_CACHE_MAX = 1024


def _system_tokens(system: str) -> frozenset[str]:
    """Tokens of the (windowed) system prompt. An agent sends the same system prompt with every
    request, so each distinct one is tokenised once (bounded cache, cleared when full)."""
    toks = _SYSTEM_CACHE.get(system)
    if toks is None:
        if len(_SYSTEM_CACHE) >= _SYSTEM_CACHE_MAX:
            _SYSTEM_CACHE.clear()
        toks = _SYSTEM_CACHE[system] = frozenset(tokens(system))
    return toks


def _context_lexicons(convo: set[str], short: bool, struct: list[str]) -> None:
    """A terse follow-up ("fix it", "punchier please") gets its intent from the turn before:
    domain-lexicon hits there, flagged separately when the last turn is short, let a linear
    model learn "short turn -> trust the conversation"."""
    for name, hits in _lexicon_hits(convo).items():
        names = _CTX_LEX_NAMES.get(name)
        if names is not None:  # not a language's stop words
            struct.extend(names[short][: min(hits, 3)])


def _words(norm: str, head: int, tail: int) -> tuple[set[str], int]:
    """Tokens of normalised text (plus CJK character bigrams from a shorter window) and an
    estimate of its number of words."""
    toks = norm.split()
    words = set(toks)
    n_words = len(toks)
    if not norm.isascii():
        # A CJK character says about what a short word says: half the window is plenty, and it
        # keeps a page of distinct characters (~500 bigrams) inside the p99 budget.
        bigrams = cjk_bigrams(_window(norm, head, tail))
        words.update(bigrams)
        n_words += len(bigrams) // 2  # a CJK word is about two characters
    return words, n_words


# Identifier shapes in the ask (f15): camelCase and PascalCase inner capitals, snake_case and
# calls. People write them about code; a name the corpus never saw (``ThemeContext``,
# ``amount_cents``) still says "code" by its shape. Counted on the bytes with every letter or
# digit mapped to its class (one C pass, ~1 us per KB; a regex costs ~50 us per KB).
def _ident_table() -> bytes:
    table = bytearray(b" " * 256)
    for c in string.ascii_lowercase + string.digits:
        table[ord(c)] = ord("a")
    for c in string.ascii_uppercase:
        table[ord(c)] = ord("A")
    for c in "_()":
        table[ord(c)] = ord(c)
    return bytes(table)


_IDENT_TABLE = _ident_table()
_IDENT_NAMES = ("ident:1", "ident:2", "ident:3")


def _ident_count(text: str) -> int:
    """Identifier boundaries in ``text``: ``aA`` (camelCase), ``a_a`` (snake_case), ``a()``."""
    shape = text.encode("utf-8", "surrogatepass").translate(_IDENT_TABLE)
    return shape.count(b"aA") + shape.count(b"a_a") + shape.count(b"a()")


def extract(request: Any) -> Features:
    """All features of one request (see module docstring)."""
    v = view(request)
    lower, encoded, norm = _normalized(v.user)
    uni, n_words = _words(norm, CJK_HEAD, CJK_TAIL)
    long_words = [w for w in uni if len(w) >= MIN_SUBWORD_LEN]
    prefixes = set(map(_HEAD4, long_words))  # itemgetter: the slicing loop runs in C
    suffixes = set(map(_TAIL4, long_words))
    context: AbstractSet[str] = _system_tokens(v.system) if v.system else _NO_WORDS
    pay: set[str] = set()
    if v.payload:
        p_lower, p_encoded, p_norm = _normalized(v.payload)
        pay = _words(p_norm, PAYLOAD_CJK, PAYLOAD_CJK)[0]
        struct = _structural(
            v, lower + "\n" + p_lower, encoded + b"\n" + p_encoded, norm + "\n" + p_norm, uni | pay
        )
        struct.append(_PAYLOAD_NAMES[bisect_right(_PAYLOAD_EDGES, len(v.payload))])
    else:
        struct = _structural(v, lower, encoded, norm, uni)
    _ask_head(norm, _ask_lexicons(uni, struct), struct)
    n_ident = _ident_count(v.user)
    if n_ident:  # cumulative levels: 1, 2 or more, 4 or more
        struct.extend(_IDENT_NAMES[: 1 + (n_ident >= 2) + (n_ident >= 4)])
    if v.kind:
        struct.append("ask:" + v.kind)
    if not uni:
        struct.append("noask")
    struct.extend(map(_REDIRECT_NAMES.__getitem__, redirections(lower, uni)))
    if v.prev or v.prev_user:
        convo = set(tokens(v.prev + "\n" + v.prev_user))
        _context_lexicons(convo, n_words <= 12, struct)
        context = convo | context
    return Features(uni, prefixes, suffixes, context, struct, pay)


def to_dict(f: Features) -> dict[str, float]:
    """Training-time representation: namespaced string keys with their (scaled) values."""
    d: dict[str, float] = {}
    for ns, keys in (
        (NS_USER, f.user),
        (NS_PREFIX, f.prefixes),
        (NS_SUFFIX, f.suffixes),
        (NS_CONTEXT, f.context),
    ):
        scale = NAMESPACE_SCALE[ns]
        for k in keys:
            d[ns + k] = scale
    for k in f.struct:
        d[NS_STRUCT + k] = NAMESPACE_SCALE[NS_STRUCT]
    for k in f.payload:
        d[NS_PAYLOAD + k] = NAMESPACE_SCALE[NS_PAYLOAD]
    return d
