"""The Memory page says when its search matched by words only (the query's meaning late), in Debian's Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orcmem.embed.worker import WorkerEmbedder
from orcmem.models.types import NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from tests.embedders import StalledEmbedder
from tests.web.support import LiveServer, shot

pytestmark = pytest.mark.browser


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_a_words_only_search_says_so(
    page: Any, live_server: LiveServer, service: MemoryService, project: Project, tmp_path: Path
) -> None:
    if not service.store.vectors.available:
        pytest.skip("sqlite-vec unavailable")
    # The model is busy with a batch of documents that does not end: the query's vector misses its limit.
    stalled = StalledEmbedder(max_wait=60)
    service.use_embedder(WorkerEmbedder(lambda: stalled, model_id=stalled.model_id))
    service.record(project, NewMemory("lesson", "Rotate the logs", "logrotate runs daily.", Source.USER))
    assert stalled.entered.wait(10)
    try:
        page.goto(live_server.launch(f"/?project={project.id}&q=rotate+logs"))
        expect(page.locator("article.card")).to_have_count(1)
        notice = page.locator("#search-notice")
        expect(notice).to_contain_text("Searched by words only: the query's meaning was not ready within 0.5 s")
        shot(page, "search-words-only", tmp_path)
        stalled.release.set()
        assert service.pump is not None and service.pump.wait(10)
        page.goto(f"{live_server.url}/?project={project.id}&q=rotate+logs")
        expect(page.locator("article.card")).to_have_count(1)
        expect(page.locator("#search-notice")).to_have_count(0)
    finally:
        stalled.release.set()
