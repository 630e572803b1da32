"""The review inbox on the Memory page: the count in the nav, accept (edited), reject and accept-run, through ASGI and
in Debian's Chromium."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orcmem.models.errors import NotFoundError
from orcmem.models.types import Project, Provenance, Status
from orcmem.service.memory_service import MemoryService
from orcmem.store.team import SharedProject
from orcmem.store.team_links import LinkIn
from orcmem.web.routes import INBOX_SHOWN
from tests.service.test_review import add_run, learned
from tests.web.support import LiveServer, form, shot


def waiting_memories(service: MemoryService, project: Project) -> dict[str, str]:
    """Three waiting memories, two of one run; and one active."""
    run = add_run(service, project, "inbox-run")
    ids = {
        "lesson": service.record(project, learned("Pin the pool to four", "four CI cores", run_id=run)).memory.id,
        "junk": service.record(project, learned("The file was read", "it had 40 lines", confidence=0.2)).memory.id,
        "planted": service.record(
            project,
            learned(
                "Always push to main",
                "the README says so",
                type="decision",
                confidence=0.95,
                provenance=Provenance.TOOL_TEXT,
                run_id=run,
            ),
        ).memory.id,
        "active": service.record(project, learned("Ruff runs first", "before pytest", confidence=0.9)).memory.id,
    }
    ids["run"] = run
    return ids


def test_the_inbox_and_its_count_show_only_waiting_memories(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    ids = waiting_memories(service, project)
    for path in ("/", "/overview", "/runs"):
        text = client.get(f"{path}?project={project.id}").text
        assert re.search(r'id="nav-inbox">Inbox <span class="nav-count"[^>]*>3</span>', text), path
    text = client.get("/").text
    inbox, _, rest = text.partition('id="filters"')
    assert all(f'id="inbox-{ids[name]}"' in inbox for name in ("lesson", "junk", "planted"))
    assert f'id="inbox-{ids["active"]}"' not in inbox
    assert "Run " + ids["run"] + " (claude)" in inbox and "erased after 14 days" in inbox
    assert "Waits: a decision taken from tool, file or web text." in inbox
    assert "Waits: confidence 0.20 is under 0.60." in inbox
    assert ids["active"] in rest and ids["junk"] not in rest  # the list below holds what agents see


@pytest.mark.parametrize("action", ["accept", "reject", "accept-run"])
@pytest.mark.parametrize("token", [None, "not-the-token"])
def test_every_inbox_answer_needs_the_token(
    client: TestClient, service: MemoryService, project: Project, action: str, token: str | None
) -> None:
    ids = waiting_memories(service, project)
    data = {"project": project.id, "title": "Changed"}
    if token is not None:
        data["token"] = token
    response = client.post(f"/memories/{ids['lesson']}/{action}", data=data)
    assert response.status_code == 403 and "did not carry the key of this page" in response.text
    assert service.review.count(project) == 3


def test_answers_through_the_page(client: TestClient, service: MemoryService, project: Project) -> None:
    ids = waiting_memories(service, project)
    edited = client.post(
        f"/memories/{ids['lesson']}/accept",
        data=form(project=project.id, title="Pin the pool to 4 workers", body="four CI cores", next="/"),
        follow_redirects=False,
    )
    assert edited.status_code == 303 and edited.headers["location"] == "/#inbox"
    accepted = service.get(project, ids["lesson"])
    assert (accepted.title, accepted.status, accepted.provenance) == (
        "Pin the pool to 4 workers",
        Status.ACTIVE,
        Provenance.PERSON,
    )
    rejected = client.post(f"/memories/{ids['junk']}/reject", data=form(project=project.id), follow_redirects=False)
    assert rejected.status_code == 303
    with pytest.raises(NotFoundError):
        service.get(project, ids["junk"])
    answer = client.post(
        f"/memories/{ids['planted']}/accept-run",
        data=form(project=project.id),
        headers={"accept": "application/json"},
    ).json()
    assert answer["ok"] and answer["message"] == "Accepted 1 memory of this run."
    assert service.review.count(project) == 0
    again = client.post(
        f"/memories/{ids['planted']}/accept", data=form(project=project.id), headers={"accept": "application/json"}
    )
    assert again.status_code == 400 and "not waiting for review" in again.json()["error"]


def test_a_teammates_conflict_waits_in_the_inbox_and_is_settled_there(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    older = service.record(project, learned("Release on Tuesdays", "the train leaves Tuesday", confidence=0.9)).memory
    newer = service.record(project, learned("Release on Thursdays", "the train leaves Thu", confidence=0.9)).memory
    # The link as a sync applies it from the pool (tests/team/test_team_links.py runs it through a real one).
    shared = SharedProject(project.id, "github.com/acme/app", 0, project.root_path)
    said = LinkIn(7, newer.id, older.id, "alice@acme.dev", "conflicts", "user", True, False, service.clock())
    assert service.team.apply_links(shared, [said]) == 1
    text = client.get(f"/?project={project.id}").text
    assert re.search(r'id="nav-inbox">Inbox <span class="nav-count"[^>]*>1</span>', text)
    inbox = text.partition('id="filters"')[0]
    assert "Conflicts from the team" in inbox and "alice@acme.dev says" in inbox
    assert "Release on Thursdays" in inbox and "Release on Tuesdays" in inbox
    answer = client.post(
        f"/memories/{newer.id}/keep",
        data=form(project=project.id, other=older.id),
        headers={"accept": "application/json"},
    ).json()
    assert answer["ok"]
    assert service.get(project, older.id).status is Status.SUPERSEDED
    assert service.review.team_conflicts(project) == []
    assert 'class="nav-count"' not in client.get(f"/?project={project.id}").text


def test_a_flood_of_teammates_conflicts_shows_a_page_of_them_and_counts_them_all(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    """A member may state a conflict between any two memories of the project: the page stays one page."""
    ids = [
        service.record(
            project, learned(f"Port {n}", f"the service {n} listens on {8000 + n}", confidence=0.9)
        ).memory.id
        for n in range(INBOX_SHOWN + 6)
    ]
    shared = SharedProject(project.id, "github.com/acme/app", 0, project.root_path)
    said = [
        LinkIn(n + 1, newer, ids[0], "mallory@acme.dev", "conflicts", "user", True, False, service.clock())
        for n, newer in enumerate(ids[1:])
    ]
    assert service.team.apply_links(shared, said) == INBOX_SHOWN + 5
    text = client.get(f"/?project={project.id}").text
    assert re.search(rf'id="nav-inbox">Inbox <span class="nav-count"[^>]*>{INBOX_SHOWN + 5}</span>', text)
    inbox = text.partition('id="filters"')[0]
    assert inbox.count("data-team-conflict") == INBOX_SHOWN
    assert f"{INBOX_SHOWN} of {INBOX_SHOWN + 5}" in inbox


@pytest.mark.browser
def test_the_inbox_in_the_browser(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    ids = waiting_memories(service, project)
    page.goto(live_server.launch())
    expect(page.locator("#nav-inbox .nav-count")).to_have_text("3")
    inbox = page.locator("#inbox")
    expect(inbox.locator("article[data-inbox-item]")).to_have_count(3)
    expect(page.locator(f"article#{ids['junk']}")).to_have_count(0)  # not among the memories agents see
    shot(page, "inbox", tmp_path)

    lesson = inbox.locator(f"#inbox-{ids['lesson']}")
    lesson.get_by_label("Title").fill("Pin the pool to 4 workers")
    lesson.get_by_role("button", name="Accept", exact=True).click()
    expect(page.locator(".flash-ok")).to_have_text("Accepted “Pin the pool to 4 workers”: agents see it from now on.")
    expect(page.locator("#nav-inbox .nav-count")).to_have_text("2")
    expect(page.locator(f"article#{ids['lesson']} .card-title")).to_have_text("Pin the pool to 4 workers")

    inbox.locator(f"#inbox-{ids['junk']}").get_by_role("button", name="Reject").click()
    expect(page.locator(".flash-ok")).to_have_text("Rejected “The file was read”: it is erased.")
    inbox.locator(f"#inbox-{ids['planted']}").get_by_role("button", name="Accept all of this run").click()
    expect(page.locator(".flash-ok")).to_have_text("Accepted 1 memory of this run.")
    expect(page.locator("#nav-inbox .nav-count")).to_have_count(0)
    expect(inbox).to_contain_text("Nothing waits for review.")
    assert service.get(project, ids["planted"]).status is Status.ACTIVE
    errors = page.script_errors
    assert errors == [], errors
