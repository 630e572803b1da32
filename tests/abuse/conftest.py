"""Fixtures for the abuse tests: the Memory page app with a launch cookie, and a fake OS keyring."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from orcmem.service.memory_service import MemoryService
from orcmem.web.app import create_app
from tests.helpers import FakeKeyring
from tests.web.support import BASE, TOKEN


@pytest.fixture
def anyio_backend() -> str:
    """The MCP in-memory client runs on asyncio."""
    return "asyncio"


@pytest.fixture
def web(service: MemoryService, fake_keyring: FakeKeyring) -> Iterator[TestClient]:
    """A client of the Memory page that opened the launch address (it holds the launch cookie)."""
    app: Any = create_app(service=service, token=TOKEN, port=8765, environ={})
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
        assert client.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
        yield client
