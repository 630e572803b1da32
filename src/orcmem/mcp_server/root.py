"""`orcmem mcp`: the memory tools for agents over MCP (stdio, or streamable HTTP on 127.0.0.1).

Importing this package is cheap: the MCP SDK (about 0.8 s to import) and the service load only inside
`build_server` and the `run_*` functions, and over stdio `initialize` is answered before they finish loading.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from orcmem.mcp_server.identity import ALWAYS_LISTED, INSTRUCTIONS, SERVER_NAME
from orcmem.models.vocabulary import Mode, values

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from mcp.server import MCPServer

    from orcmem.mcp_server.freshness_watch import FreshnessWatch
    from orcmem.mcp_server.recall_socket import RecallSocket
    from orcmem.models.data_shapes import JsonObject
    from orcmem.service.agent_tools import AgentTools
    from orcmem.service.reflag import ReflagLoop
    from orcmem.team.background import TeamSyncer

# The tools/list result of tool_specs with memory on, pinned so it can be answered before the SDK loads (a test
# keeps it equal to `tool_specs.tool_list()`: ORCMEM_UPDATE_TOOL_LIST=1 rewrites it).
TOOL_LIST_FILE = Path(__file__).with_name("tools.json")
MODE_ENV_VAR = "ORCMEM_MCP_MODE"  # the default of --mode, so an agent's config can set it without extra arguments
MODES = values(Mode)


def build_server(tools: AgentTools | Callable[[], AgentTools]) -> MCPServer:
    """The MCP server "orcmem" with its tools over `tools` (or a function that returns them); the SDK loads here."""
    from orcmem.mcp_server.server import build_server as build

    return build(tools)


def open_tools(
    home: Path,
    project_dir: Path,
    *,
    mode: str = "review",
    auto_approve: bool = False,
    headless: bool = False,
    session_id: str | None = None,
    allow_download: bool = True,
    answers_from_person: bool = True,
) -> AgentTools:
    """Open the profile's service with its embedder and bind the tools to the project.

    With `allow_download` the model is fetched in the embedder's worker thread if missing (never while memory is
    off). The worker is not started here; `warm_up` starts it once the server is built.
    """
    from orcmem.app.runtime import open_service
    from orcmem.host.workspace import locate
    from orcmem.service.agent_tools import AgentTools

    service = open_service(home, allow_download=allow_download)
    project = service.project(locate(project_dir))
    assert project is not None
    return AgentTools(
        service,
        project,
        mode=mode,
        headless=headless,
        auto_approve=auto_approve,
        session_id=session_id or uuid.uuid4().hex,
        answers_from_person=answers_from_person,
    )


MODEL_WAIT_S = 300.0  # how long warm-up waits for the model before it leaves the first query to load the vectors


def warm_up(tools: AgentTools) -> None:
    """In the background: load the embedding model, embed memories that lack a vector, and, once the model is in,
    the vectors' in-memory copy and one query (the first prompt's recall would wait for both otherwise)."""
    import threading

    if tools.memory.embedder is not None:
        tools.memory.embedder.start()
        threading.Thread(target=_prepare_quietly, args=(tools,), name="orcmem-warm-up", daemon=True).start()
    tools.memory.vectors_changed()


def _prepare_quietly(tools: AgentTools) -> None:
    try:
        tools.memory.search.prepare_meaning(MODEL_WAIT_S)
    except Exception as exc:  # the first query loads them itself
        print(f"orcmem mcp: warm-up failed: {exc}", file=sys.stderr)


class ToolsBox:
    """The session's tools, opened once; a failure to open is kept and raised to every caller.

    Memory can be turned on while the server runs; the first request after that attaches the embedder
    (`attach`), which `open_service` leaves out while memory is off.
    """

    def __init__(self, opener: Callable[[], AgentTools], attach: Callable[[AgentTools], None] | None = None) -> None:
        """Open now with `opener`, keeping either the tools or the error."""
        self.tools: AgentTools | None = None
        self.error: Exception | None = None
        self._attach = attach
        try:
            self.tools = opener()
        except Exception as exc:  # reported by every tool call instead of killing the server before it answers
            self.error = exc

    def __call__(self) -> AgentTools:
        """The tools, or the error that kept them from opening."""
        if self.tools is None:
            assert self.error is not None
            raise self.error
        if self._attach is not None and self.tools.memory.embedder is None and self.tools.is_enabled():
            attach, self._attach = self._attach, None  # one try: a missing model is not looked for on every call
            try:
                attach(self.tools)
            except Exception as exc:  # search keeps working on words
                print(f"orcmem mcp: search by meaning is unavailable: {exc}", file=sys.stderr)
        return self.tools

    def close(self) -> None:
        """Close the service, giving background embedding a moment to finish."""
        if self.tools is not None:
            self.tools.memory.close(embed_wait=1.0)


def embedder_attacher(home: Path, *, allow_download: bool = True) -> Callable[[AgentTools], None]:
    """Attach the profile's embedder to tools opened while memory was off, and warm it up."""

    def attach(tools: AgentTools) -> None:
        from orcmem.app.runtime import make_embedder

        embedder = make_embedder(home, tools.memory, allow_download=allow_download)
        if embedder is not None:
            tools.memory.use_embedder(embedder)
            warm_up(tools)

    return attach


