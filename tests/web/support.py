"""Helpers of the Memory page tests: seed data, a fake OS keyring, the launch token, screenshots."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orcmem.models.types import NewMemory, Project, Source, Status
from orcmem.service.memory_service import MemoryService

TOKEN = "test-launch-token-0123456789"
BASE = "http://127.0.0.1:8765"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"

KINDS = ("lesson", "decision", "command", "env_quirk", "convention", "preference")
SOURCES = (Source.AGENT, Source.EXTRACTION, Source.USER, Source.TOOL)


def seed(service: MemoryService, project: Project, count: int, *, days: float = 1.0) -> list[str]:
    """Record `count` memories, one every `days` days of the service clock, oldest first; returns their ids."""
    ids = []
    for i in range(count):
        memory = NewMemory(
            type=KINDS[i % len(KINDS)],
            title=f"Memory number {i:02d} about {'pytest' if i % 3 == 0 else 'deploys'}",
            body=f"Body of memory {i:02d}: {'run pytest with --pool=forks' if i % 3 == 0 else 'ship on Fridays'}.",
            source=SOURCES[i % len(SOURCES)],
            files=("src/app.py",) if i % 2 == 0 else (),
            topic_key=f"topic-{i:02d}" if i % 5 == 0 else None,
        )
        saved = service.record(project, memory, embed=False).memory
        if saved.status is Status.PENDING:  # a learned decision or convention from tool text: a person let it in
            service.review.accept(project, saved.id)
        ids.append(saved.id)
        service.clock.advance_days(days)  # type: ignore[attr-defined]
    return ids


def form(**fields: str) -> dict[str, str]:
    """Form fields of a change, with the launch token."""
    return {"token": TOKEN, **fields}


@dataclass
class LiveServer:
    """A uvicorn server on a free loopback port, in a thread."""

    url: str
    token: str
    service: MemoryService

    def launch(self, path: str = "/") -> str:
        """The address that hands the browser the launch key, then lands on `path`."""
        separator = "&" if "?" in path else "?"
        return f"{self.url}{path}{separator}token={self.token}"


def shot(browser_page: Any, name: str, tmp_path: Path, suffix: str = "") -> Path:
    """Save a full-page screenshot under the test's tmp dir and copy it to test-artifacts/web."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name + (f"-{suffix}" if suffix else ""))
    folder = tmp_path / "screenshots"
    folder.mkdir(exist_ok=True)
    target = folder / f"{safe}.png"
    browser_page.screenshot(path=str(target), full_page=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(target, ARTIFACTS / target.name)
    return target
