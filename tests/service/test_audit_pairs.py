"""The audit's close pairs searched again only around what changed (service/audit_pairs.py) on a real store (SQLite,
sqlite-vec's k-NN, the real MiniLM): each kind of change is seen, and the result is what a full search gives."""

from __future__ import annotations

import random

import pytest

from orcmem.rules.audit import Kind
from orcmem.service.audit import rules_version, traits_version
from tests.helpers import Clock, user_memory

BASE = [
    ("Vitest needs the forks pool", "Run `vitest --pool=forks`: the threads pool crashes on the native canvas module."),
    ("Postgres for tests listens on 5433", "docker compose maps the test database to port 5433, not 5432."),
    ("Release tags are signed", "Use `git tag -s vX.Y.Z`; CI rejects unsigned tags in release.yml."),
    ("The team prefers squash merges", "Feature branches are squashed into main so its history stays linear."),
    ("CI uses Node 20", "The workflow sets node-version 20 in .github/workflows/ci.yml."),
    ("Uploads are capped at 25 MB", "nginx.conf sets client_max_body_size 25m for /upload."),
    ("The JWT expires after 15 minutes", "auth/tokens.py sets ACCESS_TTL = 15 * 60."),
    ("Redis runs on database 2", "REDIS_URL ends in /2; the cache tests flush that database."),
]
# The same lesson in other words (a near duplicate of BASE[n]) and the same subject with another value (a
# contradiction of BASE[n]).
NEAR = {
    0: (
        "Vitest needs the forks pool",
        "Run `vitest --pool=forks` because the threads pool crashes on the native canvas module.",
    ),
    2: ("Release tags are signed", "Always use `git tag -s vX.Y.Z`: CI rejects unsigned tags in release.yml."),
    5: ("Uploads are capped at 25 MB", "The nginx.conf file sets client_max_body_size 25m for the /upload route."),
}
OTHER = {
    1: ("Postgres for tests listens on 5434", "docker compose maps the test database to port 5434, not 5432."),
    4: ("CI uses Node 22", "The workflow sets node-version 22 in .github/workflows/ci.yml."),
    6: ("The JWT expires after 30 minutes", "auth/tokens.py sets ACCESS_TTL = 30 * 60."),
}


def _found(report) -> set[tuple[Kind, str, str | None]]:  # type: ignore[no-untyped-def]
    return {(f.kind, f.memory_id, f.other_id) for f in report.findings if f.other_id is not None}


def _edit(svc, project, memory_id: str, title: str, body: str) -> None:  # type: ignore[no-untyped-def]
    """Edit a memory and wait for its new vector (the background embedding done before the next change)."""
    svc.edit(project, memory_id, title=title, body=body)
    assert svc.pump is not None and svc.pump.wait(30)
    svc.reindex()


def _audit_around(svc, project):  # type: ignore[no-untyped-def]
    """An audit that searches around what changed however much did (the store is tiny), and how it searched."""
    svc.store_audit.pair_search.full_share = 1.0
    report = svc.store_audit.run(project)
    return report, svc.store_audit.pair_search.searched


def _recomputed(svc, project):  # type: ignore[no-untyped-def]
    """The pair findings of a full search over the same store (nothing kept)."""
    svc.store.audit_pairs.forget(project.id)
    report = svc.store_audit.run(project)
    assert svc.store_audit.pair_search.searched == "everything"
    return _found(report)


@pytest.mark.parametrize("knn_up_to", [100, 0], ids=["sqlite-vec k-NN", "one product"])
def test_an_edit_that_makes_a_near_duplicate_is_found_and_one_that_unmakes_it_vanishes(
    embedded, clock: Clock, knn_up_to: int
) -> None:
    svc, project, ids = embedded([*BASE, ("Lint runs in CI", "ruff check runs on every push in lint.yml.")])
    svc.store_audit.pair_search.knn_up_to = knn_up_to
    assert _found(svc.store_audit.run(project)) == set()
    _edit(svc, project, ids[8], *NEAR[0])
    report, searched = _audit_around(svc, project)
    assert searched == "around"
    assert _found(report) == {(Kind.NEAR_DUPLICATE, ids[8], ids[0])}
    assert _found(report) == _recomputed(svc, project)
    _edit(svc, project, ids[8], "Lint runs in CI", "ruff check runs on every push in lint.yml.")
    report, searched = _audit_around(svc, project)
    assert searched == "around"
    assert _found(report) == set()


