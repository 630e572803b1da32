"""Each MCP tool declared once (mcp_server/tool_specs.py): the pinned early list is the one its specs give."""

from __future__ import annotations

import inspect
import json
import os

from orcmem.mcp_server.identity import ALWAYS_LISTED
from orcmem.mcp_server.root import TOOL_LIST_FILE
from orcmem.mcp_server.tool_specs import TOOLS, tool_list
from orcmem.service.agent_tools import AgentTools


def test_the_pinned_tool_list_is_the_one_the_specs_give() -> None:
    """tools.json (answered before the SDK loads) equals the specs' list; ORCMEM_UPDATE_TOOL_LIST=1 rewrites it."""
    derived = tool_list()
    if os.environ.get("ORCMEM_UPDATE_TOOL_LIST"):
        TOOL_LIST_FILE.write_text(json.dumps(derived, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert json.loads(TOOL_LIST_FILE.read_text(encoding="utf-8")) == derived, "run with ORCMEM_UPDATE_TOOL_LIST=1"


def test_each_spec_calls_its_work_with_exactly_its_arguments() -> None:
    for spec in TOOLS:
        parameters = list(inspect.signature(spec.call).parameters)
        assert parameters[0] in ("agent", "self"), spec.name
        assert sorted(parameters[1:]) == sorted(arg.name for arg in spec.args), spec.name  # called by keyword


def test_the_tools_that_ask_are_the_ones_agent_tools_plans() -> None:
    """A spec that asks first is a write AgentTools can put a question about; the others never ask."""
    asking = {spec.name for spec in TOOLS if spec.asks}
    assert asking == {"memory_record", "memory_feedback", "memory_manage"}
    assert all(spec.call in (AgentTools.record, AgentTools.feedback, AgentTools.manage) for spec in TOOLS if spec.asks)
    assert {spec.name for spec in TOOLS if not spec.needs_memory} == ALWAYS_LISTED
