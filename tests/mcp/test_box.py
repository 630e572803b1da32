"""How the server holds its tools: a service that failed to open, and an embedder attached when memory turns on."""

from __future__ import annotations

import pytest
from mcp import Client

from orcmem.mcp_server.root import ToolsBox, build_server
from orcmem.models.errors import StoreError
from orcmem.service.agent_tools import AgentTools
from orcmem.service.memory_service import MemoryService
from tests.helpers import MakeTools


@pytest.mark.anyio
async def test_a_service_that_failed_to_open_is_reported_by_every_call() -> None:
    def broken() -> AgentTools:
        raise StoreError("The orcmem database at /x cannot be written.")

    async with Client(build_server(ToolsBox(broken))) as c:
        assert [tool.name for tool in (await c.list_tools()).tools] == ["task_context"]
        for name, arguments in (("task_context", {}), ("memory_search", {"query": "x"})):
            result = await c.call_tool(name, arguments)
            assert result.is_error and "cannot be written" in result.content[0].text  # type: ignore[union-attr]


def test_the_embedder_is_attached_once_when_memory_is_turned_on(service: MemoryService, make_tools: MakeTools) -> None:
    attached: list[AgentTools] = []
    service.settings.set_enabled(False)
    box = ToolsBox(lambda: make_tools(), attached.append)
    box()
    assert attached == []  # nothing is embedded while memory is off
    service.settings.set_enabled(True)
    tools = box()
    box()
    assert attached == [tools]


def test_the_cli_modes_are_the_policy_modes() -> None:
    from orcmem.mcp_server.root import MODES
    from orcmem.rules.permissions import Mode

    assert tuple(mode.value for mode in Mode) == MODES
