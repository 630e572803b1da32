"""Every memory rule of the seeds: ids, limits, merge, ownership, feedback, scope, deletion and settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.errors import MemoryOffError, NotFoundError, OwnershipError, ValidationError
from orcmem.models.types import MemoryFilter, NewMemory, Scope, Source, Status
from orcmem.service.memory_service import MemoryService
from tests.helpers import Clock, user_memory


def agent_memory(title: str = "Agent finding", body: str = "details", **kw) -> NewMemory:
    return user_memory(title, body, source=kw.pop("source", Source.AGENT), **kw)


def test_ids_are_public_random_and_well_formed(service: MemoryService, project) -> None:
    ids = {service.record(project, user_memory(f"t{i}", "b")).memory.id for i in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"mem_[0-9a-f]{32}", i) for i in ids)


@pytest.mark.parametrize("bad", ["1", "mem_123", "MEM_" + "a" * 32, "mem_" + "A" * 32, "' OR 1=1 --", ""])
def test_only_public_ids_are_accepted(service: MemoryService, project, bad: str) -> None:
    with pytest.raises(ValidationError, match="not a memory id"):
        service.get(project, bad)


def test_unknown_id_is_not_found(service: MemoryService, project) -> None:
    with pytest.raises(NotFoundError):
        service.get(project, "mem_" + "0" * 32)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "", "empty"),
        ("title", "x" * 121, "limit is 120"),
        ("body", "   ", "empty"),
        ("body", "x" * 801, "limit is 800"),
        ("topic_key", "k" * 81, "limit is 80"),
        ("type", "poem", "Unknown type"),
    ],
)
def test_limits_are_enforced(service: MemoryService, project, field: str, value: str, message: str) -> None:
    fields = {"type": "lesson", "title": "t", "body": "b", "source": Source.USER, field: value}
    with pytest.raises(ValidationError, match=message):
        service.record(project, NewMemory(**fields))
    assert service.count(project) == 0


def test_limits_at_the_edge_are_accepted(service: MemoryService, project) -> None:
    result = service.record(project, user_memory("t" * 120, "b" * 800, topic_key="k" * 80))
    assert len(result.memory.title) == 120 and len(result.memory.body) == 800


@pytest.mark.parametrize(("given", "stored"), [(None, 0.6), (0.0, 0.1), (-3, 0.1), (1.7, 1.0), (0.45, 0.45)])
def test_confidence_is_clamped(service: MemoryService, project, given, stored) -> None:
    assert service.record(project, user_memory(confidence=given)).memory.confidence == pytest.approx(stored)


def test_all_ten_types_are_accepted(service: MemoryService, project) -> None:
    types = ["decision", "spec", "lesson", "preference", "convention", "command", "env_quirk", "ownership"]
    for memory_type in [*types, "fact", "workflow"]:
        assert str(service.record(project, user_memory(type=memory_type)).memory.type) == memory_type


def test_files_are_kept_in_order_without_duplicates(service: MemoryService, project) -> None:
    memory = service.record(project, user_memory(files=("src/a.ts", "src/**/*.py", "src/a.ts"))).memory
    assert memory.files == ("src/a.ts", "src/**/*.py")
    assert service.get(project, memory.id).files == ("src/a.ts", "src/**/*.py")


# --- topic-key merge -------------------------------------------------------------------------------------------


def test_same_topic_key_merges(service: MemoryService, project, clock: Clock) -> None:
    first = service.record(project, agent_memory("Old", "old body", topic_key="test/pool", files=("a.ts",))).memory
    clock.advance_days(10)
    result = service.record(
        project, agent_memory("New", "new body", topic_key="test/pool", files=("b.ts",), confidence=0.2)
    )
    merged = result.memory
    assert result.merged and merged.id == first.id
    assert (merged.title, merged.body, merged.files) == ("New", "new body", ("b.ts",))
    assert merged.confidence == pytest.approx(0.7)  # input confidence ignored; +0.1
    assert merged.evidence_count == 2
    assert merged.last_confirmed_at == clock.now and merged.updated_at == clock.now
    assert merged.created_at < clock.now
    assert service.count(project) == 1


def test_merge_confidence_stops_at_one(service: MemoryService, project) -> None:
    for _ in range(8):
        memory = service.record(project, agent_memory(topic_key="k", confidence=0.9)).memory
    assert memory.confidence == pytest.approx(1.0)
    assert memory.evidence_count == 8


def test_merge_with_no_files_clears_them(service: MemoryService, project) -> None:
    service.record(project, agent_memory(topic_key="k", files=("a",)))
    assert service.record(project, agent_memory(topic_key="k")).memory.files == ()


def test_the_same_words_without_a_topic_key_confirm_one_memory(service: MemoryService, project) -> None:
    first = service.record(project, agent_memory("Use the forks pool", "vitest threads crash; forks works")).memory
    again = service.record(project, agent_memory("use the FORKS pool!", "Vitest threads crash,  forks works."))
    assert again.merged and again.memory.id == first.id and service.count(project) == 1
    assert (again.memory.evidence_count, again.memory.title) == (2, "Use the forks pool")  # the text stays
    assert again.memory.confidence == pytest.approx(first.confidence + 0.1)
    other = service.record(project, agent_memory("Use the threads pool", "vitest forks crash; threads works"))
    assert not other.merged and service.count(project) == 2


def test_an_edited_memory_is_repeated_by_its_new_words_only(service: MemoryService, project) -> None:
    first = service.record(project, agent_memory("Use the forks pool", "vitest threads crash; forks works")).memory
    service.edit(project, first.id, title="Use the vmThreads pool", body="vitest threads crash; vmThreads works")
    old_words = service.record(project, agent_memory("Use the forks pool", "vitest threads crash; forks works"))
    assert not old_words.merged
    new_words = service.record(project, agent_memory("use the vmthreads pool", "Vitest threads crash, vmThreads works"))
    assert new_words.merged and new_words.memory.id == first.id


def test_a_repeat_never_changes_what_the_user_wrote(service: MemoryService, project) -> None:
    person = agent_memory("Pin node 20", "node 22 breaks the build", source=Source.USER, files=("package.json",))
    mine = service.record(project, person).memory
    repeat = service.record(project, agent_memory("Pin Node 20.", "Node 22 breaks the build", files=(".nvmrc",)))
    assert repeat.memory.id == mine.id and repeat.memory.source is Source.USER
    assert (repeat.memory.title, repeat.memory.evidence_count) == ("Pin node 20", 2)
    assert repeat.memory.files == ("package.json",)  # the person's memory keeps its own files
    twice = service.record(project, agent_memory("Pin node 20", "node 22 breaks the build", source=Source.USER))
    assert not twice.merged  # the person's own writes are stored as asked


def test_retracted_memory_frees_its_topic_key(service: MemoryService, project) -> None:
    first = service.record(project, agent_memory(topic_key="k")).memory
    service.feedback(project, first.id, "wrong")
    second = service.record(project, agent_memory(topic_key="k"))
    assert not second.merged and second.memory.id != first.id


def test_topic_keys_are_per_project(service: MemoryService, project, tmp_path: Path) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    service.record(project, agent_memory(topic_key="k"))
    assert not service.record(other, agent_memory(topic_key="k")).merged


# --- ownership -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("writer", [Source.AGENT, Source.EXTRACTION, Source.TOOL])
def test_only_the_user_replaces_a_user_topic(service: MemoryService, project, writer: Source) -> None:
    mine = service.record(project, user_memory("Mine", "my words", topic_key="style")).memory
    with pytest.raises(OwnershipError, match="only the user can change it"):
        service.record(project, agent_memory("Theirs", "other words", topic_key="style", source=writer))
    unchanged = service.get(project, mine.id)
    assert (unchanged.title, unchanged.body, unchanged.evidence_count) == ("Mine", "my words", 1)


def test_the_user_can_replace_their_own_and_an_agents_topic(service: MemoryService, project) -> None:
    agent = service.record(project, agent_memory(topic_key="k")).memory
    merged = service.record(project, user_memory("User", "wins", topic_key="k"))
    assert merged.merged and merged.memory.id == agent.id
    assert merged.memory.source is Source.AGENT  # the original writer is kept


@pytest.mark.parametrize("verdict", ["wrong", "stale"])
def test_an_agent_cannot_judge_a_user_memory(service: MemoryService, project, verdict: str) -> None:
    mine = service.record(project, user_memory()).memory
    with pytest.raises(OwnershipError):
        service.feedback(project, mine.id, verdict, actor=Source.AGENT)
    assert service.get(project, mine.id).status is Status.ACTIVE


def test_an_agent_may_mark_a_user_memory_helpful(service: MemoryService, project) -> None:
    mine = service.record(project, user_memory()).memory
    assert service.feedback(project, mine.id, "helpful", actor=Source.AGENT).confidence == pytest.approx(0.7)


def test_an_agent_cannot_edit_or_delete_a_user_memory(service: MemoryService, project) -> None:
    mine = service.record(project, user_memory()).memory
    with pytest.raises(OwnershipError):
        service.edit(project, mine.id, title="hijacked", actor=Source.AGENT)
    with pytest.raises(OwnershipError):
        service.forget(project, mine.id, actor=Source.AGENT)
    assert service.get(project, mine.id).title == mine.title


# --- feedback, edit, delete ------------------------------------------------------------------------------------


def test_feedback_helpful_raises_confidence_and_resets_age(service: MemoryService, project, clock: Clock) -> None:
    memory = service.record(project, agent_memory(confidence=0.95)).memory
    clock.advance_days(30)
    judged = service.feedback(project, memory.id, "helpful")
    assert judged.confidence == pytest.approx(1.0)
    assert judged.last_confirmed_at == clock.now


@pytest.mark.parametrize(("verdict", "status"), [("wrong", Status.RETRACTED), ("stale", Status.STALE)])
def test_feedback_wrong_and_stale(service: MemoryService, project, verdict: str, status: Status) -> None:
    memory = service.record(project, agent_memory("Flaky pool", "use threads")).memory
    assert service.feedback(project, memory.id, verdict).status is status
    assert service.search.hits(project, "flaky pool") == []


def test_unknown_verdict_is_refused(service: MemoryService, project) -> None:
    memory = service.record(project, agent_memory()).memory
    with pytest.raises(ValidationError, match="verdict"):
        service.feedback(project, memory.id, "meh")


def test_edit_changes_title_body_and_type_and_search_follows(service: MemoryService, project) -> None:
    memory = service.record(project, agent_memory("Alpha", "beta")).memory
    edited = service.edit(project, memory.id, title="Gamma", body="delta", type="decision")
    assert (edited.title, edited.body, str(edited.type)) == ("Gamma", "delta", "decision")
    assert service.search.hits(project, "alpha") == []
    assert [h.memory.id for h in service.search.hits(project, "gamma delta")] == [memory.id]


def test_edit_without_changes_is_refused(service: MemoryService, project) -> None:
    memory = service.record(project, agent_memory()).memory
    with pytest.raises(ValidationError, match="Nothing to change"):
        service.edit(project, memory.id)


def test_forget_removes_row_search_entry_and_files(service: MemoryService, project) -> None:
    memory = service.record(project, agent_memory("Unique zebra", "body", files=("a.py",))).memory
    service.forget(project, memory.id)
    with pytest.raises(NotFoundError):
        service.get(project, memory.id)
    assert service.search.hits(project, "zebra") == []
    db = service.store.db
    assert db.query_one("SELECT count(*) FROM memory_files")[0] == 0
    assert db.query_one("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zebra'")[0] == 0


def test_deleting_runs_and_tasks_never_deletes_memories(service: MemoryService, project) -> None:
    task = service.store.tasks.add(project.id, "T", None, now=0)
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s1", transcript_path=None, cwd=None, now=0
    )
    service.store.runs.link_task(run.id, task.id, "task")
    memory = service.record(project, agent_memory(source_run_id=run.id, source_task_id=task.id)).memory
    service.store.runs.delete(run.id)
    with service.store.db.transaction():  # tasks are never deleted by orcmem itself; a person may, with SQL
        service.store.db.query("DELETE FROM tasks WHERE id = ?", (task.id,))
    kept = service.get(project, memory.id)
    assert kept.source_run_id is None and kept.source_task_id is None


# --- scope -----------------------------------------------------------------------------------------------------


def test_global_memories_reach_every_project(service: MemoryService, project, tmp_path: Path) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    memory = service.record(project, user_memory("Prefer tabs", "everywhere", scope=Scope.GLOBAL)).memory
    assert memory.project_id is None and memory.origin_root == project.root_path
    assert [m.id for m in service.list(other)] == [memory.id]
    assert [h.memory.id for h in service.search.hits(other, "tabs")] == [memory.id]


def test_project_memories_stay_in_their_project(service: MemoryService, project, tmp_path: Path) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    memory = service.record(project, user_memory("Secret sauce", "local only")).memory
    assert service.list(other) == []
    assert service.search.hits(other, "secret sauce") == []
    with pytest.raises(NotFoundError):
        service.get(other, memory.id)
    with pytest.raises(NotFoundError):
        service.forget(other, memory.id)


def test_list_filters_and_pages(service: MemoryService, project, clock: Clock) -> None:
    for i in range(5):
        clock.advance_days(1)
        service.record(project, user_memory(f"user {i}", "b", type="lesson"))
        service.record(project, agent_memory(f"agent {i}", "b", type="command"))
    assert service.count(project) == 10
    assert [m.title for m in service.list(project, MemoryFilter(limit=2))] == ["agent 4", "user 4"]
    assert [m.title for m in service.list(project, MemoryFilter(limit=2, offset=2))] == ["agent 3", "user 3"]
    assert service.count(project, MemoryFilter(types=("command",))) == 5
    assert service.count(project, MemoryFilter(sources=("user",))) == 5
    with pytest.raises(ValidationError):
        service.list(project, MemoryFilter(limit=0))
    with pytest.raises(ValidationError):
        service.list(project, MemoryFilter(offset=-1))


# --- memory on and off, settings -------------------------------------------------------------------------------


def test_memory_is_off_in_a_new_profile(tmp_path: Path) -> None:
    svc = MemoryService.open(tmp_path / "fresh")
    try:
        assert svc.settings.current().enabled is False
        assert svc.settings.current().provider == "auto"
        with pytest.raises(MemoryOffError, match="memory is off"):
            svc.record(svc.project(locate(tmp_path)), user_memory())
    finally:
        svc.close()


def test_browsing_and_editing_work_while_off(service: MemoryService, project) -> None:
    memory = service.record(project, agent_memory("Keep me", "around")).memory
    service.settings.set_enabled(False)
    assert [m.id for m in service.list(project)] == [memory.id]
    assert [h.memory.id for h in service.search.hits(project, "keep")] == [memory.id]
    assert service.edit(project, memory.id, body="edited").body == "edited"
    service.forget(project, memory.id)


def test_turning_off_raises_the_policy_revision(service: MemoryService) -> None:
    before = service.settings.policy_revision()
    service.settings.set_enabled(False)
    service.settings.set_provider("off")
    service.settings.set_provider("claude")
    assert service.settings.policy_revision() == before + 2


def test_provider_and_model_settings(service: MemoryService) -> None:
    settings = service.settings.set_provider("codex", "gpt-5-mini")
    assert settings.provider == "codex" and settings.models == {"codex": "gpt-5-mini"}
    assert service.settings.set_provider("apikey", "claude-sonnet").models["claude"] == "claude-sonnet"
    assert "claude" not in service.settings.set_provider("claude", "").models
    with pytest.raises(ValidationError, match="Unknown provider"):
        service.settings.set_provider("copilot")
    with pytest.raises(ValidationError, match="Choose a provider"):
        service.settings.set_provider("auto", "some-model")


def test_every_change_is_audited(service: MemoryService, project) -> None:
    memory = service.record(project, user_memory()).memory
    service.feedback(project, memory.id, "helpful")
    service.forget(project, memory.id)
    actions = [row["action"] for row in service.store.audit.recent()]
    assert actions[:3] == ["memory.forget", "memory.feedback.helpful", "memory.record"]


def test_record_at_creates_the_project_and_the_memory_together_or_neither(service: MemoryService, tmp_path) -> None:
    from orcmem.host.workspace import Location

    place = Location(str(tmp_path / "new"), str(tmp_path / "new"), "new")
    with pytest.raises(ValidationError):
        service.record_at(place, user_memory(title=""))
    assert service.projects() == []
    result = service.record_at(place, user_memory())
    assert [project.name for project, count in service.projects()] == ["new"]
    assert result.memory.project_id == service.projects()[0][0].id


def test_idle_minutes_read_back_and_a_value_it_would_refuse_means_the_default(service: MemoryService) -> None:
    from orcmem.models.constants import IDLE_MINUTES_DEFAULT, SETTING_IDLE_MINUTES

    assert service.settings.idle_minutes() == IDLE_MINUTES_DEFAULT
    assert service.settings.set_idle_minutes(2.5) == 2.5 and service.settings.idle_minutes() == 2.5
    for stored in ("nan", "-3", "inf", "soon"):  # written by an older orcmem, or by hand
        service.store.settings.set(SETTING_IDLE_MINUTES, stored)
        assert service.settings.idle_minutes() == IDLE_MINUTES_DEFAULT, stored
