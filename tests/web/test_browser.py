"""The Memory page in Debian's Chromium, driven by Playwright against a real uvicorn server.

Each test leaves a screenshot in its tmp dir and in test-artifacts/web/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.types import MemoryFilter, NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from tests.web.support import LiveServer, seed, shot

pytestmark = pytest.mark.browser


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def card(page: Any, memory_id: str) -> Any:
    return page.locator(f"article#{memory_id}")


def no_script_errors(page: Any, *, allow: str | None = None) -> None:
    """No script error and no Content-Security-Policy violation (`allow`: a message the test caused on purpose)."""
    errors = [e for e in page.script_errors if allow is None or allow not in e]
    assert errors == [], errors


def test_browse_and_page(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    seed(service, project, 30)
    page.goto(live_server.launch())
    assert "token=" not in page.url  # traded for a cookie
    expect(page.locator("#count-line")).to_have_text("1–25 of 30 saved memories")
    expect(page.locator("article.card")).to_have_count(25)
    expect(page.locator("article.card").first.locator(".card-title")).to_have_text("Memory number 29 about deploys")
    shot(page, "browse-page-1", tmp_path)
    page.get_by_role("link", name="Next").click()
    expect(page.locator("#count-line")).to_have_text("26–30 of 30 saved memories")
    expect(page.locator("article.card")).to_have_count(5)
    expect(page.get_by_text("Page 2 of 2")).to_be_visible()
    no_script_errors(page)


def test_search_filter_and_clear(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    seed(service, project, 12)
    page.goto(live_server.launch())
    expect(page.locator("#clear-filters")).to_be_hidden()
    page.keyboard.press("/")  # the shortcut focuses the search box
    expect(page.get_by_label("Search memories")).to_be_focused()
    page.keyboard.type("pytest")
    expect(page.locator("#count-line")).to_have_text("4 matching memories · Searches active memories")
    expect(page).to_have_url(re.compile(r"q=pytest"))
    expect(page.get_by_label("Search memories")).to_be_focused()  # results changed under the cursor
    page.get_by_label("Type").select_option("lesson")
    expect(page.locator("article.card")).to_have_count(2)
    expect(page.locator("#clear-filters")).to_be_visible()
    shot(page, "search-filtered", tmp_path)
    page.get_by_label("Search memories").fill("")
    page.get_by_label("Type").select_option("")
    page.get_by_label("Source").select_option("user")
    expect(page.locator("#count-line")).to_have_text("3 saved memories")
    expect(page.locator("article.card .meta li:first-child")).to_have_text(["Saved by you"] * 3)
    page.locator("#clear-filters").click()
    expect(page.locator("#count-line")).to_have_text("12 saved memories")
    expect(page.get_by_label("Source")).to_have_value("")
    no_script_errors(page)


def test_edit_in_place(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    (memory_id,) = seed(service, project, 1)
    page.goto(live_server.launch())
    item = card(page, memory_id)
    item.locator("summary", has_text="Edit").click()
    title = item.get_by_label("Title")
    expect(title).to_be_focused()
    title.fill("Run the suite with forks")
    item.get_by_label("Details").fill("vitest --pool=forks stops the worker crashes.")
    shot(page, "edit-open", tmp_path)
    item.get_by_role("button", name="Save changes").click()
    expect(card(page, memory_id).locator(".card-title")).to_have_text("Run the suite with forks")
    expect(page.locator("#notices")).to_contain_text("Saved “Run the suite with forks”.")
    expect(card(page, memory_id).locator("details[data-edit]")).not_to_have_attribute("open", "")
    stored = service.get(project, memory_id)
    assert (stored.title, stored.body) == ("Run the suite with forks", "vitest --pool=forks stops the worker crashes.")
    item = card(page, memory_id)
    item.locator("summary", has_text="Edit").click()
    item.get_by_label("Title").fill("")
    item.get_by_label("Title").evaluate("el => el.removeAttribute('required')")
    item.get_by_role("button", name="Save changes").click()
    expect(item.locator(".card-error")).to_contain_text("Could not update this memory.")
    assert service.get(project, memory_id).title == "Run the suite with forks"
    no_script_errors(page, allow="status of 400")


def test_retract_and_delete(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    keep, wrong, gone = seed(service, project, 3)
    page.goto(live_server.launch())
    card(page, wrong).get_by_role("button", name="Retract").click()
    expect(card(page, wrong).locator(".badge-retracted")).to_have_text("Retracted")
    expect(card(page, wrong).get_by_role("button", name="Retract")).to_have_count(0)
    assert str(service.get(project, wrong).status) == "retracted"
    card(page, gone).locator("summary", has_text="Delete…").click()
    expect(card(page, gone).get_by_text("Delete this memory for good?")).to_be_visible()
    shot(page, "delete-confirm", tmp_path)
    card(page, gone).get_by_role("button", name="Delete memory").click()
    expect(card(page, gone)).to_have_count(0)
    expect(page.locator("#count-line")).to_have_text("2 saved memories")
    expect(page.locator("#notices")).to_contain_text("Deleted “Memory number 02 about deploys”.")
    assert [m.id for m in service.list(project, MemoryFilter())] == [wrong, keep]
    no_script_errors(page)


def test_export_to_claude_md(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    (memory_id,) = seed(service, project, 1)
    page.goto(live_server.launch())
    card(page, memory_id).get_by_role("button", name="Add to CLAUDE.md").click()
    target = (Path(project.root_path) / "CLAUDE.md").resolve()
    expect(page.locator("#notices")).to_contain_text(f"to {target}.")
    assert target.read_text().startswith(f"{EXPORT_HEADING}\n- Memory number 00 about pytest: ")
    no_script_errors(page)


def test_toggle_memory(page: Any, live_server: LiveServer, service: MemoryService, tmp_path: Path) -> None:
    page.goto(live_server.launch("/settings"))
    expect(page.get_by_role("heading", name="Memory is on")).to_be_visible()
    page.get_by_role("button", name="Turn memory off").click()
    expect(page.get_by_role("heading", name="Memory is off")).to_be_visible()
    expect(page.locator("#notices")).to_contain_text("Memory is off.")
    assert service.is_enabled() is False
    shot(page, "memory-off", tmp_path)
    page.get_by_role("button", name="Turn memory on").click()
    expect(page.get_by_role("heading", name="Memory is on")).to_be_visible()
    assert service.is_enabled() is True
    no_script_errors(page)


def test_change_provider(page: Any, live_server: LiveServer, service: MemoryService) -> None:
    page.goto(live_server.launch("/settings"))
    page.get_by_label("Claude Code · your Claude Code subscription").check()
    page.get_by_label("Model", exact=True).fill("claude-opus-4-1")
    page.get_by_role("button", name="Save provider").click()
    expect(page.locator("#notices")).to_contain_text("Saved.")
    expect(page.get_by_label("Claude Code · your Claude Code subscription")).to_be_checked()
    expect(page.get_by_label("Model", exact=True)).to_have_value("claude-opus-4-1")
    assert service.settings.current().provider == "claude" and service.settings.current().models == {
        "claude": "claude-opus-4-1"
    }
    page.get_by_label("Off · no background learning; agents can still save memories").check()
    page.get_by_role("button", name="Save provider").click()
    expect(page.locator("#extraction-sentence")).to_have_text(
        "Finished runs are not summarized. Agents can still save memories."
    )
    assert service.settings.current().provider == "off"
    no_script_errors(page)


def test_a_script_title_is_only_text(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    memory = service.record(
        project,
        NewMemory(
            type="lesson",
            title="<script>window.pwned = 1</script>",
            body='<img src=x onerror="window.pwned = 2">',
            source=Source.AGENT,
        ),
    ).memory
    page.goto(live_server.launch())
    expect(card(page, memory.id).locator(".card-title")).to_have_text("<script>window.pwned = 1</script>")
    expect(card(page, memory.id).locator(".card-body")).to_have_text('<img src=x onerror="window.pwned = 2">')
    assert card(page, memory.id).locator("script, img").count() == 0
    card(page, memory.id).get_by_role("button", name="Mark helpful").click()  # the card comes back from the server
    expect(page.locator("#notices")).to_contain_text("<script>window.pwned = 1</script>")
    expect(card(page, memory.id).locator(".card-title")).to_have_text("<script>window.pwned = 1</script>")
    page.get_by_label("Search memories").fill("script")
    expect(page.locator("#count-line")).to_contain_text("1 matching memory")
    assert page.evaluate("window.pwned") is None
    no_script_errors(page)


def test_everything_works_without_javascript(
    chromium: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    ids = seed(service, project, 3)
    context = chromium.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 800})
    try:
        page = context.new_page()
        page.goto(live_server.launch())
        page.get_by_label("Search memories").fill("pytest")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("#count-line")).to_have_text("1 matching memory · Searches active memories")
        page.goto(live_server.url + "/")
        card(page, ids[1]).get_by_role("button", name="Retract").click()
        expect(page.locator(".flash-ok")).to_contain_text("Retracted")
        assert str(service.get(project, ids[1]).status) == "retracted"
        item = card(page, ids[2])
        item.locator("summary", has_text="Edit").click()
        item.get_by_label("Title").fill("Edited without script")
        item.get_by_role("button", name="Save changes").click()
        expect(page.locator(".flash-ok")).to_have_text("Saved “Edited without script”.")
        card(page, ids[0]).locator("summary", has_text="Delete…").click()
        card(page, ids[0]).get_by_role("button", name="Delete memory").click()
        expect(page.locator("#count-line")).to_have_text("2 saved memories")
        shot(page, "no-javascript", tmp_path)
    finally:
        context.close()


def test_keyboard_only(page: Any, live_server: LiveServer, service: MemoryService, project: Project) -> None:
    (memory_id,) = seed(service, project, 1)
    page.goto(live_server.launch())
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    edit = card(page, memory_id).locator("summary", has_text="Edit")
    edit.focus()
    page.keyboard.press("Enter")
    expect(card(page, memory_id).get_by_label("Title")).to_be_focused()
    page.keyboard.press("Escape")
    expect(edit).to_be_focused()
    expect(card(page, memory_id).locator("details[data-edit]")).not_to_have_attribute("open", "")
    helpful = card(page, memory_id).get_by_role("button", name="Mark helpful")
    helpful.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#notices")).to_contain_text("as helpful")
    no_script_errors(page)


def test_labelled_controls(page: Any, live_server: LiveServer, service: MemoryService, project: Project) -> None:
    seed(service, project, 2)
    for path in ("/", "/settings"):
        page.goto(live_server.launch(path))
        unlabelled = page.evaluate(
            """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
                .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                              && !(el.textContent || '').trim())
                .map(el => el.outerHTML.slice(0, 80))"""
        )
        assert unlabelled == []


@pytest.mark.parametrize("path", ["/", "/overview", "/runs", "/settings"])
def test_a_narrow_window(
    chromium: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path, path: str
) -> None:
    seed(service, project, 8, days=3)
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto(live_server.launch(path))
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        shot(page, f"narrow{path.replace('/', '-') or '-memories'}", tmp_path)
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 360px"
    finally:
        context.close()


def test_overview_and_runs_pages(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    from orcmem.store.summaries import Summary

    seed(service, project, 20, days=1.5)
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=service.clock()
    )
    service.store.jobs.enqueue(run.id, policy_revision=0, now=service.clock())
    service.store.jobs.finish(run.id, "failed", error="claude is not logged in", written=0, now=service.clock())
    service.store.summaries.upsert(
        Summary(
            run.id, None, project.id, "Speed up CI", "Cached deps", "success", ("Flaky e2e",), None, service.clock()
        )
    )
    page.goto(live_server.launch("/overview"))
    expect(page.locator("svg.chart")).to_be_visible()
    expect(page.get_by_role("img", name="Memories over time, per day")).to_be_visible()
    shot(page, "overview", tmp_path)
    page.get_by_role("link", name="Runs").click()
    expect(page.get_by_text("Speed up CI")).to_be_visible()
    expect(page.get_by_text("claude is not logged in")).to_be_visible()
    no_script_errors(page)
