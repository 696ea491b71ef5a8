"""Anthropic Messages, as vLLM or Anthropic sends it."""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from router.fake.replies import Reply, cache_split, fragments, prompt_tokens, within_limit
from router.fake.wire import Answer, Frame, Upstream


class MessagesAnswer(Answer):
    """An Anthropic Message, or its event stream, as Anthropic or vLLM sends it."""

    def __init__(self, fake: Upstream, body: dict[str, Any], reply: Reply) -> None:
        self.fake, self.body = fake, body
        self.anthropic = fake.mode == "anthropic"
        limited = within_limit("messages", body, reply)
        self.reply, self.output, self.truncated = limited.reply, limited.output_tokens, limited.truncated
        self.id = f"msg_01{uuid.uuid4().hex[:22]}" if self.anthropic else fake.new_id("chatcmpl-")
        self.blocks = self._blocks()
        self.frames = self._frames() if body.get("stream") else None

    def _blocks(self) -> list[dict[str, Any]]:
        reply, blocks = self.reply, []
        if reply.reasoning:
            thinking = "".join(reply.reasoning)
            signature = self.fake.sign(thinking) if self.anthropic else uuid.uuid4().hex
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
        if reply.text or not (reply.call or (reply.reasoning and not self.anthropic)):
            blocks.append({"type": "text", "text": "".join(reply.text)})
        if call := reply.call:
            tool_id = f"toolu_01{uuid.uuid4().hex[:22]}" if self.anthropic else self.fake.call_id()
            blocks.append(
                {"type": "tool_use", "id": tool_id, "name": call.name, "input": orjson.loads(call.arguments)}
            )
        return blocks

    def _stop_reason(self) -> str:
        if self.truncated:
            return "max_tokens"
        return "tool_use" if self.reply.call else "end_turn"

    def _input_usage(self, start: bool = False) -> dict[str, Any]:
        """Anthropic counts cache outside ``input_tokens``; vLLM (with the recipe's
        --enable-prompt-tokens-details) too, but its message_start has the full prompt only."""
        total = prompt_tokens("messages", self.body)
        if not self.anthropic:
            cache = {} if start else {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            return {"input_tokens": total, **cache}
        read, written = cache_split("messages", self.fake.mode, self.body)
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def usage(self) -> dict[str, Any]:
        usage = {**self._input_usage(), "output_tokens": self.output}
        if self.anthropic:
            ttl = {
                "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                "ephemeral_1h_input_tokens": 0,
            }
            usage.update({"cache_creation": ttl, "service_tier": "standard"})
        return usage

    def _message(
        self,
        content: list[dict[str, Any]],
        stop_reason: str | None,
        usage: dict[str, Any],
        whole: bool = True,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.fake.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if not self.anthropic and whole:  # vLLM serializes the whole message with exclude_none
            message = {k: v for k, v in message.items() if v is not None}
        return message

    def whole(self) -> dict[str, Any]:
        return self._message(self.blocks, self._stop_reason(), self.usage())

    def _frames(self) -> list[Frame]:
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            frames.append((kind, {"type": kind, **fields}))

        # message_start: the input counts and a small output count, which message_delta then replaces.
        start_usage = self.usage() if self.anthropic else {**self._input_usage(start=True)}
        start_usage["output_tokens"] = 1 if self.anthropic else 0
        emit("message_start", message=self._message([], None, start_usage, whole=False))
        if self.anthropic:
            emit("ping")
        for index, block in enumerate(self.blocks):
            if block["type"] == "thinking":
                emit(
                    "content_block_start",
                    index=index,
                    content_block={
                        "type": "thinking",
                        "thinking": "",
                        **({"signature": ""} if self.anthropic else {}),
                    },
                )
                for piece in self.reply.reasoning:
                    emit(
                        "content_block_delta",
                        index=index,
                        delta={"type": "thinking_delta", "thinking": piece},
                    )
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": block["signature"]},
                )
            elif block["type"] == "text":
                emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
                for piece in self.reply.text:
                    emit("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
            else:
                emit("content_block_start", index=index, content_block={**block, "input": {}})
                assert self.reply.call is not None
                for piece in fragments(self.reply.call.arguments):
                    emit(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": piece},
                    )
            emit("content_block_stop", index=index)
        final = {**self._input_usage(), "output_tokens": self.output}
        emit("message_delta", delta={"stop_reason": self._stop_reason(), "stop_sequence": None}, usage=final)
        emit("message_stop")
        return frames

    def stream_error(self, sent: int) -> list[Frame]:
        """Close the open block, then ``event: error``; never ``message_stop``."""
        assert self.frames is not None
        open_index = None
        for kind, data in self.frames[:sent]:
            if kind == "content_block_start":
                open_index = data["index"]
            elif kind == "content_block_stop":
                open_index = None
        frames: list[Frame] = []
        if open_index is not None:
            frames.append(("content_block_stop", {"type": "content_block_stop", "index": open_index}))
        if self.anthropic:
            error = {"type": "overloaded_error", "message": "Overloaded"}
        else:
            error = {"type": "api_error", "message": "Internal server error"}
        frames.append(("error", {"type": "error", "error": error}))
        return frames
