"""AnthropicApiGenerator against a local HTTP server that plays the Messages API."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

pytest.importorskip("anthropic")

from orcmem.extract.anthropic_api import AnthropicApiGenerator
from orcmem.extract.parse import parse_extraction
from tests.fakes import loopback_http  # noqa: E402

ANSWER = '```json\n{"summary":{"request":"r","workDone":"w","outcome":"o","openItems":[]},"memories":[]}\n```'


def message(text: str) -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 34},
    }


def api_error(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}


@dataclass
class FakeApi:
    """What the server answers next, and every request it saw."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def reply(self, status: int, payload: Any) -> None:
        self.status = status
        self.body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    """A Messages API on 127.0.0.1 with a random port."""
    state = FakeApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
            length = int(self.headers.get("content-length", "0"))
            state.requests.append(
                {
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            if state.delay:
                state.released.wait(state.delay)
            try:
                self.send_response(state.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(state.body)))
                self.end_headers()
                self.wfile.write(state.body)
            except OSError:
                pass  # the client gave up (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    with loopback_http(Handler) as base:
        state.url = base
        try:
            yield state
        finally:
            state.released.set()  # a request held by the delay finishes, so the server can stop


def test_success_sends_one_user_message_and_returns_the_text(fake_api: FakeApi) -> None:
    fake_api.reply(200, message(ANSWER))
    generator = AnthropicApiGenerator("sk-ant-test-0123456789abcdefghij", base_url=fake_api.url, timeout=10)
    result = generator.generate("the prompt")
    assert result.text == ANSWER and result.error is None
    assert parse_extraction(result.text) is not None
    [request] = fake_api.requests
    assert request["path"] == "/v1/messages"
    headers = request["headers"]
    # anthropic 2.x sends the key as a bearer token; older versions used x-api-key.
    key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
    assert key == "sk-ant-test-0123456789abcdefghij"
    assert "anthropic-version" in request["headers"]
    body = request["body"]
    assert body["model"] == "claude-haiku-4-5-20251001"
    assert body["max_tokens"] == 2000
    assert body["messages"] == [{"role": "user", "content": "the prompt"}]
    assert "sk-ant" not in repr(generator)


def test_chosen_model(fake_api: FakeApi) -> None:
    fake_api.reply(200, message("ok"))
    assert AnthropicApiGenerator("k" * 20, model="claude-sonnet-5", base_url=fake_api.url).generate("p").text == "ok"
    assert fake_api.requests[0]["body"]["model"] == "claude-sonnet-5"


def test_401_is_an_error_without_retries(fake_api: FakeApi) -> None:
    fake_api.reply(401, api_error("authentication_error", "invalid x-api-key"))
    result = AnthropicApiGenerator("bad-key-000000000000", base_url=fake_api.url, timeout=10).generate("p")
    assert result.text is None
    assert result.error is not None
    assert result.error.startswith("the Anthropic API refused the request (HTTP 401)")
    assert "invalid x-api-key" in result.error
    assert len(fake_api.requests) == 1


def test_500_is_an_error_without_retries(fake_api: FakeApi) -> None:
    fake_api.reply(500, api_error("api_error", "Internal server error"))
    result = AnthropicApiGenerator("k" * 20, base_url=fake_api.url, timeout=10).generate("p")
    assert result.error is not None and result.error.startswith("the Anthropic API refused the request (HTTP 500)")
    assert len(fake_api.requests) == 1


@pytest.mark.parametrize("payload", [b"this is not json", b'{"type":"message","content":"nope"}', b"[]"])
def test_malformed_body_is_an_error(fake_api: FakeApi, payload: bytes) -> None:
    fake_api.reply(200, payload)
    result = AnthropicApiGenerator("k" * 20, base_url=fake_api.url, timeout=10).generate("p")
    assert result.text is None
    assert result.error is not None and result.error.startswith("the Anthropic API")


def test_no_text_block_is_an_error(fake_api: FakeApi) -> None:
    empty = message("")
    empty["content"] = []
    fake_api.reply(200, empty)
    result = AnthropicApiGenerator("k" * 20, base_url=fake_api.url, timeout=10).generate("p")
    assert result.error == "the Anthropic API answered with no text"


def test_slow_past_the_timeout(fake_api: FakeApi) -> None:
    fake_api.reply(200, message("late"))
    fake_api.delay = 10
    started = time.monotonic()
    result = AnthropicApiGenerator("k" * 20, base_url=fake_api.url, timeout=1).generate("p")
    assert time.monotonic() - started < 8
    assert result.error == "the Anthropic API did not answer in time"


def test_nothing_listening() -> None:
    result = AnthropicApiGenerator("k" * 20, base_url="http://127.0.0.1:9", timeout=2).generate("p")
    assert result.text is None
    assert result.error is not None and result.error.startswith("the Anthropic API could not be reached")


def test_importing_extraction_does_not_import_anthropic() -> None:
    code = "import sys, orcmem.extract; print('anthropic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
