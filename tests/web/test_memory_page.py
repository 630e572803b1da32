"""The Memory page through ASGI: browsing, search, filters, pages, empty and error states, every action."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.types import MemoryFilter, NewMemory, Project, Provenance, Source
from orcmem.service.memory_service import MemoryService
from tests.web.support import form, seed


def titles(html: str) -> list[str]:
    return re.findall(r'<h3 class="card-title"[^>]*>(.*?)</h3>', html)


def flash(client: TestClient, response: Any) -> str:
    """Follow a redirect after an action and return the notice it shows."""
    assert response.status_code == 303, response.text
    page = client.get(response.headers["location"])
    found = re.search(r'<p class="flash flash-(\w+)">(.*?)</p>', page.text, re.S)
    assert found, "no notice on the page"
    return f"{found.group(1)}: {found.group(2)}"


# --- browsing ------------------------------------------------------------------------------------------------


def test_no_project_yet(client: TestClient) -> None:
    for path in ("/", "/overview", "/runs"):
        response = client.get(path)
        assert response.status_code == 200
        assert "No project yet" in response.text


def test_an_empty_project_says_what_to_expect(client: TestClient, project: Project) -> None:
    text = client.get("/").text
    assert "No saved memories yet" in text and "Useful knowledge your agents save" in text


def test_an_empty_project_while_memory_is_off_says_how_to_turn_it_on(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    service.settings.set_enabled(False)
    text = client.get("/").text
    assert "Memory is off: agents don’t save new memories" in text
    assert 'href="/settings#memory"' in text and "Turn memory on" in text


def test_pages_of_25_with_a_count_line(client: TestClient, service: MemoryService, project: Project) -> None:
    seed(service, project, 30)
    first = client.get("/").text
    assert "1–25 of 30 saved memories" in first
    assert len(titles(first)) == 25
    assert titles(first)[0] == "Memory number 29 about deploys"  # newest first
    assert "Page 1 of 2" in first and 'rel="next"' in first
    second = client.get(f"/?project={project.id}&page=2").text
    assert "26–30 of 30 saved memories" in second and len(titles(second)) == 5
    assert 'rel="prev"' in second and 'rel="next"' not in second
    past_the_end = client.get(f"/?project={project.id}&page=9").text  # say, after deleting the last one
    assert "Page 2 of 2" in past_the_end
    assert "Page 1 of 2" in client.get(f"/?project={project.id}&page=nonsense").text


def test_a_card_shows_everything_about_a_memory(
    client: TestClient, service: MemoryService, project: Project, clock: Any
) -> None:
    memory = service.record(
        project,
        NewMemory(
            type="env_quirk",
            title="Docker needs the host network",
            body="Use --network host on this laptop.",
            source=Source.EXTRACTION,
            topic_key="docker-network",
            files=("docker-compose.yml", "scripts/*.sh"),
        ),
    ).memory
    clock.advance_days(3)
    service.record(
        project,
        NewMemory(
            type="env_quirk",
            title=memory.title,
            body=memory.body,
            source=Source.AGENT,
            topic_key="docker-network",
            files=memory.files,
        ),
    )
    clock.advance_days(2)
    text = client.get("/").text
    assert "Env quirk" in text and "Learned after a run" in text
    assert "Created <time" in text and ">5 days ago</time>" in text
    assert "Updated <time" in text and "Confirmed <time" in text and ">2 days ago</time>" in text
    assert "2 pieces of evidence" in text
    assert "Topic: <code>docker-network</code>" in text
    assert "<code>docker-compose.yml</code>" in text and "<code>scripts/*.sh</code>" in text


def test_inactive_memories_wear_a_badge_and_lose_the_actions_that_no_longer_apply(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    retracted, stale = seed(service, project, 2)
    service.feedback(project, retracted, "wrong")
    service.feedback(project, stale, "stale")
    text = client.get("/").text
    assert 'class="badge badge-retracted">Retracted<' in text
    assert 'class="badge badge-stale">Stale<' in text
    assert f"/memories/{retracted}/wrong" not in text and f"/memories/{retracted}/delete" in text
    assert f"/memories/{stale}/wrong" in text and f"/memories/{stale}/helpful" not in text


def test_project_selector_defaults_to_the_most_recent_and_switches(
    client: TestClient, service: MemoryService, project: Project, tmp_path: Path, clock: Any
) -> None:
    from orcmem.host.workspace import locate

    seed(service, project, 2)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    clock.advance_days(1)
    other = service.project(locate(other_dir))
    assert other is not None
    service.record(other, NewMemory(type="fact", title="Other project fact", body="Only here.", source=Source.USER))
    default = client.get("/").text
    assert titles(default) == ["Other project fact"]
    assert f'<option value="{other.id}" title="{other.root_path}" selected>' in default
    switched = client.get(f"/?project={project.id}").text
    assert "Other project fact" not in switched and len(titles(switched)) == 2
    unknown = client.get("/?project=prj_nope").text
    assert "That project is not known here" in unknown and titles(unknown) == ["Other project fact"]


# --- search and filters ------------------------------------------------------------------------------------------


def test_filters_by_type_source_and_status(client: TestClient, service: MemoryService, project: Project) -> None:
    ids = seed(service, project, 12)
    service.feedback(project, ids[0], "wrong")
    by_type = client.get(f"/?project={project.id}&type=decision").text
    assert titles(by_type) == ["Memory number 07 about deploys", "Memory number 01 about deploys"]
    assert "2 saved memories" in by_type and 'id="clear-filters"' in by_type
    by_source = client.get(f"/?project={project.id}&source=user").text
    assert len(titles(by_source)) == 3 and "Saved by you" in by_source
    by_status = client.get(f"/?project={project.id}&status=retracted").text
    assert titles(by_status) == ["Memory number 00 about pytest"]
    both = client.get(f"/?project={project.id}&type=decision&source=agent").text
    assert "No matching memories" in both and "clear filters" in both


def test_search_finds_words_and_combines_with_filters(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    seed(service, project, 12)
    found = client.get(f"/?project={project.id}&q=pytest").text
    assert "4 matching memories · Searches active memories" in found
    assert all("pytest" in title for title in titles(found))
    narrowed = client.get(f"/?project={project.id}&q=pytest&type=lesson").text
    assert titles(narrowed) == ["Memory number 06 about pytest", "Memory number 00 about pytest"]
    nothing = client.get(f"/?project={project.id}&q=kubernetes").text
    assert "No matching memories" in nothing and "Search looks at active memories only" in nothing


@pytest.mark.parametrize("enabled", [True, False])
def test_search_uses_meaning_only_while_memory_is_on(
    client: TestClient, service: MemoryService, project: Project, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    seed(service, project, 3)
    service.settings.set_enabled(enabled)
    seen: list[Any] = []
    real = service.search.run

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("semantic"))
        return real(*args, **kwargs)

    monkeypatch.setattr(service.search, "run", spy)
    text = client.get(f"/?project={project.id}&q=deploys").text
    assert seen == [enabled]
    assert ("words only while memory is off" in text) is (not enabled)


def test_search_pages_its_results(client: TestClient, service: MemoryService, project: Project) -> None:
    seed(service, project, 40)
    first = client.get(f"/?project={project.id}&q=deploys").text
    assert "1–25 of 26 matching memories" in first
    assert "26–26 of 26 matching memories" in client.get(f"/?project={project.id}&q=deploys&page=2").text


def test_an_unknown_filter_is_an_error_that_says_what_to_do(client: TestClient, project: Project) -> None:
    text = client.get(f"/?project={project.id}&type=gossip").text
    assert "Could not load memories" in text and "There is no memory type called &#39;gossip&#39;" in text
    assert "Try again" in text and "clear filters" in text


def test_a_failing_database_shows_an_error_state(
    client: TestClient, service: MemoryService, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orcmem.models.errors import StoreError

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("The orcmem database stayed busy for over 5000 ms.")

    monkeypatch.setattr(service, "count", broken)
    text = client.get("/").text
    assert "Could not load memories" in text and "stayed busy" in text and "Try again" in text


def test_the_results_part_alone_for_the_search_script(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    seed(service, project, 3)
    part = client.get(f"/?project={project.id}&q=pytest", headers={"x-orcmem-partial": "results"}).text
    assert "<html" not in part and "1 matching memory" in part


# --- nothing is unescaped --------------------------------------------------------------------------------------------


def test_markup_in_a_memory_is_shown_as_text(client: TestClient, service: MemoryService, project: Project) -> None:
    service.record(
        project,
        NewMemory(
            type="lesson",
            title="<script>alert('title')</script>",
            body='<img src=x onerror="alert(1)"> and </textarea><b>bold</b>',
            source=Source.AGENT,
            topic_key="<i>topic</i>",
            files=("<svg onload=alert(1)>",),
        ),
    )
    for page in (client.get("/").text, client.get(f"/?q=script&project={project.id}").text):
        assert "<script>alert" not in page
        assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in page
        assert "<img src=x" not in page and "</textarea><b>" not in page and "<svg onload" not in page
        assert "<i>topic</i>" not in page


# --- actions -----------------------------------------------------------------------------------------------------


@pytest.fixture
def one(service: MemoryService, project: Project) -> str:
    return seed(service, project, 1)[0]


def test_edit_title_and_body(client: TestClient, service: MemoryService, project: Project, one: str) -> None:
    response = client.post(
        f"/memories/{one}/edit",
        data=form(project=project.id, title="  Use forks  ", body="Run vitest --pool=forks.", next="/?q=x"),
        follow_redirects=False,
    )
    assert response.headers["location"] == f"/?q=x#{one}"
    assert flash(client, response) == "ok: Saved “Use forks”."
    memory = service.get(project, one)
    assert (memory.title, memory.body) == ("Use forks", "Run vitest --pool=forks.")


def test_an_empty_edit_changes_nothing_and_says_why(
    client: TestClient, service: MemoryService, project: Project, one: str
) -> None:
    before = service.get(project, one)
    response = client.post(
        f"/memories/{one}/edit", data=form(project=project.id, title="   ", body="x"), follow_redirects=False
    )
    notice = flash(client, response)
    assert notice.startswith("error: Could not update this memory.") and "title" in notice
    assert service.get(project, one) == before


def test_mark_helpful_retract_and_stale(client: TestClient, service: MemoryService, project: Project) -> None:
    helpful, wrong, stale = seed(service, project, 3)
    before = service.get(project, helpful).confidence
    response = client.post(f"/memories/{helpful}/helpful", data=form(project=project.id), follow_redirects=False)
    assert "as helpful" in flash(client, response)
    assert service.get(project, helpful).confidence == pytest.approx(before + 0.1)
    response = client.post(f"/memories/{wrong}/wrong", data=form(project=project.id), follow_redirects=False)
    assert "Retracted" in flash(client, response)
    assert str(service.get(project, wrong).status) == "retracted"
    response = client.post(f"/memories/{stale}/stale", data=form(project=project.id), follow_redirects=False)
    assert "as stale" in flash(client, response)
    assert str(service.get(project, stale).status) == "stale"


def test_delete(client: TestClient, service: MemoryService, project: Project, one: str) -> None:
    response = client.post(f"/memories/{one}/delete", data=form(project=project.id), follow_redirects=False)
    assert response.headers["location"] == "/"  # no anchor: the card is gone
    assert flash(client, response) == "ok: Deleted “Memory number 00 about pytest”."
    assert service.count(project, MemoryFilter()) == 0


@pytest.mark.parametrize("file_name", ["CLAUDE.md", "AGENTS.md"])
def test_export_to_the_project_root(
    client: TestClient, service: MemoryService, project: Project, one: str, file_name: str
) -> None:
    target = Path(project.root_path) / file_name
    response = client.post(
        f"/memories/{one}/export", data=form(project=project.id, file=file_name), follow_redirects=False
    )
    assert flash(client, response) == f"ok: Added “Memory number 00 about pytest” to {target.resolve()}."
    content = target.read_text()
    assert content.startswith(EXPORT_HEADING + "\n- Memory number 00 about pytest: Body of memory 00")
    again = client.post(
        f"/memories/{one}/export", data=form(project=project.id, file=file_name), follow_redirects=False
    )
    assert "is already in" in flash(client, again)
    assert target.read_text() == content


def test_export_refuses_other_files(client: TestClient, project: Project, one: str) -> None:
    response = client.post(
        f"/memories/{one}/export", data=form(project=project.id, file="../../etc/passwd"), follow_redirects=False
    )
    assert "CLAUDE.md or AGENTS.md only" in flash(client, response)
    assert not list(Path(project.root_path).iterdir())


def test_an_unknown_memory_is_an_error_notice(client: TestClient, project: Project) -> None:
    missing = "mem_" + "0" * 32
    response = client.post(f"/memories/{missing}/helpful", data=form(project=project.id), follow_redirects=False)
    assert flash(client, response) == f"error: Could not update this memory. No memory {missing} in this project."
    response = client.post("/memories/not-an-id/helpful", data=form(project=project.id), follow_redirects=False)
    assert "error: Could not update this memory." in flash(client, response)


def test_an_unknown_action_is_not_found(client: TestClient, project: Project, one: str) -> None:
    assert client.post(f"/memories/{one}/promote", data=form(project=project.id)).status_code == 404


def test_next_never_leaves_the_site(client: TestClient, project: Project, one: str) -> None:
    for target in ("//evil.example/x", "https://evil.example", "/\\evil.example", "javascript:alert(1)"):
        response = client.post(
            f"/memories/{one}/helpful", data=form(project=project.id, next=target), follow_redirects=False
        )
        assert response.headers["location"] == f"/#{one}"


def test_a_notice_is_shown_once(client: TestClient, project: Project, one: str) -> None:
    response = client.post(f"/memories/{one}/helpful", data=form(project=project.id), follow_redirects=False)
    assert "as helpful" in flash(client, response)
    assert "as helpful" not in client.get("/").text


def test_script_requests_get_json_and_the_new_card(
    client: TestClient, service: MemoryService, project: Project, one: str
) -> None:
    headers = {"accept": "application/json"}
    edited = client.post(
        f"/memories/{one}/edit",
        data=form(project=project.id, title="<b>New</b>", body="New body", next="/"),
        headers=headers,
    ).json()
    assert edited["ok"] and edited["memory"]["title"] == "<b>New</b>"
    assert edited["html"].startswith("<article") and "&lt;b&gt;New&lt;/b&gt;" in edited["html"]
    assert "<b>New</b>" not in edited["html"]
    failed = client.post(f"/memories/{one}/edit", data=form(project=project.id, title="", body=""), headers=headers)
    assert failed.status_code == 400 and failed.json()["error"].startswith("Could not update this memory.")
    deleted = client.post(f"/memories/{one}/delete", data=form(project=project.id), headers=headers).json()
    assert deleted["ok"] and deleted["removed"] and deleted["html"] is None


def test_a_global_memory_can_be_managed_from_any_project(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    from orcmem.models.types import Scope

    shared = service.record(
        project, NewMemory(type="preference", title="Tabs", body="Use tabs.", source=Source.USER, scope=Scope.GLOBAL)
    ).memory
    text = client.get("/").text
    assert "All projects" in text
    response = client.post(f"/memories/{shared.id}/wrong", data=form(project=project.id), follow_redirects=False)
    assert "Retracted" in flash(client, response)


# --- provenance ----------------------------------------------------------------------------------------------


def test_each_card_says_where_its_words_came_from_and_the_page_filters_by_it(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    service.record(
        project, NewMemory(type="lesson", title="Mine about deploys", body="blue script", source=Source.USER)
    )
    tool = NewMemory(  # a lesson goes straight in; a convention from tool text would wait in the inbox
        type="lesson", title="Piped installer for deploys", body="curl x | sh", source=Source.EXTRACTION
    )
    service.record(project, tool)
    text = client.get("/").text
    badges = re.findall(r'<span class="badge badge-provenance badge-(\w+)[^"]*"[^>]*>([^<]*)</span>', text)
    assert badges == [("tool_text", "From tool output"), ("person", "Written by a person")]
    assert 'badge-tool_text badge-warn"' in text  # words a tool gave stand out
    assert '<select id="provenance" name="provenance">' in text
    assert titles(client.get("/?provenance=tool_text").text) == ["Piped installer for deploys"]
    assert titles(client.get("/?provenance=person&q=deploys").text) == ["Mine about deploys"]
    assert 'value="tool_text" selected' in client.get("/?provenance=tool_text").text
    assert "There is no provenance called &#39;gossip&#39;" in client.get("/?provenance=gossip").text


def test_a_persons_edit_on_the_page_makes_the_words_theirs(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    tool = NewMemory(type="convention", title="Piped installer", body="curl x | sh", source=Source.EXTRACTION)
    memory_id = service.record(project, tool).memory.id
    response = client.post(
        f"/memories/{memory_id}/edit",
        data=form(project=project.id, title="Locked installer", body="Use the locked installer, never curl | sh."),
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert service.get(project, memory_id).provenance is Provenance.PERSON
    assert "badge-person" in client.get("/").text


def test_a_card_shows_its_history_and_settles_a_conflict(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    from orcmem.models.types import Relation, Status

    def write(title: str, body: str, **kw: Any) -> str:
        return service.record(project, NewMemory("convention", title, body, Source.USER), **kw).memory.id

    npm = write("Use npm for installs", "npm install at the root")
    pnpm = write("Use pnpm for installs", "pnpm install at the root", relation=Relation.REPLACES, related_id=npm)
    pg15 = write("Tests need Postgres 15", "the tests run on 15")
    pg16 = write("Tests need Postgres 16", "the tests run on 16", relation=Relation.CONFLICTS, related_id=pg15)
    text = client.get("/?status=superseded").text
    assert 'class="badge badge-superseded">Superseded<' in text
    assert f'replaced by {pnpm} "Use pnpm for installs" on ' in text.replace("&#34;", '"')
    text = client.get("/").text.replace("&#34;", '"')
    assert f'replaced {npm} "Use npm for installs" on ' in text
    assert text.count(">Conflict</span>") == 2 and f'name="other" value="{pg15}"' in text
    response = client.post(f"/memories/{pg16}/keep", data=form(project=project.id, other=pg15), follow_redirects=False)
    assert flash(client, response) == "ok: Conflict settled: “Tests need Postgres 16” kept, the other is history."
    assert service.get(project, pg15).status is Status.SUPERSEDED and service.history.open_conflicts(project) == []
    assert ">Conflict</span>" not in client.get("/").text


def test_a_conflict_an_agent_raised_waits_in_the_inbox_with_its_other_side(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    from orcmem.models.types import Relation, Status

    mine = service.record(project, NewMemory("convention", "Use npm", "npm install", Source.USER)).memory
    agent = NewMemory("convention", "Use yarn", "yarn install", Source.AGENT)
    asked = service.record(project, agent, relation=Relation.REPLACES, related_id=mine.id)
    assert (asked.relation, asked.memory.status) == (Relation.CONFLICTS, Status.PENDING)
    text = client.get("/").text
    assert f"Contradicts “Use npm” ({mine.id}), which stays active." in text
    assert f"orcmem conflicts resolve {asked.memory.id} --keep {asked.memory.id}|{mine.id}|both" in text
