"""The MCP tools called with arbitrary argument dicts through the SDK's in-memory client: every call ends in a tool
result or a tool error (never a crash of the call or the server), and nothing invalid is ever stored.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from orcmem.mcp_server.root import build_server
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    TITLE_MAX_CHARS,
    TOPIC_KEY_MAX_CHARS,
)
from orcmem.models.types import MemoryFilter, NewMemory, Project, Scope, Source
from orcmem.service.agent_tools import AgentTools
from orcmem.service.memory_service import MemoryService
from tests.abuse.invariants import assert_within_rules

TOOLS = ["memory_search", "memory_recall", "task_context", "memory_record", "memory_feedback", "memory_manage"]
PARAMS = [
    "query", "limit", "prompt", "session_id", "cwd", "type", "title", "body", "topic_key", "id", "verdict", "action",
    "scope", "kind",
]  # fmt: skip
GOOD = {
    "query": ["deploy", "make ship", "*", '"', "NEAR(", "🙂"],
    "limit": [1, 8, 20, 0, 21, -1, 10**20],
    "type": ["lesson", "decision", "preference", "ownership", "LESSON ", "fact"],
    "verdict": ["helpful", "wrong", "stale", "Helpful"],
    "action": ["create", "update", "forget", "delete"],
    "scope": ["workspace", "global", "project", ""],
    "kind": ["preference", "fact", "workflow", "decision", "lesson"],
    "title": ["Deploy with make ship", "x" * TITLE_MAX_CHARS, "x" * (TITLE_MAX_CHARS + 1), "   ", ""],
    "body": ["then tag the release", "y" * BODY_MAX_CHARS, "y" * (BODY_MAX_CHARS + 1), "\x00", "\ud800"],
    "topic_key": ["deploy/flow", "k" * TOPIC_KEY_MAX_CHARS, "k" * (TOPIC_KEY_MAX_CHARS + 1), " ", None],
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


def check_store(service: MemoryService, user_rows: dict[str, Any]) -> None:
    """Every stored memory obeys every rule, and the user's own memories still say what the user wrote."""
    for memory in _all(service):
        assert_within_rules(memory)
        if memory.source is not Source.USER:
            assert memory.source is Source.AGENT  # the only writer here besides the user
    for memory_id, before in user_rows.items():  # an agent may only mark the user's memories helpful
        after = service.store.memories.get(memory_id)
        assert after is not None and after.status is before.status
        assert (after.title, after.body, after.type, after.topic_key, after.files, after.scope, after.source) == (
            before.title,
            before.body,
            before.type,
            before.topic_key,
            before.files,
            before.scope,
            before.source,
        )


def _all(service: MemoryService) -> list[Any]:
    projects = [project for project, _ in service.projects()]
    seen: dict[str, Any] = {}
    for project in [None, *projects]:
        for memory in service.list(project, MemoryFilter(limit=500)):
            seen[memory.id] = memory
    return list(seen.values())


@pytest.fixture
def seeded(service: MemoryService, project: Project) -> dict[str, Any]:
    """A user memory (project) and a global one, an agent memory; returns the user rows, which must never change."""
    user = service.record(project, NewMemory(type="lesson", title="User rule", body="keep", source=Source.USER))
    glob = service.record(
        project,
        NewMemory(type="preference", title="Global", body="tabs", source=Source.USER, scope=Scope.GLOBAL),
    )
    service.record(
        project, NewMemory(type="command", title="Agent note", body="make ship", source=Source.AGENT, topic_key="t")
    )
    return {m.id: service.store.memories.get(m.id) for m in (user.memory, glob.memory)}


def templates(ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Well-formed arguments of each tool; the fuzzer changes a few of them."""
    return {
        "memory_search": [{"query": "deploy", "limit": 8}],
        "memory_recall": [{"prompt": "deploy make ship", "session_id": "s", "cwd": "/x"}],
        "task_context": [{}],
        "memory_record": [{"type": "lesson", "title": "Deploy with make ship", "body": "then tag"}],
        "memory_feedback": [{"id": memory_id, "verdict": "helpful"} for memory_id in ids],
        "memory_manage": [
            {"action": "create", "scope": "workspace", "kind": "fact", "title": "Ship", "body": "make ship"},
            *({"action": "update", "scope": "workspace", "id": memory_id, "body": "changed"} for memory_id in ids),
            *({"action": "forget", "scope": "global", "id": memory_id} for memory_id in ids),
        ],
        "no_such_tool": [{}],
    }


@st.composite
def changes(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """One to four (parameter, new value) pairs; the value None from `drop` removes the parameter."""
    out = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        key = draw(st.sampled_from(PARAMS) | st.text(max_size=8))
        value = draw(st.sampled_from(GOOD[key]) if key in GOOD and draw(st.booleans()) else json_values)
        out.append((key, "__drop__" if draw(st.integers(0, 5)) == 0 else value))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mode=st.sampled_from(["yolo", "accept-edits", "review", "plan", "auto"]),
    calls=st.lists(st.tuples(st.sampled_from([*TOOLS, "no_such_tool"]), st.integers(0, 20), changes()), max_size=6),
)
def test_arbitrary_arguments_give_a_result_or_an_error(
    service: MemoryService, project: Project, seeded: dict[str, Any], mode: str, calls: list[Any]
) -> None:
    async def main() -> None:
        tools = AgentTools(service, project, mode=mode, headless=True, auto_approve=False, session_id="fuzz")
        async with Client(build_server(tools)) as client:
            for tool, pick, edits in calls:
                ids = [m.id for m in _all(service)] + ["mem_" + "0" * 32, "mem_XYZ"]
                options = templates(ids)[tool]
                arguments = dict(options[pick % len(options)])
                for key, value in edits:
                    if value == "__drop__":
                        arguments.pop(key, None)
                    else:
                        arguments[key] = value
                result = await client.call_tool(tool, arguments)
                assert isinstance(result.is_error, bool)
                assert result.content and all(block.type == "text" for block in result.content)
            assert {t.name for t in (await client.list_tools()).tools} >= set(TOOLS)  # still serving

    anyio.run(main)
    check_store(service, seeded)
