"""What the store audit works out of a memory's text alone is kept as the service writes that text (docs/audit.md,
Speed): the first audit of a store just filled through orcmem works none of it out again."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.importing.backup import read_backup
from orcmem.rules.audit import is_generic
from orcmem.service import audit_parallel
from orcmem.service.audit import traits_version
from orcmem.service.importing import Importing
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from orcmem.text.facts import facts_of, pack
from orcmem.text.redact import rules_version
from tests.helpers import Clock
from tests.service.test_audit import EACH_KIND

Kept = dict[str, tuple[bool | None, str | None, bool]]


def _kept(svc: MemoryService) -> Kept:
    """Each memory's kept generic verdict, packed facts and scan, by id, as the audit reads them."""
    project = svc.projects()[0][0]
    rows = svc.store.audit_scan.rows(project.id, rules_version(), traits_version())
    return {row.id: (row.generic, row.facts, row.scanned) for row in rows}


def _expected(svc: MemoryService) -> Kept:
    """What the audit would work out of each memory's stored text."""
    project = svc.projects()[0][0]
    rows = svc.store.audit_scan.rows(project.id, rules_version(), traits_version())
    return {row.id: (is_generic(row.title, row.body), pack(facts_of(f"{row.title}\n{row.body}")), True) for row in rows}


def _worked_out(svc: MemoryService, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many memories' texts one audit works out itself (none kept for them)."""
    counted: list[int] = []
    real = audit_parallel.traits_of

    def counting(texts: list[audit_parallel.Text]) -> list[audit_parallel.Traits]:
        counted.append(len(texts))
        return real(texts)

    monkeypatch.setattr(audit_parallel, "traits_of", counting)
    svc.store_audit.run(svc.projects()[0][0])
    monkeypatch.undo()
    return sum(counted)


def test_recorded_and_edited_memories_carry_their_traits_and_the_audit_works_none_out(
    embedded, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, project, ids = embedded(EACH_KIND)
    assert _kept(svc) == _expected(svc)  # at once, before any audit, for the text as stored
    assert svc.store_audit.prepare() is None  # nothing left for the background either
    assert _worked_out(svc, monkeypatch) == 0
    svc.edit(project, ids[0], title="Notes", body="misc stuff")
    assert _kept(svc)[ids[0]] == (True, "", True)  # the edit changed them: generic now
    assert _kept(svc) == _expected(svc)
    assert _worked_out(svc, monkeypatch) == 0


def test_restored_memories_carry_their_traits(
    embedded, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, _project, _ids = embedded(EACH_KIND)
    lines = list(Importing(svc).backup_lines())
    other = MemoryService(Store.open(tmp_path / "other.db"), clock=clock)
    try:
        other.settings.set_enabled(True)
        importing = Importing(other)
        plan = importing.plan_restore(read_backup(lines))
        importing.restore(plan, "backup.jsonl", None)
        assert len(_kept(other)) == len(plan.new) > 1
        assert _kept(other) == _expected(other)
        assert _worked_out(other, monkeypatch) == 0
    finally:
        other.close()
