"""The guard: loopback Host and Origin only, the launch cookie for reads, the launch token for every change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from orcmem.web.app import create_app
from tests.web.support import BASE, TOKEN, form, seed


@pytest.fixture
def memory_id(service: MemoryService, project: Project) -> str:
    return seed(service, project, 1)[0]


def test_the_page_needs_the_launch_address_first(app: Any) -> None:
    with TestClient(app, base_url=BASE) as fresh:
        refused = fresh.get("/")
        assert refused.status_code == 401
        assert "Open the address orcmem printed" in refused.text
        assert fresh.get("/?token=wrong").status_code == 401
        opened = fresh.get(f"/?token={TOKEN}&q=pytest", follow_redirects=False)
        assert opened.status_code == 303
        assert opened.headers["location"] == "/?q=pytest"  # the token leaves the address bar
        cookie = opened.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert fresh.get("/").status_code == 200


def test_static_files_need_no_key(app: Any) -> None:
    with TestClient(app, base_url=BASE) as fresh:
        css = fresh.get("/static/app.css")
        assert css.status_code == 200 and "--accent" in css.text
        assert fresh.get("/static/app.js").status_code == 200


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.evil:8765", "user@127.0.0.1", ""],
)
def test_a_foreign_host_is_refused(client: TestClient, host: str) -> None:
    response = client.get("/", headers={"host": host})
    assert response.status_code == 403
    assert "only answers requests addressed to 127.0.0.1" in response.text


def test_localhost_is_accepted(client: TestClient) -> None:
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200


def test_the_port_must_match_when_the_server_knows_it(service: MemoryService, fake_keyring: Any) -> None:
    app = create_app(service=service, token=TOKEN, port=8765, environ={})
    with TestClient(app, base_url=BASE) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        assert client.get("/", headers={"host": "127.0.0.1:9999"}).status_code == 403
        assert client.get("/", headers={"origin": "http://127.0.0.1:9999"}).status_code == 403
        assert client.get("/", headers={"origin": "http://127.0.0.1:8765"}).status_code == 200


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "https://127.0.0.1:8765", "http://127.0.0.1.evil.example:8765"]
)
def test_a_foreign_origin_cannot_change_memory(
    client: TestClient, service: MemoryService, project: Project, memory_id: str, origin: str
) -> None:
    response = client.post(f"/memories/{memory_id}/delete", data=form(project=project.id), headers={"origin": origin})
    assert response.status_code == 403
    assert "came from another site" in response.text
    assert service.get(project, memory_id).id == memory_id


def test_a_cross_site_fetch_is_refused_even_without_origin(
    client: TestClient, service: MemoryService, project: Project, memory_id: str
) -> None:
    response = client.post(
        f"/memories/{memory_id}/wrong", data=form(project=project.id), headers={"sec-fetch-site": "cross-site"}
    )
    assert response.status_code == 403
    assert str(service.get(project, memory_id).status) == "active"


def test_our_own_origin_may_change_memory(client: TestClient, project: Project, memory_id: str) -> None:
    response = client.post(
        f"/memories/{memory_id}/helpful",
        data=form(project=project.id),
        headers={"origin": BASE, "sec-fetch-site": "same-origin"},
        follow_redirects=False,
    )
    assert response.status_code == 303


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/memories/{id}/edit", {"title": "Changed", "body": "Changed body"}),
        ("/memories/{id}/helpful", {}),
        ("/memories/{id}/wrong", {}),
        ("/memories/{id}/stale", {}),
        ("/memories/{id}/delete", {}),
        ("/memories/{id}/export", {"file": "CLAUDE.md"}),
        ("/settings/memory", {"enabled": "false"}),
        ("/settings/provider", {"provider": "off"}),
        ("/settings/api-key", {"api_key": "sk-ant-api03-should-never-be-saved"}),
    ],
)
@pytest.mark.parametrize("token", [None, "", "not-the-token"])
def test_every_change_needs_the_token(
    client: TestClient,
    service: MemoryService,
    project: Project,
    memory_id: str,
    fake_keyring: Any,
    path: str,
    fields: dict[str, str],
    token: str | None,
) -> None:
    before = service.get(project, memory_id)
    settings_before = service.settings.current()
    data = {"project": project.id, **fields}
    if token is not None:
        data["token"] = token
    response = client.post(path.format(id=memory_id), data=data)
    assert response.status_code == 403
    assert "did not carry the key of this page" in response.text
    assert service.get(project, memory_id) == before
    assert service.settings.current() == settings_before
    assert fake_keyring.secrets == {}
    assert not (Path(project.root_path) / "CLAUDE.md").exists()


def test_the_token_header_is_accepted_for_script_requests(
    client: TestClient, service: MemoryService, project: Project, memory_id: str
) -> None:
    response = client.post(
        f"/memories/{memory_id}/wrong",
        data={"project": project.id},
        headers={"x-orcmem-token": TOKEN, "accept": "application/json"},
    )
    assert response.status_code == 200 and response.json()["ok"] is True
    assert str(service.get(project, memory_id).status) == "retracted"


def test_a_change_without_the_cookie_is_refused(
    app: Any, service: MemoryService, project: Project, memory_id: str
) -> None:
    with TestClient(app, base_url=BASE) as fresh:
        response = fresh.post(f"/memories/{memory_id}/delete", data=form(project=project.id))
        assert response.status_code == 401
    assert service.get(project, memory_id).id == memory_id


def test_pages_carry_security_headers(client: TestClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cache-control"] == "no-store"


def test_reads_can_be_left_open_when_asked(service: MemoryService, fake_keyring: Any) -> None:
    app = create_app(service=service, token=TOKEN, environ={}, protect_reads=False)
    with TestClient(app, base_url=BASE) as client:
        assert client.get("/").status_code == 200
        assert client.post("/settings/memory", data={"enabled": "false"}).status_code == 403


def test_a_change_states_its_length_and_stays_small(client) -> None:
    from orcmem.web.security import MAX_BODY_BYTES

    huge = client.post(
        "/settings/memory",
        content=b"enabled=false&pad=" + b"x" * MAX_BODY_BYTES,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert huge.status_code == 413 and "64 KiB" in huge.text

    def chunks():
        yield b"enabled=false"

    unsized = client.post(
        "/settings/memory", content=chunks(), headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert unsized.status_code == 413
