"""Generate the labelled training corpus ``train.jsonl`` by composing templates.

    python -m classifier.data.generate [--n-per-intent 2000] [--seed 7] [--out PATH]

Every example is one OpenAI request body plus its intent and a ``source``. A source is a
*traffic family*: it fixes the conversation style (system prompt, conversation shape, tools,
content parts, typos) and owns a disjoint share of the phrasing templates of every intent
(template ``i`` of an intent belongs to source ``i % len(SOURCES)``). Leave-one-source-out
evaluation therefore tests unseen phrasings inside an unseen conversation style, not just
re-shuffled slot fillers. A quarter of the drawn templates are non-English
(``templates_multi.MULTI``), under the same round-robin. A conversation continues in the language
of its templated user turn (``followups``).

The parts, by what they hold:

- ``rand``: the one random source (``Rand``), passed to everything; no module-level state, so
  the same seed writes the same file;
- ``pools``: slot pools (code, tracebacks, names, pasted paragraphs) and tool sets;
- ``sources``: the six traffic families and their canned turns;
- ``wrappers``: real agents' request formats (Claude Code, Codex, Cline/Roo, aider, OpenHands,
  Continue, fill-in-the-middle, retrieval prompts) that a generated task is wrapped in;
- ``templates_en``, ``templates_multi``, ``templates_ask``: the phrasings per intent (English,
  other languages, and asks around pasted material or with explicit redirections);
- ``templates_agent``: asks made inside a coding agent in a repository's vocabulary (maths,
  reasoning and writing that mention files and tool verbs; coding and tool asks about maths or
  prose), drawn for a share of the English requests wrapped in a coding agent;
- ``followups``: terse follow-ups and assistant replies.

Every request is written as the classifier sees it when the proxy decides: a turn inside a tool
loop (tools offered, the last message a tool call or its result) is decided by the conversation
up to its last user turn (``router.policy``), so such requests are cut there
(``decision_view``).

The hand-written sets (``handwritten/``, trained on beside this corpus, and ``sealed/``, never
trained on) are never produced here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

from classifier.data.followups import FOLLOWUPS, NATIVE_FOLLOWUP_RATE, NATIVE_FOLLOWUPS, fill_followup
from classifier.data.pools import CODING_TOOLS, COMPANIES, TOOLSETS, VOICES
from classifier.data.rand import Rand
from classifier.data.sources import (
    PREFIXES,
    SOURCES,
    SYSTEM_PROMPTS,
    as_parts,
    assistant_reply,
    tool_result_turns,
    typo,
)
from classifier.data.templates_agent import AGENT_TEMPLATES
from classifier.data.templates_ask import ASK_TEMPLATES, MULTI_REDIRECTS, REDIRECT_PREFIXES
from classifier.data.templates_en import TEMPLATES_BY_INTENT
from classifier.data.templates_multi import MULTI, TEMPLATE_LANG
from classifier.data.wrappers import fim, wrap
from classifier.model import INTENTS

# Half the requests are wrapped in a real agent's format (wrappers.py), whatever their intent.
WRAP_RATE = 0.5
WRAPPER_WEIGHTS = {
    "claude_code": 3.0,
    "codex": 3.0,
    "cline": 2.0,
    "aider": 2.0,
    "openhands": 1.0,
    "continue": 1.5,
    "ide_edit": 1.0,
    "rag": 1.0,
}
EDIT_INTENTS = ("coding", "instruction", "writing")  # what an IDE edit prompt plausibly asks
FIM_RATE = 0.08  # of wrapped coding requests: autocomplete bodies
REDIRECT_RATE = 0.3  # of asks inside an agent's wrapper: "not a code question: ..."
MULTI_RATE = 0.35  # of templated turns in another language than English (0.25 before f13)
# Of English asks wrapped in a coding agent: asked in the repository's vocabulary
# (templates_agent), so that file paths, tool verbs and the tool list stop deciding (round 2).
AGENT_RATE = 0.4
CODING_AGENTS = ("claude_code", "codex", "cline", "aider", "openhands", "continue")


def sample_text(r: Rand, intent: str, source_idx: int) -> tuple[str, str | None, str]:
    """Last user text, toolset (tools only) and language, from a template owned by this source."""
    # Template i belongs to source i % len(SOURCES): this source's are every len(SOURCES)-th.
    pool = (TEMPLATES_BY_INTENT[intent] + ASK_TEMPLATES[intent])[source_idx :: len(SOURCES)]
    mpool = MULTI[intent][source_idx :: len(SOURCES)]
    # MULTI_RATE non-English: 8 languages share it (de, fr, es, zh, ja, ru, pt-BR, ko).
    tpl = r.choice(mpool) if mpool and r.random() < MULTI_RATE else r.choice(pool)
    out = tpl(r)
    lang = TEMPLATE_LANG.get(tpl, "en")
    if isinstance(out, tuple):
        return out[0], out[1], lang
    return out, None, lang


def followup_text(r: Rand, intent: str, source_idx: int, lang: str = "en") -> str | None:
    """A terse follow-up owned by this source, mostly in ``lang`` (the templated turn's language)."""
    native = lang in NATIVE_FOLLOWUPS and r.random() < NATIVE_FOLLOWUP_RATE
    followups = NATIVE_FOLLOWUPS[lang] if native else FOLLOWUPS
    owned = followups[intent][source_idx :: len(SOURCES)]
    return fill_followup(r, r.choice(owned), lang if native else "en") if owned else None


def agent_text(r: Rand, intent: str, source_idx: int) -> str | None:
    """An ask made inside a coding agent, from a template owned by this source (None if the
    source owns none for this intent)."""
    owned = AGENT_TEMPLATES[intent][source_idx :: len(SOURCES)]
    return r.choice(owned)(r) if owned else None


def decision_view(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the proxy's policy classifies it: a tool-loop turn (tools offered, the
    last message a tool result or a tool call) takes the decision of the conversation up to its
    last user turn (``router.decide.steps.ToolLoop``, reimplemented here so the generator does not
    import the proxy; tests/test_classifier.py checks they agree)."""
    messages = body.get("messages")
    if not body.get("tools") or not isinstance(messages, list) or not messages:
        return body
    last = messages[-1]
    if not (last.get("role") == "tool" or (last.get("role") == "assistant" and last.get("tool_calls"))):
        return body
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return {**body, "messages": messages[: i + 1]}
    return body


def _tools_for(r: Rand, source: str, toolset: str | None) -> list[dict[str, Any]] | None:
    """The tools a source's client attaches: the task's toolset, a coding agent's file tools, or
    (often) an unrelated list that every request carries. (The long lists are the agents': every
    wrapped request carries its agent's real tool list, whatever the intent.)"""
    if toolset:
        return TOOLSETS[toolset] + (r.sample(list(TOOLSETS.values()), 1)[0] if r.random() < 0.4 else [])
    if source == "ide_agent" or (source == "agent_framework" and r.random() < 0.7):
        return (
            CODING_TOOLS
            if source == "ide_agent"
            else r.sample(list(TOOLSETS.values()), 1)[0] + TOOLSETS["search"]
        )
    if source == "biz_assistant" and r.random() < 0.4:
        return TOOLSETS[r.p(["orders", "email", "calendar", "crm"])]
    if r.random() < 0.25:
        # Many clients attach their whole tool list to every request: tools present while the
        # user asks for something else must not mean "tools".
        return [t for ts in r.sample(list(TOOLSETS.values()), r.n(1, 3)) for t in ts]
    return None


def _wrapped(
    r: Rand,
    intent: str,
    source_idx: int,
    text: str,
    lang: str,
    toolset: str | None,
    history: list[tuple[str, str]],
    followup: str | None,
) -> dict[str, Any]:
    """The task inside an agent's wrapper: with an earlier turn, as a follow-up, mid tool loop,
    or after an explicit redirection."""
    if intent == "coding" and r.random() < FIM_RATE:
        return fim(r)
    names = [n for n in WRAPPER_WEIGHTS if n != "ide_edit" or intent in EDIT_INTENTS]
    name = r.choices(names, weights=[WRAPPER_WEIGHTS[n] for n in names])[0]
    if name in CODING_AGENTS and lang == "en" and r.random() < AGENT_RATE:
        text = agent_text(r, intent, source_idx) or text
    if followup is not None and name not in ("ide_edit", "rag"):
        history = [*history, (text, assistant_reply(r, intent, lang))]
        text = followup
    elif name not in ("ide_edit", "rag") and r.random() < REDIRECT_RATE:
        prefixes = MULTI_REDIRECTS.get(lang) if intent not in ("coding", "tools") else None
        text = r.p(prefixes or REDIRECT_PREFIXES[intent]) + text
    loop = r.random() < 0.2
    return wrap(r, name, text, history, loop, TOOLSETS[toolset] if toolset else None)


def make_request(r: Rand, intent: str, source_idx: int) -> dict[str, Any]:
    """One request of ``intent`` in the style of source ``source_idx``, or, for ``WRAP_RATE``
    of them, wrapped in a real agent's format."""
    source = SOURCES[source_idx]
    text, toolset, lang = sample_text(r, intent, source_idx)
    if r.random() < WRAP_RATE:
        history: list[tuple[str, str]] = []
        if r.random() < 0.3:
            prev_text, _, prev_lang = sample_text(r, r.p(list(FOLLOWUPS)), source_idx)
            history.append((prev_text[:600], assistant_reply(r, None, prev_lang)))
        followup = followup_text(r, intent, source_idx, lang) if r.random() < 0.15 else None
        return decision_view(_wrapped(r, intent, source_idx, text, lang, toolset, history, followup))
    system = r.p(SYSTEM_PROMPTS[source]).format(company=r.p(COMPANIES), voice=r.p(VOICES))
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    tools = _tools_for(r, source, toolset)
    # Earlier turns: unrelated history (coding agents get asked math mid-session).
    if source in ("ide_agent", "chat_ui", "agent_framework", "biz_assistant") and r.random() < 0.5:
        other = r.p(list(FOLLOWUPS))
        prev_text, _, prev_lang = sample_text(r, other, source_idx)
        messages += [
            {"role": "user", "content": prev_text[:600]},
            {"role": "assistant", "content": assistant_reply(r, None, prev_lang)},
        ]
    style = r.random()
    fu = followup_text(r, intent, source_idx, lang)
    if toolset and style < 0.3:
        # Mid tool loop: the user asked, the model called a tool, the result is the last message.
        messages.append({"role": "user", "content": text})
        messages += tool_result_turns(r, toolset)
    elif fu and style < 0.42:
        # Terse follow-up: the intent is carried by the earlier turn, the last turn is short.
        reply = assistant_reply(r, intent, lang)
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": fu},
        ]
    else:
        if source in ("chat_ui", "api_oneshot") and r.random() < 0.5:
            text = typo(r, text, 0.08)
        if r.random() < 0.15:
            text = r.p(PREFIXES) + text
        content: Any = as_parts(r, text) if source == "ci_pipeline" and r.random() < 0.6 else text
        messages.append({"role": "user", "content": content})
    body: dict[str, Any] = {
        "model": r.p(["gpt-5.1", "local", "auto", "laguna", "offload"]),
        "messages": messages,
    }
    if tools:
        body["tools"] = tools
    if source == "api_oneshot" and r.random() < 0.25 and not tools:
        body = {"model": "auto", "prompt": text, "max_tokens": r.choice([256, 1024, 4096])}
    if r.random() < 0.3:
        body["temperature"] = r.choice([0, 0.2, 0.7, 1.0])
    if r.random() < 0.2:
        body["stream"] = True
    return decision_view(body)


def generate(n_per_intent: int, seed: int) -> list[dict[str, Any]]:
    """``n_per_intent`` requests of each intent, shuffled; a function of ``seed`` alone."""
    r = Rand(seed)
    rows = []
    for intent in INTENTS:
        for i in range(n_per_intent):
            src = i % len(SOURCES)
            rows.append(
                {
                    "id": f"gen-{intent}-{i}",
                    "source": SOURCES[src],
                    "intent": intent,
                    "request": make_request(r, intent, src),
                }
            )
    r.shuffle(rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-per-intent", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).parent / "train.jsonl"))
    args = ap.parse_args(argv)
    rows = generate(args.n_per_intent, args.seed)
    with open(args.out, "wb") as fh:
        for row in rows:
            fh.write(orjson.dumps(row) + b"\n")
    print(f"wrote {len(rows)} examples to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
