"""What the fake replies, and the token counts tests can recompute: plan_reply, prompt_tokens,
cache_split, within_limit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from router.fake.protocol import LEGACY_CHAT_ARGUMENTS, REASONING, TOOL_RESULT_ITEMS, Behaviour
from router.fake.wire import member

# ------------------------------------------------------------- the reply


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # JSON text, as Chat Completions and Responses carry it


@dataclass(frozen=True)
class Reply:
    """What the "model" says, before any API shapes it: thinking, then text or one call."""

    reasoning: tuple[str, ...]
    text: tuple[str, ...]
    call: ToolCall | None

    @property
    def output_tokens(self) -> int:
        """One token per reasoning or text piece and per streamed argument fragment."""
        call = len(fragments(self.call.arguments)) if self.call else 0
        return len(self.reasoning) + len(self.text) + call


@dataclass(frozen=True)
class Limited:
    reply: Reply  # what is left of the reply
    output_tokens: int  # what usage reports: a cut reply used the whole limit
    truncated: bool


def within_limit(api: str, body: dict[str, Any], reply: Reply) -> Limited:
    """The reply left by the request's length limit, and the output tokens usage reports.

    The limit is ``max_output_tokens`` (Responses) or ``max_tokens``
    (Messages). A call that does not fit is lost whole: a tool parser
    extracts nothing from half a call.
    """
    limit = body.get("max_output_tokens" if api == "responses" else "max_tokens")
    if not isinstance(limit, int) or limit >= reply.output_tokens:
        return Limited(reply, reply.output_tokens, False)
    reasoning = reply.reasoning[:limit]
    room = limit - len(reasoning)
    call = reply.call if reply.call and len(fragments(reply.call.arguments)) <= room else None
    return Limited(Reply(reasoning, reply.text[:room], call), limit, True)


def fragments(arguments: str, size: int = 8) -> list[str]:
    """How a call's arguments are streamed: pieces of a few characters, never empty."""
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def example_arguments(schema: Any, depth: int = 0) -> Any:
    """A value satisfying a tool's JSON schema that an agent can really run.

    Strings become ``echo hello`` and string arrays ``["bash", "-lc", "echo
    hello"]``, so a shell tool (Claude Code's ``command: str``, Codex's
    ``command: list[str]``) executes something harmless. Objects get their
    required properties only: optional ones such as timeouts are best left to
    the agent's defaults.
    """
    if not isinstance(schema, dict) or depth > 8:
        return {}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_arguments(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        return "echo hello"
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items.get("type") == "string":
            return ["bash", "-lc", "echo hello"]
        return [example_arguments(items, depth + 1)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    return {name: example_arguments(props.get(name), depth + 1) for name in required if isinstance(name, str)}


def offered_tools(api: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, JSON schema) of each tool the model could call, after ``tool_choice``.

    Built-in and server tools (no schema) are left out: vLLM drops them and
    the fake has nothing to run them with.
    """
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    out: list[tuple[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if api == "chat":
            fn = tool.get("function")
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out.append((fn["name"], fn.get("parameters")))
        elif api == "responses":
            if tool.get("type") == "function" and isinstance(tool.get("name"), str):
                out.append((tool["name"], tool.get("parameters")))
        elif isinstance(tool.get("name"), str) and "input_schema" in tool:
            out.append((tool["name"], tool["input_schema"]))
    choice = body.get("tool_choice")
    if choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none"):
        return []
    if isinstance(choice, dict):
        named = choice.get("name") or (choice.get("function") or {}).get("name")
        if named:
            return [t for t in out if t[0] == named]
    return out


def ends_with_tool_result(api: str, body: dict[str, Any]) -> bool:
    """Whether the conversation's last item hands a tool's result back to the model."""
    if api == "chat":
        items = body.get("messages")
        return isinstance(items, list) and bool(items) and member(items[-1], "role") == "tool"
    if api == "responses":
        items = body.get("input")
        return isinstance(items, list) and bool(items) and member(items[-1], "type") in TOOL_RESULT_ITEMS
    items = body.get("messages")
    if not isinstance(items, list) or not items or member(items[-1], "role") != "user":
        return False
    content = items[-1].get("content")
    return isinstance(content, list) and any(member(block, "type") == "tool_result" for block in content)


def wants_thinking(api: str, mode: str, body: dict[str, Any]) -> bool:
    """Whether the reply starts with reasoning: only vLLM returns it, and Anthropic on request.

    vLLM thinks when ``chat_template_kwargs.enable_thinking`` says so, else
    (Responses) when a reasoning effort other than ``none`` is asked, else
    (Messages) when ``thinking`` is enabled or adaptive.
    """
    thinking = body.get("thinking")
    asked = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if mode == "anthropic":
        return asked
    if mode != "vllm" or api == "completions":
        return False
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and "enable_thinking" in kwargs:
        return bool(kwargs["enable_thinking"])
    if api == "responses":
        effort = member(body.get("reasoning"), "effort")
        return effort is not None and effort != "none"
    return api == "messages" and asked


def plan_reply(api: str, mode: str, body: dict[str, Any], behaviour: Behaviour) -> Reply:
    """The one rule for what every API answers: a tool call or text, maybe after thinking."""
    reasoning = REASONING if wants_thinking(api, mode, body) else ()
    script = _script(api, body, behaviour)
    if script is not None:
        scripted = script.get("tool_call")
        call = ToolCall(str(scripted["name"]), str(scripted.get("arguments", "{}"))) if scripted else None
        return Reply(
            reasoning, () if call else tuple(_SCRIPT_PIECES.findall(str(script.get("text", "")))), call
        )
    call = None
    if api == "chat" and behaviour.chat_always_calls:
        tools = body.get("tools")
        if tools:
            first = tools[0] if isinstance(tools, list) and isinstance(tools[0], dict) else {}
            fn = first.get("function")
            name = fn.get("name", "tool") if isinstance(fn, dict) else "tool"
            call = _configured_call(behaviour) or ToolCall(name, LEGACY_CHAT_ARGUMENTS)
    elif api != "completions" and not ends_with_tool_result(api, body):
        tools = offered_tools(api, body)
        if tools:
            name, schema = tools[0]
            derived = orjson.dumps(example_arguments(schema)).decode()
            call = _configured_call(behaviour) or ToolCall(name, derived)
    text = () if call else tuple(behaviour.reply_tokens)
    return Reply(reasoning, text, call)


_SCRIPT_PIECES = re.compile(r"\s*\S+|\s+")  # a scripted text as tokens that join back to it exactly


def _script(api: str, body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any] | None:
    if not behaviour.scripts:
        return None
    asked = _last_user_text(body.get("input") if api == "responses" else body.get("messages"))
    return next((s for s in behaviour.scripts if str(s.get("prompt", "")) in asked), None)


def _last_user_text(items: Any) -> str:
    """The text of the last user turn (a Responses ``input`` string counts as one)."""
    if isinstance(items, str):
        return items
    for item in reversed(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            parts = content if isinstance(content, list) else []
            return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return ""


def _configured_call(behaviour: Behaviour) -> ToolCall | None:
    spec = behaviour.tool_call
    if not spec:
        return None
    return ToolCall(str(spec.get("name", "tool")), str(spec.get("arguments", "{}")))


# ------------------------------------------------------------- token counts


def prompt_tokens(api: str, body: dict[str, Any]) -> int:
    """The prompt's size in tokens: a quarter of the JSON bytes of what the model reads.

    Chat and completions count ``messages`` (or ``prompt``); Responses counts
    ``instructions``, ``input`` and ``tools``; Messages and ``count_tokens``
    count ``system``, ``messages`` and ``tools``, so that ``count_tokens`` of a
    conversation equals the total input of the Messages call that carries it.
    """
    if api in ("chat", "completions"):
        part: Any = body.get("messages") or body.get("prompt") or ""
    elif api == "responses":
        part = [body.get("instructions"), body.get("input"), body.get("tools")]
    else:
        part = [body.get("system"), body.get("messages"), body.get("tools")]
    return max(1, len(orjson.dumps(part)) // 4)


def cache_split(api: str, mode: str, body: dict[str, Any]) -> tuple[int, int]:
    """How many prompt tokens were read from and written to the prompt cache.

    Responses reads half the prompt from cache when the request has a
    ``prompt_cache_key``. Anthropic reads half and writes a quarter when a
    ``system`` block has ``cache_control``. vLLM's Messages endpoint reports
    no cache (it would only with ``--enable-prompt-tokens-details``).
    """
    total = prompt_tokens(api, body)
    if api == "responses" and body.get("prompt_cache_key"):
        return total // 2, 0
    system = body.get("system")
    blocks = system if mode == "anthropic" and isinstance(system, list) else []
    if any(isinstance(b, dict) and b.get("cache_control") for b in blocks):
        return total // 2, total // 4
    return 0, 0


def vllm_limits(
    api: str, body: dict[str, Any], served: str | None, max_model_len: int
) -> tuple[int, str, str] | None:
    """vLLM's model check (404, only when ``served`` is given) and context check (400), as
    ``(status, message, param)``; None when the request passes both."""
    model = body.get("model")
    if served is not None and model is not None and model != served:
        return 404, f"The model `{model}` does not exist. Valid aliases: {served}.", "model"
    if api == "count_tokens" or prompt_tokens(api, body) <= max_model_len:
        return None
    message = (
        f"This model's maximum context length is {max_model_len} tokens. However, your prompt "
        f"contains at least {max_model_len + 1} input tokens, which exceeds this limit even without "
        f"any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, "
        f"value={max_model_len + 1})"
    )
    return 400, message, "input_tokens"
