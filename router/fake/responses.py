"""OpenAI Responses, as vLLM or OpenAI sends it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from router.fake.replies import Reply, cache_split, fragments, prompt_tokens, within_limit
from router.fake.wire import Answer, Frame, Upstream


class ResponsesAnswer(Answer):
    """A Responses response object, or its event stream (vLLM's order)."""

    def __init__(self, fake: Upstream, body: dict[str, Any], reply: Reply) -> None:
        self.fake, self.body = fake, body
        limited = within_limit("responses", body, reply)
        self.reply, self.output, self.truncated = limited.reply, limited.output_tokens, limited.truncated
        self.id = fake.new_id("resp_")
        self.created = int(time.time())
        self.items = self._items()
        self.frames = self._frames() if body.get("stream") else None

    def _items(self) -> list[dict[str, Any]]:
        reply, items = self.reply, []
        status = "incomplete" if self.truncated else "completed"
        if reply.reasoning:
            text = "".join(reply.reasoning)
            items.append(
                {
                    "id": self.fake.new_id("rs_"),
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": text}],
                    "encrypted_content": None,
                    "status": "completed",
                }
            )
        if reply.text:
            part: dict[str, Any] = {
                "type": "output_text",
                "text": "".join(reply.text),
                "annotations": [],
                "logprobs": None if self.fake.mode == "vllm" else [],
            }
            items.append(
                {
                    "id": self.fake.new_id("msg_"),
                    "type": "message",
                    "role": "assistant",
                    "status": status,
                    "content": [part],
                    **({"phase": None} if self.fake.mode == "vllm" else {}),
                }
            )
        if call := reply.call:
            items.append(
                {
                    "id": self.fake.new_id("fc_"),
                    "type": "function_call",
                    "call_id": f"call_{uuid.uuid4().hex[:24]}",
                    "name": call.name,
                    "arguments": call.arguments,
                    "status": "completed",
                }
            )
        return items

    def usage(self) -> dict[str, Any]:
        prompt = prompt_tokens("responses", self.body)
        cached, written = cache_split("responses", self.fake.mode, self.body)
        usage: dict[str, Any] = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": len(self.reply.reasoning)},
            "total_tokens": prompt + self.output,
        }
        if self.fake.mode == "vllm":  # vLLM's per-turn counts (one turn: no built-in tools run)
            usage["input_tokens_details"].update(input_tokens_per_turn=[], cached_tokens_per_turn=[])
            usage["output_tokens_details"].update(
                tool_output_tokens=0, output_tokens_per_turn=[], tool_output_tokens_per_turn=[]
            )
        return usage

    def response(
        self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        body = self.body
        reasoning: dict[str, Any] = body["reasoning"] if isinstance(body.get("reasoning"), dict) else {}
        if self.fake.mode == "vllm":
            return self._vllm_response(status, output, usage)
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "max_tool_calls": None,
            "model": self.fake.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {"effort": reasoning.get("effort"), "summary": None},
            "service_tier": body.get("service_tier", "auto"),
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "metadata": body.get("metadata") or {},
        }

    def _vllm_response(
        self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        """vLLM 0.32's response object: its own field set, unset settings null."""
        body = self.body
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict):
            reasoning = {**dict.fromkeys(("context", "generate_summary", "mode", "summary")), **reasoning}
        return {
            "id": self.id,
            "created_at": self.created,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": body.get("instructions"),
            "metadata": body.get("metadata"),
            "model": self.fake.model,
            "object": "response",
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "temperature": body.get("temperature", 1.0),
            "tool_choice": body.get("tool_choice", "auto" if body.get("tools") else "none"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "background": False,
            "max_output_tokens": body.get("max_output_tokens", self.fake.max_model_len),
            "max_tool_calls": None,
            "previous_response_id": body.get("previous_response_id"),
            "prompt": None,
            "reasoning": reasoning if isinstance(reasoning, dict) else None,
            "service_tier": body.get("service_tier", "auto"),
            "status": status,
            "text": body.get("text"),
            "top_logprobs": None,
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            **dict.fromkeys(
                ("kv_transfer_params", "ec_transfer_params", "input_messages", "output_messages")
            ),
        }

    def _final_status(self) -> str:
        return "incomplete" if self.truncated else "completed"

    def whole(self) -> dict[str, Any]:
        items = self.items
        if self.fake.mode == "vllm":  # its whole response leaves a reasoning item's status unset
            items = [{**i, "status": None} if i["type"] == "reasoning" else i for i in items]
        return self.response(self._final_status(), items, self.usage())

    def _frames(self) -> list[Frame]:
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            frames.append((kind, {"type": kind, "sequence_number": len(frames), **fields}))

        started = self.response("in_progress", [], None)
        emit("response.created", response=started)
        emit("response.in_progress", response=started)
        pieces = {"reasoning": self.reply.reasoning, "message": self.reply.text}
        for index, item in enumerate(self.items):
            ref = {"item_id": item["id"], "output_index": index}
            if item["type"] == "function_call":
                emit(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                for piece in fragments(item["arguments"]):
                    emit("response.function_call_arguments.delta", **ref, delta=piece)
                emit(
                    "response.function_call_arguments.done",
                    **ref,
                    arguments=item["arguments"],
                    name=item["name"],
                )
                emit("response.output_item.done", output_index=index, item=item)
                continue
            reasoning = item["type"] == "reasoning"
            extra: dict[str, Any] = {} if reasoning else {"logprobs": []}
            kind = "reasoning_text" if reasoning else "output_text"
            part = item["content"][0]
            empty = {**part, "text": ""}
            added = {**item, "status": "in_progress", "content": []}
            if reasoning and self.fake.mode == "vllm":
                added["content"] = None
            elif reasoning:
                added.pop("content")
            elif self.fake.mode == "vllm":
                empty["logprobs"] = []  # [] while streaming, null once done
            emit("response.output_item.added", output_index=index, item=added)
            emit("response.content_part.added", **ref, content_index=0, part=empty)
            for piece in pieces[item["type"]]:
                emit(f"response.{kind}.delta", **ref, content_index=0, delta=piece, **extra)
            emit(f"response.{kind}.done", **ref, content_index=0, text=part["text"], **extra)
            emit("response.content_part.done", **ref, content_index=0, part=part)
            emit("response.output_item.done", output_index=index, item=item)
        status = self._final_status()
        emit(f"response.{status}", response=self.response(status, self.items, self.usage()))
        return frames

    def stream_error(self, sent: int) -> list[Frame]:
        failed = self.response("failed", [], None)
        failed["error"] = {"code": "server_error", "message": "The model failed to generate a response."}
        kind = "response.failed"
        return [(kind, {"type": kind, "sequence_number": sent, "response": failed})]
