"""Contradictions across distilled runs, with a stand-in `claude` on PATH answering the extraction and the judgement
through its real result envelope; the history they leave (superseded, linked, open conflicts settled by a person)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import apsw
import pytest

from orcmem.extract.claude_cli import ClaudeCliGenerator
from orcmem.extract.resolve import GeneratorChoice
from orcmem.models.errors import NotFoundError
from orcmem.models.types import MemoryFilter, NewMemory, Relation, Source, Status
from orcmem.rules.review import ReviewPolicy
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.store.migrations import LATEST_VERSION, MIGRATION_14, MIGRATIONS, migrate, migration_13
from tests.fakes import claude_success_envelope, standin_claude_env
from tests.helpers import user_memory
from tests.service.test_learning import add_run

# The stand-in answers the judgement from $STANDIN_JUDGE and any other prompt from $STANDIN_EXTRACT, and logs each
# prompt it was sent to $STANDIN_PROMPTS.
STANDIN = """#!{python}
import json, os, sys
prompt = sys.stdin.read()
with open(os.environ["STANDIN_PROMPTS"], "a", encoding="utf-8") as log:
    log.write(prompt + "\\n\\f\\n")
judging = "distilled the new memories below" in prompt
answer = open(os.environ["STANDIN_JUDGE" if judging else "STANDIN_EXTRACT"], encoding="utf-8").read()
envelope = json.loads({envelope!r})
envelope["result"] = answer
print(json.dumps(envelope))
"""
SUMMARY = {"request": "installs", "workDone": "changed the installer", "outcome": "done", "openItems": []}


def extraction(title: str, body: str, topic: str) -> str:
    memory = {"type": "lesson", "title": title, "body": body, "topicKey": topic, "files": [], "confidence": 0.7}
    return json.dumps({"summary": SUMMARY, "memories": [memory]})


class Standin:
    """The stand-in `claude` and the answers it gives next."""

    def __init__(self, tmp_path: Path) -> None:
        self.extract, self.judge, self.prompts = tmp_path / "extract.json", tmp_path / "judge.json", tmp_path / "p.txt"
        env = standin_claude_env(tmp_path / "bin", STANDIN, None)
        self.env = {
            **env,
            "STANDIN_EXTRACT": str(self.extract),
            "STANDIN_JUDGE": str(self.judge),
            "STANDIN_PROMPTS": str(self.prompts),
        }
        self.judge.write_text('{"relations": []}', encoding="utf-8")

    def answer(self, title: str, body: str, topic: str, judged: str | None = None) -> None:
        self.extract.write_text(extraction(title, body, topic), encoding="utf-8")
        if judged is not None:
            self.judge.write_text(json.dumps({"relations": [{"memory": "n1", "relation": judged, "candidate": "c1"}]}))

    def sent(self) -> list[str]:
        return self.prompts.read_text(encoding="utf-8").split("\n\f\n")[:-1] if self.prompts.exists() else []


def distil(service: MemoryService, project, standin: Standin, session: str) -> None:
    learning = Learning(service)
    assert learning.queue(add_run(service, project, session))
    generator = ClaudeCliGenerator(binary=os.path.join(standin.env["PATH"].split(os.pathsep)[0], "claude"))
    generator.env = standin.env
    while (job := learning.claim(1, lambda pid: True)) is not None:
        outcome = learning.run_job(job, lambda run: GeneratorChoice(generator, None, "stand-in"))
        assert outcome.state == "done", outcome.error


@pytest.fixture
def standin(tmp_path: Path, service: MemoryService, project) -> Standin:
    service.review.set_policy(project, ReviewPolicy(min_confidence=0.0))  # learned memories go straight in
    return Standin(tmp_path)


def only(service: MemoryService, project, title: str):
    every = MemoryFilter(statuses=tuple(str(status) for status in Status))
    [memory] = [m for m in service.list(project, every) if m.title == title]
    return memory


def test_a_distilled_replacement_supersedes_the_older_memory_and_recall_says_so(service, project, standin) -> None:
    standin.answer("Use npm for installs", "npm install sets up the workspace packages", "tooling/npm")
    distil(service, project, standin, "run-1")
    assert len(standin.sent()) == 1  # nothing older to judge against: no second call
    old = only(service, project, "Use npm for installs")

    standin.answer(
        "Use pnpm for installs", "pnpm install replaces npm install for the workspace", "tooling/pnpm", "replaces"
    )
    distil(service, project, standin, "run-2")
    extract_prompt, judge_prompt = standin.sent()[1:]
    assert "Run to distill:" in extract_prompt
    assert "New memory n1 [lesson] Use pnpm for installs" in judge_prompt
    assert "older c1 [lesson, learned" in judge_prompt and "Use npm for installs" in judge_prompt

    new = only(service, project, "Use pnpm for installs")
    assert service.get(project, old.id).status is Status.SUPERSEDED
    assert [m.id for m in service.search.hits(project, "npm installs", 10) if m.memory.id == old.id] == []
    [link] = service.history.links(old.id)
    assert (link.from_id, link.to_id, link.relation, link.by) == (new.id, old.id, Relation.REPLACES, "extraction")
    recall = service.context.recall(project.canonical_root, "how do I run installs with pnpm here")
    assert "Use npm for installs" not in recall.split("replaces:")[0]  # the old one is not recalled itself
    assert "(replaces: Use npm for installs (2027-01-15))" in recall
    assert "replaces: Use npm for installs (2027-01-15)" in service.context.brief(project)


def test_an_unsettled_conflict_waits_in_the_inbox_until_a_person_settles_it(service, project, standin) -> None:
    standin.answer("Tests need Postgres 15", "the integration tests run against Postgres 15", "db/pg15")
    distil(service, project, standin, "run-1")
    standin.answer("Tests need Postgres 16", "the integration tests run against Postgres 16", "db/pg16", "conflicts")
    distil(service, project, standin, "run-2")
    old, new = only(service, project, "Tests need Postgres 15"), only(service, project, "Tests need Postgres 16")
    assert (old.status, new.status) == (Status.ACTIVE, Status.PENDING)
    assert [m.id for m in service.review.pending(project)] == [new.id]  # the inbox holds it, with the other side
    [conflict] = service.history.open_conflicts(project)
    assert (conflict.from_id, conflict.to_id, conflict.open) == (new.id, old.id, True)

    with pytest.raises(NotFoundError):
        service.history.resolve(project, new.id, "mem_" + "0" * 32)
    service.history.resolve(project, new.id, old.id)  # the person keeps the older one
    assert service.get(project, new.id).status is Status.SUPERSEDED
    assert service.get(project, old.id).status is Status.ACTIVE
    assert service.history.open_conflicts(project) == []
    relations = {(link.from_id, link.relation, link.open) for link in service.history.links(old.id)}
    assert relations == {(new.id, Relation.CONFLICTS, False), (old.id, Relation.REPLACES, False)}


def test_the_model_cannot_replace_what_the_person_wrote(service, project, standin) -> None:
    mine = service.record(project, user_memory("Use npm for installs", "npm install, always", topic_key="me/npm"))
    standin.answer("Use pnpm for installs", "pnpm install replaces npm install", "tooling/pnpm", "replaces")
    distil(service, project, standin, "run-1")
    assert "written by the person" in standin.sent()[-1]
    assert service.get(project, mine.memory.id).status is Status.ACTIVE
    [conflict] = service.history.open_conflicts(project)
    assert (conflict.to_id, conflict.relation) == (mine.memory.id, Relation.CONFLICTS)
    accepted = service.review.accept(project, conflict.from_id)  # the person accepts it from the inbox: both stay
    assert accepted.status is Status.ACTIVE and service.get(project, mine.memory.id).status is Status.ACTIVE
    assert service.history.open_conflicts(project) == [conflict]  # still to settle


def test_a_replacement_waiting_for_review_supersedes_only_once_accepted(service, project, standin) -> None:
    standin.answer("Use npm for installs", "npm install sets up the workspace packages", "tooling/npm")
    distil(service, project, standin, "run-1")
    old = only(service, project, "Use npm for installs")
    service.review.set_policy(project, ReviewPolicy(all_wait=True))
    standin.answer("Use pnpm for installs", "pnpm install replaces npm install", "tooling/pnpm", "replaces")
    distil(service, project, standin, "run-2")
    new = only(service, project, "Use pnpm for installs")
    assert (new.status, service.get(project, old.id).status) == (Status.PENDING, Status.ACTIVE)
    service.review.accept(project, new.id)
    assert service.get(project, old.id).status is Status.SUPERSEDED


def test_a_failed_judgement_loses_no_memory(service, project, standin) -> None:
    standin.answer("Use npm for installs", "npm install sets up the workspace packages", "tooling/npm")
    distil(service, project, standin, "run-1")
    standin.answer("Use pnpm for installs", "pnpm install replaces npm install", "tooling/pnpm")
    standin.judge.write_text("not JSON at all", encoding="utf-8")
    distil(service, project, standin, "run-2")
    assert len(standin.sent()) == 3  # the judgement was asked
    assert {m.status for m in service.list(project)} == {Status.ACTIVE}
    assert service.history.open_conflicts(project) == []


def test_an_agent_write_names_what_it_replaces_and_is_shown_the_candidates(service, project) -> None:
    old = service.record(project, user_memory("Run the API on port 8080", "uvicorn serves the API on 8080")).memory
    agent = NewMemory("convention", "Run the API on port 9090", "uvicorn serves the API on 9090 now", Source.AGENT)
    shown = service.record(project, agent, candidates=True)
    assert [m.id for m in shown.candidates] == [old.id]
    later = NewMemory("convention", "The API port is 9091", "uvicorn now listens on 9091", Source.AGENT)
    result = service.record(project, later, relation=Relation.REPLACES, related_id=shown.memory.id)
    assert (result.relation, result.related_id) == (Relation.REPLACES, shown.memory.id)
    assert service.get(project, shown.memory.id).status is Status.SUPERSEDED
    # The person's memory is not the agent's to replace: the same ask becomes a conflict.
    refused = service.record(
        project,
        NewMemory("convention", "API on 7070", "uvicorn on 7070", Source.AGENT),
        relation=Relation.REPLACES,
        related_id=old.id,
    )
    assert refused.relation is Relation.CONFLICTS and service.get(project, old.id).status is Status.ACTIVE


def migrate_before(conn: apsw.Connection, migration: object) -> None:
    """Bring a new database up to the migration before `migration`."""
    conn.create_scalar_function("orcmem_text_digest", lambda title, body: 0, 2, deterministic=True)
    stop = next(n for n, (_version, sql) in enumerate(MIGRATIONS) if sql is migration)
    for _version, sql in MIGRATIONS[:stop]:
        if callable(sql):
            sql(conn)
        else:
            conn.execute(sql)
    conn.execute(f"PRAGMA user_version = {MIGRATIONS[stop - 1][0]}")


def test_the_ledger_migration_marks_every_earlier_call_a_distillation(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "old.db"))
    migrate_before(conn, MIGRATION_14)
    conn.execute(
        "INSERT INTO distill_usage (run_id, project_id, provider, wall_ms, started_at, finished_at, status) "
        "VALUES ('r1', 'p1', 'claude', 1, 1, 2, 'ok')"
    )
    assert migrate(conn) == LATEST_VERSION
    assert conn.execute("SELECT call FROM distill_usage").fetchall() == [("distill",)]
    with pytest.raises(apsw.ConstraintError):
        conn.execute("UPDATE distill_usage SET call = 'other'")


def test_the_migration_widens_the_status_and_adds_the_links_table(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "old.db"))
    migrate_before(conn, migration_13)
    conn.execute("INSERT INTO projects VALUES ('p1', '/r', '/r', 'r', 1, 1)")
    insert = (
        "INSERT INTO memories (id, scope, project_id, type, title, body, status, source, created_at, updated_at, "
        "last_confirmed_at) VALUES (?, 'project', 'p1', 'lesson', 't', 'b', ?, 'agent', 1, 1, 1)"
    )
    conn.execute(insert, ("mem_a", "active"))
    with pytest.raises(apsw.ConstraintError):
        conn.execute(insert, ("mem_b", "superseded"))
    assert migrate(conn) == LATEST_VERSION
    conn.execute(insert, ("mem_b", "superseded"))
    with pytest.raises(apsw.ConstraintError):
        conn.execute(insert, ("mem_c", "gone"))
    conn.execute("INSERT INTO memory_links (from_pk, to_pk, relation, at, by) SELECT 2, 1, 'replaces', 5, 'user'")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 't'").fetchall() == [(2,)]


def test_the_cli_shows_the_chain_and_settles_a_conflict(run) -> None:
    run("memory", "on")
    add = ("add", "--type", "convention", "--title")
    old = run(*add, "Use npm for installs", "--body", "npm install at the root").stdout.strip()
    added = run(*add, "Use pnpm for installs", "--body", "pnpm install at the root, npm is gone")
    new = added.stdout.strip()
    assert "it may contradict" in added.stderr and old in added.stderr  # the candidate is shown to the person
    run("relate", new, "--replaces", old)
    shown = run("show", old).stdout
    assert "status: superseded" in shown
    assert re.search(f'replaced by {new} "Use pnpm for installs" on \\d{{4}}-\\d\\d-\\d\\d \\(by user\\)', shown)
    assert re.search(f'replaced {old} "Use npm for installs" on \\d{{4}}-\\d\\d-\\d\\d', run("show", new).stdout)
    assert json.loads(run("show", new, "--json").stdout)["history"][0]["relation"] == "replaces"

    other = run(*add, "Tests need Postgres 15", "--body", "tests run on Postgres 15").stdout.strip()
    later = run(*add, "Tests need Postgres 16", "--body", "tests run on Postgres 16", "--conflicts-with", other)
    later_id = later.stdout.strip()
    listed = run("conflicts").stdout
    assert f"orcmem conflicts resolve {later_id} --keep {later_id}|{other}|both" in listed
    run("conflicts", "resolve", later_id, "--keep", later_id)
    assert run("conflicts").stdout.strip() == "No open conflicts."
    assert "status: superseded" in run("show", other).stdout
    assert run("relate", later_id, "--replaces", other, ok=False).exit_code == 1  # superseded: nothing to relate to


def test_the_judgement_is_billed_apart_and_counts_against_the_budget(service, project, standin, run) -> None:
    envelope = json.loads(claude_success_envelope())
    usage = envelope["usage"]
    per_call = sum(usage[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens"))
    per_call += usage["cache_creation_input_tokens"]
    standin.answer("Use npm for installs", "npm install sets up the workspace packages", "tooling/npm")
    distil(service, project, standin, "run-1")
    service.cost.set_budget(
        runs=10, tokens=int(per_call * 2.5), dollars=100.0
    )  # two distillations fit, not three calls
    standin.answer("Use pnpm for installs", "pnpm install replaces npm install", "tooling/pnpm", "replaces")
    distil(service, project, standin, "run-2")
    calls = service.cost.recent(project.id, 10)
    assert [row.call for row in calls] == ["judgement", "distill", "distill"]  # newest first
    judged = calls[0]
    assert (judged.input_tokens, judged.output_tokens) == (usage["input_tokens"], usage["output_tokens"])
    assert judged.cost_usd == pytest.approx(envelope["total_cost_usd"]) and judged.run_id == calls[1].run_id
    total = service.cost.total("day", project.id)
    assert (total.runs, total.judgements, total.judgement_tokens, total.tokens) == (2, 1, per_call, 3 * per_call)
    assert total.judgement_dollars == pytest.approx(envelope["total_cost_usd"])
    spent = service.cost.spent_today()
    assert (spent.runs, spent.tokens) == (2, 3 * per_call)  # the judgement is part of its run, its tokens count
    hold = service.cost.hold()
    assert hold is not None and hold.kind == "budget"  # reached by the judgement's tokens
    said = run("usage", "--period", "day").output
    assert f"today      2 runs, {3 * per_call:,} tokens" in said and f"(judgement: {per_call:,} tokens" in said
    assert " (judgement)  ok" in said
    assert f"(judgement: {per_call:,} tokens" in run("jobs").output
