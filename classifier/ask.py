"""Find the user's ask inside an agent's wrapper, and separate it from pasted material.

Why: agents wrap the same request very differently (Claude Code's ``<system-reminder>``
blocks and CLAUDE.md, Cline's ``<task>`` and ``<environment_details>``, Codex's AGENTS.md and
``<environment_context>`` turns, aider's trailing reminders, IDE edit and fill-in-the-middle
prompts, retrieved documents). Read whole, the wrapper's words decide instead of the ask. And
inside the ask, pasted material (a text to summarise, tickets to label, code next to a question
about a proof) pulls the route by its topic, so it is kept apart as *payload*, a weaker signal.

Everything here works on already-windowed text (a few KB at most) with ``str.find``,
``str.split`` and a few anchored regexes: no per-character Python loops.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from classifier.redirects import demands
from classifier.rows import around_data, is_data, without_rows

# A text part (or string) that starts with one of these is wrapper, not ask: dropped whole.
WRAPPER_STARTS = (
    "<system-reminder>",
    "<environment_details>",
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<skills_instructions>",
    "<EXTRA_INFO>",
    "<REPO_CONTEXT>",
    "<RUNTIME_INFORMATION>",
    "<REPOSITORY_INFO>",  # OpenHands' workspace context (its additional_info template)
    "<REPOSITORY_INSTRUCTIONS>",
    "<CONVERSATION_INSTRUCTIONS>",
    "<hook_context",
    "x-anthropic-billing-header",
    "<command-message>",
    "<local-command-stdout>",
    # aider's context turns (its coders' prompts): files, repo map, the end of its examples
    "I have *added these files to the chat*",
    "I am working with you on code in a git repo",
    "Here are summaries of some files present in my git repository",
    "Here are some READ ONLY files",
    "I switched to a new code base",
    "I am not sharing any files",
    "I committed the changes with git hash",
)
# aider's examples end with this turn: user turns before it are examples, not the user's.
CONVERSATION_RESET = "I switched to a new code base"
# Wrapper blocks embedded in a longer text: removed with their content.
_WRAPPER_BLOCK = re.compile(
    r"<(system-reminder|environment_details|environment_context|user_instructions|EXTRA_INFO|"
    r"REPO_CONTEXT|RUNTIME_INFORMATION|REPOSITORY_INFO|REPOSITORY_INSTRUCTIONS|CONVERSATION_INSTRUCTIONS|"
    r"INSTRUCTIONS)>.*?(?:</\1>|\Z)",
    re.S,
)
# Tags that wrap the ask itself (Cline/Roo): the tags go, the content stays.
_UNWRAP_TAGS = re.compile(r"</?(?:task|feedback|user_message)>")
# Aider appends its edit-format rules to the user turn for some models: cut from here on.
_TRAILING_HASH = re.compile(r"# (?:\*SEARCH/REPLACE block\* Rules|File editing rules):")
_WHOLE_FILE_RULES = "To suggest changes to a file you MUST return the entire content"
# Any tag this module removes or unwraps: one literal-prefixed search gates the substitutions.
_ANY_TAG = re.compile(
    r"</?(?:system-reminder|environment_details|environment_context|user_instructions|EXTRA_INFO|"
    r"REPO_CONTEXT|RUNTIME_INFORMATION|REPOSITORY_INFO|REPOSITORY_INSTRUCTIONS|CONVERSATION_INSTRUCTIONS|"
    r"INSTRUCTIONS|task|feedback|user_message)>"
)
# A Cline/Roo user turn that only carries a tool's result: "[read_file for 'x'] Result:" (the
# quoted argument may itself hold quotes: "[execute_command for 'grep -E 'a|b' x'] Result:"), or
# newer Cline's "<function_results>" block.
# Roo's read_file adds a sentence inside the brackets: "[read_file for 'a.py'. Reading multiple
# files at once is more efficient for the LLM. ...] Result:".
_CLINE_RESULT = re.compile(r"\[[\w-]+(?: for '[^\n]{0,300}?'(?:\. [^\]\n]{0,300})?)?\] Result:")
_FUNCTION_RESULTS = "<function_results>"
# Cline and Roo put what the user typed mid-task inside these tags; the text around them is the
# agent's own ("The user has provided feedback on the results. Consider their input ...",
# "[TASK RESUMPTION] This task was interrupted ...").
_USER_WORDS = re.compile(r"<(feedback|user_message)>(.*?)</\1>", re.S)
# A task resumption without new words from the user: the task is the earlier turn.
_RESUMPTION = "[TASK RESUMPTION]"
# IDE edit prompts (Continue's templates) state the ask between fixed phrases; the code around
# it is payload.
_EDIT_ASKS = (
    ("The user's request is: \"", '"\n\nHere is the rewritten code:'),
    ("to address the following request:\n\n", "\n\nYou should rewrite the entire file"),
    ('in order to satisfy the following request: "', '". You should rewrite'),
    ('satisfies the following request:\n\n"', '"\n\n'),
    ('Rewrite the code to satisfy this request: "', '"'),
    ("Edit the code to perfectly satisfy the following user request:\n", "\nOutput nothing except"),
    ('Here is the edit requested:\n"', '"\n\nHere is the code after editing:'),
)
# Fill-in-the-middle markers of the common code models, and Continue's chat autocomplete.
FIM_MARKERS = (
    "<fim_prefix>",
    "<|fim_prefix|>",
    "<fim_middle>",
    "<|fim_middle|>",
    "[SUFFIX]",
    "<PRE> ",
    "<|fim▁begin|>",
    "<｜fim▁begin｜>",  # DeepSeek Coder's real tokens use fullwidth bars (U+FF5C)
    "<|repo_name|>",  # Qwen2.5-Coder's repository-level prompt: files, then the FIM turn
    "<|file_sep|>",
    "<|code_prefix|>",
    "Fill in the blank to complete the code block",
    "{{FILL_HERE}}",
)
# Zed's inline assistant ("Edit the section ... based on the following prompt:").
_ZED_PROMPT = ("<prompt>\n", "\n</prompt>")
_ZED_DOCUMENT = ("<document>\n", "\n</document>")
# CrewAI's task turn (crewai/translations/en.json): "Current Task: {description}", then the
# expected output, boilerplate, the context of earlier tasks, and "Begin! ... Thought:".
_CREW_TASK = "Current Task: "
_CREW_CRITERIA = "This is the expected criteria for your final answer: "
_CREW_CONTEXT = "\n\nThis is the context you're working with:\n"
_CREW_BOILERPLATE = "\nyou MUST return the actual complete content as the final answer, not a summary."
_CREW_ENDINGS = ("\n\nBegin! This is VERY important to you", "\n\nProvide your complete response:")
# Retrieval prompts: the question follows the retrieved context.
_RAG_CONTEXT = ("Context information is below", "---------------------", "<documents>", "<context>")
_RAG_QUESTION = re.compile(r"(?:^|\n)\s*(?:Query|Question|QUESTION|Frage|Pregunta|Question posée)\s*[:：]\s*")
# Words that point at pasted material, per language (lower-case substrings).
_POINTERS = (
    "this",
    "these",
    "following",
    "below",
    "here",
    "attached",
    "text",
    "email",
    "message",
    "article",
    "notes",
    "items",
    "tickets",
    "reviews",
    "release",
    "paragraph",
    "lines",
    "log",
    "output",
    "snippet",
    "transcript",
    "document",
    "dies",
    "folgend",
    "unten",
    "jede",
    "mail",
    "ce ",
    "cet",
    "ces ",
    "suivant",
    "ci-dessous",
    "texte",
    "chaque",
    "este",
    "esta",
    "estos",
    "estas",
    "siguiente",
    "abajo",
    "texto",
    "cada",
    "esse",
    "essa",
    "isso",
    "seguinte",
    "abaixo",
    "этот",
    "эту",
    "это",
    "эти",
    "следующ",
    "ниже",
    "текст",
    "кажд",
    "письм",
    "这",
    "下面",
    "以下",
    "如下",
    "每",
    "文字",
    "文本",
    "内容",
    "この",
    "次の",
    "下記",
    "各",
    "文章",
    "メール",
    "이 ",
    "다음",
    "아래",
    "각 ",
    "글을",
    "메일",
)
# The first line that ends with a colon (ASCII or full-width): it may introduce pasted material.
_COLON_LINE = re.compile(r"[:：][ \t]*\n")
# A line ending with a colon that is code, not an introduction ("def f(x):", "else:"): how
# it ends before the colon, and how it starts.
_CODE_LINE_ENDS = (")", "]", "else", "try", "finally")
_CODE_STARTS = ("def ", "class ", "if ", "for ", "while ", "elif ", "with ", "async ", "case ", "@")
# The first line of a list of items: "- x", "* x", "1. x", "1) x".
_LIST_ITEM = re.compile(r"\n[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+\S")
MAX_ASK = 600  # an ask longer than this is mostly payload: keep its head as the ask
# A paragraph that opens like markup or a log is pasted material, not an order.
_MARKUP_STARTS = ("<", "[", "{", "Traceback")


class Ask(NamedTuple):
    ask: str  # the instruction: what the user wants done
    payload: str  # pasted material the instruction is about (code, text, items, documents)
    kind: str  # "" | "edit" | "fim" | "rag" | "tool_result": how the ask was found


NO_ASK = Ask("", "", "")


def is_wrapper(text: str) -> bool:
    """A whole part or message that an agent adds around the ask (reminders, environment)."""
    return text[:160].lstrip().startswith(WRAPPER_STARTS)


def has_tags(text: str) -> bool:
    """Whether ``text`` holds a tag this module removes or unwraps."""
    return "<" in text and _ANY_TAG.search(text) is not None


def strip_wrappers(text: str, tagged: bool | None = None) -> str:
    """The text without embedded wrapper blocks, unwrapped ``<task>``, and aider's trailing rules.
    Each step is gated by a one-character ``in`` (memchr) or a literal-prefixed regex; ``tagged``
    is :func:`has_tags` of ``text`` when the caller knows it."""
    if has_tags(text) if tagged is None else tagged:
        text = _UNWRAP_TAGS.sub("", _WRAPPER_BLOCK.sub("", text))
    if "#" in text:
        found = _TRAILING_HASH.search(text)
        if found is not None:
            text = text[: found.start()]
    cut = text.find(_WHOLE_FILE_RULES, 0, 1600)  # aider appends it right after a short ask
    return (text[:cut] if cut >= 0 else text).strip()


def is_fim(text: str) -> bool:
    """A fill-in-the-middle prompt: its markers open the prompt, or Continue's chat template
    ends with its instruction."""
    head = text[:120]
    if ("<" in head or "[" in head or "{" in head) and any(m in head for m in FIM_MARKERS):
        return True
    return "Fill in the blank" in text[-400:]


def _between(text: str, start: str, end: str) -> tuple[str, str] | None:
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    if j < 0:
        return None
    return text[i + len(start) : j], text[:i] + "\n" + text[j + len(end) :]


def _edit_ask(text: str) -> Ask | None:
    if "<prompt>" in text:  # Zed's inline assistant: the document, then the prompt
        return _zed_ask(text)
    if "request" not in text[-1200:]:  # the templates state the request near their end
        return None
    for start, end in _EDIT_ASKS:
        found = _between(text, start, end)
        if found is not None:
            return Ask(found[0].strip(), found[1], "edit")
    return None


def _zed_ask(text: str) -> Ask | None:
    """Zed's inline-assist prompt (its content_prompt template): the ask is in ``<prompt>``,
    the payload is the ``<document>``; the instructions around them are Zed's."""
    found = _between(text, _ZED_PROMPT[0], _ZED_PROMPT[1])
    if found is None:
        return None
    document = _between(text, _ZED_DOCUMENT[0], _ZED_DOCUMENT[1])
    return Ask(found[0].strip(), document[0] if document else "", "edit")


