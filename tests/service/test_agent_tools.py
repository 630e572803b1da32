"""AgentTools without MCP: the plain-data semantics and the permission flow with an `ask` callback."""

from __future__ import annotations

import pytest

from orcmem.models.errors import MemoryOffError, PermissionDenied, ValidationError
from orcmem.models.types import NewMemory, Project, Source
from orcmem.rules.permissions import HEADLESS_REFUSAL
from orcmem.service.agent_tools import summarize
from orcmem.service.memory_service import MemoryService
from tests.helpers import MakeTools


def test_summary_keeps_200_characters_and_marks_the_cut() -> None:
    assert summarize("x" * 200) == "x" * 200
    assert summarize("x" * 201) == "x" * 200 + "…"


def test_reads_and_writes_are_refused_while_memory_is_off_but_task_context_is_not(
    service: MemoryService, make_tools: MakeTools
) -> None:
    tools = make_tools("yolo")
    service.settings.set_enabled(False)
    with pytest.raises(MemoryOffError, match="memory is off"):
        tools.search("anything")
    with pytest.raises(MemoryOffError):
        tools.record("lesson", "t", "b")
    with pytest.raises(MemoryOffError):
        tools.manage("create", "fact", "workspace", title="t", body="b")
    assert tools.task_context().startswith("No task context")


def test_empty_query_is_a_clear_error(make_tools: MakeTools) -> None:
    with pytest.raises(ValidationError, match="query is empty"):
        make_tools().search("   ")


def test_age_is_whole_days_since_last_confirmed(service: MemoryService, project: Project, make_tools: MakeTools, clock):
    service.record(project, NewMemory("lesson", "Pin the node version", "node 20", Source.AGENT))
    clock.advance_days(2.6)
    (hit,) = make_tools().search("node version")
    assert hit["age_days"] == 3


def test_the_question_names_the_change_and_hides_secrets(make_tools: MakeTools) -> None:
    tools = make_tools("review")
    question = tools.question(
        "memory_record", {"type": "command", "title": "Log in", "body": "password=hunter2hunter2", "topic_key": None}
    )
    assert question is not None
    assert "Save to project memory: Log in" in question
    assert "hunter2" not in question and "[redacted:" in question


def test_no_question_when_the_policy_does_not_ask_or_the_call_is_invalid(make_tools: MakeTools) -> None:
    args = {"type": "lesson", "title": "t", "body": "b", "topic_key": None}
    assert make_tools("accept-edits").question("memory_record", args) is None
    assert make_tools("review", headless=True).question("memory_record", args) is None
    assert make_tools("review").question("memory_record", {**args, "type": "preference"}) is None
    assert make_tools("review").question("memory_search", {"query": "x"}) is None


@pytest.mark.parametrize(("reply", "allowed"), [("once", True), ("session", True), ("deny", False), ("maybe", False)])
def test_the_ask_callback_decides(make_tools: MakeTools, reply: str, allowed: bool) -> None:
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return reply

    tools = make_tools("review", ask=ask)
    if allowed:
        assert tools.record("lesson", "A lesson", "details")["recorded"] is True
    else:
        with pytest.raises(PermissionDenied, match="declined"):
            tools.record("lesson", "A lesson", "details")
    assert len(asked) == 1


def test_an_ask_that_cannot_reach_anyone_denies_like_headless(make_tools: MakeTools) -> None:
    with pytest.raises(PermissionDenied) as caught:
        make_tools("review", ask=lambda _question: None).record("lesson", "A lesson", "details")
    assert str(caught.value) == HEADLESS_REFUSAL


def test_auto_review_allows_a_related_but_different_memory(
    service: MemoryService, project: Project, make_tools: MakeTools
) -> None:
    service.record(
        project, NewMemory("lesson", "Use the forks pool", "vitest --pool=forks avoids crashes", Source.AGENT)
    )
    # 4 shared words of 11: well below the 0.8 overlap that counts as a near-duplicate
    result = make_tools("auto").record("lesson", "Use the threads pool", "vitest --pool=threads is faster now")
    assert result["recorded"] is True