def _box(
    home: Path,
    project_dir: Path,
    mode: str,
    auto_approve: bool,
    headless: bool,
    allow_download: bool,
    answers_from_person: bool = True,
) -> ToolsBox:
    return ToolsBox(
        lambda: open_tools(
            home,
            project_dir,
            mode=mode,
            auto_approve=auto_approve,
            headless=headless,
            allow_download=allow_download,
            answers_from_person=answers_from_person,
        ),
        embedder_attacher(home, allow_download=allow_download),
    )


def run_stdio(
    home: Path,
    project_dir: Path,
    mode: str = "review",
    auto_approve: bool = False,
    headless: bool = False,
    *,
    early_initialize: bool = True,
    allow_download: bool = True,
) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin; returns the exit status.

    Args:
        home: the profile folder.
        project_dir: the folder whose canonical root is the project.
        mode: the permission mode (plan, review, accept-edits, autonomous, auto, yolo).
        auto_approve: allow writes that need an answer no one can give.
        headless: never ask (no elicitation).
        early_initialize: answer `initialize` before the SDK has loaded (clients wait only ~1-2 s).
        allow_download: let the embedder fetch the model if it is missing.
    """
    from orcmem.mcp_server.wire import StdioWire

    _check_mode(mode)
    wire = StdioWire(
        server_name=SERVER_NAME, version=_version(), instructions=INSTRUCTIONS, tools_early=early_tool_list(home)
    )
    wire.start(early_initialize=early_initialize)
    box = _box(home, project_dir, mode, auto_approve, headless, allow_download)
    return _serve(home, project_dir, box, wire.serve)


def run_http(
    home: Path,
    project_dir: Path,
    port: int = 0,
    mode: str = "review",
    auto_approve: bool = False,
    headless: bool = False,
    *,
    stop_after: float | None = None,
    on_ready: Callable[[int], None] | None = None,
    allow_download: bool = True,
) -> int:
    """Serve MCP over streamable HTTP on 127.0.0.1:`port` (0 picks a free port) at /mcp.

    Every request must carry this launch's key (`Authorization: Bearer <key>`), written with the address to
    `$ORCMEM_HOME/mcp-http.json` (0600) for the person's clients; others get 401. Requests whose Host is not
    127.0.0.1:<port> or localhost:<port>, or that carry an Origin other than those, are refused with 403. Any
    client holding the key could answer an approval question, so such an answer allows one call and grants
    nothing. `stop_after` seconds ends the server by itself; `on_ready` gets the bound port.
    """
    from orcmem.mcp_server.http import serve_http

    _check_mode(mode)
    box = _box(home, project_dir, mode, auto_approve, headless, allow_download, answers_from_person=False)
    return _serve(
        home, project_dir, box, lambda server: serve_http(server, home, port, stop_after=stop_after, on_ready=on_ready)
    )


def _serve(home: Path, project_dir: Path, box: ToolsBox, transport: Callable[[MCPServer], int]) -> int:
    """Start the server's companions (the recall socket, the team syncer, the freshness watch, the re-flag), build
    the server, warm it up and serve it with `transport` until it ends; then close them and the tools."""
    recall = _recall_socket(home, box)
    team = _team_syncer(home, box)
    watch = _freshness_watch(home, project_dir)
    reflag = _reflag(box)
    try:
        server = build_server(box)
        if box.tools is not None:
            warm_up(box.tools)
        return transport(server)
    finally:
        if reflag is not None:
            reflag.close()
        watch.close()
        team.close()
        recall.close()
        box.close()


def _recall_socket(home: Path, box: ToolsBox) -> RecallSocket:
    """Start answering the prompt hook's recall on the profile's socket (now, or once another server lets go)."""
    from orcmem.mcp_server.recall_socket import RecallSocket, recall_answer

    recall = RecallSocket(home, recall_answer(home, box))
    recall.start()
    return recall


def _team_syncer(home: Path, box: ToolsBox) -> TeamSyncer:
    """Keep the profile in sync with its team in the background (nothing happens for a profile without one)."""
    from orcmem.team.background import TeamSyncer

    syncer = TeamSyncer(home, box.tools.memory.embedder if box.tools is not None else None)
    syncer.start()
    return syncer


def _freshness_watch(home: Path, project_dir: Path) -> FreshnessWatch:
    """Check the project's memories against its code in the background (docs/freshness.md)."""
    from orcmem.mcp_server.freshness_watch import FreshnessWatch

    watch = FreshnessWatch(home, project_dir)
    watch.start()
    return watch