def test_a_forgotten_memorys_pairs_vanish(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([*BASE, NEAR[2], OTHER[4]])
    assert _found(svc.store_audit.run(project)) == {
        (Kind.NEAR_DUPLICATE, ids[8], ids[2]),
        (Kind.CONTRADICTION, ids[4], ids[9]),
    }
    svc.forget(project, ids[9])
    report, searched = _audit_around(svc, project)
    assert searched == "around"
    assert _found(report) == {(Kind.NEAR_DUPLICATE, ids[8], ids[2])}
    assert report.vectors == 9


def test_a_re_embedded_memory_is_compared_again(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([*BASE, NEAR[5]])
    assert _found(svc.store_audit.run(project)) == {(Kind.NEAR_DUPLICATE, ids[8], ids[5])}
    model = svc.embedder.model_id
    vector = svc.store.vectors.vector_of(ids[8], model)
    assert vector is not None
    # Its text unchanged, its vector written again (another model's run, a repair): now far from everything.
    svc.store.vectors.put(ids[8], [-x for x in vector], model, clock())
    report, searched = _audit_around(svc, project)
    assert searched == "around"
    assert _found(report) == set()
    svc.store.vectors.put(ids[8], vector, model, clock())
    report, searched = _audit_around(svc, project)
    assert _found(report) == {(Kind.NEAR_DUPLICATE, ids[8], ids[5])}


def test_nothing_changed_shows_the_last_findings_without_searching(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([*BASE, NEAR[0]])
    first = svc.store_audit.run(project)
    again = svc.store_audit.run(project)
    assert svc.store_audit.pair_search.searched == "kept"
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in first.findings]


def test_a_lone_memory_edited_has_no_partner_to_find(embedded, clock: Clock) -> None:
    svc, project, ids = embedded([BASE[0]])
    svc.store_audit.run(project)
    _edit(svc, project, ids[0], *BASE[1])
    report, searched = _audit_around(svc, project)
    assert searched == "around"
    assert report.findings == [] and report.vectors == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_random_edits_the_search_around_them_equals_a_full_search(embedded, clock: Clock, seed: int) -> None:
    pool = [*BASE, *NEAR.values(), *OTHER.values()]
    svc, project, ids = embedded(pool[:10])
    svc.store_audit.run(project)
    chance = random.Random(seed)
    seen: set[Kind] = set()
    for _round in range(3):
        for memory_id in chance.sample(ids, 3):
            _edit(svc, project, memory_id, *chance.choice(pool))
        gone = chance.choice(ids)
        svc.forget(project, gone)
        ids.remove(gone)
        title, body = chance.choice(pool)
        ids.append(svc.record(project, user_memory(title, body)).memory.id)
        assert svc.pump is not None and svc.pump.wait(30)
        svc.reindex()
        svc.store_audit.pair_search.knn_up_to = chance.choice([0, 100])
        report, searched = _audit_around(svc, project)
        assert searched == "around"
        found = _found(report)
        assert found == _recomputed(svc, project)
        seen.update(kind for kind, _one, _other in found)
    assert {Kind.NEAR_DUPLICATE, Kind.CONTRADICTION} & seen  # the rounds made pairs to compare


def test_an_edit_while_an_audit_runs_is_judged_again_by_the_next(embedded, clock: Clock) -> None:
    """An audit reads the memories' text, then which vectors they have: an edit re-embedded in between must not
    leave the old text's verdict kept as the new vector's, trusted by every audit after."""
    copy = ("Postgres for tests listens on 5433", "docker compose maps the test database to port 5433 and not 5432.")
    svc, project, ids = embedded([*BASE, copy])
    audit = svc.store_audit
    audit.pair_search.full_share = 1.0
    assert (Kind.NEAR_DUPLICATE, ids[8], ids[1]) in _found(audit.run(project))
    read = svc.store.audit_scan.rows(project.id, rules_version(), traits_version())  # what the audit reads first
    _edit(svc, project, ids[8], *OTHER[1])  # meanwhile: another port, embedded at once
    by_pk = {row.pk: row for row in read if row.status == "active"}
    audit.pair_search.findings(project.id, svc.embedder.model_id, by_pk)  # the rest of that audit
    report, _searched = _audit_around(svc, project)
    assert _found(report) == _recomputed(svc, project)
    assert {kind for kind, *_ids in _found(report)} == {Kind.CONTRADICTION}
