"""The Memory page's forms, posted with arbitrary field values (and arbitrary raw bodies) and a valid launch token:
the answer is a 4xx or a clean page or redirect, never a 500, and nothing that breaks a rule is ever stored.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from orcmem.models.constants import BODY_MAX_CHARS, EXTRACTION_PROVIDERS, TITLE_MAX_CHARS
from orcmem.models.types import MemoryFilter, MemoryType, NewMemory, Project, Source, Status
from orcmem.service.memory_service import MemoryService
from tests.helpers import FakeKeyring
from tests.web.support import TOKEN

ACTIONS = ["edit", "helpful", "wrong", "stale", "delete", "export", "nope"]
FIELDS = ["title", "body", "project", "next", "file", "enabled", "provider", "model", "api_key", "action", "type"]
# Text a browser can send: anything but lone surrogates, which no encoding can carry.
text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40)
long_text = st.sampled_from(["x" * (TITLE_MAX_CHARS + 1), "y" * (BODY_MAX_CHARS + 1), " " * 5, "", "\x00", "\u202e"])
values = text | long_text | st.sampled_from(["true", "false", "off", "claude", "CLAUDE.md", "AGENTS.md", "remove"])
OK_STATUSES = {200, 303, 400, 403, 404, 405, 413, 415, 422}


def check_store(service: MemoryService, project: Project, keyring: FakeKeyring) -> None:
    """Every memory obeys the limits; the settings hold only values orcmem knows; no empty key was saved."""
    for memory in service.list(None, MemoryFilter(limit=500)) + service.list(project, MemoryFilter(limit=500)):
        assert 0 < len(memory.title) <= TITLE_MAX_CHARS and memory.title == memory.title.strip()
        assert 0 < len(memory.body) <= BODY_MAX_CHARS and memory.body == memory.body.strip()
        assert isinstance(memory.type, MemoryType) and isinstance(memory.status, Status)
        assert math.isfinite(memory.confidence)
    current = service.settings.current()
    assert current.provider in EXTRACTION_PROVIDERS
    assert all(model == model.strip() and model for model in current.models.values())
    assert all(value and value == value.strip() for value in keyring.secrets.values())


def check_answer(response: Any) -> None:
    assert response.status_code in OK_STATUSES, (response.status_code, response.text[:300])
    assert "Traceback" not in response.text
    if response.status_code == 303:
        location = response.headers["location"]
        assert location.startswith("/") and not location.startswith("//"), location  # never off the site


@pytest.fixture
def memory_ids(service: MemoryService, project: Project) -> list[str]:
    """Memories to act on: one the user wrote, one an agent wrote."""
    return [
        service.record(project, NewMemory(type="lesson", title=f"Note {i}", body="body", source=source)).memory.id
        for i, source in enumerate((Source.USER, Source.AGENT))
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    target=st.sampled_from(
        ["memory", "memory", "memory", "/settings/memory", "/settings/provider", "/settings/api-key"]
    ),
    action=st.sampled_from(ACTIONS),
    pick=st.integers(0, 3),
    fields=st.dictionaries(st.sampled_from(FIELDS) | text, values, max_size=6),
    as_json=st.booleans(),
)
def test_arbitrary_form_fields(
    web: TestClient,
    service: MemoryService,
    project: Project,
    memory_ids: list[str],
    fake_keyring: FakeKeyring,
    target: str,
    action: str,
    pick: int,
    fields: dict[str, str],
    as_json: bool,
) -> None:
    live = [m.id for m in service.list(project, MemoryFilter(limit=500))]
    ids = [*live, "mem_" + "0" * 32, "not-an-id", "%2e%2e"]
    path = f"/memories/{ids[pick % len(ids)]}/{action}" if target == "memory" else target
    data = {"project": project.id, **fields, "token": TOKEN}
    headers = {"accept": "application/json"} if as_json else {}
    response = web.post(path, data=data, headers=headers, follow_redirects=False)
    check_answer(response)
    check_store(service, project, fake_keyring)


RAW_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "multipart/form-data", "", "x/y"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(["edit", "/settings/memory", "/settings/provider", "/settings/api-key"]),
    body=st.binary(max_size=200)
    | st.sampled_from(
        [
            b"title=%FF%FE&body=%C3%28",  # percent-escapes that are not UTF-8
            b"title=&body=&title=x&title=y",  # a field given three times
            b"title=" + b"A" * 5000 + b"&body=b",
            b'--xyz\r\nContent-Disposition: form-data; name="title"\r\n\r\nT\r\n--xyz--\r\n',
            b'--xyz\r\nContent-Disposition: form-data; name="title"; filename="a.txt"\r\n\r\nT\r\n--xyz--\r\n',
            b"--xyz\r\n\r\n--xyz",
        ]
    ),
    content_type=st.sampled_from(RAW_TYPES),
)
def test_arbitrary_raw_bodies(
    web: TestClient,
    service: MemoryService,
    project: Project,
    memory_ids: list[str],
    fake_keyring: FakeKeyring,
    path: str,
    body: bytes,
    content_type: str,
) -> None:
    url = f"/memories/{memory_ids[1]}/edit" if path == "edit" else path
    # The token rides in the header, as the page's script sends it, so the body alone decides what happens.
    headers = {"x-orcmem-token": TOKEN, "accept": "application/json"}
    if content_type:
        headers["content-type"] = content_type
    response = web.post(url, content=body, headers=headers, follow_redirects=False)
    check_answer(response)
    check_store(service, project, fake_keyring)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=st.dictionaries(st.sampled_from(["project", "q", "type", "source", "status", "page"]) | text, text))
def test_arbitrary_query_strings_on_every_page(web: TestClient, project: Project, params: dict[str, str]) -> None:
    for path in ("/", "/overview", "/runs", "/settings"):
        response = web.get(path, params=params)
        assert response.status_code in (200, 400, 404), (path, params, response.status_code)
        assert "Traceback" not in response.text
