"""Embeddings, count_tokens, and Chat Completions (and completions) as vLLM or OpenAI sends them."""

from __future__ import annotations

import time
import uuid
from typing import Any

from router.fake.protocol import FINGERPRINT
from router.fake.replies import Reply, fragments, prompt_tokens
from router.fake.wire import Answer, Frame, Upstream, member, without_none


class EmbeddingsAnswer(Answer):
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def whole(self) -> dict[str, Any]:
        raw = self.body.get("input")
        inputs = raw if isinstance(raw, list) else [raw]
        data = [{"index": i, "object": "embedding", "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        tokens = sum(len(str(x)) // 4 + 1 for x in inputs)
        return {
            "id": f"embd-{uuid.uuid4().hex}",
            "object": "list",
            "created": int(time.time()),
            "model": self.body.get("model"),
            "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class CountTokensAnswer(Answer):
    def __init__(self, fake: Upstream, body: dict[str, Any]) -> None:
        self.mode = fake.mode
        self.body = body

    def whole(self) -> dict[str, Any]:
        tokens = prompt_tokens("count_tokens", self.body)
        if self.mode == "vllm":
            return {"input_tokens": tokens, "context_management": {"original_input_tokens": tokens}}
        return {"input_tokens": tokens}


class ChatAnswer(Answer):
    """Chat Completions and completions, as vLLM or OpenAI sends them."""

    def __init__(self, fake: Upstream, body: dict[str, Any], reply: Reply, api: str) -> None:
        self.fake, self.body, self.reply, self.api = fake, body, reply, api
        self.vllm = fake.mode == "vllm"
        self.call_id = fake.call_id() if reply.call else ""
        completions = api == "completions"
        self.base = {
            "id": fake.new_id("cmpl-" if completions else "chatcmpl-"),
            "object": "text_completion" if completions else "chat.completion.chunk",
            "created": int(time.time()),
            "model": fake.model,
        }
        if body.get("stream"):
            self.frames, self.tail = self._frames(), self._tail()

    def _usage(self) -> dict[str, Any]:
        # The completion count predates the tool rule: the reply tokens, even when a call replaced them.
        reasoning = len(self.reply.reasoning)
        completion = len(self.fake.behaviour.reply_tokens) + reasoning
        prompt = prompt_tokens(self.api, self.body)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        }
        if self.vllm:  # as with --enable-prompt-tokens-details and a reasoning parser (the recipes)
            usage["prompt_tokens_details"] = {
                "cached_tokens": 0,
                "created_cache_tokens": 0,
                "multimodal_tokens": None,
            }
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        else:
            usage["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0}
        return usage

    def whole(self) -> dict[str, Any]:
        created = int(time.time())
        text = "".join(self.reply.text) if self.reply.text else "".join(self.fake.behaviour.reply_tokens)
        if self.api == "completions":
            return {
                "id": self.fake.new_id("cmpl-"),
                "object": "text_completion",
                "created": created,
                "model": self.fake.model,
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}],
                "usage": self._usage(),
            }
        call = self.reply.call
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if self.vllm and not text and self.reply.reasoning:
            message["content"] = None  # a reply that is all reasoning has no content
        finish = "stop"
        if call:
            message["content"] = None
            function = {"name": call.name, "arguments": call.arguments}
            message["tool_calls"] = [{"id": self.call_id, "type": "function", "function": function}]
            finish = "tool_calls"
        if self.vllm:
            message.update({"annotations": None, "audio": None, "function_call": None})
            message["reasoning"] = "".join(self.reply.reasoning) or None
        out: dict[str, Any] = {
            "id": self.fake.new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": created,
            "model": self.fake.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self._usage(),
        }
        if self.vllm:
            out["choices"][0].update({"stop_reason": None, "token_ids": None, "routed_experts": None})
            out.update({"service_tier": None, "system_fingerprint": FINGERPRINT, "prompt_logprobs": None})
            out.update(dict.fromkeys(("prompt_token_ids", "prompt_text", "kv_transfer_params"), None))
            out.update(dict.fromkeys(("ec_transfer_params", "metrics"), None))
        return out

    def _include_usage(self) -> bool:
        return bool(member(self.body.get("stream_options"), "include_usage"))

    def _frames(self) -> list[Frame]:
        null_usage = {"usage": None} if (not self.vllm and self._include_usage()) else {}
        frames: list[Frame] = []
        for choice in self._choices():
            if self.vllm and self.api == "chat":  # vLLM's chunks carry its own null fields
                choice = {"logprobs": None, "finish_reason": None, **choice}
                if "role" not in choice["delta"]:
                    choice["token_ids"] = None
            chunk = {**self.base, "choices": [choice], **null_usage}
            if self.vllm and self.api == "chat" and not frames:
                chunk.update(prompt_token_ids=None, prompt_text=None)
            if self.vllm and choice.get("finish_reason") and not self._include_usage():
                chunk["system_fingerprint"] = FINGERPRINT  # else it rides on the usage chunk
            frames.append((None, chunk))
        return frames

    def _choices(self) -> list[dict[str, Any]]:
        tokens = list(self.reply.text) or self.fake.behaviour.reply_tokens
        if self.api == "completions":
            out: list[dict[str, Any]] = [
                {"index": 0, "text": t, "logprobs": None, "finish_reason": None} for t in tokens
            ]
            out[-1]["finish_reason"] = "stop"
            return out
        role_delta: dict[str, Any] = {"role": "assistant", "content": ""}
        if not self.vllm:
            role_delta["refusal"] = None
        out = [{"index": 0, "delta": role_delta, "logprobs": None, "finish_reason": None}]  # same list type
        out += [{"index": 0, "delta": {"reasoning": t}} for t in self.reply.reasoning]
        finish = "stop"
        if call := self.reply.call:
            first = {
                "id": self.call_id,
                "type": "function",
                "index": 0,
                "function": {"name": call.name, "arguments": ""},
            }
            out.append({"index": 0, "delta": {"tool_calls": [first]}})
            for piece in fragments(call.arguments):
                out.append(
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}
                )
            finish = "tool_calls"
        else:
            out += [{"index": 0, "delta": {"content": t}} for t in tokens]
        # vLLM ends a reply that is still reasoning with an empty reasoning delta.
        last: dict[str, Any] = {"reasoning": ""} if self.vllm and self.reply.reasoning and not tokens else {}
        out.append({"index": 0, "delta": last, "finish_reason": finish, "stop_reason": None})
        return out

    def _tail(self) -> tuple[Frame, ...]:
        if not self._include_usage():
            return ((None, b"[DONE]"),)
        usage_chunk: dict[str, Any] = {**self.base, "choices": [], "usage": self._usage()}
        if self.vllm:
            usage_chunk["usage"] = without_none(usage_chunk["usage"])
            usage_chunk["system_fingerprint"] = FINGERPRINT
        return ((None, usage_chunk), (None, b"[DONE]"))

    def stream_error(self, sent: int) -> list[Frame]:
        """vLLM's in-stream error: an ``error`` object, then ``[DONE]`` all the same."""
        if self.vllm:
            error = {
                "message": "Internal server error",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        else:
            message = "The server had an error while processing your request. Sorry about that!"
            error = {"message": message, "type": "server_error", "param": None, "code": None}
        return [(None, {"error": error}), (None, b"[DONE]")]
