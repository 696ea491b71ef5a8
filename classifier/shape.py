"""Shape features of a request (namespace ``s:``): what it offers and how its last user turn
looks, apart from its words.

:func:`shape` reads the :class:`~classifier.view.RequestView` and the last user turn as sent
(ask and payload). Each check is gated on a token or punctuation already known to be present,
so the common case costs set lookups rather than scans of the window; punctuation is counted
by byte value off the UTF-8 text that tokenising encoded anyway (lower-casing never makes or
removes ASCII punctuation).
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from collections.abc import Set as AbstractSet

from classifier.lexicon import word_set
from classifier.view import RequestView

# Punctuation that says "code" or "maths" once tokens no longer carry it.
MARK_CHARS = "{};=$\\()[]<>#|^_`*"
_MARK_TABLE_DELETE = bytes(b for b in range(256) if chr(b) not in MARK_CHARS)
# Feature names built once: f-strings on the hot path add up at ~25 features per request.
_MARK_NAMES = {ord(c): (f"mark:{c}:1", f"mark:{c}:2") for c in MARK_CHARS}
# The byte values :func:`mark_counts` keys its counts by.
_BACKTICK = ord("`")
_AT = ord("@")
_PAREN = ord("(")
_BACKSLASH = ord("\\")
_DOLLAR = ord("$")
_BRACE = ord("{")

_JAVA_FRAME = re.compile(r"\n\s+at [\w.$<>]+\(")
_INLINE_MATH = re.compile(r"\$[^$\n]{1,80}\$")
# A line that starts with a code keyword. Written as "start of text, or a newline" rather than
# "(?m)^" because a pattern that begins with a literal "\n" lets the regex engine jump from
# newline to newline instead of trying every position (1 KB of prose: ~5.5 us -> ~0.7 us).
_CODE_LINE_START = r"\s*(?:def |class |import |from \w+ import|function |const |let |fn |func |public |#include|SELECT |select )"
_CODE_LINE_FIRST = re.compile(_CODE_LINE_START)
_CODE_LINE_NEXT = re.compile("\n" + _CODE_LINE_START)
_CODE_KEYWORDS = word_set("def class import function const let fn func public include select return elif")
_EXT_TOKENS = word_set("py js ts tsx jsx rs kt cpp hpp rb php sql sh yaml yml toml json cfg ini")
_LATEX_WORDS = word_set("frac int sum sqrt")
# A requested length ("800 words", "3 pages"): the number, in any of the languages.
_REQ_WORDS = re.compile(
    r"(\d[\d,.]{1,6})\s*[-–]?\s*(?:words?|wörter|wörtern|wort|mots|palabras|pages?|seiten|páginas)\b"
)
_REQ_WORD_TOKENS = word_set("word words wörter wörtern wort mots palabras page pages seiten páginas")


def _bin_names(prefix: str, edges: tuple[float, ...]) -> tuple[str, ...]:
    """Feature names of a binned value, indexed by ``bisect_right(edges, value)``: bin i is the
    first edge the value is below; values past the last edge get bin -1."""
    return (*(f"{prefix}:{i}" for i in range(len(edges))), f"{prefix}:-1")


_NMSG_EDGES = (2, 3, 5, 9)
_ULEN_EDGES = (40, 120, 400, 1500, 5000)
_DIGITS_EDGES = (0.001, 0.02, 0.06, 0.15)
_REQLEN_EDGES = (60, 200, 600)
_PAYLOAD_EDGES = (120, 400)
_NMSG_NAMES = _bin_names("nmsg", _NMSG_EDGES)
_ULEN_NAMES = _bin_names("ulen", _ULEN_EDGES)
_DIGITS_NAMES = _bin_names("digits", _DIGITS_EDGES)
_REQLEN_NAMES = _bin_names("reqlen", _REQLEN_EDGES)
_PAYLOAD_NAMES = ("pay:1", "pay:2", "pay:3")

_TOOLMATCH_NAMES = ["toolmatch:1", "toolmatch:2", "toolmatch:3", "toolmatch:0"]
_TOOLMATCH_MANY = ["toolmatch_many:1", "toolmatch_many:2", "toolmatch_many:3", "toolmatch_many:0"]
_TOOLS_MANY = "tools:many"


def mark_counts(encoded: bytes) -> dict[int, int]:
    """Counts of code/maths punctuation by byte value in UTF-8 text: delete every other byte in
    one C pass, then count each distinct remaining byte (at most len(MARK_CHARS) of them)."""
    marked = encoded.translate(None, _MARK_TABLE_DELETE)
    return {ch: marked.count(ch) for ch in set(marked)}


def payload_size(payload: str) -> str:
    """The binned length of the pasted material."""
    return _PAYLOAD_NAMES[bisect_right(_PAYLOAD_EDGES, len(payload))]


def _request_shape(v: RequestView, words: AbstractSet[str], s: list[str]) -> None:
    """What the request offers and where it stands: tools, a tool loop, completions, a system
    prompt, the number of messages, the length of the last user turn."""
    if v.has_tools:
        # Whether the ask names what the tools do, told apart by the kind of list (f14, f18): a
        # client that offers a few specific tools (get_weather, book_room) says what it is for,
        # and an ask that names them is asking for one; a coding agent offers the same list
        # whatever is asked, and its generic words (read, write, search, list, task) match
        # maths and writing asks as often as tool asks.
        many = v.standing_tools
        s.append(_TOOLS_MANY if many else "tools")
        hits = len(words & v.tool_words)
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


def _code_shape(text: str, words: AbstractSet[str], marks: dict[int, int], s: list[str]) -> None:
    """Fences, diffs, stack traces, compiler and test errors, file paths, lines of code."""
    if marks.get(_BACKTICK, 0) >= 3 and "```" in text:
        s.append("fence")
    if ("diff" in words and "git" in words) or (
        marks.get(_AT, 0) >= 2 and "@@" in text and ("\n+" in text or "\n-" in text)
    ):
        s.append("diff")
    if (
        ("traceback" in words and "Traceback (most recent call last)" in text)
        or "panicked" in words
        or ("at" in words and marks.get(_PAREN) and _JAVA_FRAME.search(text))
    ):
        s.append("trace")
    if ("error" in words and ("error[E" in text or "error TS" in text or ": error:" in text)) or (
        "failed" in words and "FAILED" in text
    ):
        s.append("compiler_or_test_error")
    if words & _EXT_TOKENS:  # "app.py" tokenises to "app", "py"; the extensions are rare as words
        s.append("path")
    if words & _CODE_KEYWORDS and (_CODE_LINE_FIRST.match(text) or _CODE_LINE_NEXT.search(text)):
        s.append("code_line")


def _math_shape(text: str, words: AbstractSet[str], marks: dict[int, int], s: list[str]) -> None:
    """LaTeX commands and dollar-delimited maths."""
    if marks.get(_BACKSLASH) and not _LATEX_WORDS.isdisjoint(words):
        s.append("latex")
    if marks.get(_DOLLAR, 0) >= 2 and ("$$" in text or _INLINE_MATH.search(text)):
        s.append("latex_dollar")


def _text_shape(
    text: str, lower: str, norm: str, words: AbstractSet[str], marks: dict[int, int], s: list[str]
) -> None:
    """Digit density, a requested length ("800 words"), many lines, JSON."""
    digits = norm.count("0")
    s.append(_DIGITS_NAMES[bisect_right(_DIGITS_EDGES, digits / (len(text) + 1))])
    m = _REQ_WORDS.search(lower) if words & _REQ_WORD_TOKENS else None
    if m:
        try:
            n = float(m.group(1).replace(",", "").rstrip("."))
        except ValueError:
            n = 0.0
        s.append(_REQLEN_NAMES[bisect_right(_REQLEN_EDGES, n)])
    if text.count("\n") > 8:
        s.append("multiline")
    if marks.get(_BRACE) and '":' in text:
        s.append("json")


def shape(v: RequestView, lower: str, encoded: bytes, norm: str, words: AbstractSet[str]) -> list[str]:
    """Shape features of the request and of its last user turn as sent (``v.whole``: ask and
    payload); ``lower``, ``encoded``, ``norm`` and ``words`` are of that whole turn (see
    ``features.normalized``)."""
    s: list[str] = []
    _request_shape(v, words, s)
    marks = mark_counts(encoded)
    for ch, k in marks.items():
        s.append(_MARK_NAMES[ch][k >= 5])
    _code_shape(v.whole, words, marks, s)
    _math_shape(v.whole, words, marks, s)
    _text_shape(v.whole, lower, norm, words, marks, s)
    return s


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


def identifiers(text: str) -> tuple[str, ...]:
    """``ident:`` levels of ``text``'s identifier boundaries (``aA`` camelCase, ``a_a``
    snake_case, ``a()`` calls): cumulative, for 1, 2 or more, 4 or more."""
    shape_bytes = text.encode("utf-8", "surrogatepass").translate(_IDENT_TABLE)
    n = shape_bytes.count(b"aA") + shape_bytes.count(b"a_a") + shape_bytes.count(b"a()")
    return _IDENT_NAMES[: 1 + (n >= 2) + (n >= 4)] if n else ()