def test_update_needs_something_to_change_and_keeps_the_topic_key(
    service: MemoryService, project: Project, make_tools: MakeTools
) -> None:
    stored = service.record(project, NewMemory("fact", "F", "b", Source.AGENT, topic_key="a/b")).memory
    tools = make_tools("yolo")
    with pytest.raises(ValidationError, match="something to change"):
        tools.manage("update", None, "workspace", stored.id)
    with pytest.raises(ValidationError, match="topic key cannot be changed"):
        tools.manage("update", None, "workspace", stored.id, body="new", topic_key="c/d")
    with pytest.raises(ValidationError, match="takes no id"):
        tools.manage("create", "fact", "workspace", stored.id, title="t", body="b")
    with pytest.raises(ValidationError, match="Unknown action"):
        tools.manage("delete", None, "workspace", stored.id)
    with pytest.raises(ValidationError, match="Unknown scope"):
        tools.manage("forget", None, "project", stored.id)
    changed = tools.manage("update", "decision", "workspace", stored.id, topic_key="a/b")
    assert changed["changed"] == ["kind"] and changed["kind"] == "decision"


def test_a_workspace_grant_never_widens_headless_sessions_or_global_scope(
    service: MemoryService, make_tools: MakeTools
) -> None:
    make_tools("review", ask=lambda _question: "workspace").record("lesson", "A lesson", "details")
    assert [grant.scope for grant, _project in service.grants()] == ["workspace"]
    assert make_tools("review").record("lesson", "Second", "more")["recorded"] is True  # the grant answers
    with pytest.raises(PermissionDenied) as caught:
        make_tools("review", headless=True).record("lesson", "Third", "still more")
    assert str(caught.value) == HEADLESS_REFUSAL  # a grant is no --auto-approve
    asked: list[str] = []
    tools = make_tools("review", ask=lambda question: asked.append(question) or "workspace")
    tools.manage("create", scope="global", kind="fact", title="Every project", body="reaches all projects")
    assert len(asked) == 1  # a global memory is asked for, grant or not
    assert [grant.scope for grant, _project in service.grants()] == ["workspace"]  # and grants nothing


def test_an_answer_from_an_http_client_allows_one_call_and_is_the_clients(
    service: MemoryService, make_tools: MakeTools
) -> None:
    tools = make_tools("review", ask=lambda _question: "workspace", answers_from_person=False)
    tools.record("lesson", "A lesson", "details")
    assert service.grants() == []
    [row] = [r for r in service.store.audit.recent(10) if r["action"] == "permission.allow"]
    assert row["metadata"]["policy"] == "client"


def test_grants_are_listed_and_revoked(service: MemoryService, make_tools: MakeTools) -> None:
    from orcmem.models.errors import NotFoundError

    make_tools("review", ask=lambda _question: "session").record("lesson", "A lesson", "details")
    [(grant, project)] = service.grants()
    assert grant.scope == "session" and grant.session_id == "session-1" and project is not None
    assert service.revoke_grant(grant.pk) == grant and service.grants() == []
    with pytest.raises(NotFoundError, match="orcmem grants"):
        service.revoke_grant(grant.pk)


def test_search_results_say_where_each_memorys_words_came_from(
    service: MemoryService, project: Project, make_tools: MakeTools
) -> None:
    service.record(project, NewMemory("lesson", "Pin the node version", "node 20", Source.AGENT))
    service.record(project, NewMemory("lesson", "Pin node with curl", "curl x | sh pins node", Source.EXTRACTION))
    hits = {hit["title"]: hit["provenance"] for hit in make_tools().search("pin node")}
    assert hits == {"Pin the node version": "agent", "Pin node with curl": "tool_text"}
