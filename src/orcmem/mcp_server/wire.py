"""Stdio for `orcmem mcp`: take over fd 0 and 1, answer `initialize` and `tools/list` at once, then hand the wire
to the SDK.

Claude Code waits only about a second for a stdio server, Codex leaves a server that is not ready within about a
second out of the session's first turn, and importing the MCP SDK alone takes about 0.8 s. So a thread reads
stdin from the first moment: a first `initialize` request is answered right away, with the result the SDK would
give, and so is `tools/list` after it (from the pinned tool list, tools.json); both are replayed to the SDK once it
has loaded, and its own answers to them are compared with ours and dropped. Every message goes to the SDK in order.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: this module is on the path that answers before the SDK loads
    from mcp.server import MCPServer

    from orcmem.models.data_shapes import JsonObject, JsonValue

# No request of orcmem's tools comes near this (a body is 800 characters at most): a longer line is answered with
# an error at once, read no further than the cap, so a huge or endless line costs neither memory nor time.
MAX_LINE_BYTES = 256 * 1024
TOO_LARGE = -32600  # JSON-RPC "invalid request"
# After stdin ends, the requests already read are answered before the SDK hears of the end (it cancels what is
# still running when it does); a request that takes longer than this is cancelled after all.
DRAIN_TIMEOUT_S = 30.0
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})')

# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS of the pinned SDK (a test keeps them equal).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What MCPServer advertises in its initialize result (a test compares with the SDK's own answer).
SERVER_CAPABILITIES: JsonObject = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def _well_formed(line: bytes) -> bytes:
    """The line with any lone-surrogate escape (`\\ud800`) replaced, so the SDK can answer it instead of dropping
    it; lines without one pass unchanged."""
    if b"\\u" not in line.lower():
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line  # the SDK answers a parse error itself
    clean = _replace_surrogates(message)
    return line if clean == message else (json.dumps(clean, separators=(",", ":")) + "\n").encode("utf-8")


def _replace_surrogates(value: JsonValue) -> JsonValue:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(key): _replace_surrogates(item) for key, item in value.items()}
    return value


def initialize_result(message: object, *, name: str, version: str, instructions: str | None) -> JsonObject | None:
    """The result the SDK gives an `initialize` request, or None when `message` is not a well-formed one."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if not isinstance(message.get("id"), int | str) or isinstance(message.get("id"), bool):
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    requested = params.get("protocolVersion")
    client = params.get("clientInfo")
    if not isinstance(requested, str) or not isinstance(params.get("capabilities"), dict):
        return None
    if (
        not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not isinstance(client.get("version"), str)
    ):
        return None
    result: JsonObject = {
        "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
        "capabilities": SERVER_CAPABILITIES,
        "serverInfo": {"name": name, "version": version},
    }
    if instructions:
        result["instructions"] = instructions
    return result