def _rag_ask(text: str) -> Ask | None:
    head = text[:300]  # the retrieved context comes first
    if not ("Context" in head or "---" in head or "<" in head) or not any(m in head for m in _RAG_CONTEXT):
        return None
    matches = list(_RAG_QUESTION.finditer(text))
    if not matches:
        return None
    found = matches[-1]  # the question after the context
    ask = text[found.end() :]
    end = ask.find("\nAnswer")
    if end >= 0:
        ask = ask[:end]
    return Ask(ask.strip(), text[: found.start()], "rag")


def points_at_material(intro: str) -> bool:
    """Whether an introduction points at material that follows ("Summarise *this*:", "Label
    *each* ticket", "*以下*の文章", "*下面*这段"), rather than starting a problem statement
    ("Known:", "Известно:", a puzzle's conditions), which is the task itself."""
    lower = intro.lower()
    if any(m in lower for m in _POINTERS):
        return True
    return ("each " in lower or "every " in lower) and "each other" not in lower


def asks(paragraph: str) -> bool:
    """Whether a paragraph asks a question (in any of the languages: "?" or the full-width
    "？")."""
    return "?" in paragraph or "？" in paragraph


def _closing_question(ask: str, rest: str) -> tuple[str, str]:
    """Move a short last paragraph of one line after pasted material back to the ask:
    "<paste>\\n\\nhow do I render it safely?" (a log's last lines have several lines). After
    rows of pasted data (a log, a CSV export) a last line of up to MAX_ASK characters is the
    ask too (f19): "Logs, for your eyes only:\\n<log>\\n\\nDraft the customer email ..."."""
    cut = rest.rstrip().rfind("\n\n")
    if cut > 0:
        last = rest[cut:].strip()
        if "\n" not in last and (
            len(last) <= 200 or (len(last) <= MAX_ASK and (is_data(rest[:cut]) or asks(last)))
        ):
            return ask + "\n" + last, rest[:cut]
    return ask, rest


