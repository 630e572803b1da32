"""The store audit on a real store (SQLite, sqlite-vec, the real MiniLM): each kind of finding, healthy memories left
alone, and each fix going through the service with its ownership rules."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from orcmem.agent_context.session_recall import recall_for_session, recalled_in_sessions
from orcmem.host.forking import Spread
from orcmem.models.constants import BODY_MAX_CHARS
from orcmem.models.errors import OwnershipError, ValidationError
from orcmem.models.types import NewMemory, Source, Status
from orcmem.rules.audit import Kind, is_generic
from orcmem.service import audit_pairs
from orcmem.service.audit import traits_version
from orcmem.service.audit_pairs import KINDS, PAIR_FIELDS, no_pairs
from orcmem.store.recall import RecallRow
from orcmem.text.redact import rules_version
from tests.helpers import Clock

HEALTHY = [
    ("Vitest needs the forks pool", "Run `vitest --pool=forks`: the threads pool crashes on the native canvas module."),
    ("Postgres for tests listens on 5433", "docker compose maps the test database to port 5433, not 5432."),
    ("Release tags are signed", "Use `git tag -s vX.Y.Z`; CI rejects unsigned tags in release.yml."),
    ("The team prefers squash merges", "Feature branches are squashed into main so its history stays linear."),
]
SECRET_BODY = "Deploy with ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + " set in the environment."


def _kinds(report, memory_id: str) -> set[Kind]:
    return {f.kind for f in report.findings if f.memory_id == memory_id}


def test_healthy_memories_are_not_reported(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(HEALTHY)
    report = svc.store_audit.run(project)
    assert report.findings == []
    assert report.health_line() == "4 memories: healthy"
    assert report.vectors == 4  # compared by their stored vectors


def test_each_kind_is_found(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(
        [
            *HEALTHY,
            HEALTHY[0],  # the same words again (a person's writes are stored as asked)
            (
                "Vitest needs the forks pool",
                "Run `vitest --pool=forks` because the threads pool crashes on the native canvas module.",
            ),
            ("Postgres for tests listens on 5434", "docker compose maps the test database to port 5434, not 5432."),
            ("Deploy token", "Deploy with the token set in the environment, see the deploy notes."),
            ("Be careful", "Always test your changes."),
            ("Lint runs in CI", "ruff check runs on every push in `.github/workflows/lint.yml`."),
        ]
    )
    exact, near, contra, secret, generic, wrong = ids[4], ids[5], ids[6], ids[7], ids[8], ids[9]
    svc.store.memories.update_fields(secret, {"body": SECRET_BODY})  # stored before a rule for it existed
    svc.feedback(project, wrong, "wrong")
    report = svc.store_audit.run(project)
    assert _kinds(report, exact) == {Kind.DUPLICATE}
    assert Kind.NEAR_DUPLICATE in {f.kind for f in report.findings if near in (f.memory_id, f.other_id)}
    assert {f.kind for f in report.findings if contra in (f.memory_id, f.other_id)} == {Kind.CONTRADICTION}
    assert _kinds(report, secret) == {Kind.SECRET}
    assert _kinds(report, generic) == {Kind.GENERIC}
    assert _kinds(report, wrong) == {Kind.WRONG}
    assert all(SECRET_BODY[15:40] not in json.dumps(f.to_dict()) for f in report.findings)  # never shown
    assert report.health_line().startswith("10 memories: 1 secret, 1 duplicate, 1 near duplicate")
    dup = next(f for f in report.findings if f.kind is Kind.DUPLICATE)
    assert dup.fix == f"orcmem audit fix merge {ids[0]} {exact}"


def test_stale_citations_and_unused_memories(embedded, clock: Clock, tmp_path: Path) -> None:
    svc, project, ids = embedded(HEALTHY[:3])
    clock.advance_days(100)
    home = tmp_path / "home-sessions"
    row = RecallRow("lesson", "t", "b", "user", clock(), False, ids[1], 1)
    recall_for_session(str(home), "s1", [row], clock())
    svc.store_audit.note_recalled((memory_id, clock()) for memory_id, _at in recalled_in_sessions(str(home)))
    report = svc.store_audit.run(project)
    assert _kinds(report, ids[0]) == {Kind.UNUSED}
    assert _kinds(report, ids[1]) == set()  # recalled today
    assert _kinds(report, ids[2]) == {Kind.UNUSED}
    assert svc.store_audit.run(project, days=365).findings == []  # younger than the window: not reported
    with pytest.raises(ValidationError):
        svc.store_audit.run(project, days=0)


def test_merge_keeps_one_and_deletes_the_other(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([HEALTHY[0], HEALTHY[0]])
    kept = svc.store_audit.merge(project, ids[0], ids[1])
    assert kept.id == ids[0] and kept.evidence_count == 2
    assert svc.memories_by_id([ids[1]]) == []
    assert svc.store_audit.run(project).findings == []


def test_an_agent_cannot_merge_away_or_redact_a_persons_memory(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([HEALTHY[0], HEALTHY[0]])
    with pytest.raises(OwnershipError):
        svc.store_audit.merge(project, ids[0], ids[1], actor=Source.AGENT)
    with pytest.raises(OwnershipError):
        svc.store_audit.redact(project, ids[0], actor=Source.AGENT)
    assert len(svc.memories_by_id(ids)) == 2
    with pytest.raises(ValidationError):
        svc.store_audit.merge(project, ids[0], ids[0])


def test_redact_again_rewrites_in_place_and_erases_the_old_text(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([("Deploy token", "Deploy with the token set in the environment.")])
    svc.store.memories.update_fields(ids[0], {"body": SECRET_BODY})
    memory, changed = svc.store_audit.redact(project, ids[0])
    assert changed and "[redacted:" in memory.body and "a1B2c3D4e5F6" not in memory.body
    files = [Path(f"{svc.store.db.path}{suffix}") for suffix in ("", "-wal")]
    assert all(b"a1B2c3D4e5F6g7H8" not in f.read_bytes() for f in files if f.exists())  # the old text erased
    assert svc.store_audit.redact(project, ids[0]) == (memory, False)
    assert Kind.SECRET not in {f.kind for f in svc.store_audit.run(project).findings}


def test_an_agent_may_merge_what_agents_wrote(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([HEALTHY[1]])
    agent = svc.record(
        project,
        NewMemory(
            type="lesson",
            title="Lint runs in CI",
            body="ruff check runs on every push in lint.yml.",
            source=Source.AGENT,
            topic_key="pg-port",
        ),
    ).memory
    kept = svc.store_audit.merge(project, ids[0], agent.id, actor=Source.AGENT)
    assert kept.id == ids[0] and svc.memories_by_id([agent.id]) == []
    assert kept.status is Status.ACTIVE


def test_a_stale_citation_is_reported(embedded, clock: Clock, project_dir: Path) -> None:
    (project_dir / "build.py").write_text("def build_wheel():\n    return 1\n")
    svc, project, ids = embedded([HEALTHY[2]])
    cited = svc.record(
        project,
        NewMemory(
            type="lesson",
            title="Wheels come from build_wheel",
            body="`build_wheel` in build.py makes them.",
            source=Source.USER,
            files=("build.py",),
        ),
    ).memory
    (project_dir / "build.py").unlink()
    svc.check_freshness(project)
    stale = [f for f in svc.store_audit.run(project).findings if f.kind is Kind.STALE]
    assert [(f.memory_id, f.fix) for f in stale] == [(cited.id, f"orcmem feedback {cited.id} wrong")]


@pytest.mark.parametrize(
    ("title", "body", "generic"),
    [
        ("Be careful", "Always test your changes.", True),
        ("Note", "ok", True),
        ("Write clean code", "Make sure the code is clean and readable before you commit changes.", True),
        ("The team prefers squash merges", "Feature branches are squashed into main so history stays linear.", False),
        ("Tests need Postgres 16", "Older versions lack the json_table function.", False),
    ],
)
def test_the_generic_rule(title: str, body: str, generic: bool) -> None:
    assert is_generic(title, body) is generic


def test_the_session_start_hook_keeps_what_recall_gave(
    embedded, clock: Clock, orcmem_home: Path, project_dir: Path
) -> None:
    from orcmem.hooks import handlers

    svc, project, ids = embedded(HEALTHY[:2])
    row = RecallRow("lesson", "t", "b", "user", clock(), False, ids[0], 1)
    recall_for_session(str(orcmem_home), "earlier", [row], clock())
    handlers.session_start({"cwd": str(project_dir), "session_id": "later"}, str(orcmem_home))
    clock.advance_days(100)
    report = svc.store_audit.run(project, days=200)
    assert report.findings == []
    unused = {f.memory_id for f in svc.store_audit.run(project, days=30).findings if f.kind is Kind.UNUSED}
    assert unused == set(ids)  # recalled about 100 days ago: unused within 30 days
    rows = svc.store.audit_scan.rows(project.id, rules_version(), traits_version())
    assert rows[0].last_recalled_at is not None
    assert rows[1].last_recalled_at is None


def _scanned(svc, project) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    return {row.id: row.scanned for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())}


def test_a_memory_edited_after_its_scan_is_scanned_again(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(HEALTHY[:2])
    assert _scanned(svc, project) == {ids[0]: True, ids[1]: True}  # written redacted by today's rules
    svc.feedback(project, ids[1], "helpful")  # not an edit of its text: still scanned
    svc.store.memories.update_fields(ids[0], {"body": SECRET_BODY})  # the text changed after its scan
    assert _scanned(svc, project) == {ids[0]: False, ids[1]: True}
    assert _kinds(svc.store_audit.run(project), ids[0]) == {Kind.SECRET}
    assert _kinds(svc.store_audit.run(project), ids[0]) == {Kind.SECRET}  # a secret is never kept as scanned
    svc.store_audit.redact(project, ids[0])
    assert _scanned(svc, project) == {ids[0]: False, ids[1]: True}
    assert svc.store_audit.run(project).findings == []
    assert _scanned(svc, project) == {ids[0]: True, ids[1]: True}  # found clean: the next audit skips it


def test_a_memory_cut_at_the_limit_is_left_to_the_audit(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([HEALTHY[0], (HEALTHY[1][0], "x" * BODY_MAX_CHARS)])
    assert _scanned(svc, project) == {ids[0]: True, ids[1]: False}  # its end may hold what a rule takes whole
    svc.store_audit.run(project)
    assert _scanned(svc, project) == {ids[0]: True, ids[1]: True}


def test_a_new_rule_set_scans_every_memory_again(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(HEALTHY[:2])
    svc.store.memories.update_fields(ids[0], {"body": SECRET_BODY})  # stored before a rule for it existed...
    pks = [row.pk for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())]
    svc.store.audit_scan.note_scanned(pks, rules_version() ^ 1)  # ...and found clean by that older rule set
    assert _scanned(svc, project) == {ids[0]: False, ids[1]: False}
    assert _kinds(svc.store_audit.run(project), ids[0]) == {Kind.SECRET}
    assert _scanned(svc, project) == {ids[0]: False, ids[1]: True}
    svc.store.audit_scan.note_scanned(pks[:1], rules_version())  # a scan of today's rules is trusted: not redone
    assert svc.store_audit.run(project).findings == []


def test_pair_findings_are_kept_and_an_edit_after_an_audit_is_seen(embedded, clock: Clock) -> None:
    near = (
        "Vitest needs the forks pool",
        "Run `vitest --pool=forks` because the threads pool crashes on the native canvas module.",
    )
    svc, project, ids = embedded([*HEALTHY, near])
    first = svc.store_audit.run(project)
    assert [(f.kind, f.memory_id, f.other_id) for f in first.findings] == [(Kind.NEAR_DUPLICATE, ids[4], ids[0])]
    assert svc.store_audit.pair_search.searched == "everything"
    # What the last audit reported is shown again while nothing changed: a finding planted as reported comes back.
    key = svc.store.db.query("SELECT key FROM audit_close_pairs WHERE project_id = ?", (project.id,))[0][0]
    stored = svc.store.audit_pairs.pairs(project.id)
    assert stored is not None
    pairs = np.frombuffer(stored[1], dtype=PAIR_FIELDS)
    assert int(pairs["shown"].sum()) == 1
    pks = {row.id: row.pk for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())}
    planted = no_pairs(1)
    planted[0] = (*sorted((pks[ids[2]], pks[ids[3]])), 0.9, KINDS.index(Kind.NEAR_DUPLICATE), 0, True)
    svc.store.audit_pairs.save(project.id, key, np.concatenate([pairs, planted]).tobytes(), {}, {}, [])
    again = svc.store_audit.run(project)
    assert svc.store_audit.pair_search.searched == "kept"
    assert {(f.kind, f.memory_id, f.other_id) for f in again.findings} == {
        (Kind.NEAR_DUPLICATE, ids[4], ids[0]),
        (Kind.NEAR_DUPLICATE, ids[2], ids[3]),
    }
    assert again.vectors == 5
    # An edit after the audit: the pairs touching it are searched again (the planted one goes), and the edit is seen.
    svc.edit(project, ids[3], title=HEALTHY[1][0].replace("5433", "5434"), body=HEALTHY[1][1].replace("5433", "5434"))
    svc.reindex()  # its new vector, as the background embedding writes it
    third = svc.store_audit.run(project)
    assert {(f.kind, f.memory_id, f.other_id) for f in third.findings} == {
        (Kind.NEAR_DUPLICATE, ids[4], ids[0]),
        (Kind.CONTRADICTION, ids[1], ids[3]),
    }


EACH_KIND = [
    *HEALTHY,
    HEALTHY[0],
    (
        "Vitest needs the forks pool",
        "Run `vitest --pool=forks` because the threads pool crashes on the native canvas module.",
    ),
    ("Postgres for tests listens on 5434", "docker compose maps the test database to port 5434, not 5432."),
    ("Be careful", "Always test your changes."),
]


def _traits(svc, project) -> dict[str, tuple[bool | None, str | None]]:  # type: ignore[no-untyped-def]
    rows = svc.store.audit_scan.rows(project.id, rules_version(), traits_version())
    return {row.id: (row.generic, row.facts) for row in rows}


def _found(report) -> list[tuple[Kind, str, str | None, str]]:  # type: ignore[no-untyped-def]
    return [(f.kind, f.memory_id, f.other_id, f.detail) for f in report.findings]


def test_the_generic_verdict_and_facts_are_kept_and_new_text_forgets_them(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(EACH_KIND)
    written = _traits(svc, project)  # worked out as each was written, before any audit
    assert all(generic is not None and facts is not None for generic, facts in written.values())
    first = _found(svc.store_audit.run(project))
    kept = _traits(svc, project)
    assert kept == written  # the audit used them: nothing changed
    assert kept[ids[7]][0] is True and kept[ids[0]][0] is False
    assert kept[ids[6]][1] is not None and "5434" in kept[ids[6]][1]  # judged in a pair: its facts kept
    svc.store.audit_pairs.forget(project.id)
    assert _found(svc.store_audit.run(project)) == first  # judged again from the kept facts: the same findings
    # The audit reads what is kept (a verdict planted here is reported) under today's version only.
    pks = {row.id: row.pk for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())}
    svc.store.audit_scan.note_traits([(pks[ids[2]], True, "")], traits_version())
    assert _kinds(svc.store_audit.run(project), ids[2]) == {Kind.GENERIC}
    svc.store.audit_scan.note_traits([(pks[ids[2]], True, "")], traits_version() ^ 1)
    assert _kinds(svc.store_audit.run(project), ids[2]) == set()
    svc.store.audit_scan.note_traits([(pks[ids[2]], True, "")], traits_version())
    svc.edit(project, ids[2], body="Use `git tag -s vX.Y.Z` for every release; CI rejects unsigned tags.")
    assert _traits(svc, project)[ids[2]] == (False, "ci\0git tag -s vx.y.z\0s\0vx.y.z")  # the new text's, at once
    assert _kinds(svc.store_audit.run(project), ids[2]) == set()


def test_what_was_worked_out_of_a_text_edited_meanwhile_is_not_kept(embedded, clock: Clock) -> None:
    """Prepare (or an audit) reads the text, works out its traits and scan, then keeps them: an edit in between (the
    MCP server's watch prepares while `orcmem edit` runs in another process) must not leave them kept for new text."""
    svc, project, ids = embedded(EACH_KIND)
    read = svc.store.audit_scan.unprepared(rules_version(), traits_version(), 100, 1 << 62)  # what prepare reads
    svc.edit(project, ids[0], title="Notes", body="misc stuff")  # meanwhile: generic now
    kept = [(pk, is_generic(title, body), None) for pk, title, body, _scanned in read]
    texts = {pk: (title, body) for pk, title, body, _scanned in read}
    svc.store.audit_scan.note_scanned(list(texts), rules_version(), texts)
    svc.store.audit_scan.note_traits(kept, traits_version(), texts)
    assert _traits(svc, project)[ids[0]][0] is True  # the edit's own, for its text: not the read's verdict
    assert _scanned(svc, project)[ids[2]] is True
    assert Kind.GENERIC in _kinds(svc.store_audit.run(project), ids[0])


def test_new_verdict_code_judges_the_kept_pairs_again_without_searching(embedded, clock: Clock) -> None:
    svc, project, _ids = embedded(EACH_KIND)
    first = _found(svc.store_audit.run(project))
    stored = svc.store.audit_pairs.pairs(project.id)
    assert stored is not None
    search, _sep, verdicts = stored[0].partition(":")
    # The kept verdicts planted wrong: under another verdict code they are judged again, not trusted.
    wrong = np.frombuffer(stored[1], dtype=PAIR_FIELDS).copy()
    wrong["kind"], wrong["shown"] = KINDS.index(Kind.CONTRADICTION), True
    svc.store.audit_pairs.save(project.id, f"{search}:{'0' * len(verdicts)}", wrong.tobytes(), {}, {}, [])
    assert _found(svc.store_audit.run(project)) == first
    assert svc.store_audit.pair_search.searched == "around"  # the kept pairs, no search
    svc.store.audit_pairs.save(project.id, f"{'0' * len(search)}:{verdicts}", wrong.tobytes(), {}, {}, [])
    assert _found(svc.store_audit.run(project)) == first
    assert svc.store_audit.pair_search.searched == "everything"  # another search code: searched again


def _prepare_all(svc) -> int:  # type: ignore[no-untyped-def]
    batches, below = 1, svc.store_audit.prepare(limit=3)
    while below is not None:
        batches, below = batches + 1, svc.store_audit.prepare(limit=3, below=below)
    return batches


def test_prepare_does_ahead_what_the_first_audit_after_an_upgrade_would(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(EACH_KIND)
    svc.store.memories.update_fields(ids[1], {"body": SECRET_BODY})  # stored before a rule for it existed
    expected = _found(svc.store_audit.run(project))
    _upgrade(svc, project)
    assert _prepare_all(svc) == 4  # 8 memories in batches of 3 (the secret one stays to report: no endless loop)
    assert _scanned(svc, project) == {memory_id: memory_id != ids[1] for memory_id in ids}
    assert all(generic is not None and facts is not None for generic, facts in _traits(svc, project).values())
    assert svc.store_audit.prepare() is not None  # the secret is left for the audit to report
    assert _found(svc.store_audit.run(project)) == expected


def _upgrade(svc, project) -> None:  # type: ignore[no-untyped-def]
    """As after an upgrade that changed every rule: other secret rules, another facts rule, other pair rules."""
    pks = [row.pk for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())]
    svc.store.audit_scan.note_scanned(pks, rules_version() ^ 1)
    svc.store.audit_scan.note_traits(((pk, False, None) for pk in pks), traits_version() ^ 1)
    svc.store.audit_pairs.forget(project.id)


def test_the_first_audit_after_an_upgrade_reports_the_same_over_a_pool_of_processes(embedded, clock: Clock) -> None:
    svc, project, ids = embedded(EACH_KIND)
    svc.store.memories.update_fields(ids[1], {"body": SECRET_BODY})  # stored before a rule for it existed
    svc.store_audit.spread = Spread(1, "")
    _upgrade(svc, project)
    alone = svc.store_audit.run(project)
    alone_traits = _traits(svc, project)
    svc.store_audit.spread = Spread(2, "fork", pool_from=1, chunk=3)
    _upgrade(svc, project)
    pooled = svc.store_audit.run(project)
    assert [f.to_dict() for f in pooled.findings] == [f.to_dict() for f in alone.findings]  # titles, details too
    assert {Kind.SECRET, Kind.GENERIC, Kind.DUPLICATE} <= set(pooled.counts)
    assert _traits(svc, project) == alone_traits  # the same generic verdicts and facts kept
    _upgrade(svc, project)
    assert _prepare_all(svc) == 4  # `prepare` over the pool too
    assert _traits(svc, project) == alone_traits


def test_an_audit_inside_a_transaction_keeps_what_it_worked_out_without_waiting_on_itself(
    embedded, clock: Clock
) -> None:
    svc, project, _ids = embedded(EACH_KIND)
    _upgrade(svc, project)
    reports = []

    def audit() -> None:
        with svc.store.db.transaction():  # the audit's writes join it, as any nested write does
            reports.append(svc.store_audit.run(project))

    thread = threading.Thread(target=audit, daemon=True)
    thread.start()
    thread.join(60)
    assert reports, "the audit waited for a thread that waited for the audit's own transaction"
    assert all(generic is not None for generic, _facts in _traits(svc, project).values())  # kept


def test_a_failure_keeping_the_scans_is_raised_but_never_hides_the_audits_own(
    embedded, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, project, _ids = embedded(EACH_KIND)
    _upgrade(svc, project)

    def broken_keep(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("keeping failed")

    monkeypatch.setattr(svc.store.audit_scan, "note_traits", broken_keep)
    with pytest.raises(RuntimeError, match="keeping failed"):  # raised in the audit's thread, not lost in its own
        svc.store_audit.run(project)

    def broken_choice(*_args: object, **_kwargs: object) -> None:  # after the keeping started
        raise ValueError("the choice of findings failed")

    svc.store.audit_pairs.forget(project.id)
    monkeypatch.setattr(audit_pairs, "_choose", broken_choice)
    with pytest.raises(ValueError, match="choice of findings failed"):
        svc.store_audit.run(project)


def test_the_worker_prepares_the_audit_before_it_exits(embedded, clock: Clock) -> None:
    from orcmem.worker import loop as worker

    svc, project, ids = embedded(HEALTHY)
    _upgrade(svc, project)
    worker.run(svc, lambda run: pytest.fail("the queue is empty"), linger=False)
    assert _scanned(svc, project) == dict.fromkeys(ids, True)
    assert all(generic is not None and facts is not None for generic, facts in _traits(svc, project).values())


def test_the_mcp_servers_watch_prepares_the_audit_in_the_background(
    embedded, clock: Clock, orcmem_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import run_watch

    svc, project, ids = embedded(HEALTHY)
    pks = [row.pk for row in svc.store.audit_scan.rows(project.id, rules_version(), traits_version())]
    svc.store.audit_scan.note_scanned(pks, rules_version() ^ 1)
    run_watch(orcmem_home, project_dir, monkeypatch, lambda watch: watch.prepared > 0, "the audit's preparation")
    assert _scanned(svc, project) == dict.fromkeys(ids, True)
    assert all(facts is not None for _generic, facts in _traits(svc, project).values())
