"""Cross-site requests to the Memory page, beyond what tests/web/test_guard.py covers: another local site on
another port, DNS rebinding that carries a valid key, duplicate Host or Origin headers, the key in the address
instead of the form, near-miss keys, changes by GET, and websockets. Each is refused and changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from orcmem.models.types import NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from orcmem.web.security import Guard
from tests.helpers import FakeKeyring
from tests.web.support import BASE, TOKEN, form


@pytest.fixture
def memory_id(service: MemoryService, project: Project) -> str:
    return service.record(
        project, NewMemory(type="lesson", title="Keep me", body="as is", source=Source.USER)
    ).memory.id


def unchanged(service: MemoryService, project: Project, memory_id: str, keyring: FakeKeyring) -> None:
    memory = service.get(project, memory_id)
    assert (memory.title, str(memory.status)) == ("Keep me", "active")
    assert service.settings.current().enabled and service.settings.current().provider != "off"
    assert keyring.secrets == {}


CHANGES = [
    ("/memories/{id}/delete", {}),
    ("/memories/{id}/edit", {"title": "Owned", "body": "by another site"}),
    ("/settings/memory", {"enabled": "false"}),
    ("/settings/provider", {"provider": "off"}),
    ("/settings/api-key", {"api_key": "sk-ant-api03-" + "a" * 40}),
]


@pytest.mark.parametrize(("path", "fields"), CHANGES)
@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:3000"},  # a dev server on another port is another origin
        {"origin": "http://localhost:9999"},
        {"origin": "http://127.0.0.1:8765", "sec-fetch-site": "same-site"},  # same site, not same origin
        {"origin": "http://127.0.0.1:8765/evil"},
        {"origin": "http://user@127.0.0.1:8765"},
        {"origin": "http://127.0.0.1:8765.evil.example"},
        {"host": "attacker.example:8765"},  # DNS rebinding: the page is served under the attacker's name
        {"host": "attacker.example:8765", "origin": "http://attacker.example:8765"},
        {"host": "127.0.0.1:8765@attacker.example"},
        {"host": "0.0.0.0:8765"},
        {"host": "127.1:8765"},
        {"host": "[::1]:8765"},
    ],
    ids=lambda h: " ".join(f"{k}={v}" for k, v in h.items()),
)
def test_other_sites_cannot_change_anything_even_with_the_key(
    web: TestClient,
    service: MemoryService,
    project: Project,
    memory_id: str,
    fake_keyring: FakeKeyring,
    path: str,
    fields: dict[str, str],
    headers: dict[str, str],
) -> None:
    response = web.post(path.format(id=memory_id), data=form(project=project.id, **fields), headers=headers)
    assert response.status_code == 403
    unchanged(service, project, memory_id, fake_keyring)


@pytest.mark.parametrize(("path", "fields"), CHANGES)
@pytest.mark.parametrize("token", [TOKEN[:-1], TOKEN + "x", TOKEN.upper(), f" {TOKEN}", "\x00" + TOKEN])
def test_a_near_miss_key_is_refused(
    web: TestClient,
    service: MemoryService,
    project: Project,
    memory_id: str,
    fake_keyring: FakeKeyring,
    path: str,
    fields: dict[str, str],
    token: str,
) -> None:
    data = {"project": project.id, **fields, "token": token}
    assert web.post(path.format(id=memory_id), data=data).status_code == 403
    assert web.post(path.format(id=memory_id), data=data, headers={"x-orcmem-token": token}).status_code == 403
    unchanged(service, project, memory_id, fake_keyring)


@pytest.mark.parametrize(("path", "fields"), CHANGES)
def test_the_key_in_the_address_does_not_authorise_a_change(
    web: TestClient,
    service: MemoryService,
    project: Project,
    memory_id: str,
    fake_keyring: FakeKeyring,
    path: str,
    fields: dict[str, str],
) -> None:
    # A link or an <img> can carry the address; only a page the server rendered knows the form's key.
    url = path.format(id=memory_id)
    assert web.post(f"{url}?token={TOKEN}", data={"project": project.id, **fields}).status_code == 403
    assert web.get(f"{url}?token={TOKEN}", params={"project": project.id, **fields}).status_code in (303, 404, 405)
    assert web.get(url, params={"project": project.id, **fields}).status_code in (404, 405)
    unchanged(service, project, memory_id, fake_keyring)


@pytest.mark.parametrize(
    "headers",
    [
        [(b"host", b"127.0.0.1:8765"), (b"host", b"attacker.example")],
        [(b"host", b"attacker.example"), (b"host", b"127.0.0.1:8765")],
        [(b"host", b"127.0.0.1:8765"), (b"origin", b"http://127.0.0.1:8765"), (b"origin", b"http://evil.example")],
        [],
    ],
)
def test_duplicate_or_missing_host_and_origin_headers_are_refused(headers: list[tuple[bytes, bytes]]) -> None:
    import anyio

    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    guard = Guard(app, token=TOKEN, cookie_name="c", port=8765, protect_reads=False)
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "POST", "path": "/settings/memory", "headers": headers, "query_string": b""}
    anyio.run(guard, scope, receive, send)
    assert reached == [] and sent[0]["status"] == 403


def test_websockets_are_closed(service: MemoryService, fake_keyring: FakeKeyring) -> None:
    from orcmem.web.app import create_app

    app: Any = create_app(service=service, token=TOKEN, port=8765, environ={})
    with (
        TestClient(app, base_url=BASE) as client,
        pytest.raises(WebSocketDisconnect),
        client.websocket_connect("/", headers={"host": "127.0.0.1:8765"}) as socket,
    ):
        socket.receive_text()
