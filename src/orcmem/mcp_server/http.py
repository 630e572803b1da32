"""Streamable HTTP for `orcmem mcp --http`: 127.0.0.1 only, and only for pages of this very server's origin."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from orcmem.loopback import HOST, bind_loopback

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcp.server import MCPServer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MCP_PATH = "/mcp"


class LoopbackGuard:
    """ASGI middleware: 403 unless Host is 127.0.0.1:<port> or localhost:<port> and any Origin is one of those.

    A web page the user visits can make the browser send requests to 127.0.0.1; its Origin header (or, through
    DNS rebinding, its Host header) gives it away, so either one that is not this server's refuses the request.
    """

    def __init__(self, app: ASGIApp, port: int) -> None:
        """Guard `app`, served on 127.0.0.1:`port`."""
        self.app = app
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def allows(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """Whether a request with these raw headers comes from this server's own origin."""
        hosts = [value.decode("latin-1") for name, value in headers if name.lower() == b"host"]
        origins = [value.decode("latin-1") for name, value in headers if name.lower() == b"origin"]
        if len(hosts) != 1 or hosts[0].lower() not in self.hosts:
            return False
        return all(origin.lower() in self.origins for origin in origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse foreign requests; pass everything else (and the lifespan events) to the app."""
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and not self.allows(list(scope.get("headers") or [])):
            await send({"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"refused"})
            return
        await self.app(scope, receive, send)


def serve_http(
    server: MCPServer,
    port: int = 0,
    *,
    stop_after: float | None = None,
    on_ready: Callable[[int], None] | None = None,
) -> int:
    """Serve `server` at http://127.0.0.1:<port>/mcp until interrupted (or for `stop_after` seconds)."""
    import anyio
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

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
    web = uvicorn.Server(uvicorn.Config(LoopbackGuard(app, bound), log_level="warning", lifespan="on"))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            if stop_after is not None:

                async def stop() -> None:
                    await anyio.sleep(stop_after)
                    web.should_exit = True

                group.start_soon(stop)
            print(f"orcmem mcp: listening on http://{HOST}:{bound}{MCP_PATH}", file=sys.stderr, flush=True)
            if on_ready is not None:
                on_ready(bound)
            await web.serve(sockets=[sock])
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        sock.close()
    return 0
