"""Settings through ASGI: memory on/off as stored, the extraction provider and model, the API key in the keyring."""

from __future__ import annotations

import logging
import re

import pytest
from starlette.testclient import TestClient

from orcmem.host.keystore import ACCOUNT, SERVICE, STORAGE_ERROR
from orcmem.service.memory_service import MemoryService
from tests.helpers import FakeKeyring
from tests.web.support import TOKEN, form

SECRET = "sk-ant-api03-THIS-IS-A-TEST-KEY-0000000000000000"


def notice(client: TestClient, response: object) -> str:
    assert response.status_code == 303  # type: ignore[attr-defined]
    page = client.get(response.headers["location"])  # type: ignore[attr-defined]
    found = re.search(r'<p class="flash flash-(\w+)">(.*?)</p>', page.text, re.S)
    assert found
    return f"{found.group(1)}: {found.group(2)}"


def test_settings_page_shows_the_stored_state(client: TestClient, service: MemoryService) -> None:
    text = client.get("/settings").text
    assert '<h2 id="memory-heading">Memory is on</h2>' in text and "Turn memory off" in text
    assert 'id="provider-auto" name="provider" value="auto" checked' in text
    assert 'id="extraction-sentence"' in text
    service.settings.set_enabled(False)
    text = client.get("/settings").text
    assert "Memory is off</h2>" in text and "Turn memory on" in text
    assert "Learning is paused while orcmem memory is off" in text


def test_turn_memory_off_and_on(client: TestClient, service: MemoryService) -> None:
    response = client.post("/settings/memory", data=form(enabled="false"), follow_redirects=False)
    assert notice(client, response).startswith("ok: Memory is off.")
    assert service.is_enabled() is False
    response = client.post("/settings/memory", data=form(enabled="true"), follow_redirects=False)
    assert notice(client, response) == "ok: Memory is on."
    assert service.is_enabled() is True


def test_a_malformed_switch_changes_nothing(client: TestClient, service: MemoryService) -> None:
    response = client.post("/settings/memory", data=form(enabled="maybe"), follow_redirects=False)
    assert notice(client, response).startswith("error: Could not change memory")
    assert service.is_enabled() is True