def split_payload(text: str) -> tuple[str, str]:
    """``(ask, payload)`` of a user's text outside code fences (see :func:`_split_text`), rows
    of pasted data (a table, a CSV export, a log) left in the ask moved to the payload."""
    return without_rows(*_split_text(text))


def _split_text(text: str) -> tuple[str, str]:
    """``(ask, payload)`` of a user's text outside code fences (``find_ask`` takes those out).

    - A line ending with a colon early in the text, that points at material ("Summarise
      this:", "以下の文章を…："), introduces pasted material: what follows it is payload.
    - So does a list of items after an introduction that points at them.
    - A long text of several paragraphs: the first is the ask, with the last when that is a
      short closing question or order, or when it demands a judgement or a proof
      (``classifier.redirects.demands``) or asks a question (f22: "<figures, options>\\n\\nwhich
      is best for me?"). When the first is long and the last short, the last is the ask if it
      asks or follows pasted data or markup ("<log>\\n\\nwhy does this fail?"); otherwise the
      first's head is the ask with it (f22: "Write her speech … <facts>\\n\\nShe is direct and
      warm.", a letter to proofread ending in its signature).
    - A closing line that asks, after pasted material, joins the ask (f22).
    """
    colon = _COLON_LINE.search(text, 0, 400)
    if colon is not None:
        offset = colon.end()
        line_start = text.rfind("\n", 0, colon.start()) + 1
        line = text[line_start : colon.start()].strip()
        if (
            not line.endswith(_CODE_LINE_ENDS)
            and not line.startswith(_CODE_STARTS)
            and text[offset:].strip()
            and points_at_material(text[:offset])
        ):
            ask, rest = _closing_question(text[:offset], text[offset:])
            return ask.strip(), rest
    items = _LIST_ITEM.search(text, 0, 600)
    if items is not None and items.start() > 0 and points_at_material(text[: min(items.start(), 400)]):
        # "Label each ticket ...\n1. ...\n2. ...": the items are payload.
        ask, rest = _closing_question(text[: items.start()], text[items.start() :])
        return ask.strip(), rest
    if "\n\n" in text and len(text) > MAX_ASK:
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        around = around_data(paragraphs, MAX_ASK)
        if around is not None:
            return around
        if len(paragraphs) >= 2:
            first, last = paragraphs[0], paragraphs[-1]
            if len(first) > 240 and len(last) <= 240:
                if asks(last) or is_data(first) or first.lstrip().startswith(_MARKUP_STARTS):
                    # The question after a paste: "<log>\n\nwhy does this fail?"
                    return last.strip(), "\n\n".join(paragraphs[:-1])
                # A long opening order and a short closing line that does not ask (the voice
                # of a speech, a letter's signature) (f22): the order's head is the ask too.
                return (first[:240] + "\n" + last).strip(), "\n\n".join(paragraphs[:-1])
            if len(last) <= MAX_ASK and (demands(last) or asks(last)) and not is_data(last):
                # The situation first, then what it demands (f21) or asks (f22): "<the
                # repository's ring buffer, the assessor>\n\nBitte beweise: (1) …", "<the
                # figures, the options>\n\nQuelle est la meilleure option pour moi ?".
                return (first[:MAX_ASK] + "\n" + last).strip(), "\n\n".join(paragraphs[1:-1])
            if len(first) <= 400:
                # A short closing question or order stays with the ask ("<paste>\n\nfix it").
                if len(paragraphs) >= 3 and len(last) <= 160:
                    return (first + "\n" + last).strip(), "\n\n".join(paragraphs[1:-1])
                return first.strip(), "\n\n".join(paragraphs[1:])
    if len(text) > MAX_ASK:
        return text[:MAX_ASK].strip(), text[MAX_ASK:]
    return text.strip(), ""


