"""Fixtures for the MCP tests: tools in a chosen mode, and an elicitation callback that answers as told."""

from __future__ import annotations

from collections.abc import Callable

import mcp_types as types
import pytest

from orcmem.models import Project
from orcmem.service import MemoryService
from orcmem.service.agent_tools import AgentTools

MakeTools = Callable[..., AgentTools]


@pytest.fixture
def anyio_backend() -> str:
    """The in-memory client runs on asyncio."""
    return "asyncio"


@pytest.fixture
def make_tools(service: MemoryService, project: Project) -> MakeTools:
    """AgentTools for the test project; keywords override mode, headless, auto_approve, session_id and ask."""

    def make(mode: str = "review", **kw: object) -> AgentTools:
        options: dict[str, object] = {"headless": False, "auto_approve": False, "session_id": "session-1"}
        options.update(kw)
        return AgentTools(service, project, mode=mode, **options)  # type: ignore[arg-type]

    return make


class Elicitor:
    """A client's elicitation callback: records each question and answers with the next scripted reply."""

    def __init__(self, *replies: tuple[str, str | None]) -> None:
        self.replies = list(replies)  # (action, decision label or None)
        self.questions: list[str] = []
        self.schemas: list[dict[str, object]] = []

    async def __call__(self, context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        self.schemas.append(params.requested_schema)  # type: ignore[union-attr]
        action, label = self.replies.pop(0) if self.replies else ("decline", None)
        content = {"decision": label} if label is not None else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


def answer(label: str) -> tuple[str, str]:
    """An accepted elicitation choosing `label`."""
    return ("accept", label)