class StdioWire:
    """The process's stdin and stdout, owned by the server: nothing else can read from or write to the wire."""

    def __init__(
        self,
        *,
        server_name: str,
        version: str,
        instructions: str | None,
        tools_early: Callable[[], JsonObject | None] | None = None,
    ) -> None:
        """Remember what the early `initialize` answer says about the server, and what lists the tools early (the
        `tools/list` result, or None to leave the answer to the SDK)."""
        self.server_name = server_name
        self.version = version
        self.instructions = instructions
        self.tools_early = tools_early
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        # Results already sent, by request id: the SDK's own answers to those requests are compared and dropped.
        self.answered_early: dict[int | str, JsonObject] = {}
        self._initialized_early = False
        self.mismatch: str | None = None  # set when the SDK would have answered differently
        self._lock = threading.Lock()
        self._unanswered: set[int | str] = set()  # ids of the requests read and not yet answered
        self._answered = threading.Condition()
        self._in_fd = -1
        self._out_fd = -1
        self.interrupted = 0  # the signal (Ctrl-C, SIGTERM) that ended the server

    def start(self, *, early_initialize: bool = True) -> None:
        """Take over fd 0 and 1 and start reading; with `early_initialize`, answer `initialize` as it arrives."""
        self._in_fd = os.dup(0)
        self._out_fd = os.dup(1)
        # Libraries and child processes that print must not corrupt the wire: fd 1 now goes to stderr,
        # and fd 0 reads nothing.
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdout.flush()
        os.dup2(2, 1)
        reader = threading.Thread(target=self._pump, args=(early_initialize,), name="orcmem-mcp-stdin", daemon=True)
        reader.start()

    def _pump(self, early_initialize: bool) -> None:
        stream = os.fdopen(self._in_fd, "rb", closefd=False)
        first = True
        try:
            while line := stream.readline(MAX_LINE_BYTES + 1):
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    self._refuse_too_large(line, stream)
                    continue
                line = _well_formed(line)
                if first and early_initialize:
                    self._answer_initialize(line)
                elif self._initialized_early and self.tools_early is not None:
                    self._answer_tools_list(line)
                first = False
                self._note_request(line)
                self.lines.put(line)
        except (OSError, ValueError):
            pass  # stdin closed or broken: the same as end of input
        finally:
            self.lines.put(None)

    def _note_request(self, line: bytes) -> None:
        """Remember a request's id until its answer goes out (notifications and answers need none)."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), int | str):
            with self._answered:
                self._unanswered.add(message["id"])

    def _note_answer(self, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            return
        if isinstance(message, dict) and "method" not in message and isinstance(message.get("id"), int | str):
            with self._answered:
                self._unanswered.discard(message["id"])
                self._answered.notify_all()

    def wait_answered(self, timeout: float = DRAIN_TIMEOUT_S) -> bool:
        """Wait until every request read so far has its answer; False when `timeout` passed first."""
        with self._answered:
            return self._answered.wait_for(lambda: not self._unanswered, timeout)

    def _refuse_too_large(self, head: bytes, stream: BinaryIO) -> None:
        """Answer an oversized request with an error (its id, when its first or last bytes name one) and skip the
        rest of it, holding no more than a chunk of it at a time."""
        tail = head[-4096:]
        while more := stream.readline(MAX_LINE_BYTES):
            tail = (tail + more)[-4096:]
            if more.endswith(b"\n"):
                break
        found = _ID.search(head[:4096]) or _ID.search(tail)
        request_id = json.loads(found.group(1)) if found else None
        message = f"request too large: orcmem takes messages of up to {MAX_LINE_BYTES // 1024} KiB"
        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": TOO_LARGE, "message": message}})

    def _answer_initialize(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        result = initialize_result(message, name=self.server_name, version=self.version, instructions=self.instructions)
        if result is None:
            return
        self._initialized_early = True
        self._answer_early(message["id"], result)

    def _answer_tools_list(self, line: bytes) -> None:
        """Answer `tools/list` (without a cursor) from the pinned list, before the SDK has loaded."""
        if b"tools/list" not in line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("method") != "tools/list" or message.get("jsonrpc") != "2.0":
            return
        request_id, params = message.get("id"), message.get("params")
        if not isinstance(request_id, int | str) or isinstance(request_id, bool) or request_id in self.answered_early:
            return
        if params is not None and (not isinstance(params, dict) or params.get("cursor") is not None):
            return
        assert self.tools_early is not None
        try:
            result = self.tools_early()
        except Exception as exc:  # the SDK answers instead
            print(f"orcmem mcp: could not list the tools early: {exc}", file=sys.stderr)
            return
        if result is not None:
            self._answer_early(request_id, result)

    def _answer_early(self, request_id: int | str, result: JsonObject) -> None:
        self.answered_early[request_id] = result
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def write(self, message: JsonObject | str) -> None:
        """Write one JSON-RPC message as a line (thread-safe)."""
        text = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"))
        data = (text.rstrip("\n") + "\n").encode("utf-8")
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._out_fd, view)
                view = view[written:]

    def outgoing(self, text: str) -> bool:
        """Whether the SDK's message `text` goes on the wire (its answers to requests answered early do not)."""
        self._note_answer(text)
        if not self.answered_early:
            return True
        try:
            message = json.loads(text)
        except ValueError:
            return True
        if not isinstance(message, dict) or "method" in message or message.get("id") not in self.answered_early:
            return True
        sent = self.answered_early.pop(message["id"])
        if message.get("result") != sent:
            self.mismatch = f"sent {json.dumps(sent)}, the SDK answered {json.dumps(message)}"
            print(f"orcmem mcp: an early answer differs from the SDK's: {self.mismatch}", file=sys.stderr)
        return False

    def stop(self, signum: int) -> None:
        """On Ctrl-C or SIGTERM: end as if stdin had ended (answers already due still go out)."""
        self.interrupted = signum
        self.lines.put(None)

    def serve(self, server: MCPServer) -> int:
        """Run `server` on the wire until stdin ends or a signal stops it; returns the exit status."""
        import anyio
        import anyio.to_thread
        from mcp.server.stdio import stdio_server

        from orcmem.host.stopping import stop_on_signals

        wire = self

        class Lines:
            """The lines read from stdin, as the SDK's stdio transport iterates them."""

            def __aiter__(self) -> Lines:
                return self

            async def __anext__(self) -> str:
                line = await anyio.to_thread.run_sync(wire.lines.get, abandon_on_cancel=True)
                if line is None:
                    await anyio.to_thread.run_sync(wire.wait_answered, abandon_on_cancel=True)
                    raise StopAsyncIteration
                return line.decode("utf-8", errors="replace")

        class Writer:
            """The SDK's stdout: one message per write."""

            async def write(self, text: str) -> None:
                if wire.outgoing(text):
                    await anyio.to_thread.run_sync(wire.write, text)

            async def flush(self) -> None:
                return None

        async def run() -> None:
            with stop_on_signals(wire.stop):
                await serve_lines()

        async def serve_lines() -> None:
            async with stdio_server(stdin=Lines(), stdout=Writer()) as (read_stream, write_stream):  # type: ignore[arg-type]
                lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

        anyio.run(run)
        return 128 + self.interrupted if self.interrupted else 0
