"""A real PostgreSQL 16 with pgvector (pgserver) for the team pool's tests, and profiles that stand in for machines."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from orcmem.host.workspace import Location
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from orcmem.service.team import TeamLink
from orcmem.store.facade import Store
from orcmem.store.team_pool.server import TeamServer, connect
from tests.helpers import Clock

_numbers = itertools.count()


@dataclass
class Postgres:
    """A running server: its data folder and a URL per database."""

    folder: Path
    socket_dir: str

    def url(self, database: str, user: str = "postgres") -> str:
        """A URL for `database` over the server's Unix socket."""
        return f"postgresql://{user}@/{database}?host={self.socket_dir}"


def start_postgres(folder: Path):
    """Start (or restart) pgserver's PostgreSQL in `folder`; the server object."""
    pgserver = pytest.importorskip("pgserver")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgserver's platformdirs warns about XDG_RUNTIME_DIR
        return pgserver.get_server(str(folder), cleanup_mode="stop")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One PostgreSQL for the session, in a folder of its own: as root, pgserver runs the server as its own user,
    which must reach the folder, and every pytest run takes group and other access off pytest's own base folder."""
    folder = Path(tempfile.mkdtemp(prefix="orcmem-pg-"))
    server = start_postgres(folder)
    try:
        yield Postgres(folder, str(server.get_uri()).split("host=")[1].split("&")[0])
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def team_url(postgres: Postgres) -> str:
    """A URL of a fresh, empty database on the session's server."""
    name = f"team_{next(_numbers)}"
    with connect(postgres.url("postgres")) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return postgres.url(name)


@dataclass
class Machine:
    """One profile (a stand-in for one developer's machine) with the shared project open in it."""

    svc: MemoryService
    project: Project
    clock: Clock

    def server(self) -> TeamServer:
        """Its team connection, as `orcmem team sync` opens it."""
        from orcmem.team.sync import open_team

        return open_team(self.svc)


MakeMachine = Callable[..., Machine]


@pytest.fixture
def machines(tmp_path: Path, team_url: str) -> Iterator[MakeMachine]:
    """Make profiles connected to one team that share the project `github.com/acme/app` (each in its own folder)."""
    made: list[Machine] = []

    def make(
        person: str, *, skew_ms: int = 0, create: bool = True, url: str | None = None, folder: str | None = None
    ) -> Machine:
        name = folder or person
        home = tmp_path / f"home-{name}"
        folder_path = tmp_path / f"clone-{name}"
        folder_path.mkdir()
        clock = Clock(1_800_000_000_000 + skew_ms)
        svc = MemoryService(Store.open(home / "orcmem.db"), clock=clock)
        svc.settings.set_enabled(True)
        svc.settings.set_person(person)
        link_url = url or team_url
        server = TeamServer(connect(link_url), "acme")
        server.prepare(create_team=create)
        server.close()
        svc.team.set_link(TeamLink(link_url, "acme"))
        project = svc.project(Location(str(folder_path), str(folder_path), "app"))
        svc.team.share(project, "github.com/acme/app")
        machine = Machine(svc, project, clock)
        made.append(machine)
        return machine

    yield make
    for machine in made:
        machine.svc.close()