def _reflag(box: ToolsBox) -> ReflagLoop | None:
    """Finish in the background the re-flag an upgraded instruction detector left (none when the tools failed)."""
    return None if box.tools is None else box.tools.memory.reflag.in_background("orcmem mcp")


def early_tool_list(home: Path) -> Callable[[], JsonObject | None]:
    """What lists the tools before the SDK has loaded: the pinned list, or task_context alone while memory is off;
    None (the SDK answers) when the database cannot tell."""

    def listing() -> JsonObject | None:
        import json

        from orcmem.models.constants import DB_FILENAME
        from orcmem.store.recall import memory_enabled

        enabled = memory_enabled(home / DB_FILENAME)
        if enabled is None:
            return None
        tools = json.loads(TOOL_LIST_FILE.read_text(encoding="utf-8"))["tools"]
        return {"tools": tools if enabled else [tool for tool in tools if tool["name"] in ALWAYS_LISTED]}

    return listing


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose one of: {', '.join(MODES)}.")


def _version() -> str:
    from orcmem import __version__

    return __version__


def _port(text: str) -> int:
    """A TCP port number, 0 for a free one."""
    import argparse

    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    """`orcmem mcp [--http] [--port N] [--mode MODE] [--auto-approve] [--headless] [--project PATH]`."""
    import argparse

    class Help(argparse.HelpFormatter):
        """Help that reads like the rest of orcmem's (`Usage:`, as click writes it)."""

        def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
            super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)

    parser = argparse.ArgumentParser(
        prog="orcmem mcp", description="Serve orcmem's memory tools over MCP.", formatter_class=Help
    )
    parser.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=_port, default=0, help="HTTP port (default: a free one, printed on stderr)")
    parser.add_argument(
        "--mode", choices=MODES, default=None, help=f"permission mode for writes (default: ${MODE_ENV_VAR} or review)"
    )
    parser.add_argument("--auto-approve", action="store_true", help="allow writes when no one can be asked")
    parser.add_argument("--headless", action="store_true", help="never ask the user (no elicitation)")
    parser.add_argument("--project", type=Path, default=None, help="project folder (default: $CLAUDE_PROJECT_DIR or .)")
    args = parser.parse_args(argv)
    mode = args.mode or os.environ.get(MODE_ENV_VAR, "").strip() or "review"
    if mode not in MODES:
        parser.error(f"{MODE_ENV_VAR}={mode!r} is not a mode; choose one of: {', '.join(MODES)}")
    from orcmem.host.profile import home_dir

    project = args.project or Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    try:
        if args.http:
            return run_http(home_dir(), project, args.port, mode, args.auto_approve, args.headless)
        return run_stdio(home_dir(), project, mode, args.auto_approve, args.headless)
    except KeyboardInterrupt:  # Ctrl-C before the server watches for it (while it loads): no traceback
        return 130


__all__ = [
    "MODE_ENV_VAR",
    "MODES",
    "ToolsBox",
    "build_server",
    "early_tool_list",
    "embedder_attacher",
    "main",
    "open_tools",
    "run_http",
    "run_stdio",
    "warm_up",
]
