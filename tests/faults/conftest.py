"""Fixtures for the model fault tests: the real int8 MiniLM as a pinned archive, served by a loopback server that
can stop in the middle of a body."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from orcmem.embed.pypi_source import MINILM_INT8_PINS
from tests.fakes import loopback_http
from tests.faults.support import ArchiveServer, Served


@pytest.fixture
def archive_server() -> Iterator[ArchiveServer]:
    """A threaded HTTP server on 127.0.0.1 at a random port."""
    state = ArchiveServer(base="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            state.requests.append(self.path)
            route = state.routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            sent = 0
            try:
                for start in range(0, len(route.body), 64 * 1024):
                    if route.stall_at is not None and sent >= route.stall_at:
                        self.wfile.flush()
                        state.release.wait(60)  # the client is killed meanwhile
                        route = Served(route.body)
                    self.wfile.write(route.body[start : start + 64 * 1024])
                    sent = start + len(route.body[start : start + 64 * 1024])
                self.wfile.flush()
            except OSError:
                pass  # the client is gone
            finally:
                state.sent.append(sent)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with loopback_http(Handler) as base:
        state.base = base
        try:
            yield state
        finally:
            state.release.set()  # a handler held mid-body finishes, so the server can stop


@pytest.fixture(scope="session")
def int8_archive(int8_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The real int8 MiniLM packed like fastembed's archives (`minilm-l6-v2-int8/<file>`), about 22 MB."""
    folder = int8_models_dir / MINILM_INT8_PINS.name
    target = tmp_path_factory.mktemp("archive") / "minilm-int8.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=1) as tar:
        for name in sorted(MINILM_INT8_PINS.files):
            tar.add(folder / name, arcname=f"{MINILM_INT8_PINS.name}/{name}")
    return target.read_bytes()
