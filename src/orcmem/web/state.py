"""What every request handler of the Memory page shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from starlette.templating import Jinja2Templates

from orcmem.service.memory_service import MemoryService


@dataclass
class WebState:
    """What every request handler needs: the service, the launch token and where the profile lives."""

    service: MemoryService
    token: str
    cookie_name: str
    templates: Jinja2Templates
    environ: Mapping[str, str]
    home: Path | None = None
    owns_service: bool = False

    @property
    def flash_cookie(self) -> str:
        """The cookie that carries one notice across a redirect."""
        return self.cookie_name + "_flash"

    def close(self) -> None:
        """Close the service if this app opened it (once)."""
        if self.owns_service:
            self.owns_service = False
            self.service.close(embed_wait=5.0)

    def utc_offset_ms(self) -> int:
        """This machine's current offset from UTC, so days and times read as the local clock does."""
        offset = datetime.now().astimezone().utcoffset()
        return int(offset.total_seconds() * 1000) if offset else 0
