"""The HTTP edge's small parts: one Content-Length reading, one token estimate, one refusal."""

from __future__ import annotations

import orjson
import pytest

from router.config import parse_config
from router.decide.policy import Policy
from router.edge.dispatch import refusal
from router.edge.intake import declared_length
from router.edge.limits import estimate_tokens
from router.edge.metrics import Metrics
from router.errors import ProxyError
from router.forward.backends import Pool
from router.tokens import TOKENS_PER_BYTE, prompt_tokens
from tests.harness import MemoryRecorder, make_config


@pytest.mark.parametrize(
    ("value", "length"),
    [("123", 123), ("0", 0), (None, None), ("", None), ("-1", None), ("²", None), ("1e3", None)],
)
def test_content_length_is_read_one_way(value: str | None, length: int | None) -> None:
    headers = {} if value is None else {"content-length": value}
    assert declared_length(headers) == length


def test_one_token_estimate_for_limits_context_and_unreported_prompts() -> None:
    assert prompt_tokens(4000) == int(4000 * TOKENS_PER_BYTE) == estimate_tokens(4000, default_output=0)
    assert prompt_tokens(-5) == 0
    raw = {
        "database": {"enabled": False},
        "backends": {
            "local": {
                "kind": "vllm",
                "base_url": "http://127.0.0.1:1/v1",
                "model": "m",
                "context_window": 1000,
            },
            "cloud": {"kind": "openai", "base_url": "http://127.0.0.1:2/v1", "model": "c", "api_key": "k"},
        },
    }
    policy = Policy(parse_config(raw, env={}))
    body = {"messages": [{"role": "user", "content": "fix this function"}]}
    fits, over = 1000 / TOKENS_PER_BYTE, 1000 / TOKENS_PER_BYTE + 4  # bytes: at the window, one token past
    assert policy.decide(body, {}, int(fits)).reason != "context_overflow"
    assert policy.decide(body, {}, int(over)).reason == "context_overflow"


def test_a_refusal_is_counted_and_answered_in_the_path_api_shape() -> None:
    config = make_config("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    metrics = Metrics(Pool(config), MemoryRecorder())  # type: ignore[arg-type]
    error = ProxyError(401, "no key", code="invalid_api_key")
    chat = refusal(error, "/v1/chat/completions", metrics)
    messages = refusal(error, "/v1/messages", metrics)
    assert chat.status_code == messages.status_code == 401
    assert orjson.loads(chat.body)["error"]["code"] == "invalid_api_key"
    assert orjson.loads(messages.body)["type"] == "error"
    rendered = metrics.render().decode()
    assert 'offload_rejected_requests_total{reason="unauthorized"} 2.0' in rendered
