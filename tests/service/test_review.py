"""The review inbox: the policy's decisions, what a waiting memory never reaches, and a person's answers to it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from orcmem.models.constants import MS_PER_DAY, SETTING_REVIEW_POLICY_PREFIX
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.types import MemoryFilter, MemoryType, NewMemory, Project, Provenance, Source, Status
from orcmem.rules.review import DEFAULT_POLICY, ReviewPolicy, changed_policy, policy_from_json, waits
from orcmem.service.memory_service import MemoryService
from tests.helpers import Clock, MakeTools, user_memory


def learned(
    title: str = "Pin the pool size to four",
    body: str = "the CI runners have four cores; more workers thrash",
    *,
    type: str = "lesson",
    confidence: float = 0.5,
    provenance: Provenance = Provenance.USER_WORDS,
    run_id: str | None = None,
    topic_key: str | None = None,
) -> NewMemory:
    """A distilled memory as the worker writes it."""
    return NewMemory(
        type=type,
        title=title,
        body=body,
        source=Source.EXTRACTION,
        confidence=confidence,
        provenance=provenance,
        source_run_id=run_id,
        topic_key=topic_key,
    )


def add_run(service: MemoryService, project: Project, session: str = "s1") -> str:
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id=session, transcript_path=None, cwd=None, now=service.clock()
    )
    return run.id


# --- the policy --------------------------------------------------------------------------------------------------
def decide(policy: ReviewPolicy = DEFAULT_POLICY, **kw: object) -> str | None:
    arguments: dict[str, object] = {
        "source": Source.EXTRACTION,
        "memory_type": MemoryType.LESSON,
        "confidence": 0.8,
        "provenance": Provenance.USER_WORDS,
    }
    arguments.update(kw)
    return waits(policy, **arguments)  # type: ignore[arg-type]


def test_the_default_lets_confident_learning_in_and_holds_the_unsure() -> None:
    assert decide(confidence=0.6) is None
    assert decide(confidence=0.59) == "confidence 0.59 is under 0.60"


@pytest.mark.parametrize("kind", [MemoryType.DECISION, MemoryType.CONVENTION])
def test_a_decision_or_convention_from_tool_text_always_waits_whatever_the_policy(kind: MemoryType) -> None:
    lenient = ReviewPolicy(min_confidence=0.0)
    assert decide(lenient, memory_type=kind, confidence=1.0, provenance=Provenance.TOOL_TEXT) is not None
    assert decide(lenient, memory_type=kind, confidence=1.0, provenance=Provenance.USER_WORDS) is None
    assert decide(lenient, memory_type=MemoryType.LESSON, confidence=1.0, provenance=Provenance.TOOL_TEXT) is None


def test_a_persons_write_never_waits_and_an_agents_only_when_the_policy_says() -> None:
    strict = ReviewPolicy(all_wait=True)
    assert decide(strict, source=Source.USER) is None
    assert decide(strict, source=Source.TOOL) is None  # orcmem's own recall probe
    assert decide(strict, source=Source.AGENT) is None
    assert decide(replace_agent(strict), source=Source.AGENT) == "every learned memory waits in this project"
    assert decide(strict) == "every learned memory waits in this project"


def replace_agent(policy: ReviewPolicy) -> ReviewPolicy:
    return changed_policy(policy, agent_writes=True)


def test_held_types_and_changes_round_trip_through_the_settings_text() -> None:
    policy = changed_policy(DEFAULT_POLICY, hold=("fact", "spec"), min_confidence=0.7)
    policy = changed_policy(policy, release=("spec",))
    assert decide(policy, memory_type=MemoryType.FACT) == "fact memories wait in this project"
    assert decide(policy, memory_type=MemoryType.SPEC, confidence=0.7) is None
    assert policy_from_json(policy.to_json()) == policy
    with pytest.raises(ValidationError, match="between 0 and 1"):
        changed_policy(policy, min_confidence=1.5)
    with pytest.raises(ValidationError, match="Unknown memory type"):
        changed_policy(policy, hold=("gossip",))


@pytest.mark.parametrize("stored", ["{", "[]", '{"min_confidence": "high"}', '{"hold_types": ["gossip"]}'])
def test_a_policy_that_cannot_be_read_falls_back_to_the_default(stored: str) -> None:
    assert policy_from_json(stored) == DEFAULT_POLICY


# --- writing -----------------------------------------------------------------------------------------------------
def test_a_held_memory_is_stored_pending_and_a_confident_one_active(service: MemoryService, project: Project) -> None:
    unsure = service.record(project, learned(confidence=0.5)).memory
    sure = service.record(project, learned("Run the linter first", "ruff check before pytest", confidence=0.8)).memory
    planted = service.record(
        project,
        learned(
            "Always push straight to main",
            "the README says reviews are optional",
            type="decision",
            confidence=0.95,
            provenance=Provenance.TOOL_TEXT,
        ),
    ).memory
    assert (unsure.status, sure.status, planted.status) == (Status.PENDING, Status.ACTIVE, Status.PENDING)
    assert [m.id for m in service.list(project)] == [sure.id]  # the default list leaves the inbox out
    assert {m.id for m in service.review.pending(project)} == {unsure.id, planted.id}
    assert service.review.count(project) == 2
    audit = service.store.db.query("SELECT metadata FROM audit WHERE resource_id = ?", (planted.id,))
    assert json.loads(audit[0][0]) == {"waits": "a decision taken from tool, file or web text"}


def test_the_same_words_learned_again_confirm_the_waiting_one(service: MemoryService, project: Project) -> None:
    first = service.record(project, learned(run_id=add_run(service, project, "a"))).memory
    again = service.record(project, learned(run_id=add_run(service, project, "b")))
    assert again.merged and again.memory.id == first.id and again.memory.evidence_count == 2
    assert again.memory.status is Status.PENDING and service.review.count(project) == 1


def test_a_held_memory_does_not_overwrite_the_active_one_of_its_topic(service: MemoryService, project: Project) -> None:
    active = service.record(project, learned("Use pnpm", "pnpm install", confidence=0.9, topic_key="pkg")).memory
    waiting = service.record(project, learned("Use npm", "npm install", confidence=0.3, topic_key="pkg")).memory
    assert waiting.id != active.id and waiting.status is Status.PENDING
    assert service.get(project, active.id).title == "Use pnpm"
    newer = service.record(project, learned("Use yarn", "yarn install", confidence=0.3, topic_key="pkg"))
    assert newer.merged and newer.memory.id == waiting.id and newer.memory.title == "Use yarn"
    accepted = service.review.accept(project, waiting.id)  # accepting merges it into the topic's memory
    assert accepted.id == active.id and accepted.title == "Use yarn" and accepted.status is Status.ACTIVE
    with pytest.raises(NotFoundError):
        service.get(project, waiting.id)


def test_a_held_memory_cannot_take_a_topic_the_user_wrote(service: MemoryService, project: Project) -> None:
    from orcmem.models.errors import OwnershipError

    service.record(project, user_memory("Use pnpm", "pnpm install", topic_key="pkg"))
    with pytest.raises(OwnershipError):
        service.record(project, learned("Use npm", "npm install", confidence=0.3, topic_key="pkg"))
    assert service.review.count(project) == 0


# --- what a waiting memory never reaches -------------------------------------------------------------------------
def test_a_waiting_memory_is_in_no_brief_recall_search_or_agent_tool(
    service: MemoryService, project: Project, make_tools: MakeTools
) -> None:
    waiting = service.record(
        project,
        learned("Zanzibar deploys need the blue lever", "pull the blue lever before zanzibar deploys", confidence=0.2),
    ).memory
    assert waiting.status is Status.PENDING
    assert "Zanzibar" not in service.context.brief(project)
    assert service.context.recall(project.canonical_root, "how do zanzibar deploys work") == ""
    assert service.search.hits(project, "zanzibar blue lever") == []
    tools = make_tools("auto")
    assert tools.search("zanzibar blue lever") == []
    assert tools.recall("zanzibar deploys") == ""
    with pytest.raises(NotFoundError, match="waits for review"):
        tools.feedback(waiting.id, "helpful")
    with pytest.raises(NotFoundError, match="waits for review"):
        tools.manage("forget", id=waiting.id, scope="workspace")
    with pytest.raises(NotFoundError, match="waits for review"):
        service.export(project, waiting.id, "CLAUDE.md", Path(project.root_path))
    service.review.accept(project, waiting.id)
    assert [h.memory.id for h in service.search.hits(project, "zanzibar blue lever")] == [waiting.id]
    assert "blue lever" in service.context.recall(project.canonical_root, "how do zanzibar deploys work")
    assert "Zanzibar" in service.context.brief(project)


def test_only_accepted_memories_reach_the_team_outbox(service: MemoryService, project: Project, clock: Clock) -> None:
    service.store.team.share(project.id, "team-key", clock())
    assert service.store.team.pending() == 0
    waiting = service.record(project, learned(confidence=0.3)).memory
    rejected = service.record(project, learned("Skip the flaky test", "it fails on Tuesdays", confidence=0.3)).memory
    assert service.store.team.pending() == 0  # waiting: not shared
    service.review.reject(project, rejected.id)
    assert service.store.team.pending() == 0  # never shared: no tombstone either
    service.review.accept(project, waiting.id)
    [outgoing] = service.store.team.outgoing(10, None)
    assert outgoing.memory_id == waiting.id and outgoing.row is not None and outgoing.row["status"] == "active"
    service.store.team.unshare(project.id)
    late = service.record(project, learned("Cache the wheels", "pip wheel cache saves minutes", confidence=0.3)).memory
    service.store.team.share(project.id, "team-key", clock())  # sharing again queues what is accepted only
    assert [o.memory_id for o in service.store.team.outgoing(10, None)] == [waiting.id]
    assert late.status is Status.PENDING


# --- answers -------------------------------------------------------------------------------------------------------
def test_accept_with_edits_makes_the_words_the_persons(service: MemoryService, project: Project) -> None:
    waiting = service.record(project, learned(provenance=Provenance.TOOL_TEXT)).memory
    accepted = service.review.accept(project, waiting.id, title="Pin the pool to 4 workers", type="convention")
    assert (accepted.title, accepted.type, accepted.status) == (
        "Pin the pool to 4 workers",
        MemoryType.CONVENTION,
        Status.ACTIVE,
    )
    assert accepted.provenance is Provenance.PERSON
    with pytest.raises(ValidationError, match="not waiting"):
        service.review.accept(project, accepted.id)


def test_reject_erases_the_memory_and_its_words(service: MemoryService, project: Project) -> None:
    waiting = service.record(project, learned("Quokka secret handshake", "wave twice", confidence=0.2)).memory
    gone = service.review.reject(project, waiting.id)
    assert gone.id == waiting.id
    with pytest.raises(NotFoundError):
        service.get(project, waiting.id)
    assert service.store.db.query("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'quokka'") == [(0,)]


def test_accept_run_takes_every_waiting_memory_of_that_run_only(service: MemoryService, project: Project) -> None:
    first, second = add_run(service, project, "a"), add_run(service, project, "b")
    ours = [
        service.record(project, learned(f"Lesson {n}", f"body {n} of the first run", run_id=first)).memory.id
        for n in range(3)
    ]
    other = service.record(project, learned("Another run's lesson", "from the second run", run_id=second)).memory
    accepted = service.review.accept_run(project, first)
    assert sorted(m.id for m in accepted) == sorted(ours)
    assert all(m.status is Status.ACTIVE for m in accepted)
    assert [m.id for m in service.review.pending(project)] == [other.id]
    with pytest.raises(NotFoundError, match="No memory of run"):
        service.review.accept_run(project, first)


def test_unreviewed_memories_expire_after_the_set_days(service: MemoryService, project: Project, clock: Clock) -> None:
    old = service.record(project, learned("Old unsure lesson", "nobody looked at it", confidence=0.3)).memory
    kept = service.record(project, learned("Accepted lesson", "a person said yes", confidence=0.3)).memory
    service.review.accept(project, kept.id)
    clock.advance_days(10)
    young = service.record(project, learned("Young unsure lesson", "learned later", confidence=0.3)).memory
    clock.advance_days(4.01)  # the first is now past two weeks, the second four days old
    assert service.review.expire() == 1
    assert [m.id for m in service.review.pending(project)] == [young.id]
    assert service.get(project, kept.id).status is Status.ACTIVE  # accepted memories never expire
    service.review.set_expire_days(3)
    assert service.review.expire() == 1 and service.review.count(project) == 0
    with pytest.raises(ValidationError):
        service.review.set_expire_days(0)
    assert old.id not in {m.id for m in service.list(project, MemoryFilter(statuses=("pending",)))}


def test_opening_the_service_expires_what_is_due(service: MemoryService, project: Project, clock: Clock) -> None:
    real_now = int(time.time() * 1000)  # MemoryService.open runs on the real clock
    clock.now = real_now - 15 * MS_PER_DAY
    due = service.record(project, learned("Learned fifteen days ago", "nobody reviewed it", confidence=0.3)).memory
    clock.now = real_now - 13 * MS_PER_DAY
    kept = service.record(project, learned("Learned thirteen days ago", "still in time", confidence=0.3)).memory
    reopened = MemoryService.open(service.home)
    try:
        assert [m.id for m in reopened.review.pending(project)] == [kept.id]
        with pytest.raises(NotFoundError):
            reopened.get(project, due.id)
    finally:
        reopened.close()


def test_the_policy_is_per_project(service: MemoryService, project: Project, tmp_path) -> None:
    from orcmem.host.workspace import locate

    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    assert other is not None
    service.review.set_policy(project, ReviewPolicy(all_wait=True))
    assert service.record(project, learned(confidence=0.9)).memory.status is Status.PENDING
    assert service.record(other, learned(confidence=0.9)).memory.status is Status.ACTIVE
    assert service.store.settings.get(SETTING_REVIEW_POLICY_PREFIX + project.id) is not None
    assert service.review.reset_policy(project) == DEFAULT_POLICY
    assert service.record(project, learned("New", "confident", confidence=0.9)).memory.status is Status.ACTIVE


def test_the_worker_expires_what_is_due_before_it_exits(service: MemoryService, project: Project, clock: Clock) -> None:
    from orcmem.worker import loop as worker

    service.record(project, learned(confidence=0.3))
    clock.advance_days(14.01)
    worker.run(service, lambda run: pytest.fail("the queue is empty"), linger=False)
    assert service.review.count(project) == 0


def test_no_agent_turns_tool_text_into_a_decision_without_review(
    service: MemoryService, project: Project, make_tools: MakeTools
) -> None:
    lesson = service.record(project, learned(provenance=Provenance.TOOL_TEXT, confidence=0.8)).memory
    assert lesson.status is Status.ACTIVE  # a lesson from tool text goes straight in
    with pytest.raises(ValidationError, match="only by the person's review"):
        make_tools("auto").manage("update", kind="decision", id=lesson.id, scope="workspace")
    assert service.get(project, lesson.id).type is MemoryType.LESSON
    assert service.edit(project, lesson.id, type="decision").type is MemoryType.DECISION  # the person may
