"""Fixtures for the embed tests: a loopback HTTP server, small pin sets, and no network beyond 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from orcmem.embed.model_files import ModelPins
from tests.embed.support import FAKE_FILES, Route, Server, sha256
from tests.fakes import loopback_http


@pytest.fixture
def server() -> Iterator[Server]:
    """A threaded HTTP server on 127.0.0.1 at a random port."""
    state = Server(base="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            state.requests.append(self.path)
            route = state.routes.get(self.path, Route(status=404, body=b"not here"))
            self.send_response(route.status)
            if route.send_length:
                self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            sent = 0
            try:
                for start in range(0, len(route.body), route.chunk):
                    self.wfile.write(route.body[start : start + route.chunk])
                    sent += min(route.chunk, len(route.body) - start)
                self.wfile.flush()
            except OSError:
                pass  # the client hung up, which is what some tests expect
            finally:
                state.sent[self.path] = sent
                state.finished.set()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with loopback_http(Handler) as base:
        state.base = base
        yield state


@pytest.fixture
def fake_pins() -> ModelPins:
    """Pins for a small fake model folder named `fake-model`."""
    return ModelPins(
        name="fake-model",
        model_id="fake-model-v1",
        files={name: sha256(data) for name, data in FAKE_FILES.items()},
    )
