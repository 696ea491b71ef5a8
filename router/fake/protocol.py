"""What the simulated upstream knows of each API: the fields each side accepts, its error types,
and the :class:`Behaviour` tests steer it with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MODES = ("vllm", "cloud", "anthropic")

# The field lists below are written apart from router/dialects on purpose: the fake stands for
# the real APIs, so a field the proxy forgets to strip fails here as it would upstream, instead
# of agreeing with the proxy's own list.
# What OpenAI's chat endpoint accepts (a subset is enough for strictness).
OPENAI_CHAT_FIELDS = frozenset(
    {
        "messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
        "max_completion_tokens", "max_tokens", "n", "presence_penalty", "response_format", "seed",
        "stop", "stream", "stream_options", "temperature", "top_p", "tools", "tool_choice",
        "parallel_tool_calls", "user", "reasoning_effort", "metadata", "store", "modalities",
        "audio", "prediction", "service_tier", "web_search_options", "verbosity",
        "prompt_cache_key", "safety_identifier",
    }
)  # fmt: skip
OPENAI_MESSAGE_FIELDS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"}
)
OPENAI_COMPLETION_FIELDS = frozenset(
    {"model", "prompt", "max_tokens", "stream", "stream_options", "temperature", "top_p", "n", "stop",
     "echo", "logprobs", "user", "seed", "suffix", "best_of", "presence_penalty", "frequency_penalty",
     "logit_bias"}
)  # fmt: skip
# Responses fields only vLLM knows: OpenAI answers each with "Unknown parameter".
RESPONSES_VLLM_ONLY_FIELDS = frozenset(
    {
        "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "logit_bias",
        "seed", "stop", "stop_token_ids", "ignore_eos", "include_stop_str_in_output",
        "skip_special_tokens", "spaces_between_special_tokens", "include_reasoning", "request_id",
        "session_id", "priority", "cache_salt", "chat_template_kwargs", "structured_outputs",
        "vllm_xargs", "kv_transfer_params", "ec_transfer_params", "mm_processor_kwargs",
        "media_io_kwargs", "mm_payload", "return_mm_kwargs", "enable_response_messages",
        "previous_input_messages", "watermarking",
    }
)  # fmt: skip
# The Responses input items vLLM turns into chat messages; any other type is a 400 there.
VLLM_RESPONSES_INPUT_ITEMS = frozenset(
    {"message", "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output",
     "reasoning"}
)  # fmt: skip
TOOL_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
# Top-level fields Anthropic's Messages API takes (beta ones included); others are "Extra inputs".
ANTHROPIC_MESSAGES_FIELDS = frozenset(
    {
        "model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream",
        "temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "service_tier",
        "container", "mcp_servers", "context_management", "output_config", "cache_control",
        "inference_geo", "speed", "diagnostics",
    }
)  # fmt: skip
ANTHROPIC_COUNT_FIELDS = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "thinking", "output_config", "cache_control",
     "speed", "context_management", "mcp_servers"}
)  # fmt: skip
# Content blocks vLLM's Messages endpoint refuses (validation error, OpenAI-shaped).
VLLM_REFUSED_BLOCKS = frozenset(
    {"document", "search_result", "server_tool_use", "web_search_tool_result", "container_upload"}
)
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "overloaded_error",  # vLLM's translation; Anthropic itself says 529
    504: "timeout_error",
    529: "overloaded_error",
}
VLLM_ERROR_TYPES = {400: "BadRequestError", 404: "NotFoundError", 503: "ServiceUnavailableError"}
REASONING = ("Let", " me", " think")  # the thinking a vLLM reasoning parser would return
LEGACY_CHAT_ARGUMENTS = '{"cmd": "ls -la"}'
FINGERPRINT = "vllm-0.33.0-fake"


@dataclass
class Behaviour:
    """What the fake does next; every field can be set through ``POST /_fake/config``."""

    reply_tokens: list[str] = field(
        default_factory=lambda: ["Hello", " there", ",", " I", " am", " a", " fake", " model", "."]
    )
    # The call to make when the turn calls a tool: {"name": ..., "arguments": <JSON text>}.
    # None: the first offered tool, with arguments made from its JSON schema.
    tool_call: dict[str, str] | None = None
    # Chat's rule from before the other APIs: every request offering tools gets a call of
    # the first tool with arguments {"cmd": "ls -la"}, even after a tool result. False: the
    # rule of the other APIs.
    chat_always_calls: bool = True
    header_delay: float = 0.0  # seconds between reading the request and sending status and headers
    first_byte_delay: float = 0.0  # seconds before the first SSE event / the whole response
    chunk_delay: float = 0.0  # seconds between SSE events
    fail_status: int = 0  # answer this status instead, in the API's and mode's error shape
    fail_count: int = -1  # how many requests fail (-1: all while fail_status is set)
    fail_headers: dict[str, str] = field(default_factory=dict)  # added to those failures
    echo_auth_in_error: bool = False  # error messages quote the Authorization / x-api-key received
    die_after_chunks: int = -1  # drop the connection after N stream events, no terminal event
    stream_error_after_chunks: int = -1  # after N stream events, the API's own in-stream error
    body_bytes: int = 0  # pad a whole (non-streamed) success body to about this many bytes
    waiting: float = 0.0  # vllm:num_requests_waiting in /metrics
    metrics_without: list[str] = field(default_factory=list)  # families /metrics leaves out (renamed)
    health_status: int = 200
    # Scripted answers, for graded runs: the first entry whose "prompt" occurs in the last
    # user message answers it, with {"text": ...} or {"tool_call": {"name", "arguments"}}.
    scripts: list[dict[str, Any]] = field(default_factory=list)