def _crew_ask(text: str) -> Ask | None:
    """CrewAI's task turn: the description and its expected output are the ask, the context
    of earlier tasks is payload, the rest is CrewAI's boilerplate."""
    start = text.find(_CREW_TASK, 0, 200)
    if start < 0:
        return None
    body = text[start + len(_CREW_TASK) :]
    payload = ""
    if (i := body.find(_CREW_CONTEXT)) >= 0:
        body, payload = body[:i], body[i + len(_CREW_CONTEXT) :]
    for ending in _CREW_ENDINGS:
        body, payload = _cut(body, ending), _cut(payload, ending)
    ask = body.replace(_CREW_BOILERPLATE, "").replace(_CREW_CRITERIA, "")
    return Ask(ask.strip(), payload.strip(), "")


def _cut(text: str, marker: str) -> str:
    """``text`` up to ``marker`` (all of it when absent)."""
    i = text.find(marker)
    return text if i < 0 else text[:i]


def is_tool_result(text: str) -> bool:
    """A Cline/Roo user part that only carries a tool's result (or its header: Cline sends the
    output as the parts after it)."""
    if text.startswith("["):
        return _CLINE_RESULT.match(text) is not None
    return text.startswith(_FUNCTION_RESULTS)


def user_words(text: str) -> str | None:
    """What the user typed inside Cline's and Roo's ``<feedback>`` and ``<user_message>`` tags,
    or None when the text has none."""
    if "<feedback>" not in text and "<user_message>" not in text:
        return None
    found = [m.group(2).strip() for m in _USER_WORDS.finditer(text)]
    return "\n\n".join(w for w in found if w) or None


def find_ask(text: str) -> Ask:
    """The ask and the payload of one user turn's (windowed) text, wrappers removed. Code
    fences are payload; the rest of the search reads only the text outside them."""
    tagged = has_tags(text)
    words = user_words(text) if tagged else None
    if words is not None:
        text, tagged = words, has_tags(words)
    elif text.startswith(_RESUMPTION):
        return NO_ASK
    text = strip_wrappers(text, tagged)
    if not text or is_wrapper(text):
        return NO_ASK
    if is_tool_result(text):
        return Ask("", text, "tool_result")
    if is_fim(text):
        return Ask("", text, "fim")
    fenced = ""
    if "```" in text:
        pieces = text.split("```")
        fenced = "```" + "``````".join(pieces[1::2]) + "```"
        text = "\n".join(pieces[0::2])
    kind = ""
    found = _edit_ask(text) or _crew_ask(text) or _rag_ask(text)
    if found is not None:
        text, fenced, kind = found.ask, found.payload + "\n" + fenced, found.kind
    ask, payload = split_payload(text)
    if fenced:
        payload = fenced + "\n" + payload if payload else fenced
    return Ask(ask, payload, kind)
