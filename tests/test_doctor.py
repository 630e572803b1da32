"""`orcmem doctor`'s checks as a function (app/doctor.py): the CLI prints them, any other front end can show them."""

from __future__ import annotations

from pathlib import Path

from orcmem.app.doctor import doctor_checks
from orcmem.models.errors import StoreError
from orcmem.service.memory_service import MemoryService


def test_a_database_that_cannot_open_is_the_one_failed_required_check(tmp_path: Path) -> None:
    def broken() -> MemoryService:
        raise StoreError("the database file is not a database")

    checks = doctor_checks(broken, tmp_path, tmp_path)
    assert checks[0] == {
        "check": "database",
        "ok": False,
        "required": True,
        "adds": "",
        "detail": "the database file is not a database",
        "fix": "Move the file aside or fix its permissions, then run orcmem again.",
    }
    assert [c["check"] for c in checks[1:]] in ([], ["codex hooks"])  # nothing else can be asked without it


def test_a_fresh_profile_passes_the_required_checks_and_says_what_optional_parts_add(tmp_path: Path) -> None:
    service = MemoryService.open(tmp_path / "home")
    try:
        checks = doctor_checks(lambda: service, tmp_path / "home", tmp_path)
    finally:
        service.close()
    by_name = {c["check"]: c for c in checks}
    assert by_name["database"]["ok"] and by_name["database"]["detail"] == str(tmp_path / "home" / "orcmem.db")
    assert by_name["memory"] == {
        "check": "memory",
        "ok": False,
        "required": False,
        "adds": "what every agent session gets: the brief, recall and learning",
        "detail": "off: agents get no brief or recall, and nothing is learned",
        "fix": "Run `orcmem memory on` (or `orcmem init`).",
    }
    assert all(c["ok"] for c in checks if c["required"])
    assert not by_name["embedding model"]["ok"] and by_name["embedding model"]["fix"].startswith("Run `orcmem model")
