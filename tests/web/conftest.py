"""Fixtures for the Memory page: the app through ASGI, a fake OS keyring, a real server and Debian's Chromium."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orcmem.service.memory_service import MemoryService
from orcmem.web.app import create_app
from tests.helpers import FakeKeyring
from tests.web.support import BASE, CHROMIUM, CHROMIUM_ARGS, TOKEN, LiveServer, shot

SERVER_START_TIMEOUT_S = 10.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives Debian's Chromium through Playwright against a real server")


@pytest.fixture
def app(service: MemoryService, fake_keyring: FakeKeyring) -> Any:
    """The Memory page app over the test's service, with a known launch token and an empty environment."""
    return create_app(service=service, token=TOKEN, environ={})


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    """A client that opened the launch address, so it holds the launch cookie."""
    with TestClient(app, base_url=BASE) as test_client:
        opened = test_client.get(f"/?token={TOKEN}", follow_redirects=False)
        assert opened.status_code == 303
        yield test_client


@pytest.fixture
def live_server(service: MemoryService, fake_keyring: FakeKeyring) -> Iterator[LiveServer]:
    """Serve the app with uvicorn on 127.0.0.1 (a free port) in a thread; stopped at teardown."""
    import uvicorn

    from orcmem.host.loopback import bind_loopback
    from orcmem.web.server import server_config

    sock = bind_loopback(0)
    port = int(sock.getsockname()[1])
    web_app = create_app(service=service, token=TOKEN, port=port, environ={})
    server = uvicorn.Server(server_config(web_app))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="orcmem-ui-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            thread.join(SERVER_START_TIMEOUT_S)
            sock.close()
            pytest.fail("the Memory page server did not start within 10 seconds")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", TOKEN, service)
    finally:
        server.should_exit = True
        thread.join(SERVER_START_TIMEOUT_S)
        sock.close()
        assert not thread.is_alive(), "the Memory page server did not stop"


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright, once per session; skipped when either is missing."""
    if os.environ.get("ORCMEM_SKIP_BROWSER"):
        pytest.skip("ORCMEM_SKIP_BROWSER is set")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is missing: pip install playwright (never `playwright install`)")
    manager = sync_playwright().start()
    try:
        browser = manager.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=30_000)
    except Exception as exc:
        manager.stop()
        pytest.skip(f"Chromium could not start: {exc}")
    try:
        yield browser
    finally:
        browser.close()
        manager.stop()


@pytest.fixture
def page(chromium: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh browser page (1100×800); a screenshot of how it ends goes to the tmp dir and test-artifacts/web."""
    context = chromium.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(10_000)
    browser_page = context.new_page()
    errors: list[str] = []
    browser_page.on("pageerror", lambda exc: errors.append(str(exc)))
    browser_page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    browser_page.script_errors = errors  # read by the tests: the page's script must never fail
    try:
        yield browser_page
    finally:
        shot(browser_page, request.node.name, tmp_path, suffix="final")
        context.close()
