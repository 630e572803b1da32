"""Loopback stand-ins of the Anthropic Messages API and the OpenAI Responses API, for the real agent CLIs.

Each answers a coding session with one shell tool call, then (once the tool's result is sent back) a final text;
and answers orcmem's distillation prompt with the JSON it asks for. The real `claude` (through
ANTHROPIC_BASE_URL) and `codex` (through a model provider in config.toml) run against them with no network.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

DISTILL_MARK = "You distill a finished coding-agent run"
FINAL_TEXT = "It printed hello."
ANSWER = {
    "summary": {"request": "Say hello", "workDone": "Ran echo hello", "outcome": "printed hello", "openItems": []},
    "memories": [
        {
            "type": "command",
            "title": "Print a greeting with echo",
            "body": "echo hello prints hello in this project's shell",
            "topicKey": None,
            "files": [],
            "confidence": 0.7,
        }
    ],
}


class _Api(BaseHTTPRequestHandler):
    """What both stand-ins share: JSON bodies in, a log of what was asked, SSE or JSON out."""

    protocol_version = "HTTP/1.1"
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def _body(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        type(self).requests.append({"path": self.path, **body})
        return body if isinstance(body, dict) else {}

    def _send(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: list[dict[str, Any]]) -> None:
        text = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)
        self._send(text.encode(), "text/event-stream")

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        """Anything a CLI looks up besides the model: an empty object."""
        self._send(b"{}", "application/json")


class AnthropicMessages(_Api):
    """POST /v1/messages (streaming or not) as the Anthropic API answers it."""

    requests: ClassVar[list[dict[str, Any]]] = []
    # The one tool call a session gets: (tool, input); a test may make it another tool's.
    tool_call: ClassVar[tuple[str, dict[str, Any]]] = ("Bash", {"command": "echo hello", "description": "say hello"})

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """A tool call, a final text, or the distillation JSON."""
        body = self._body()
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self._send(json.dumps({"input_tokens": 10}).encode(), "application/json")
            return
        messages = body.get("messages") or []
        said = json.dumps(messages)
        last = messages[-1].get("content") if messages else None
        answered = isinstance(last, list) and any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in last
        )
        tools = [tool.get("name") for tool in body.get("tools") or []]
        if DISTILL_MARK in said:
            blocks = [{"type": "text", "text": json.dumps(ANSWER)}]
        elif self.tool_call[0] in tools and not answered:
            name, given = self.tool_call
            blocks = [{"type": "tool_use", "id": "toolu_01", "name": name, "input": given}]
        else:
            blocks = [{"type": "text", "text": FINAL_TEXT}]
        stop = "tool_use" if blocks[0]["type"] == "tool_use" else "end_turn"
        message = {
            "id": f"msg_{len(type(self).requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if not body.get("stream"):
            self._send(json.dumps({**message, "content": blocks, "stop_reason": stop}).encode(), "application/json")
            return
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                {"type": "content_block_start", "index": index, "content_block": start},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {"type": "content_block_stop", "index": index},
            ]
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            {"type": "message_stop"},
        ]
        self._events(events)


class OpenAIResponses(_Api):
    """POST /v1/responses (streamed) as the Responses API answers Codex."""

    requests: ClassVar[list[dict[str, Any]]] = []
    # The one tool call a session gets, as an output item; None: `exec_command` running `echo hello`.
    tool_item: ClassVar[dict[str, Any] | None] = None

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """An exec_command call, a final message, or the distillation JSON."""
        body = self._body()
        said = json.dumps(body.get("input") or [])
        answered = any(
            isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output")
            for item in body.get("input") or []
        )
        tools = [tool.get("name") for tool in body.get("tools") or []]
        number = len(type(self).requests)
        if DISTILL_MARK in said:
            item = _message(json.dumps(ANSWER))
        elif self.tool_item is not None and self.tool_item["name"] in tools and not answered:
            item = {**self.tool_item, "call_id": f"call_{number}"}
        elif "exec_command" in tools and not answered:
            arguments = json.dumps({"cmd": "echo hello"})
            item = {
                "type": "function_call",
                "call_id": f"call_{number}",
                "name": "exec_command",
                "arguments": arguments,
            }
        else:
            item = _message(FINAL_TEXT)
        usage = {
            "input_tokens": 10,
            "input_tokens_details": None,
            "output_tokens": 5,
            "output_tokens_details": None,
            "total_tokens": 15,
        }
        self._events(
            [
                {"type": "response.created", "response": {"id": f"resp_{number}"}},
                {"type": "response.output_item.done", "item": item},
                {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}},
            ]
        )


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": "msg_1", "content": [{"type": "output_text", "text": text}]}


class GeminiGenerate(_Api):
    """POST /v1beta/models/<model>:streamGenerateContent?alt=sse (and :generateContent) as the Gemini API answers
    it: one final text; or, when `call` names a tool, first that function call, then (once its functionResponse is
    sent back) the final text; orcmem's distillation prompt gets the JSON it asks for."""

    requests: ClassVar[list[dict[str, Any]]] = []
    call: ClassVar[dict[str, Any] | None] = None  # {"name": ..., "args": {...}}

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """FINAL_TEXT, or the function call first, streamed as SSE or whole as JSON."""
        body = self._body()
        answered = "functionResponse" in json.dumps(body.get("contents", []))
        call = type(self).call
        said = json.dumps(body.get("contents", []))
        parts: list[dict[str, Any]] = [{"text": json.dumps(ANSWER) if DISTILL_MARK in said else FINAL_TEXT}]
        if call is not None and not answered and DISTILL_MARK not in said and ":streamGenerateContent" in self.path:
            parts = [{"functionCall": dict(call)}]
        reply = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 4, "totalTokenCount": 14},
            "modelVersion": "gemini-2.5-flash",
        }
        if ":streamGenerateContent" in self.path:
            self._send(f"data: {json.dumps(reply)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self._send(json.dumps(reply).encode(), "application/json")


class OpenAIChat(_Api):
    """POST /v1/chat/completions (streamed or whole) as an OpenAI-compatible API answers GitHub Copilot CLI's
    bring-your-own-model mode: the distillation JSON, or FINAL_TEXT; when `call` names a tool offered, first that
    tool call, then (once its result is sent back) the final text."""

    requests: ClassVar[list[dict[str, Any]]] = []
    call: ClassVar[dict[str, Any] | None] = None  # {"name": ..., "arguments": {...}}

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        """One assistant message (text or a tool call), as SSE chunks or one JSON completion."""
        body = self._body()
        messages = body.get("messages") or []
        answered = any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
        offered = [tool.get("function", {}).get("name") for tool in body.get("tools") or []]
        call = type(self).call
        message: dict[str, Any] = {"role": "assistant", "content": FINAL_TEXT}
        if DISTILL_MARK in json.dumps(messages):
            message["content"] = json.dumps(ANSWER)
        elif call is not None and call["name"] in offered and not answered:
            function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": function}],
            }
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        number = len(type(self).requests)
        head = {"id": f"chatcmpl-{number}", "created": 1, "model": body.get("model") or "standin"}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            whole = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
            self._send(json.dumps(whole).encode(), "application/json")
            return
        delta = {**message, "tool_calls": [{"index": 0, **c} for c in message.get("tool_calls") or []]}
        if not delta["tool_calls"]:
            del delta["tool_calls"]
        chunks = [
            {
                **head,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            },
            {
                **head,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                "usage": usage,
            },
        ]
        text = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        self._send(text.encode(), "text/event-stream")
