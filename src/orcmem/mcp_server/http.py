"""Streamable HTTP for `orcmem mcp --http`: 127.0.0.1 only, pages of this very server's origin only, and only for
clients that hold this launch's key (other accounts on the machine can reach 127.0.0.1 too)."""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from orcmem.host.loopback import HOST, OwnOrigin, bind_loopback

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcp.server import MCPServer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"
ADDRESS_FILE = "mcp-http.json"  # the address and key of the running server, readable by this account only


class LoopbackGuard:
    """ASGI middleware: 403 unless Host is 127.0.0.1:<port> or localhost:<port> and any Origin is one of those.

    A web page the user visits can make the browser send requests to 127.0.0.1; its Origin header (or, through
    DNS rebinding, its Host header) gives it away, so either one that is not this server's refuses the request.
    """

    def __init__(self, app: ASGIApp, port: int, key: str | None = None) -> None:
        """Guard `app`, served on 127.0.0.1:`port`; with `key`, every request must carry it as a bearer token."""
        self.app = app
        self.own = OwnOrigin(port)
        self.key = key

    def allows(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether a request with these raw headers comes from this server's own origin."""
        hosts = [value.decode("latin-1") for name, value in headers if name.lower() == b"host"]
        origins = [value.decode("latin-1") for name, value in headers if name.lower() == b"origin"]
        return self.own.hosts_allowed(hosts) and self.own.origins_allowed(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse foreign requests; pass everything else (and the lifespan events) to the app."""
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http":
            headers = list(scope.get("headers") or [])
            if not self.allows(headers):
                await _refuse(send, 403, b"refused")
                return
            if not self.authorized(headers):
                await _refuse(send, 401, b"this server needs its launch key: Authorization: Bearer <key>")
                return
        await self.app(scope, receive, send)

    def authorized(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether the request carries this launch's key (constant-time comparison); True without a key."""
        if self.key is None:
            return True
        values = [value for name, value in headers if name.lower() == b"authorization"]
        if len(values) != 1 or not values[0].startswith(b"Bearer "):
            return False
        return hmac.compare_digest(values[0][len(b"Bearer ") :].strip(), self.key.encode())


async def _refuse(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def write_address(home: Path, url: str, key: str) -> Path:
    """Leave the address and the key where the person's clients can read them and no other account can."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home / ADDRESS_FILE
    temporary = home / f".{ADDRESS_FILE}.{os.getpid()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"url": url, "headers": {"Authorization": f"Bearer {key}"}, "pid": os.getpid()}, handle)
    os.replace(temporary, path)
    return path


def remove_address(home: Path) -> None:
    """Take the address file away when this server stops (unless another server wrote its own since)."""
    path = home / ADDRESS_FILE
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def serve_http(
    server: MCPServer,
    home: Path,
    port: int = 0,
    *,
    stop_after: float | None = None,
    on_ready: Callable[[int], None] | None = None,
) -> int:
    """Serve `server` at http://127.0.0.1:<port>/mcp until interrupted (or for `stop_after` seconds), to clients
    that send the key this launch makes (in `home`/mcp-http.json)."""
    import anyio
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from orcmem.host.serving import StoppableServer
    from orcmem.host.stopping import stop_on_signals

    sock = bind_loopback(port)
    bound = int(sock.getsockname()[1])
    guard_hosts = [f"{HOST}:{bound}", f"localhost:{bound}"]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=HOST,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=guard_hosts,
            allowed_origins=[f"http://{host}" for host in guard_hosts],
        ),
    )
    key = secrets.token_urlsafe(32)
    url = f"http://{HOST}:{bound}{MCP_PATH}"
    address = write_address(home, url, key)
    web = StoppableServer(uvicorn.Config(LoopbackGuard(app, bound, key), log_level="warning", lifespan="on"))
    web.cleanup = lambda: remove_address(home)  # no stale key file after a hard stop

    web.signals_outside = True  # watched from before the address is printed: a client may act on it at once

    async def main() -> None:
        with stop_on_signals(web.stop, web.cleanup):
            await serve()

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            if stop_after is not None:

                async def stop() -> None:
                    await anyio.sleep(stop_after)
                    web.should_exit = True

                group.start_soon(stop)
            print(
                f"orcmem mcp: listening on {url}; clients send the header in {address} (Authorization: Bearer {key})",
                file=sys.stderr,
                flush=True,
            )
            if on_ready is not None:
                on_ready(bound)
            await web.serve(sockets=[sock])
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        sock.close()
        remove_address(home)
    return web.exit_status
