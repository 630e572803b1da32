"""Serve the Memory page on 127.0.0.1 with uvicorn, print its address and open the browser."""

from __future__ import annotations

import contextlib
import threading
import time
import webbrowser
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlencode

from orcmem.host.loopback import HOST, bind_loopback
from orcmem.host.serving import StoppableServer
from orcmem.host.workspace import Location
from orcmem.web.app import create_app

BROWSER_WAIT_S = 10.0  # how long to wait for the server to start before opening the browser anyway


def server_config(app: object) -> object:
    """The uvicorn settings for the page: quiet, no access log (addresses carry the launch token), no proxies."""
    import uvicorn

    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        lifespan="on",
    )


def launch_url(port: int, token: str, project_id: str | None = None) -> str:
    """The address to open: it hands the browser this launch's key once (and shows `project_id` first, if given)."""
    query = urlencode({"project": project_id, "token": token} if project_id else {"token": token})
    return f"http://{HOST}:{port}/?{query}"


def serve(
    home: Path,
    *,
    port: int = 0,
    open_browser: bool = True,
    echo: Callable[[str], None] = print,
    environ: Mapping[str, str] | None = None,
    location: Location | None = None,
) -> int:
    """Serve the Memory page for the profile in `home` until interrupted (Ctrl+C).

    Args:
        home: the profile folder (`$ORCMEM_HOME`).
        port: the port on 127.0.0.1; 0 picks a free one.
        open_browser: open the address in the default browser once the server is up.
        echo: where the address and hints are printed.
        environ: the environment for the API key fallback and the agents' binaries (the process's when None).
        location: the folder `orcmem ui` ran in; its project is shown first when orcmem knows it (else the most
            recently used project).

    Raises:
        OrcmemError: the port cannot be used.
        StoreError: the profile database cannot be opened.
    """
    sock = bind_loopback(port)
    app = None
    try:
        actual = int(sock.getsockname()[1])
        app = create_app(home, port=actual, environ=environ)
        state = app.state.web
        project = state.service.project(location, create=False) if location is not None else None
        url = launch_url(actual, state.token, project.id if project else None)
        server = StoppableServer(server_config(app))  # type: ignore[arg-type]
        echo(f"orcmem Memory page: {url}")
        echo("Only this address opens it (it carries a key made for this launch). Press Ctrl+C to stop.")
        if open_browser:
            threading.Thread(target=_open_when_ready, args=(server, url), name="orcmem-ui-browser", daemon=True).start()
        server.run(sockets=[sock])
        return server.exit_status
    finally:
        sock.close()
        if app is not None:
            app.state.web.close()  # already closed when the server shut down cleanly


def _open_when_ready(server: object, url: str) -> None:
    deadline = time.monotonic() + BROWSER_WAIT_S
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(Exception):  # no browser here: the printed address is enough
        webbrowser.open(url)
