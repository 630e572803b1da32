"""One rule for "possibly stale": the cards' badges and the Overview's count agree, in Debian's Chromium."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.types import MemoryFilter, NewMemory, Project, Source
from orcmem.rules.freshness import possibly_stale
from orcmem.service.memory_service import MemoryService
from tests.web.support import LiveServer, shot

APP = "def load_config(path):\n    return read(path)\n"


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True)


def stale_project(service: MemoryService, project: Project, root: Path) -> int:
    """Three memories cite a file that then goes away (one of them retracted), one cites nothing; how many the
    rule calls possibly stale."""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    cited = [
        service.record(
            project,
            NewMemory(
                "lesson", f"Config {n}", f"`load_config` reads the env first ({n})", Source.USER, files=("src/app.py",)
            ),
        ).memory
        for n in range(3)
    ]
    service.record(project, NewMemory("fact", "Tabs", "Indent with tabs.", Source.USER))
    (root / "src" / "app.py").unlink()
    assert len(service.check_freshness(project).stale) == 3
    service.feedback(project, cited[0].id, "wrong")  # retracted: out of agents' sight, no longer "possibly stale"
    every = service.list(project, MemoryFilter(statuses=("active", "stale", "retracted"), limit=100))
    return sum(possibly_stale(memory.status, memory.stale_reason) for memory in every)


@pytest.mark.browser
def test_the_overview_counts_the_badges_the_cards_show(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, project_dir: Path, tmp_path: Path
) -> None:
    expected = stale_project(service, project, project_dir)
    assert expected == 2
    page.goto(live_server.launch(f"/overview?project={project.id}"))
    row = page.locator("#by-status").locator("xpath=..").locator("tr", has_text="Active, possibly stale")
    expect(row.locator("td.num")).to_have_text(str(expected))
    shot(page, "overview-possibly-stale", tmp_path)
    page.goto(f"{live_server.url}/?project={project.id}&status=")
    expect(page.locator("article.card")).to_have_count(4)
    badges = page.locator("article.card .badge", has_text="Possibly stale")
    expect(badges).to_have_count(expected)
    page.goto(f"{live_server.url}/?project={project.id}&status=retracted")
    expect(page.locator("article.card")).to_have_count(1)
    expect(page.locator("article.card .badge", has_text="Possibly stale")).to_have_count(0)