def test_a_failed_switch_keeps_the_previous_state(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orcmem.models.errors import StoreError

    def locked(enabled: bool) -> None:
        raise StoreError("The orcmem database stayed locked by another process for over 5000 ms.")

    monkeypatch.setattr(service.settings, "set_enabled", locked)
    answer = client.post("/settings/memory", data=form(enabled="false"), headers={"accept": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("Could not change memory. Your previous setting is still active.")
    assert service.is_enabled() is True
    assert "Memory is on</h2>" in client.get("/settings").text


def test_the_switch_answers_scripts_with_the_stored_state(client: TestClient, service: MemoryService) -> None:
    answer = client.post(
        "/settings/memory", data={"enabled": "false"}, headers={"x-orcmem-token": TOKEN, "accept": "application/json"}
    )
    assert answer.json() == {"ok": True, "message": answer.json()["message"], "enabled": False}


def test_choose_a_provider_and_model(client: TestClient, service: MemoryService) -> None:
    response = client.post(
        "/settings/provider", data=form(provider="claude", model="claude-opus-4-1"), follow_redirects=False
    )
    assert notice(client, response).startswith("ok: Saved.")
    settings = service.settings.current()
    assert settings.provider == "claude" and settings.models == {"claude": "claude-opus-4-1"}
    text = client.get("/settings").text
    assert 'value="claude" checked' in text and 'value="claude-opus-4-1"' in text
    client.post("/settings/provider", data=form(provider="claude", model=""))
    assert service.settings.current().models == {}  # an empty model restores the default


def test_auto_and_off_ignore_the_model_field(client: TestClient, service: MemoryService) -> None:
    for provider in ("auto", "off"):
        response = client.post(
            "/settings/provider", data=form(provider=provider, model="anything"), follow_redirects=False
        )
        assert notice(client, response).startswith("ok: Saved.")
        assert service.settings.current().provider == provider and service.settings.current().models == {}
    assert "Finished runs are not summarized. Agents can still save memories." in client.get("/settings").text


def test_an_unknown_provider_changes_nothing(client: TestClient, service: MemoryService) -> None:
    response = client.post("/settings/provider", data=form(provider="copilot"), follow_redirects=False)
    assert notice(client, response).startswith("error: Could not change the provider")
    assert service.settings.current().provider == "auto"


def test_the_sentence_names_the_api_key_route(
    client: TestClient, service: MemoryService, fake_keyring: FakeKeyring
) -> None:
    fake_keyring.secrets[(SERVICE, ACCOUNT)] = SECRET
    client.post("/settings/provider", data=form(provider="apikey", model=""))
    text = client.get("/settings").text
    assert "through your Anthropic API key" in text or "anthropic package" in text


def test_save_and_remove_the_api_key(
    client: TestClient, fake_keyring: FakeKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    response = client.post(
        "/settings/api-key", data=form(api_key=f"  {SECRET}  ", action="save"), follow_redirects=False
    )
    assert notice(client, response) == "ok: Saved the API key in your OS keychain."
    assert fake_keyring.secrets == {(SERVICE, ACCOUNT): SECRET}
    text = client.get("/settings").text
    assert "A key is saved in your OS keychain" in text and "Remove API key" in text
    assert SECRET not in text and SECRET[:12] not in text
    assert SECRET not in caplog.text
    response = client.post("/settings/api-key", data=form(action="remove"), follow_redirects=False)
    assert notice(client, response) == "ok: Removed the API key."
    assert fake_keyring.secrets == {}
    assert "No key saved" in client.get("/settings").text


def test_an_empty_key_is_not_saved(client: TestClient, fake_keyring: FakeKeyring) -> None:
    response = client.post("/settings/api-key", data=form(api_key="   ", action="save"), follow_redirects=False)
    assert notice(client, response).startswith("error: Enter a key to save")
    assert fake_keyring.secrets == {}


def test_a_locked_keyring_shows_the_storage_error_and_changes_nothing(
    client: TestClient, service: MemoryService, fake_keyring: FakeKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_keyring.broken = True
    before = service.settings.current()
    answer = client.post("/settings/api-key", data=form(api_key=SECRET), follow_redirects=False)
    shown = client.get(answer.headers["location"]).text
    assert f'<p class="flash flash-error">{STORAGE_ERROR}</p>' in shown
    assert f'{STORAGE_ERROR} <a href="/settings#api-key">Retry</a>' in shown  # the load fails too
    assert SECRET not in shown and SECRET not in caplog.text
    assert service.settings.current() == before
    json_answer = client.post("/settings/api-key", data=form(api_key=SECRET), headers={"accept": "application/json"})
    assert json_answer.status_code == 400 and json_answer.json() == {"ok": False, "error": STORAGE_ERROR}


def test_a_key_from_the_environment_is_named_not_shown(service: MemoryService, fake_keyring: FakeKeyring) -> None:
    from orcmem.web.app import create_app
    from tests.web.support import BASE

    app = create_app(service=service, token=TOKEN, environ={"ANTHROPIC_API_KEY": SECRET})
    with TestClient(app, base_url=BASE) as client:
        text = client.get(f"/settings?token={TOKEN}").text
    assert "ANTHROPIC_API_KEY" in text and SECRET not in text


def test_search_section_says_why_meaning_is_missing(client: TestClient, service: MemoryService) -> None:
    text = client.get("/settings").text
    assert "Search by meaning" in text
    assert "orcmem model install" in text or "vector extension is not available" in text
    service.settings.set_enabled(False)
    assert "Paused while memory is off" in client.get("/settings").text


def test_grants_are_shown_and_revoked_on_the_settings_page(client: TestClient, service: MemoryService) -> None:
    from orcmem.host.workspace import locate
    from orcmem.service.agent_tools import AgentTools

    project = service.project(locate("/tmp"))
    tools = AgentTools(service, project, mode="review", headless=False, auto_approve=False, session_id="s")
    tools.asking(lambda _question: "workspace").record("lesson", "A lesson", "details")
    [(grant, _project)] = service.grants()
    assert "workspace · /tmp" in client.get("/settings").text
    response = client.post("/settings/grants/revoke", data=form(grant=str(grant.pk)), follow_redirects=False)
    assert notice(client, response).startswith("ok: Revoked the workspace grant")
    assert service.grants() == [] and "No grants" in client.get("/settings").text


def test_no_keychain_on_this_machine_is_a_calm_notice(client: TestClient, fake_keyring: FakeKeyring) -> None:
    from orcmem.host.keystore import NO_KEYCHAIN

    fake_keyring.missing = True
    shown = client.get("/settings").text
    assert f'<p class="notice" id="keychain-note">{NO_KEYCHAIN}</p>' in shown
    assert STORAGE_ERROR not in shown and 'role="alert"' not in shown and "notice-error" not in shown
    assert 'name="api_key"' not in shown  # nothing can be saved here: no form that would only fail
    json_answer = client.post("/settings/api-key", data=form(api_key=SECRET), headers={"accept": "application/json"})
    assert json_answer.status_code == 400 and json_answer.json() == {"ok": False, "error": NO_KEYCHAIN}
    assert fake_keyring.secrets == {}
