"""What every `orcmem` command shares: where it runs, the service it opens once, and how it prints."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import click

from orcmem.app.runtime import open_service
from orcmem.host.profile import home_dir
from orcmem.host.workspace import Location, locate
from orcmem.models.data_shapes import JsonValue
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from orcmem.text.textsafe import printable
from orcmem.worker.handoff import hand_off_embedding

EMBED_WAIT_ON_EXIT_S = 15.0

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
allow_ephemeral_option = click.option(
    "--allow-ephemeral",
    is_flag=True,
    help="Write this orcmem's path even when it lives in a tool's run cache (uvx, pipx run) that gets cleaned.",
)


def echo(message: object = "", *, err: bool = False) -> None:
    """Print for a person: stored text may hold escape sequences, which are shown, never sent to the terminal."""
    click.echo(printable(str(message)), err=err)


@dataclass
class AppContext:
    """What every command needs: where it runs and the service, opened on first use."""

    project_path: Path
    _service: MemoryService | None = field(default=None, repr=False)

    def service(self, *, embed_here: bool = False) -> MemoryService:
        """Open the profile database once per command (with the embedder when memory is on and the model is here).

        The vectors of what the command writes are made by another process (embed_handoff), so it never waits for
        the model to load; `embed_here` (reindex, init, the worker) makes them in this process before it exits.
        """
        if self._service is None:
            service = open_service(home_dir())
            self._service = service
            if not embed_here:
                service.defer_embedding()
            click.get_current_context().call_on_close(lambda: _close(service, embed_here))
        return self._service

    def location(self) -> Location:
        """The project location of the folder the command acts on."""
        return locate(self.project_path)

    def project(self, *, create: bool = False) -> Project | None:
        """The current project; created only for commands that write."""
        return self.service().project(self.location(), create=create)


pass_app = click.make_pass_decorator(AppContext)


def _close(service: MemoryService, embed_here: bool) -> None:
    """Close the service at the command's end: wait for its own vectors, or hand them to another process."""
    service.close(embed_wait=EMBED_WAIT_ON_EXIT_S if embed_here else 0.0)
    if service.embedding_deferred:
        hand_off_embedding(service.home)


def echo_json(data: JsonValue) -> None:
    # ASCII only: JSON escapes C0 controls by itself, and with this also C1 controls and bidi or invisible marks.
    click.echo(json.dumps(data, ensure_ascii=True, indent=2))
