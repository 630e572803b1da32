"""`orcmem review` (one key per waiting memory, in a real terminal), its options for scripts, `orcmem list --pending`
and `orcmem memory review-policy`."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orcmem.models.errors import NotFoundError
from orcmem.models.types import MemoryType, Project, Status
from orcmem.service.memory_service import MemoryService
from tests.service.test_review import add_run, learned


@pytest.fixture
def waiting(service: MemoryService, project: Project) -> dict[str, str]:
    """Four learned memories waiting: two of run A, one of run B, one of no run; by name, their ids."""
    run_a, run_b = add_run(service, project, "a"), add_run(service, project, "b")
    ids = {}
    for name, title, run in (
        ("a1", "Pin the pool size to four", run_a),
        ("b1", "Retry the flaky login test", run_b),
        ("a2", "Run ruff before pytest", run_a),
        ("junk", "The file was read successfully", None),
    ):
        ids[name] = service.record(project, learned(title, f"{title} (body)", run_id=run)).memory.id
        service.clock.now += 1  # type: ignore[attr-defined]
    ids["run_a"], ids["run_b"] = run_a, run_b
    return ids


class Terminal:
    """`orcmem review` in a real pseudo-terminal: what it printed, and keys typed when it asks."""

    def __init__(self, project_dir: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "orcmem", "--project", str(project_dir), "review"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.output = ""

    def expect(self, text: str, timeout: float = 60.0) -> None:
        """Read until `text` was printed (after what earlier calls consumed)."""
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never came; the terminal shows:\n{self.output}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.output += os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the program ended and closed the terminal
                    if self.process.poll() is not None and text not in self.output:
                        raise AssertionError(f"{text!r} never came; the terminal shows:\n{self.output}") from None
        self.output = self.output[self.output.index(text) + len(text) :]

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def terminal_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("EDITOR", "VISUAL")}
    env["TERM"] = "dumb"
    return env


def test_the_review_flow_in_a_terminal_accepts_edits_rejects_and_takes_a_run(
    service: MemoryService, project: Project, project_dir: Path, waiting: dict[str, str], tmp_path: Path
) -> None:
    term = Terminal(project_dir, terminal_env(tmp_path))
    term.expect("[1/4] " + waiting["a1"])
    term.expect("waits: confidence 0.50 is under 0.60")
    term.expect("> ")
    term.type("A")  # all of run A: a1 and a2
    term.expect("accepted 2 memories of run " + waiting["run_a"])
    term.expect("[2/4] " + waiting["b1"])
    term.expect("> ")
    term.type("x")
    term.expect("unknown key 'x'")
    term.type("e")
    term.expect("title [")
    term.type("Retry the login test once\r")
    term.expect("body [")
    term.type("\r")
    term.expect("type [")
    term.type("lesson\r")
    term.expect("edited and accepted " + waiting["b1"])
    term.expect("[4/4] " + waiting["junk"])  # a2 was taken with its run
    term.expect("> ")
    term.type("r")
    term.expect("rejected " + waiting["junk"])
    term.expect("accepted 3, rejected 1, skipped 0; 0 memories still wait")
    assert term.close() == 0
    assert service.get(project, waiting["a1"]).status is Status.ACTIVE
    assert service.get(project, waiting["a2"]).status is Status.ACTIVE
    edited = service.get(project, waiting["b1"])
    assert (edited.title, edited.status, edited.type) == ("Retry the login test once", Status.ACTIVE, MemoryType.LESSON)
    with pytest.raises(NotFoundError):
        service.get(project, waiting["junk"])


def test_skip_and_quit_leave_the_rest_waiting(
    service: MemoryService, project: Project, project_dir: Path, waiting: dict[str, str], tmp_path: Path
) -> None:
    term = Terminal(project_dir, terminal_env(tmp_path))
    term.expect("> ")
    term.type("s")
    term.expect("[2/4]")
    term.expect("> ")
    term.type("q")
    term.expect("accepted 0, rejected 0, skipped 1; 4 memories still wait")
    assert term.close() == 0
    assert service.review.count(project) == 4


def test_without_a_terminal_it_says_what_to_use_instead(run, waiting: dict[str, str]) -> None:
    result = run("review", ok=False)
    assert result.exit_code == 1
    assert "needs a terminal; use --list, --accept ID, --reject ID or --accept-run RUN" in result.stderr


def test_the_options_for_scripts(run, service: MemoryService, project: Project, waiting: dict[str, str]) -> None:
    listed = run("review", "--list").output
    assert listed.index(waiting["a1"]) < listed.index(waiting["b1"]) < listed.index(waiting["junk"])
    assert f"run: {waiting['run_a']} (claude)" in listed
    as_json = json.loads(run("review", "--json").output)
    assert [m["id"] for m in as_json][:2] == [waiting["a1"], waiting["b1"]]
    assert {m["status"] for m in as_json} == {"pending"}
    done = run("review", "--accept", waiting["b1"], "--reject", waiting["junk"], "--accept-run", waiting["run_a"])
    assert done.output.splitlines() == [
        f"accepted {waiting['b1']}",
        f"rejected {waiting['junk']}",
        f"accepted {waiting['a1']}",
        f"accepted {waiting['a2']}",
    ]
    assert "Nothing waits for review." in run("review", "--list").output
    again = run("review", "--accept", waiting["b1"], ok=False)
    assert again.exit_code == 1 and "is not waiting for review" in again.stderr


def test_list_hides_the_inbox_unless_asked(run, waiting: dict[str, str]) -> None:
    plain = run("list").output
    assert waiting["a1"] not in plain and "No memories saved for this project yet." in plain
    pending = run("list", "--pending").output
    assert waiting["a1"] in pending and "[pending]" in pending and "1-4 of 4" in pending


def test_review_policy_shows_and_sets_this_projects_rules(
    run, service: MemoryService, project: Project, waiting: dict[str, str]
) -> None:
    shown = run("memory", "review-policy").output
    assert "learned memories under confidence 0.60 wait" in shown
    assert "decisions and conventions taken from tool, file or web text always wait" in shown
    assert "unreviewed memories are erased after 14 days" in shown and "waiting now: 4" in shown
    data = json.loads(
        run("memory", "review-policy", "--hold", "fact", "--min-confidence", "0.8", "--agent-writes", "--json").output
    )
    assert data == {
        "agent_writes": True,
        "all_wait": False,
        "expire_days": 14,
        "hold_types": ["fact"],
        "min_confidence": 0.8,
        "waiting": 4,
    }
    assert service.review.policy(project).min_confidence == 0.8
    assert "every learned memory waits: yes" in run("memory", "review-policy", "--all-wait").output
    run("memory", "review-policy", "--expire-days", "3")
    assert service.review.expire_days() == 3
    reset = run("memory", "review-policy", "--reset").output
    assert "under confidence 0.60" in reset and "every learned memory waits: no" in reset
    bad = run("memory", "review-policy", "--min-confidence", "2", ok=False)
    assert bad.exit_code == 1 and "between 0 and 1" in bad.stderr


def test_memory_status_counts_the_inbox(run, waiting: dict[str, str]) -> None:
    assert "review inbox: 4 learned memories waiting here (orcmem review)" in run("memory", "status").output
    assert json.loads(run("memory", "status", "--json").output)["waiting_for_review"] == 4
